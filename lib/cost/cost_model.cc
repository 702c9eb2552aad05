// Graph cost as the sum of node costs, weight folding and the memory cap.
#include "cost/cost_model.h"

#include <cmath>
#include <utility>

#include "cost/written_chains.h"
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

Cost CostModel::graph_cost(const ir::Graph& graph) const { return summed(graph, false); }

Cost CostModel::written_cost(const ir::Graph& graph) const { return summed(graph, prices_written_chains()); }

Cost CostModel::summed(const ir::Graph& graph, bool chains_as_fused) const {
  if (std::isfinite(memory_cap_bytes_) && memory_upper_bound(graph) > memory_cap_bytes_) {
    return Cost::infinite();
  }
  // The nodes export folds, then those a chain's fused form is priced for: their own cost is 0.
  std::vector<bool> priced = ops::folded_nodes(graph);
  Cost total;
  const std::vector<WrittenChain> chains = chains_as_fused ? written_chains(graph, priced) : std::vector<WrittenChain>{};
  if (!chains.empty()) {
    ir::Graph fused_forms = graph;
    for (const WrittenChain& chain : chains) {
      ir::NodeId fused = -1;
      if (!add_fused_form(fused_forms, chain, fused)) continue;
      Cost cost = node_cost(fused_forms, fused);
      if (chain.other_head >= 0) {
        // Either convolution may take the sum: the one whose fused form costs less does.
        cost += node_cost(graph, chain.other_head);
        ir::NodeId instead = -1;
        if (add_fused_form(fused_forms, swapped(graph, chain), instead)) {
          const Cost other = node_cost(fused_forms, instead) + node_cost(graph, chain.head);
          if (other.time_ms < cost.time_ms) cost = other;
        }
        priced[chain.other_head] = true;
      }
      total += cost;
      priced[chain.head] = true;
      for (ir::NodeId id : chain.tail) priced[id] = true;
    }
  }
  for (ir::NodeId id : graph.node_ids()) {
    if (!priced[id]) total += node_cost(graph, id);
  }
  return total;
}

}  // namespace graphsub::cost
