// Reading ONNX models into the IR and writing the IR back as ONNX: the only code that sees ONNX.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace graphsub::onnx_io {

/// What import did, for `inspect` and logs.
struct ImportStats {
  int64_t opset = 0;
  std::size_t modelled_nodes = 0;
  std::size_t opaque_nodes = 0;
  /// For each op_type kept opaque although graphsub has an operator of that name: why, once.
  std::map<std::string, std::string> opaque_reasons;
};

/// Options of import.
struct ImportOptions {
  /// Graph inputs to turn into constants (by name), as if they were initializers. Used to read
  /// the ONNX node tests, whose shape and axes operands are inputs, and to specialize a model.
  std::map<std::string, ir::TensorPtr> constant_inputs;
};

/// Reads an ONNX model file (with external data relative to its folder). Nodes are re-sorted
/// topologically; initializers and Constant nodes become weights; modelled ops are canonicalized,
/// the rest stay opaque. Throws graphsub::Error with one clear message on any invalid input
/// (missing file, not ONNX, truncated, cycle, shape mismatch).
ir::Graph import_model(const std::string& path, const ImportOptions& options = {},
                       ImportStats* stats = nullptr);

/// Options of export.
struct ExportOptions {
  /// Write weights larger than this many bytes to "<out>.data" beside the model (0: never, unless
  /// the model would pass protobuf's 2 GB limit).
  std::size_t external_data_threshold = 0;
};

/// Writes the graph as ONNX: weight-only nodes folded into initializers by the reference kernels,
/// graphsub's own ops lowered to ONNX ops, graph input/output names and order, opset, IR version
/// and metadata kept. The model passes onnx::checker and strict shape inference before it is
/// written; the file is written to a temporary name and renamed, so a failure leaves no partial
/// output. Throws graphsub::Error.
void export_model(const ir::Graph& graph, const std::string& path, const ExportOptions& options = {});

/// Reads one serialized TensorProto (the ONNX test data's input_N.pb / output_N.pb).
ir::Tensor read_tensor_file(const std::string& path);

}  // namespace graphsub::onnx_io
