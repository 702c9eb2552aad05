// IR nodes to ONNX NodeProtos, per opset.
#include "onnx_io/node_export.h"

#include <onnx/defs/schema.h>

#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "ir/error.h"
#include "onnx_io/attribute_proto.h"
#include "onnx_io/tensor_proto.h"
#include "ops/indexing.h"
#include "ops/registry.h"

namespace graphsub::onnx_io {
namespace {

/// An attribute an old opset must state for the canonical (inference) form: BatchNormalization
/// before opset 7 runs in training mode unless is_test is set.
struct ImpliedAttribute {
  ir::OpKind op;
  const char* name;
  int64_t value;
};
constexpr ImpliedAttribute kImpliedAttributes[] = {{ir::OpKind::kBatchNormalization, "is_test", 1}};

[[noreturn]] void internal_error(const ir::Node& node, const std::string& what) {
  throw Error("internal error: cannot export " + std::string(ops::kind_name(node.op)) + " node '" +
              node.name + "': " + what);
}

const onnx::OpSchema& schema_for(const ir::Node& node, const std::string& op_type, int64_t opset) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), "");
  if (!schema) internal_error(node, op_type + " does not exist in opset " + std::to_string(opset));
  return *schema;
}

/// True when `attr` is written as an input at this opset.
bool is_input_now(const ops::OpDef& def, const std::string& attr, int64_t opset) {
  for (const ops::AttrInput& entry : def.attr_inputs) {
    if (attr == entry.attr && opset >= entry.since_opset) return true;
  }
  return false;
}

std::string add_initializer(const ir::Tensor& tensor, const std::string& hint, NodeSink& sink) {
  std::string name = sink.names.values().fresh("gs_" + hint);
  onnx::TensorProto& proto = *sink.graph.add_initializer();
  tensor_to_proto(tensor, proto);
  proto.set_name(name);
  return name;
}

/// A float operand as a scalar of the data input's element type (Clip's bounds, Pad's value),
/// converted as the reference kernels convert it (integers saturate).
ir::Tensor float_operand(const ir::Node& node, ir::DataType dtype, const std::vector<float>& values) {
  if (values.size() != 1) internal_error(node, "a float operand that is not a scalar");
  try {
    return ops::scalar_of(dtype, values[0]);
  } catch (const std::invalid_argument& error) {
    internal_error(node, error.what());
  }
}

/// Clip's canonical form holds an absent bound as the infinity on its own side; it is omitted.
bool is_absent_bound(const std::string& attr, const std::vector<float>& values) {
  if (values.size() != 1 || !std::isinf(values[0])) return false;
  return (attr == "min" && values[0] < 0) || (attr == "max" && values[0] > 0);
}

std::vector<float> float_list(const ir::Node& node, const ir::AttrValue& value) {
  if (const auto* f = std::get_if<float>(&value)) return {*f};
  if (const auto* list = std::get_if<std::vector<float>>(&value)) return *list;
  internal_error(node, "a float input held as " + ir::to_string(value));
}

/// True when the schema types input `index` as its first input is typed (Clip's min and max, Pad's
/// constant_value): a float operand is then a scalar of the data's element type, else a float list
/// (Resize's roi and scales).
bool typed_as_data(const onnx::OpSchema& schema, int index) {
  const auto& inputs = schema.inputs();
  return index < static_cast<int>(inputs.size()) && inputs[index].GetTypeStr() == inputs[0].GetTypeStr();
}

/// The initializer for one attribute input, or nullopt when the input is omitted.
std::optional<std::string> attr_input(const ir::Graph& graph, const ir::Node& node, const onnx::OpSchema& schema,
                                      const ops::AttrInput& entry, NodeSink& sink) {
  const ir::AttrValue* value = node.attrs.find(entry.attr);
  if (!value || sink.opset < entry.since_opset) return std::nullopt;
  if (!entry.as_floats) {
    const std::vector<int64_t> ints = node.attrs.get_ints(entry.attr, {});
    return add_initializer(ir::Tensor::from_int64s({static_cast<int64_t>(ints.size())}, ints), entry.attr,
                           sink);
  }
  const std::vector<float> floats = float_list(node, *value);
  if (!typed_as_data(schema, entry.input_index)) {
    return add_initializer(ir::Tensor::from_floats({static_cast<int64_t>(floats.size())}, floats), entry.attr,
                           sink);
  }
  if (is_absent_bound(entry.attr, floats)) return std::nullopt;
  const ir::DataType dtype = graph.value(node.inputs.at(0)).type.dtype;
  return add_initializer(float_operand(node, dtype, floats), entry.attr, sink);
}

/// The name for an omitted input before a present one: "", or an empty float tensor where the
/// opset's schema requires the input (Resize's roi and scales before opset 13).
std::string omitted_input(const onnx::OpSchema& schema, int position, NodeSink& sink) {
  const auto& inputs = schema.inputs();
  if (position >= static_cast<int>(inputs.size()) || inputs[position].GetOption() != onnx::OpSchema::Single) {
    return {};
  }
  return add_initializer(ir::Tensor::from_floats({0}, {}), inputs[position].GetName(), sink);
}

