// Constant-computable nodes.
#include "ops/folding.h"

#include <stdexcept>

#include "ops/registry.h"

namespace graphsub::ops {
namespace {

/// True when export can compute the node itself: a modelled op with a reference kernel.
bool is_foldable_kind(ir::OpKind op) {
  return op != ir::OpKind::kOpaque && op_def(op).kernel != nullptr;
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
  std::optional<std::vector<ir::NodeId>> order = graph.topological_order();
  if (!order) throw std::logic_error("folded_nodes: the graph has a cycle");
  for (ir::NodeId id : *order) {
    const ir::Node& node = graph.node(id);
    if (!is_foldable_kind(node.op) || !reads_only_constants(node, constant)) continue;
    folded[id] = true;
    for (ir::ValueId output : node.outputs) constant[output] = true;
  }
  return folded;
}

}  // namespace graphsub::ops
