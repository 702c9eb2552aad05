// Graph cost as the sum of node costs, weight folding and the memory cap.
#include "cost/cost_model.h"

#include <cmath>
#include <utility>

#include "ops/common.h"
#include "ops/folding.h"
#include "ops/registry.h"

namespace graphsub::cost {

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
  const std::vector<bool> folded = ops::folded_nodes(graph);
  Cost total;
  for (ir::NodeId id : graph.node_ids()) {
    if (!folded[id]) total += node_cost(graph, id);
  }
  return total;
}

}  // namespace graphsub::cost
