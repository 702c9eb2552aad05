// Finding the islands of element-wise nodes in a graph.
#include "cost/islands.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "ir/hash.h"

namespace graphsub::cost {
namespace {

bool floating(ir::DataType dtype) {
  return dtype == ir::DataType::kFloat || dtype == ir::DataType::kFloat16 || dtype == ir::DataType::kDouble ||
         dtype == ir::DataType::kBfloat16;
}

/// The representative of `id`'s set (path halving).
ir::NodeId root(std::vector<ir::NodeId>& parent, ir::NodeId id) {
  while (parent[id] != id) {
    parent[id] = parent[parent[id]];
    id = parent[id];
  }
  return id;
}

/// The position of the island node making `value`, or -1 when no node of the island makes it.
int64_t maker_in(const ir::Graph& graph, const Island& island, ir::ValueId value) {
  const ir::Value& made = graph.value(value);
  if (made.kind != ir::ValueKind::kIntermediate) return -1;
  const auto found = std::find(island.nodes.begin(), island.nodes.end(), made.producer);
  return found == island.nodes.end() ? -1 : found - island.nodes.begin();
}

}  // namespace

bool island_op(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::kAdd:
    case ir::OpKind::kSub:
    case ir::OpKind::kMul:
    case ir::OpKind::kDiv:
    case ir::OpKind::kPow:
    case ir::OpKind::kMax:
    case ir::OpKind::kMin:
    case ir::OpKind::kPRelu:
    case ir::OpKind::kSMul:
    case ir::OpKind::kSum:
    case ir::OpKind::kMean:
    case ir::OpKind::kRelu:
    case ir::OpKind::kSigmoid:
    case ir::OpKind::kTanh:
    case ir::OpKind::kExp:
    case ir::OpKind::kLog:
    case ir::OpKind::kNeg:
    case ir::OpKind::kAbs:
    case ir::OpKind::kSqrt:
    case ir::OpKind::kReciprocal:
    case ir::OpKind::kErf:
    case ir::OpKind::kLeakyRelu:
    case ir::OpKind::kElu:
    case ir::OpKind::kSoftplus:
    case ir::OpKind::kHardSigmoid:
    case ir::OpKind::kHardSwish:
    case ir::OpKind::kClip:
    case ir::OpKind::kGelu:
    case ir::OpKind::kReduceMean:
    case ir::OpKind::kLayerNormalization:
      return true;
    default:
      return false;
  }
}

