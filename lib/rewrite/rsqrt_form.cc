// The reciprocal of a square root written as the division onnxruntime recognises in RMSNorm.
#include "rewrite/rsqrt_form.h"

#include <vector>

namespace graphsub::rewrite {
namespace {

/// The one-element 1 of `dtype` (float32 or float64), the dividend of the division.
ir::TensorPtr one_of(ir::DataType dtype) {
  if (dtype == ir::DataType::kFloat) return ir::share(ir::Tensor::from_floats({}, {1.0f}));
  ir::Tensor one(ir::DataType::kDouble, {});
  one.mutable_data<double>()[0] = 1.0;
  return ir::share(std::move(one));
}

}  // namespace

ir::Graph write_rsqrt_as_division(const ir::Graph& graph, int* rewritten) {
  ir::Graph out = graph;
  int count = 0;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    if (node.op != ir::OpKind::kReciprocal || node.inputs.size() != 1 || node.outputs.size() != 1) continue;
    const ir::Value& root = graph.value(node.inputs[0]);
    if (root.kind != ir::ValueKind::kIntermediate || graph.node(root.producer).op != ir::OpKind::kSqrt) continue;
    const ir::Value& result = graph.value(node.outputs[0]);
    if (result.type.dtype != ir::DataType::kFloat && result.type.dtype != ir::DataType::kDouble) continue;
    const ir::ValueId one = out.add_weight({}, one_of(result.type.dtype));
    const ir::NodeId division =
        out.add_node(ir::OpKind::kDiv, {one, node.inputs[0]}, {{result.type, result.name}}, {}, node.name);
    out.replace_all_uses(node.outputs[0], out.node(division).outputs[0]);
    out.remove_node(id);
    ++count;
  }
  if (rewritten) *rewritten = count;
  return count > 0 ? out : graph;
}

}  // namespace graphsub::rewrite
