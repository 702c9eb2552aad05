// Graph cost as the sum of node costs, weight folding and the memory cap.
#include "cost/cost_model.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "ops/common.h"
#include "ops/registry.h"

namespace graphsub::cost {
namespace {

/// The graph's live nodes in topological order; throws for a cycle.
std::vector<ir::NodeId> order_of(const ir::Graph& graph) {
  std::optional<std::vector<ir::NodeId>> order = graph.topological_order();
  if (!order) throw std::logic_error("cost model: the graph has a cycle");
  return std::move(*order);
}

/// True when export can compute the node itself: a modelled op with a reference kernel.
bool is_foldable_kind(ir::OpKind op) {
  return op != ir::OpKind::kOpaque && ops::op_def(op).kernel != nullptr;
}

/// True when every input is a weight or a folded node's output.
bool reads_only_constants(const ir::Node& node, const std::vector<bool>& constant) {
  for (ir::ValueId input : node.inputs) {
    if (input != ir::kNoValue && !constant[input]) return false;
  }
  return true;
}

}  // namespace

std::vector<bool> folded_nodes(const ir::Graph& graph) {
  std::vector<bool> folded(graph.node_capacity(), false);
  std::vector<bool> constant(graph.value_capacity(), false);
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    constant[id] = graph.has_value(id) && graph.value(id).kind == ir::ValueKind::kWeight;
  }
  for (ir::NodeId id : order_of(graph)) {
    const ir::Node& node = graph.node(id);
    if (!is_foldable_kind(node.op) || !reads_only_constants(node, constant)) continue;
    folded[id] = true;
    for (ir::ValueId output : node.outputs) constant[output] = true;
  }
  return folded;
}

double memory_upper_bound(const ir::Graph& graph) {
  std::vector<bool> live(graph.value_capacity(), false);
  for (ir::ValueId id : graph.inputs()) live[id] = true;
  for (ir::ValueId id : graph.outputs()) live[id] = true;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    for (ir::ValueId input : node.inputs) {
      if (input != ir::kNoValue) live[input] = true;
    }
    for (ir::ValueId output : node.outputs) live[output] = true;
  }
  double bytes = 0;
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (live[id]) bytes += ops::bytes_or_one(graph.value(id).type);
  }
  return bytes;
}

Cost CostModel::graph_cost(const ir::Graph& graph) const {
  if (std::isfinite(memory_cap_bytes_) && memory_upper_bound(graph) > memory_cap_bytes_) {
    return Cost::infinite();
  }
  const std::vector<bool> folded = folded_nodes(graph);
  Cost total;
  for (ir::NodeId id : graph.node_ids()) {
    if (!folded[id]) total += node_cost(graph, id);
  }
  return total;
}

}  // namespace graphsub::cost