std::vector<Island> islands(const ir::Graph& graph, const std::vector<bool>& excluded, std::size_t max_nodes) {
  const std::optional<std::vector<ir::NodeId>> order = graph.topological_order();
  if (!order) return {};
  const std::size_t capacity = static_cast<std::size_t>(graph.node_capacity());
  std::vector<bool> member(capacity, false);
  for (ir::NodeId id : *order) {
    const ir::Node& node = graph.node(id);
    member[id] = !excluded[id] && island_op(node.op) && node.outputs.size() == 1 &&
                 floating(graph.value(node.outputs[0]).type.dtype);
  }
  // depth: the most non-members on a path from the graph's inputs to the node, the node left out.
  // A path that leaves a set of members and comes back passes a non-member, so it reaches a
  // deeper node: members joined only at equal depth make convex sets.
  std::vector<int64_t> depth(capacity, 0);
  std::vector<ir::NodeId> parent(capacity);
  std::iota(parent.begin(), parent.end(), 0);
  for (ir::NodeId id : *order) {
    for (ir::ValueId input : graph.node(id).inputs) {
      if (input == ir::kNoValue) continue;
      const ir::Value& value = graph.value(input);
      if (value.kind != ir::ValueKind::kIntermediate || excluded[value.producer]) continue;
      depth[id] = std::max(depth[id], depth[value.producer] + (member[value.producer] ? 0 : 1));
    }
  }
  for (ir::NodeId id : *order) {
    if (!member[id]) continue;
    for (ir::ValueId input : graph.node(id).inputs) {
      if (input == ir::kNoValue) continue;
      const ir::Value& value = graph.value(input);
      if (value.kind != ir::ValueKind::kIntermediate || !member[value.producer]) continue;
      if (depth[value.producer] == depth[id]) parent[root(parent, value.producer)] = root(parent, id);
    }
  }
  std::vector<int64_t> slot(capacity, -1);
  std::vector<Island> found;
  for (ir::NodeId id : *order) {
    if (!member[id]) continue;
    const ir::NodeId head = root(parent, id);
    if (slot[head] < 0) {
      slot[head] = static_cast<int64_t>(found.size());
      found.emplace_back();
    }
    found[slot[head]].nodes.push_back(id);
  }
  std::vector<int64_t> island_of(capacity, -1);
  std::vector<Island> kept;
  for (Island& island : found) {
    if (island.nodes.size() < 2 || island.nodes.size() > max_nodes) continue;
    for (ir::NodeId id : island.nodes) island_of[id] = static_cast<int64_t>(kept.size());
    kept.push_back(std::move(island));
  }
  if (kept.empty()) return kept;
  std::vector<bool> exposed(graph.value_capacity(), false);
  for (ir::ValueId output : graph.outputs()) exposed[output] = true;
  for (ir::NodeId id : *order) {
    for (ir::ValueId input : graph.node(id).inputs) {
      if (input == ir::kNoValue) continue;
      const ir::Value& value = graph.value(input);
      if (value.kind != ir::ValueKind::kIntermediate || island_of[value.producer] < 0) continue;
      if (island_of[value.producer] != island_of[id]) exposed[input] = true;
    }
  }
  for (Island& island : kept) {
    for (ir::NodeId id : island.nodes) {
      for (ir::ValueId output : graph.node(id).outputs) {
        if (exposed[output]) island.exposed.push_back(output);
      }
    }
  }
  return kept;
}

std::vector<ir::ValueId> island_inputs(const ir::Graph& graph, const Island& island) {
  std::vector<ir::ValueId> inputs;
  for (ir::NodeId id : island.nodes) {
    for (ir::ValueId input : graph.node(id).inputs) {
      if (input == ir::kNoValue || maker_in(graph, island, input) >= 0) continue;
      if (std::find(inputs.begin(), inputs.end(), input) == inputs.end()) inputs.push_back(input);
    }
  }
  return inputs;
}

uint64_t island_hash(const ir::Graph& graph, const Island& island, const std::function<uint64_t(ir::NodeId)>& node_hash) {
  uint64_t hash = ir::hash_combine(ir::kHashSeed, 7);
  std::vector<ir::ValueId> outside;
  for (ir::NodeId id : island.nodes) {
    hash = ir::hash_combine(hash, node_hash(id));
    for (ir::ValueId input : graph.node(id).inputs) {
      if (input == ir::kNoValue) {
        hash = ir::hash_combine(hash, 1);
        continue;
      }
      const ir::Value& value = graph.value(input);
      if (const int64_t maker = maker_in(graph, island, input); maker >= 0) {
        hash = ir::hash_combine(ir::hash_combine(hash, 2 + static_cast<uint64_t>(maker)),
                                static_cast<uint64_t>(value.output_index));
        continue;
      }
      const auto known = std::find(outside.begin(), outside.end(), input);
      hash = ir::hash_combine(hash, 100000 + static_cast<uint64_t>(known - outside.begin()));
      if (known == outside.end()) outside.push_back(input);
      if (value.kind == ir::ValueKind::kWeight && value.data && value.data->num_elements() < ir::Graph::kLargeWeight) {
        hash = ir::hash_combine(hash, value.hash);
      }
    }
  }
  for (ir::ValueId output : island.exposed) {
    hash = ir::hash_combine(ir::hash_combine(hash, static_cast<uint64_t>(maker_in(graph, island, output))),
                            static_cast<uint64_t>(graph.value(output).output_index));
  }
  return hash;
}

}  // namespace graphsub::cost
