// Writing one IR node as ONNX node(s): modelled ops per opset, graphsub's own forms lowered, opaque
// nodes restored.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>

#include "ir/graph.h"
#include "onnx_io/export_names.h"

namespace graphsub::onnx_io {

/// Where node writers put what they make: nodes and initializers go to `graph`, names come from
/// `names`, and `opset` (the default domain's version) decides attribute and input forms.
struct NodeSink {
  onnx::GraphProto& graph;
  ExportNames& names;
  int64_t opset;
};

/// Writes a modelled node: the attributes the opset's schema knows (graphsub's own, such as the
/// activation of Conv and MatMul, left out), OpDef::attr_inputs as initializer inputs from their since_opset and as
/// attributes before it. Lowers the fused forms of Conv and MatMul (Conv's residual Z and
/// MatMul's C to an Add, then the activation to a Relu/Sigmoid/Tanh node; the last node writes the
/// IR node's output), SMul to Mul and Enlarge to Pad. Throws graphsub::Error ("internal error:
/// ...") for a node with no ONNX form.
void write_modelled_node(const ir::Graph& graph, const ir::Node& node, NodeSink& sink);

/// True when output `index` of a modelled node may be written as "" (omitted): its op's schema
/// at `opset` marks that output optional.
bool output_may_be_omitted(const ir::Node& node, std::size_t index, int64_t opset);

/// Writes an opaque node as imported, with the current names of its explicit inputs and outputs.
/// An implicit input whose value now has another name than its subgraphs read gets an Identity
/// producing that name, when the name is free.
void write_opaque_node(const ir::Node& node, NodeSink& sink);

}  // namespace graphsub::onnx_io
