// Node costs from measured times, with the analytical estimate on a miss.
#include "cost/cached_model.h"

namespace graphsub::cost {
namespace {

/// CachedModel::provisional_answers: a thread's misses of modelled nodes.
thread_local int64_t provisional_misses = 0;

}  // namespace

Cost CachedModel::node_cost(const ir::Graph& graph, ir::NodeId id) const {
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
