// Reading ONNX models into the IR and writing the IR back as ONNX: the only code that sees ONNX.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "onnx_io/shared_weights.h"

namespace graphsub::onnx_io {

/// What import did, for `inspect` and logs.
struct ImportStats {
  int64_t opset = 0;
  std::size_t modelled_nodes = 0;
  std::size_t opaque_nodes = 0;
  /// For each op_type kept opaque although graphsub has an operator of that name: why, once.
  std::map<std::string, std::string> opaque_reasons;
  /// For each op_type of opaque_reasons: the opset that introduced the form of the operator the
  /// model's opset uses (Split at opset 23: 18, the form with num_outputs).
  std::map<std::string, int> opaque_forms;
  /// Tensors whose data the model keeps in external data files.
  int external_tensors = 0;
  /// Why ONNX's strict shape inference failed on a model its checker accepts (empty: it passed).
  std::string inference_error;
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
///
/// The model must pass onnx::checker. When ONNX's strict shape inference fails on it (ONNX has
/// bugs of its own there), a warning is logged, ImportStats::inference_error says why, and the
/// model is read with the types lenient inference gives. Before IR version 4 an
/// initializer listed as a graph input is a weight; from 4 it is that input's default. Sparse
/// initializers become dense weights (as runtimes read them). A modelled op whose constant
/// operands (OpDef::attr_inputs) are not weights, whose attributes or types graphsub does not
/// model, or whose inferred types contradict ONNX's stays opaque, and ImportStats says why. An
/// opaque node keeps its NodeProto without inputs, outputs and name (OpaqueInfo::onnx_node); the
/// values its subgraphs read from the enclosing graph become extra inputs after its own. Values
/// ONNX types as sequences, maps or optionals have an undefined TensorType; graph inputs and
/// outputs keep their declared ONNX types in ModelInfo::onnx_shell for export.
ir::Graph import_model(const std::string& path, const ImportOptions& options = {},
                       ImportStats* stats = nullptr);

/// The graph with its weight-only nodes computed, as export would: each value a weight-only node
/// computes (with the reference kernels) becomes a weight, and the nodes go. Graph outputs stay
/// computed. `graphsub optimize` searches from this graph, so rules see weights as weights (an
/// `Add(x, Identity(zeros))` is an add of zero) and no search spends itself rewriting nodes that
/// export folds anyway.
ir::Graph fold_weight_nodes(const ir::Graph& graph);

/// The graph with each opaque node modelled that import left opaque for want of a constant
/// operand (a Pad whose pads an exporter computes from the dims) and whose operand has since
/// become a weight (shape arithmetic resolved, weight-only nodes folded). Modelled as import
/// would model it, types checked against the node's current ones; a node that still cannot be
/// modelled stays as it was. `modelled`, when given, is increased by the nodes modelled.
ir::Graph model_opaque_nodes(const ir::Graph& graph, std::size_t* modelled = nullptr);

/// Options of export.
struct ExportOptions {
  /// Write weights larger than this many bytes to "<out>.data" beside the model (0: never, unless
  /// the model would pass protobuf's 2 GB limit).
  std::size_t external_data_threshold = 0;
  /// Write weights of at least its min_bytes() to this shared data file instead (once each, for
  /// every model exported into its folder, which must be the output's); nullptr: not. For the
  /// measured target's temporary models, not for a user's output (which must stand alone).
  SharedWeights* shared_weights = nullptr;
};

/// Writes the graph as ONNX: weight-only nodes folded into initializers by the reference kernels,
/// graphsub's own ops lowered to ONNX ops, graph input/output names and order, opset, IR version
/// and metadata kept. The model passes onnx::checker (and strict shape inference, or a warning
/// says why not: ONNX's inference has bugs of its own) before it is written; the file is written
/// to a temporary name and renamed, so a failure leaves no partial output. Throws graphsub::Error ("internal error: ..." when the graph cannot be expressed).
///
/// Nodes no graph output needs are left out. Values keep their names where unique; others get
/// "gs_<op>_<n>", unnamed nodes "<op_type>_<n>", an unnamed graph output "output_<n>". A graph
/// output whose value cannot take the output's name (a graph input, or a value output twice) is
/// copied to it by an Identity. Attributes are written as the opset's schema declares them; those
/// it does not know (Conv's activation) are dropped. A graph without ModelInfo is written with IR
/// version 8 and opset 17. Exporting the same graph twice gives identical bytes.
void export_model(const ir::Graph& graph, const std::string& path, const ExportOptions& options = {});

/// Reads one serialized TensorProto (the ONNX test data's input_N.pb / output_N.pb).
ir::Tensor read_tensor_file(const std::string& path);

}  // namespace graphsub::onnx_io
