// Folding weight-only nodes and finding the nodes the graph outputs need.
#include "onnx_io/export_plan.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/onnx_io.h"
#include "ops/registry.h"
#include "runtime/cpu_executor.h"

namespace graphsub::onnx_io {
namespace {

/// The node's input tensors when all are constant; empty (with `ok` false) otherwise.
std::vector<const ir::Tensor*> constant_inputs(const ir::Graph& graph, const ExportPlan& plan,
                                               const ir::Node& node, bool& ok) {
  std::vector<const ir::Tensor*> tensors;
  ok = true;
  for (ir::ValueId input : node.inputs) {
    if (input == ir::kNoValue) {
      tensors.push_back(nullptr);
      continue;
    }
    const ir::Tensor* data = plan.constant(graph, input).get();
    if (!data) ok = false;
    tensors.push_back(data);
  }
  return tensors;
}

/// Folds one node when it is modelled, has a kernel and reads only constants.
void try_fold(const ir::Graph& graph, ir::NodeId id, ExportPlan& plan) {
  const ir::Node& node = graph.node(id);
  if (node.op == ir::OpKind::kOpaque || !ops::op_def(node.op).kernel) return;
  bool ok = false;
  const std::vector<const ir::Tensor*> inputs = constant_inputs(graph, plan, node, ok);
  if (!ok) return;
  try {
    std::vector<ir::Tensor> outputs = runtime::CpuExecutor::run_node(node, inputs);
    for (std::size_t i = 0; i < outputs.size() && i < node.outputs.size(); ++i) {
      plan.folded[node.outputs[i]] = ir::share(std::move(outputs[i]));
    }
  } catch (const std::exception& error) {
    logger("onnx_io")->debug("{} node '{}' is not folded: {}", ops::kind_name(node.op), node.name,
                             error.what());
  }
}

bool is_folded(const ExportPlan& plan, const ir::Node& node) {
  return !node.outputs.empty() && plan.folded[node.outputs[0]] != nullptr;
}

/// Marks what the graph outputs need, from the outputs back, and lists the nodes to write.
void select_nodes(const ir::Graph& graph, const std::vector<ir::NodeId>& order, ExportPlan& plan) {
  for (ir::ValueId id : graph.outputs()) plan.needed[id] = 1;
  std::vector<ir::NodeId> reversed;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const ir::Node& node = graph.node(*it);
    bool used = false;
    for (ir::ValueId output : node.outputs) used = used || plan.needed[output];
    if (!used || is_folded(plan, node)) continue;
    reversed.push_back(*it);
    for (ir::ValueId input : node.inputs) {
      if (input != ir::kNoValue) plan.needed[input] = 1;
    }
  }
  plan.nodes.assign(reversed.rbegin(), reversed.rend());
}

}  // namespace

ir::TensorPtr ExportPlan::constant(const ir::Graph& graph, ir::ValueId id) const {
  if (folded[id]) return folded[id];
  const ir::Value& value = graph.value(id);
  return value.kind == ir::ValueKind::kWeight ? value.data : nullptr;
}

ExportPlan plan_export(const ir::Graph& graph) {
  const auto order = graph.topological_order();
  if (!order) throw Error("internal error: the graph to export has a cycle");
  ExportPlan plan;
  plan.folded.resize(graph.value_capacity());
  plan.needed.resize(graph.value_capacity(), 0);
  for (ir::NodeId id : *order) try_fold(graph, id, plan);
  select_nodes(graph, *order, plan);
  return plan;
}

ir::Graph fold_weight_nodes(const ir::Graph& graph) {
  const ExportPlan plan = plan_export(graph);
  const std::vector<ir::ValueId>& returned = graph.outputs();
  ir::Graph folded = graph;
  for (ir::NodeId id : graph.node_ids()) {
    if (!is_folded(plan, graph.node(id))) continue;
    for (ir::ValueId output : graph.node(id).outputs) {
      if (!plan.folded[output] || std::find(returned.begin(), returned.end(), output) != returned.end()) continue;
      folded.replace_all_uses(output, folded.add_weight(graph.value(output).name, plan.folded[output]));
    }
  }
  folded.remove_dead_nodes();
  return folded;
}

}  // namespace graphsub::onnx_io
