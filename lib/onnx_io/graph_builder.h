// Building the IR graph of a checked ONNX model: inputs, weights, nodes (modelled or opaque), outputs.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "onnx_io/onnx_io.h"

namespace graphsub::onnx_io {

/// A model read from disk and checked: data in memory, nodes in topological order.
struct LoadedModel {
  onnx::ModelProto model;
  /// The checked copy with ONNX's inferred value_info (and no initializers): the value types.
  onnx::ModelProto inferred;
  /// Why ONNX's strict shape inference failed (empty when it passed); see checked_copy.
  std::string inference_error;
  /// Per node: the outer-scope names its subgraphs read (its implicit inputs).
  std::vector<std::vector<std::string>> implicit;
  /// The model without its graph's nodes, initializers and value_info (ModelInfo::onnx_shell).
  std::string shell;
  /// Tensors whose data came from external data files.
  int external_tensors = 0;
};

/// A node as OpaqueInfo::onnx_node keeps it: serialized with its inputs, outputs and name cleared
/// (Node::name holds the name), so equal nodes have equal forms.
std::string opaque_form(const onnx::NodeProto& node);

/// Turns a loaded model into an ir::Graph. Consumes the model's tensor data (each initializer is
/// released once converted).
class GraphBuilder {
 public:
  GraphBuilder(LoadedModel& loaded, const ImportOptions& options);

  /// Builds the graph; throws graphsub::Error for a model that defines a name it reads nowhere.
  ir::Graph build(ImportStats& stats);

 private:
  void index_types();
  void check_constant_inputs() const;
  void add_inputs();
  ir::ValueId add_constant_input(const onnx::ValueInfoProto& input, const ir::TensorPtr& data);
  void add_initializers();
  void add_node(int index);
  bool add_constant(const onnx::NodeProto& node);
  bool add_modelled(const onnx::NodeProto& node, ir::OpKind kind);
  void add_opaque(int index);
  void add_outputs();
  void bind(const std::string& name, ir::ValueId id);
  void bind_outputs(const onnx::NodeProto& node, ir::NodeId id);
  ir::ValueId value_of(const std::string& name, const std::string& reader) const;
  std::vector<ir::ValueId> explicit_inputs(const onnx::NodeProto& node) const;
  ir::TensorType onnx_type(const std::string& name) const;
  void note_opaque(const onnx::NodeProto& node, const std::string& reason);

  LoadedModel& loaded_;
  onnx::GraphProto& proto_;
  const ImportOptions& options_;
  int64_t opset_ = 0;
  ImportStats stats_;
  ir::Graph graph_;
  std::unordered_map<std::string, ir::ValueId> values_;
  std::unordered_map<std::string, const onnx::TypeProto*> types_;
};

}  // namespace graphsub::onnx_io
