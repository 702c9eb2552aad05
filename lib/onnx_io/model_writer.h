// Building the ONNX model of an IR graph from an export plan.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
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
  onnx::ModelProto write();

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
};

}  // namespace graphsub::onnx_io
