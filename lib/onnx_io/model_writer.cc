// The ModelProto of an IR graph.
#include "onnx_io/model_writer.h"

#include <unordered_set>

#include "ir/error.h"
#include "onnx_io/node_export.h"
#include "onnx_io/subgraph_scope.h"
#include "onnx_io/tensor_proto.h"
#include "onnx_io/value_types.h"
#include "ops/registry.h"

namespace graphsub::onnx_io {
namespace {

/// The model version of a graph built without an imported model (its opset: ir::kDefaultOnnxOpset).
constexpr int64_t kDefaultIrVersion = 8;

/// The names defined inside the subgraphs of the opaque nodes to write, which fresh names avoid.
std::unordered_set<std::string> subgraph_names(const ir::Graph& graph, const ExportPlan& plan) {
  std::unordered_set<std::string> names;
  for (ir::NodeId id : plan.nodes) {
    const ir::Node& node = graph.node(id);
    if (!node.opaque) continue;
    onnx::NodeProto proto;
    if (proto.ParseFromString(node.opaque->onnx_node)) collect_subgraph_names(proto, names);
  }
  return names;
}

std::string op_label(const ir::Node& node) {
  return node.opaque ? node.opaque->op_type : ops::kind_name(node.op);
}

std::vector<std::pair<std::string, int64_t>> opsets_of(const ir::ModelInfo* info) {
  if (!info) return {{"", ir::kDefaultOnnxOpset}};
  return info->opsets;
}

/// True when a type can be written as an ONNX value type: element type and rank known.
bool is_writable(const ir::TensorType& type) {
  return type.dtype != ir::DataType::kUndefined && type.shape.rank_known;
}

void take_declared(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& infos,
                   std::unordered_map<std::string, onnx::ValueInfoProto>& declared) {
  for (onnx::ValueInfoProto& info : infos) declared.emplace(info.name(), std::move(info));
  infos.Clear();
}

}  // namespace

ModelWriter::ModelWriter(const ir::Graph& graph, const ExportPlan& plan)
    : graph_(graph),
      plan_(plan),
      names_(static_cast<std::size_t>(graph.value_capacity()), subgraph_names(graph, plan)) {}

onnx::ModelProto ModelWriter::write() {
  read_shell();
  name_values();
  write_inputs();
  write_constants();
  write_nodes();
  write_outputs();
  if (!graph_.model_info() || graph_.model_info()->value_info) write_value_info();
  if (model_.ir_version() < 4) list_initializers_as_inputs();
  return std::move(model_);
}

void ModelWriter::read_shell() {
  const ir::ModelInfo* info = graph_.model_info().get();
  if (info && !info->onnx_shell.empty() && !model_.ParseFromString(info->onnx_shell)) {
    throw Error("internal error: the stored model shell does not parse");
  }
  model_.set_ir_version(info ? info->ir_version : kDefaultIrVersion);
  model_.clear_opset_import();
  for (const auto& [domain, version] : opsets_of(info)) {
    onnx::OperatorSetIdProto& opset = *model_.add_opset_import();
    opset.set_domain(domain);
    opset.set_version(version);
  }
  opset_ = info ? info->onnx_opset() : ir::kDefaultOnnxOpset;
  onnx::GraphProto& graph = *model_.mutable_graph();
  take_declared(*graph.mutable_input(), declared_inputs_);
  take_declared(*graph.mutable_output(), declared_outputs_);
  graph.set_name(graph_.name().empty() ? "graphsub" : graph_.name());
}

/// Priorities: graph inputs keep their names; graph outputs get theirs; values read by subgraphs
/// get the name the subgraphs use; then every value keeps its own name if still free.
void ModelWriter::name_values() {
  for (ir::ValueId id : graph_.inputs()) {
    const std::string& name = graph_.value(id).name;
    if (!names_.values().claim(name))
      throw Error("internal error: graph input name '" + name + "' is empty or not unique");
    names_.set(id, name);
  }
  for (std::size_t i = 0; i < graph_.outputs().size(); ++i) name_output(i);
  for (ir::NodeId id : plan_.nodes) prefer_implicit_names(graph_.node(id));
  name_constants();
  name_node_outputs();
}

/// An output takes its name when its value is free to take it, else an Identity copies the value
/// to that name. An output named "" (a graph built in code) gets a fresh name "output_<n>".
void ModelWriter::name_output(std::size_t index) {
  const ir::ValueId id = graph_.outputs()[index];
  const std::string& declared = graph_.output_names()[index];
  std::string name = declared;
  if (declared.empty()) {
    name = names_.values().fresh("output");
  } else if (!names_.values().claim(declared)) {
    if (names_.value(id) != declared)
      throw Error("internal error: graph output name '" + declared + "' is taken");
    output_names_.push_back(declared);
    return;
  }
  output_names_.push_back(name);
  if (!names_.is_named(id) && graph_.value(id).kind != ir::ValueKind::kInput) {
    names_.set(id, name);
  } else {
    output_copies_.emplace_back(id, name);
  }
}

void ModelWriter::prefer_implicit_names(const ir::Node& node) {
  if (!node.opaque) return;
  const ir::OpaqueInfo& info = *node.opaque;
  for (std::size_t k = 0; k < info.implicit_names.size(); ++k) {
    const ir::ValueId id = node.inputs.at(info.num_explicit_inputs + k);
    if (names_.is_named(id) || !graph_.value(id).name.empty()) continue;
    if (names_.values().claim(info.implicit_names[k])) names_.set(id, info.implicit_names[k]);
  }
}

void ModelWriter::name_constants() {
  for (ir::ValueId id = 0; id < graph_.value_capacity(); ++id) {
    if (!plan_.needed[id] || names_.is_named(id) || !plan_.constant(graph_, id)) continue;
    names_.set(id, names_.values().keep_or_fresh(graph_.value(id).name, "gs_const"));
  }
}

/// Unused outputs that had no name stay unnamed (omitted optional outputs): every such output
/// of an opaque node, and of a modelled node those its schema makes optional.
void ModelWriter::name_node_outputs() {
  for (ir::NodeId node_id : plan_.nodes) {
    const ir::Node& node = graph_.node(node_id);
    for (std::size_t i = 0; i < node.outputs.size(); ++i) {
      const ir::ValueId id = node.outputs[i];
      const std::string& own = graph_.value(id).name;
      const bool omitted = own.empty() && !plan_.needed[id] &&
                           (node.opaque || output_may_be_omitted(node, i, opset_));
      if (names_.is_named(id) || omitted) continue;
      names_.set(id, names_.values().keep_or_fresh(own, "gs_" + op_label(node)));
    }
  }
}

void ModelWriter::write_inputs() {
  onnx::GraphProto& graph = *model_.mutable_graph();
  for (ir::ValueId id : graph_.inputs()) {
    const ir::Value& value = graph_.value(id);
    *graph.add_input() = value_info(value.name, value.type, declared_inputs_);
    if (value.data) write_initializer(value.data, value.name);
  }
}

void ModelWriter::write_initializer(const ir::TensorPtr& data, const std::string& name) {
  onnx::GraphProto& graph = *model_.mutable_graph();
  onnx::TensorProto& tensor = *graph.add_initializer();
  tensor.set_name(name);
  // Strings are copied, and so is a tensor already lent to another initializer.
  if (data->dtype() == ir::DataType::kString || !lent_tensors_.insert(data.get()).second) {
    tensor_to_proto(*data, tensor);
    return;
  }
  tensor_header_to_proto(*data, tensor);
  tensor.mutable_raw_data();  // present, filled by a DataLoan
  lent_.emplace_back(graph.initializer_size() - 1, data);
}

DataLoan::DataLoan(onnx::ModelProto& model, std::vector<std::pair<int, ir::TensorPtr>> lent)
    : model_(model), lent_(std::move(lent)) {
  swap();
}

void DataLoan::swap() {
  onnx::GraphProto& graph = *model_.mutable_graph();
  for (const auto& [index, tensor] : lent_) {
    // The tensor was made non-const (ir::share); no other thread reads it during an export.
    const_cast<ir::Tensor&>(*tensor).swap_bytes(*graph.mutable_initializer(index)->mutable_raw_data());
  }
}

void ModelWriter::write_constants() {
  for (ir::ValueId id = 0; id < graph_.value_capacity(); ++id) {
    if (!plan_.needed[id]) continue;
    const ir::TensorPtr data = plan_.constant(graph_, id);
    if (data) write_initializer(data, names_.value(id));
  }
}

void ModelWriter::write_nodes() {
  NodeSink sink{*model_.mutable_graph(), names_, opset_};
  for (ir::NodeId id : plan_.nodes) {
    const ir::Node& node = graph_.node(id);
    if (node.op == ir::OpKind::kOpaque) {
      write_opaque_node(node, sink);
    } else {
      write_modelled_node(graph_, node, sink);
    }
  }
}

void ModelWriter::write_outputs() {
  onnx::GraphProto& graph = *model_.mutable_graph();
  for (std::size_t i = 0; i < graph_.outputs().size(); ++i) {
    const ir::Value& value = graph_.value(graph_.outputs()[i]);
    *graph.add_output() = value_info(output_names_[i], value.type, declared_outputs_);
  }
  for (const auto& [id, name] : output_copies_) {
    onnx::NodeProto& identity = *graph.add_node();
    identity.set_op_type("Identity");
    identity.set_name(names_.node("", "Identity"));
    identity.add_input(names_.value(id));
    identity.add_output(name);
  }
}

void ModelWriter::write_value_info() {
  std::unordered_set<std::string> outputs(output_names_.begin(), output_names_.end());
  onnx::GraphProto& graph = *model_.mutable_graph();
  for (ir::NodeId node_id : plan_.nodes) {
    for (ir::ValueId id : graph_.node(node_id).outputs) {
      const std::string& name = names_.value(id);
      const ir::TensorType& type = graph_.value(id).type;
      if (name.empty() || outputs.count(name) || !is_writable(type)) continue;
      onnx::ValueInfoProto& info = *graph.add_value_info();
      info.set_name(name);
      tensor_type_to_proto(type, *info.mutable_type());
    }
  }
}

/// Before IR version 4 every initializer must also be a graph input.
void ModelWriter::list_initializers_as_inputs() {
  onnx::GraphProto& graph = *model_.mutable_graph();
  std::unordered_set<std::string> inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) inputs.insert(input.name());
  for (const onnx::TensorProto& tensor : graph.initializer()) {
    if (inputs.count(tensor.name())) continue;
    ir::TensorType type{static_cast<ir::DataType>(tensor.data_type()),
                        ir::Shape::of({tensor.dims().begin(), tensor.dims().end()})};
    *graph.add_input() = value_info(tensor.name(), type, declared_inputs_);
  }
}

/// A value's ValueInfo: as declared in the imported model — the model's interface, written back
/// as it was read even where inference knows more or names a dim differently — else the IR's
/// tensor type.
onnx::ValueInfoProto ModelWriter::value_info(
    const std::string& name, const ir::TensorType& type,
    const std::unordered_map<std::string, onnx::ValueInfoProto>& declared) const {
  onnx::ValueInfoProto info;
  auto it = declared.find(name);
  if (it != declared.end()) info = it->second;
  info.set_name(name);
  if (!info.has_type()) {
    info.clear_type();
    tensor_type_to_proto(type, *info.mutable_type());
  }
  return info;
}

}  // namespace graphsub::onnx_io
