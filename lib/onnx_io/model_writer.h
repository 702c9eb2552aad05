// Building the ONNX model of an IR graph from an export plan.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "onnx_io/export_names.h"
#include "onnx_io/export_plan.h"

namespace graphsub::onnx_io {

/// Writes the ModelProto of a graph: the imported model's shell (IR version, opsets, metadata,
/// functions), graph inputs in order with their defaults, constants as initializers, the planned
/// nodes, graph outputs in order under their names, and value_info for typed intermediates.
class ModelWriter {
 public:
  ModelWriter(const ir::Graph& graph, const ExportPlan& plan);

  /// The model; throws graphsub::Error ("internal error: ...") when the graph cannot be written.
  /// The initializers listed by lent() have an empty raw_data: a DataLoan fills them.
  onnx::ModelProto write();

  /// Initializers (by index in the main graph) whose bytes are to be lent from these tensors.
  const std::vector<std::pair<int, ir::TensorPtr>>& lent() const { return lent_; }

 private:
  void read_shell();
  void name_values();
  void name_output(std::size_t index);
  void prefer_implicit_names(const ir::Node& node);
  void name_constants();
  void name_node_outputs();
  void write_inputs();
  void write_constants();
  void write_nodes();
  void write_outputs();
  void write_value_info();
  void write_initializer(const ir::TensorPtr& data, const std::string& name);
  void list_initializers_as_inputs();
  onnx::ValueInfoProto value_info(
      const std::string& name, const ir::TensorType& type,
      const std::unordered_map<std::string, onnx::ValueInfoProto>& declared) const;

  const ir::Graph& graph_;
  const ExportPlan& plan_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  ExportNames names_;
  /// Graph inputs and outputs as the imported model declared them (doc strings, non-tensor types).
  std::unordered_map<std::string, onnx::ValueInfoProto> declared_inputs_;
  std::unordered_map<std::string, onnx::ValueInfoProto> declared_outputs_;
  /// The names graph outputs are written under, in order.
  std::vector<std::string> output_names_;
  /// Graph outputs whose value has another name: (value, output name), written as Identity nodes.
  std::vector<std::pair<ir::ValueId, std::string>> output_copies_;
  std::vector<std::pair<int, ir::TensorPtr>> lent_;
  std::unordered_set<const ir::Tensor*> lent_tensors_;
};

/// Lends the bytes of a written model's tensors to its initializers for as long as it lives,
/// without copying them (Tensor::swap_bytes), and takes them back when it ends, exceptions
/// included. Exporting VGG-16 thus holds its 553 MB of weights once, not twice.
class DataLoan {
 public:
  DataLoan(onnx::ModelProto& model, std::vector<std::pair<int, ir::TensorPtr>> lent);
  DataLoan(const DataLoan&) = delete;
  DataLoan& operator=(const DataLoan&) = delete;
  ~DataLoan() { swap(); }

 private:
  void swap();
  onnx::ModelProto& model_;
  std::vector<std::pair<int, ir::TensorPtr>> lent_;
};

}  // namespace graphsub::onnx_io
