// The IR graph of a checked ONNX model.
#include "onnx_io/graph_builder.h"

#include <onnx/defs/schema.h>

#include <unordered_set>

#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/model_file.h"
#include "onnx_io/node_import.h"
#include "onnx_io/tensor_proto.h"
#include "onnx_io/value_types.h"
#include "ops/registry.h"

namespace graphsub::onnx_io {
namespace {

std::shared_ptr<const ir::ModelInfo> model_info(const LoadedModel& loaded) {
  auto info = std::make_shared<ir::ModelInfo>();
  info->ir_version = loaded.model.ir_version();
  for (const onnx::OperatorSetIdProto& opset : loaded.model.opset_import()) {
    info->opsets.emplace_back(opset.domain(), opset.version());
  }
  info->onnx_shell = loaded.shell;
  return info;
}

ir::TensorType type_of(const ir::Tensor& tensor) {
  return ir::TensorType{tensor.dtype(), ir::Shape::of(tensor.dims())};
}

bool in_default_domain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

std::string node_label(const onnx::NodeProto& node) {
  if (!node.name().empty()) return node.op_type() + " node '" + node.name() + "'";
  if (node.output_size() == 0) return "a " + node.op_type() + " node";
  return node.op_type() + " node producing '" + node.output(0) + "'";
}

}  // namespace

std::string opaque_form(const onnx::NodeProto& node) {
  onnx::NodeProto copy = node;
  copy.clear_input();
  copy.clear_output();
  copy.clear_name();
  return serialize_to_string(copy);
}

GraphBuilder::GraphBuilder(LoadedModel& loaded, const ImportOptions& options)
    : loaded_(loaded), proto_(*loaded.model.mutable_graph()), options_(options) {}

ir::Graph GraphBuilder::build(ImportStats& stats) {
  graph_.set_model_info(model_info(loaded_));
  graph_.set_graph_name(proto_.name());
  opset_ = graph_.model_info()->onnx_opset();
  stats_.opset = opset_;
  index_types();
  add_inputs();
  add_initializers();
  for (int i = 0; i < proto_.node_size(); ++i) add_node(i);
  add_outputs();
  stats = std::move(stats_);
  return std::move(graph_);
}

void GraphBuilder::index_types() {
  const onnx::GraphProto& inferred = loaded_.inferred.graph();
  for (const auto& info : inferred.input()) types_[info.name()] = &info.type();
  for (const auto& info : inferred.value_info()) types_[info.name()] = &info.type();
  for (const auto& info : inferred.output()) types_[info.name()] = &info.type();
}

void GraphBuilder::check_constant_inputs() const {
  std::unordered_set<std::string> input_names;
  for (const onnx::ValueInfoProto& input : proto_.input()) input_names.insert(input.name());
  for (const auto& [name, data] : options_.constant_inputs) {
    if (!input_names.count(name)) throw Error("has no graph input named '" + name + "' to make constant");
  }
}

/// Graph inputs in order: a constant input becomes a weight; an input with an initializer is an
/// input with a default from IR version 4, and a weight (added with the initializers) before.
void GraphBuilder::add_inputs() {
  check_constant_inputs();
  std::unordered_map<std::string, onnx::TensorProto*> initializers;
  for (onnx::TensorProto& tensor : *proto_.mutable_initializer()) {
    initializers.emplace(tensor.name(), &tensor);
  }
  for (const onnx::ValueInfoProto& input : proto_.input()) {
    const std::string& name = input.name();
    auto constant = options_.constant_inputs.find(name);
    auto initializer = initializers.find(name);
    if (constant != options_.constant_inputs.end()) {
      bind(name, add_constant_input(input, constant->second));
    } else if (initializer == initializers.end()) {
      bind(name, graph_.add_input(name, tensor_type_from_proto(input.type())));
    } else if (loaded_.model.ir_version() >= 4) {
      ir::TensorPtr data = ir::share(take_tensor_from_proto(*initializer->second));
      bind(name, graph_.add_input(name, tensor_type_from_proto(input.type()), std::move(data)));
    }
  }
}

ir::ValueId GraphBuilder::add_constant_input(const onnx::ValueInfoProto& input, const ir::TensorPtr& data) {
  const ir::TensorType declared = tensor_type_from_proto(input.type());
  if (!data || types_conflict(declared, type_of(*data))) {
    throw Error("constant input '" + input.name() + "' does not match its declared type " +
                ir::to_string(declared));
  }
  return graph_.add_weight(input.name(), data);
}

void GraphBuilder::add_initializers() {
  for (onnx::TensorProto& tensor : *proto_.mutable_initializer()) {
    if (values_.count(tensor.name())) continue;
    // A copy: take_tensor_from_proto frees the string tensor.name() refers to, and the arguments of
    // one call may be evaluated in any order (clang reads the name first).
    const std::string name = tensor.name();
    bind(name, graph_.add_weight(name, ir::share(take_tensor_from_proto(tensor))));
  }
  for (const onnx::SparseTensorProto& sparse : proto_.sparse_initializer()) {
    const std::string& name = sparse.values().name();
    bind(name, graph_.add_weight(name, ir::share(tensor_from_sparse(sparse))));
  }
}

void GraphBuilder::add_node(int index) {
  const onnx::NodeProto& node = proto_.node(index);
  if (in_default_domain(node) && node.op_type() == "Constant" && add_constant(node)) return;
  const ir::OpKind kind = in_default_domain(node) ? ops::kind_from_onnx(node.op_type()) : ir::OpKind::kOpaque;
  if (kind != ir::OpKind::kOpaque && add_modelled(node, kind)) return;
  add_opaque(index);
}

bool GraphBuilder::add_constant(const onnx::NodeProto& node) {
  if (node.output_size() != 1 || node.output(0).empty()) return false;
  ir::TensorPtr data = constant_tensor(node);
  if (!data) return false;
  bind(node.output(0), graph_.add_weight(node.output(0), std::move(data)));
  return true;
}

bool GraphBuilder::add_modelled(const onnx::NodeProto& node, ir::OpKind kind) {
  NodeSource source{node, kind, explicit_inputs(node), {}, opset_};
  for (const std::string& name : node.output()) source.onnx_output_types.push_back(onnx_type(name));
  ModelledNode modelled;
  const std::string reason = model_node(source, graph_, modelled);
  if (!reason.empty()) {
    note_opaque(node, reason);
    return false;
  }
  std::vector<ir::OutputSpec> outputs;
  for (std::size_t i = 0; i < modelled.output_types.size(); ++i) {
    outputs.push_back({modelled.output_types[i], node.output(static_cast<int>(i))});
  }
  bind_outputs(node, graph_.add_node(kind, std::move(modelled.inputs), outputs, std::move(modelled.attrs),
                                     node.name()));
  ++stats_.modelled_nodes;
  return true;
}

void GraphBuilder::add_opaque(int index) {
  const onnx::NodeProto& node = proto_.node(index);
  auto info = std::make_shared<ir::OpaqueInfo>();
  info->op_type = node.op_type();
  info->domain = node.domain();
  info->onnx_node = opaque_form(node);
  info->num_explicit_inputs = node.input_size();
  info->implicit_names = loaded_.implicit[index];
  std::vector<ir::ValueId> inputs = explicit_inputs(node);
  for (const std::string& name : info->implicit_names) inputs.push_back(value_of(name, node_label(node)));
  std::vector<ir::OutputSpec> outputs;
  for (const std::string& name : node.output()) outputs.push_back({onnx_type(name), name});
  bind_outputs(node, graph_.add_node(ir::OpKind::kOpaque, std::move(inputs), outputs, {}, node.name(),
                                     std::move(info)));
  ++stats_.opaque_nodes;
}

void GraphBuilder::add_outputs() {
  std::vector<ir::ValueId> outputs;
  for (const onnx::ValueInfoProto& output : proto_.output()) {
    outputs.push_back(value_of(output.name(), "the graph output"));
  }
  graph_.set_outputs(std::move(outputs));
}

void GraphBuilder::bind(const std::string& name, ir::ValueId id) { values_.emplace(name, id); }

void GraphBuilder::bind_outputs(const onnx::NodeProto& node, ir::NodeId id) {
  const std::vector<ir::ValueId>& outputs = graph_.node(id).outputs;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = node.output(static_cast<int>(i));
    if (!name.empty()) bind(name, outputs[i]);
  }
}

ir::ValueId GraphBuilder::value_of(const std::string& name, const std::string& reader) const {
  if (name.empty()) return ir::kNoValue;
  auto it = values_.find(name);
  if (it == values_.end()) {
    throw Error(reader + " reads '" + name + "', which no input, initializer or node defines");
  }
  return it->second;
}

std::vector<ir::ValueId> GraphBuilder::explicit_inputs(const onnx::NodeProto& node) const {
  std::vector<ir::ValueId> inputs;
  inputs.reserve(node.input_size());
  for (const std::string& name : node.input()) inputs.push_back(value_of(name, node_label(node)));
  return inputs;
}

ir::TensorType GraphBuilder::onnx_type(const std::string& name) const {
  auto it = types_.find(name);
  return it == types_.end() ? ir::TensorType{} : tensor_type_from_proto(*it->second);
}

void GraphBuilder::note_opaque(const onnx::NodeProto& node, const std::string& reason) {
  stats_.opaque_reasons.emplace(node.op_type(), reason);
  if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "")) {
    stats_.opaque_forms.emplace(node.op_type(), schema->SinceVersion());
  }
  logger("onnx_io")->debug("{} stays opaque: {}", node_label(node), reason);
}

}  // namespace graphsub::onnx_io
