// Opaque nodes modelled again once the operands they lacked are weights.
#include <onnx/onnx_pb.h>

#include "ir/log.h"
#include "onnx_io/node_import.h"
#include "onnx_io/onnx_io.h"
#include "ops/registry.h"

namespace graphsub::onnx_io {
namespace {

/// True when `node` is an opaque node of the default domain, without subgraphs, of an op graphsub
/// models (which `kind` receives): import may have left it opaque for want of a constant operand
/// or a known rank that the graph now has.
bool worth_modelling(const ir::Node& node, ir::OpKind& kind) {
  if (node.op != ir::OpKind::kOpaque || !node.opaque) return false;
  const ir::OpaqueInfo& info = *node.opaque;
  if ((!info.domain.empty() && info.domain != "ai.onnx") || !info.implicit_names.empty()) return false;
  kind = ops::kind_from_onnx(info.op_type);
  return kind != ir::OpKind::kOpaque;
}

}  // namespace

ir::Graph model_opaque_nodes(const ir::Graph& graph, std::size_t* count) {
  ir::Graph out = graph;
  const int64_t opset = graph.model_info() ? graph.model_info()->onnx_opset() : 0;
  if (opset <= 0) return out;
  for (ir::NodeId id : graph.node_ids()) {
    ir::OpKind kind = ir::OpKind::kOpaque;
    if (!worth_modelling(out.node(id), kind)) continue;
    const ir::Node node = out.node(id);
    onnx::NodeProto proto;
    if (!proto.ParseFromString(node.opaque->onnx_node)) continue;
    NodeSource source{proto, kind, node.inputs, {}, opset};
    for (ir::ValueId input : node.inputs) proto.add_input(input == ir::kNoValue ? "" : out.value(input).name);
    for (ir::ValueId output : node.outputs) {
      proto.add_output(out.value(output).name);
      source.onnx_output_types.push_back(out.value(output).type);
    }
    ModelledNode modelled;
    if (const std::string reason = model_node(source, out, modelled); !reason.empty()) {
      logger("onnx_io")->debug("{} node '{}' stays opaque: {}", node.opaque->op_type, node.name, reason);
      continue;
    }
    std::vector<ir::OutputSpec> outputs;
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
      outputs.push_back({modelled.output_types[i], out.value(node.outputs[i]).name});
    }
    const ir::NodeId added = out.add_node(kind, std::move(modelled.inputs), outputs, std::move(modelled.attrs), node.name);
    for (std::size_t i = 0; i < node.outputs.size(); ++i) out.replace_all_uses(node.outputs[i], out.node(added).outputs[i]);
    out.remove_node(id);
    if (count) ++*count;
  }
  return out;
}

}  // namespace graphsub::onnx_io