/// The ONNX inputs: the data inputs with the attribute inputs placed at their positions, and
/// omitted ones (see omitted_input) before a present one.
std::vector<std::string> onnx_inputs(const ir::Graph& graph, const ir::Node& node, const onnx::OpSchema& schema,
                                     NodeSink& sink) {
  std::map<int, std::string> placed;
  for (const ops::AttrInput& entry : ops::op_def(node.op).attr_inputs) {
    if (auto name = attr_input(graph, node, schema, entry, sink)) placed[entry.input_index] = *name;
  }
  const int last = placed.empty() ? -1 : placed.rbegin()->first;
  std::vector<std::string> names;
  std::size_t next = 0;
  for (int position = 0; next < node.inputs.size() || position <= last; ++position) {
    auto it = placed.find(position);
    if (it != placed.end()) {
      names.push_back(it->second);
    } else if (next < node.inputs.size()) {
      names.push_back(sink.names.value(node.inputs[next++]));
    } else {
      names.push_back(omitted_input(schema, position, sink));
    }
  }
  return names;
}

void write_attributes(const ir::Node& node, const onnx::OpSchema& schema, int64_t opset,
                      onnx::NodeProto& proto) {
  const ops::OpDef& def = ops::op_def(node.op);
  const auto& known = schema.attributes();
  for (const auto& [name, value] : node.attrs.items()) {
    auto it = known.find(name);
    if (it == known.end() || is_input_now(def, name, opset)) continue;
    try {
      *proto.add_attribute() = attr_to_proto(name, value, it->second.type);
    } catch (const std::invalid_argument& error) {
      internal_error(node, error.what());
    }
  }
  for (const ImpliedAttribute& implied : kImpliedAttributes) {
    if (implied.op == node.op && known.count(implied.name) && !node.attrs.has(implied.name)) {
      *proto.add_attribute() = attr_to_proto(implied.name, implied.value, onnx::AttributeProto::INT);
    }
  }
}

const char* activation_op(const ir::Node& node, const std::string& activation) {
  if (activation == "relu") return "Relu";
  if (activation == "sigmoid") return "Sigmoid";
  if (activation == "tanh") return "Tanh";
  internal_error(node, "unknown activation '" + activation + "'");
}

/// The input graphsub adds after the product, which the ONNX operator does not take: Conv's
/// residual Z (input 3) and MatMul's C (input 2).
std::optional<std::size_t> fused_summand(const ir::Node& node) {
  if (node.op == ir::OpKind::kConv && node.inputs.size() == 4) return 3;
  if (node.op == ir::OpKind::kMatMul && node.inputs.size() == 3) return 2;
  return std::nullopt;
}

/// Appends `op_type`(hidden, operands...) writing `producer`'s output, which `producer` now writes
/// to a fresh `hidden` instead: the last node of a lowering keeps the IR node's output name.
onnx::NodeProto& append_after(onnx::NodeProto& producer, const char* op_type,
                              const std::vector<std::string>& operands, NodeSink& sink) {
  const std::string output = producer.output(0);
  std::string hint = producer.op_type();
  for (char& c : hint) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string hidden = sink.names.values().fresh("gs_" + hint);
  producer.set_output(0, hidden);
  onnx::NodeProto& next = *sink.graph.add_node();
  next.set_op_type(op_type);
  next.set_name(sink.names.node("", op_type));
  next.add_input(hidden);
  for (const std::string& operand : operands) next.add_input(operand);
  next.add_output(output);
  return next;
}

/// Add(·, summand); before opset 7 Add broadcasts only when told to (C of a smaller shape, which then
/// must be a suffix of the product's, as the legacy rule has it).
onnx::NodeProto& append_summand(const ir::Graph& graph, const ir::Node& node, std::size_t index,
                                onnx::NodeProto& producer, NodeSink& sink) {
  onnx::NodeProto& add = append_after(producer, "Add", {sink.names.value(node.inputs[index])}, sink);
  const ir::Shape& summand = graph.value(node.inputs[index]).type.shape;
  if (sink.opset < 7 && summand != graph.value(node.outputs.at(0)).type.shape) {
    *add.add_attribute() = attr_to_proto("broadcast", int64_t{1}, onnx::AttributeProto::INT);
  }
  return add;
}

/// Lowers graphsub's fused forms of Conv and MatMul after their ONNX node: the summand (Conv's Z,
/// MatMul's C) as an Add, then the activation as a Relu/Sigmoid/Tanh node.
void lower_fused_forms(const ir::Graph& graph, const ir::Node& node, onnx::NodeProto& product,
                       NodeSink& sink) {
  if (node.op != ir::OpKind::kConv && node.op != ir::OpKind::kMatMul) return;
  onnx::NodeProto* last = &product;
  if (const std::optional<std::size_t> summand = fused_summand(node)) {
    last = &append_summand(graph, node, *summand, *last, sink);
  }
  const std::string activation = node.attrs.get_string("activation", "none");
  if (activation != "none") append_after(*last, activation_op(node, activation), {}, sink);
}

