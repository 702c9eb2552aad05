// Node costs from measured times, with the analytical estimate on a miss.
#include "cost/cached_model.h"

#include "ir/hash.h"
#include "ops/data_movement.h"

namespace graphsub::cost {
namespace {

/// CachedModel::provisional_answers: a thread's misses of modelled nodes.
thread_local int64_t provisional_misses = 0;

/// A hash of what op_signature says of a node, finer (symbolic dims by name, attributes by
/// value): nodes alike here have one signature.
uint64_t node_key(const ir::Graph& graph, ir::NodeId id) {
  const ir::Node& node = graph.node(id);
  uint64_t hash = ir::hash_combine(ir::kHashSeed, static_cast<uint64_t>(node.op));
  hash = ir::hash_combine(hash, node.attrs.hash());
  if (node.opaque) {
    hash = ir::hash_string(ir::hash_string(ir::hash_string(hash, node.opaque->domain), node.opaque->op_type),
                           node.opaque->onnx_node);
  }
  for (ir::ValueId input : node.inputs) {
    if (input == ir::kNoValue) {
      hash = ir::hash_combine(hash, 1);
      continue;
    }
    const ir::Value& value = graph.value(input);
    const ir::TensorType& type = value.type;
    hash = ir::hash_combine(hash, value.kind == ir::ValueKind::kWeight ? 2 : 3);
    hash = ir::hash_combine(hash, static_cast<uint64_t>(type.dtype));
    hash = ir::hash_combine(hash, type.shape.rank_known ? type.shape.rank() : ~uint64_t{0});
    for (const ir::Dim& dim : type.shape.dims) {
      hash = dim.is_symbolic() ? ir::hash_string(ir::hash_combine(hash, 4), dim.symbol)
                               : ir::hash_combine(hash, static_cast<uint64_t>(dim.value));
    }
  }
  return hash;
}

}  // namespace

Cost CachedModel::node_cost(const ir::Graph& graph, ir::NodeId id) const {
  // Inside a model the runtime aliases a view's buffer; timed alone, its output is a graph output
  // and is copied. So a view costs nothing here, as in the analytical model, and is not measured.
  if (ops::aliases_input(graph.node(id))) return Cost{};
  const uint64_t key = node_key(graph, id);
  {
    const std::lock_guard<std::mutex> lock(hits_mutex_);
    const auto known = hit_costs_.find(key);
    if (known != hit_costs_.end()) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return known->second;
    }
  }
  const std::string signature = op_signature(graph, id, &sizes_);
  const CacheEntry* entry = cache_.find(signature, backend_);
  if (!entry || entry->failed()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    if (!entry && graph.node(id).op != ir::OpKind::kOpaque) {
      remember(signature, graph, id);
      ++provisional_misses;
    }
    return fallback_.node_cost(graph, id);
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  Cost cost = node_work(graph, id);
  cost.time_ms = entry->median_ms;
  const std::lock_guard<std::mutex> lock(hits_mutex_);
  hit_costs_.emplace(key, cost);
  return cost;
}

void CachedModel::remember(const std::string& signature, const ir::Graph& graph, ir::NodeId id) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (missed_.count(signature) == 0) missed_.emplace(signature, Miss{signature, graph, id});
}

int64_t CachedModel::provisional_answers() const { return provisional_misses; }

bool CachedModel::pending_misses() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return !missed_.empty();
}

std::vector<Miss> CachedModel::take_misses() {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Miss> taken;
  for (auto& item : missed_) taken.push_back(std::move(item.second));
  missed_.clear();
  return taken;
}

}  // namespace graphsub::cost
