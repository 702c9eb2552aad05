// Conversion of one ONNX node to a modelled IR operator, or the reason it stays opaque.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub::onnx_io {

/// What the importer knows of an ONNX node it tries to model.
struct NodeSource {
  const onnx::NodeProto& node;
  ir::OpKind kind;                                ///< ops::kind_from_onnx(op_type); not kOpaque.
  std::vector<ir::ValueId> inputs;                ///< The ONNX inputs; kNoValue for "".
  std::vector<ir::TensorType> onnx_output_types;  ///< What ONNX inferred for each output.
  int64_t opset;                                  ///< Version of the default domain.
};

/// A modelled node ready for Graph::add_node.
struct ModelledNode {
  ir::Attributes attrs;                      ///< Canonical attributes, constant inputs folded in.
  std::vector<ir::ValueId> inputs;           ///< Data inputs only; trailing omitted ones trimmed.
  std::vector<ir::TensorType> output_types;  ///< graphsub's inference.
};

/// Converts `source` (whose inputs are values of `graph`) into `out`: attributes converted,
/// constant inputs read into attributes (OpDef::attr_inputs), canonicalized and inferred, the
/// inferred output types checked against ONNX's. Returns an empty string when the node is
/// modelled, else the reason it stays opaque.
std::string model_node(const NodeSource& source, const ir::Graph& graph, ModelledNode& out);

/// The tensor a Constant node defines (value, value_float(s), value_int(s), value_string(s)), or
/// nullptr when the IR cannot hold it (sparse_value).
ir::TensorPtr constant_tensor(const onnx::NodeProto& node);

}  // namespace graphsub::onnx_io