void write_onnx_node(const ir::Graph& graph, const ir::Node& node, const std::string& op_type,
                     NodeSink& sink) {
  const onnx::OpSchema& schema = schema_for(node, op_type, sink.opset);
  std::vector<std::string> inputs = onnx_inputs(graph, node, schema, sink);
  // Conv and MatMul have no attr_inputs, so ONNX input i is IR input i; the summand is the last.
  if (const std::optional<std::size_t> summand = fused_summand(node)) inputs.resize(*summand);
  onnx::NodeProto& proto = *sink.graph.add_node();
  proto.set_op_type(op_type);
  proto.set_name(sink.names.node(node.name, op_type));
  for (const std::string& input : inputs) proto.add_input(input);
  write_attributes(node, schema, sink.opset, proto);
  for (ir::ValueId output : node.outputs) proto.add_output(sink.names.value(output));
  lower_fused_forms(graph, node, proto, sink);
}

/// Enlarge (zero-pad a kernel W [M, C, k...] to kernel_shape, centred) as a constant Pad.
void write_enlarge(const ir::Graph& graph, const ir::Node& node, NodeSink& sink) {
  const auto sizes = graph.value(node.inputs.at(0)).type.shape.sizes();
  const std::vector<int64_t> target = node.attrs.get_ints("kernel_shape", {});
  if (!sizes || sizes->size() != target.size() + 2) internal_error(node, "the kernel's sizes are unknown");
  if (sink.opset < 2) internal_error(node, "Pad takes pads from opset 2");
  std::vector<int64_t> pads(2 * sizes->size(), 0);
  for (std::size_t axis = 0; axis < target.size(); ++axis) {
    pads[axis + 2] = pads[sizes->size() + axis + 2] = (target[axis] - (*sizes)[axis + 2]) / 2;
  }
  std::string pads_input;
  if (sink.opset >= 11) {
    pads_input =
        add_initializer(ir::Tensor::from_int64s({static_cast<int64_t>(pads.size())}, pads), "pads", sink);
  }
  onnx::NodeProto& pad = *sink.graph.add_node();
  pad.set_op_type("Pad");
  pad.set_name(sink.names.node(node.name, "Pad"));
  pad.add_input(sink.names.value(node.inputs[0]));
  if (pads_input.empty()) {
    *pad.add_attribute() = attr_to_proto("pads", pads, onnx::AttributeProto::INTS);
  } else {
    pad.add_input(pads_input);
  }
  pad.add_output(sink.names.value(node.outputs.at(0)));
}

/// Gives an implicit input the name its subgraphs read through an Identity, when they differ.
void bridge_implicit_inputs(const ir::Node& node, NodeSink& sink) {
  const ir::OpaqueInfo& info = *node.opaque;
  for (std::size_t k = 0; k < info.implicit_names.size(); ++k) {
    const std::string& have = sink.names.value(node.inputs.at(info.num_explicit_inputs + k));
    const std::string& want = info.implicit_names[k];
    if (have == want || !sink.names.values().claim(want)) continue;
    onnx::NodeProto& identity = *sink.graph.add_node();
    identity.set_op_type("Identity");
    identity.set_name(sink.names.node("", "Identity"));
    identity.add_input(have);
    identity.add_output(want);
  }
}

}  // namespace

void write_modelled_node(const ir::Graph& graph, const ir::Node& node, NodeSink& sink) {
  if (node.op == ir::OpKind::kSMul) return write_onnx_node(graph, node, "Mul", sink);
  if (node.op == ir::OpKind::kEnlarge) return write_enlarge(graph, node, sink);
  const ops::OpDef& def = ops::op_def(node.op);
  if (!def.is_onnx) internal_error(node, "it has no ONNX form and was not folded");
  write_onnx_node(graph, node, def.name, sink);
}

bool output_may_be_omitted(const ir::Node& node, std::size_t index, int64_t opset) {
  if (node.opaque) return false;
  const ops::OpDef& def = ops::op_def(node.op);
  if (!def.is_onnx) return false;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(def.name, static_cast<int>(opset), "");
  return schema && index < schema->outputs().size() &&
         schema->outputs()[index].GetOption() == onnx::OpSchema::Optional;
}

void write_opaque_node(const ir::Node& node, NodeSink& sink) {
  const ir::OpaqueInfo& info = *node.opaque;
  bridge_implicit_inputs(node, sink);
  onnx::NodeProto& proto = *sink.graph.add_node();
  if (!proto.ParseFromString(info.onnx_node))
    internal_error(node, "its stored " + info.op_type + " does not parse");
  proto.set_name(sink.names.node(node.name, info.op_type));
  for (int i = 0; i < info.num_explicit_inputs; ++i) proto.add_input(sink.names.value(node.inputs.at(i)));
  for (ir::ValueId output : node.outputs) proto.add_output(sink.names.value(output));
}

}  // namespace graphsub::onnx_io
