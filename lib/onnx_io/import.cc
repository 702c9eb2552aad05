// import_model: read an ONNX file, sort and check it, and build the IR graph.
#include <filesystem>
#include <new>

#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/graph_builder.h"
#include "onnx_io/model_file.h"
#include "onnx_io/node_order.h"
#include "onnx_io/onnx_io.h"
#include "onnx_io/subgraph_scope.h"
#include "onnx_io/tensor_proto.h"

namespace graphsub::onnx_io {
namespace {

/// Puts the nodes in topological order (the checker requires it), with their implicit inputs.
void sort_nodes(LoadedModel& loaded) {
  onnx::GraphProto& graph = *loaded.model.mutable_graph();
  std::vector<std::vector<std::string>> implicit;
  implicit.reserve(graph.node_size());
  for (const onnx::NodeProto& node : graph.node()) implicit.push_back(outer_scope_names(node));
  const std::vector<int> order = topological_node_order(graph, implicit);
  reorder_nodes(graph, order);
  for (int index : order) loaded.implicit.push_back(std::move(implicit[index]));
}

/// The model without the graph contents import turns into IR; graph inputs and outputs stay, so
/// export can restore their doc strings and any non-tensor types.
std::string model_shell(onnx::ModelProto& model) {
  onnx::GraphProto& graph = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> value_info;
  google::protobuf::RepeatedPtrField<onnx::SparseTensorProto> sparse;
  nodes.Swap(graph.mutable_node());
  initializers.Swap(graph.mutable_initializer());
  value_info.Swap(graph.mutable_value_info());
  sparse.Swap(graph.mutable_sparse_initializer());
  std::string shell = serialize_to_string(model);
  nodes.Swap(graph.mutable_node());
  initializers.Swap(graph.mutable_initializer());
  value_info.Swap(graph.mutable_value_info());
  sparse.Swap(graph.mutable_sparse_initializer());
  return shell;
}

void load(const std::string& path, LoadedModel& loaded) {
  parse_file(path, loaded.model, "an ONNX model");
  if (!loaded.model.has_graph()) throw Error("is not an ONNX model (it has no graph), or it is truncated");
  loaded.external_tensors = load_external_data(*loaded.model.mutable_graph(), std::filesystem::path(path).parent_path());
  sort_nodes(loaded);
  loaded.shell = model_shell(loaded.model);
  loaded.inferred = checked_copy(loaded.model, &loaded.inference_error);
  if (!loaded.inference_error.empty()) {
    logger("onnx_io")->warn("{}: ONNX's strict shape inference fails ({}); reading the model with the types it "
                            "could infer",
                            path, loaded.inference_error);
  }
}

}  // namespace

ir::Graph import_model(const std::string& path, const ImportOptions& options, ImportStats* stats) {
  try {
    LoadedModel loaded;
    load(path, loaded);
    ImportStats local;
    ir::Graph graph = GraphBuilder(loaded, options).build(local);
    local.external_tensors = loaded.external_tensors;
    local.inference_error = loaded.inference_error;
    if (stats) *stats = std::move(local);
    return graph;
  } catch (const Error& error) {
    throw Error(path + ": " + error.what());
  } catch (const std::bad_alloc&) {
    throw Error(path + ": out of memory while reading the model");
  }
}

}  // namespace graphsub::onnx_io
