// Modelling one imported ONNX node: attributes, constant inputs, canonical form, type checks.
#include "onnx_io/node_import.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cstdint>

#include "onnx_io/attribute_proto.h"
#include "onnx_io/tensor_proto.h"
#include "onnx_io/value_types.h"
#include "ops/operands.h"
#include "ops/registry.h"

namespace graphsub::onnx_io {
namespace {

std::string check_opset(const ops::OpDef& def, int64_t opset) {
  if (opset >= def.since_opset) return {};
  return "opset " + std::to_string(opset) + " predates the modelled semantics (opset " +
         std::to_string(def.since_opset) + ")";
}

/// The number of outputs the node uses: up to its last non-empty output name. Trailing omitted
/// outputs are as if absent. An omitted output before a used one is modelled where the schema
/// marks it optional (LSTM's Y when only Y_h is wanted): its value gets no name and export omits
/// it again while nothing reads it.
std::string count_outputs(const onnx::NodeProto& node, int64_t opset, int& count) {
  count = node.output_size();
  while (count > 0 && node.output(count - 1).empty()) --count;
  if (count == 0) return "the node has no used output";
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), "");
  for (int i = 0; i < count; ++i) {
    if (!node.output(i).empty()) continue;
    const bool optional = schema && static_cast<std::size_t>(i) < schema->outputs().size() &&
                          schema->outputs()[static_cast<std::size_t>(i)].GetOption() ==
                              onnx::OpSchema::Optional;
    if (!optional) return "output " + std::to_string(i) + " is omitted but its schema does not make it optional";
  }
  return {};
}

std::string convert_attributes(const onnx::NodeProto& node, ir::Attributes& attrs) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    std::optional<ir::AttrValue> value = attr_from_proto(attribute);
    if (!value) {
      return "attribute '" + attribute.name() + "' is a " +
             onnx::AttributeProto::AttributeType_Name(attribute.type()) + ", which is not modelled";
    }
    attrs.set(attribute.name(), std::move(*value));
  }
  return {};
}

/// The first attribute operand that is not a constant, or nullptr.
const ops::AttrInput* computed_operand(const ops::OpDef& def, const ir::Graph& graph,
                                       const std::vector<ir::ValueId>& inputs) {
  for (const ops::AttrInput& entry : def.attr_inputs) {
    const auto index = static_cast<std::size_t>(entry.input_index);
    if (index < inputs.size() && inputs[index] != ir::kNoValue &&
        graph.value(inputs[index]).kind != ir::ValueKind::kWeight) {
      return &entry;
    }
  }
  return nullptr;
}

/// Trims trailing omitted inputs.
void trim_omitted(std::vector<ir::ValueId>& inputs) {
  while (!inputs.empty() && inputs.back() == ir::kNoValue) inputs.pop_back();
}

/// Reads the constant inputs that are attributes in the IR, then removes every such position
/// (present or omitted) and trims trailing omitted inputs. When an operand is computed at run
/// time and the op has a run-time form, every operand stays an input instead (`runtime` set).
std::string take_attr_inputs(const ops::OpDef& def, const ir::Graph& graph, ModelledNode& out,
                             bool& runtime) {
  if (const ops::AttrInput* computed = computed_operand(def, graph, out.inputs)) {
    if (!def.infer_runtime) return std::string("input '") + computed->attr + "' is not a constant";
    runtime = true;
    trim_omitted(out.inputs);
    return {};
  }
  std::vector<char> taken(out.inputs.size(), 0);
  for (const ops::AttrInput& entry : def.attr_inputs) {
    const auto index = static_cast<std::size_t>(entry.input_index);
    if (index >= out.inputs.size()) continue;
    taken[index] = 1;
    if (out.inputs[index] == ir::kNoValue) continue;
    std::string reason = ops::read_operand(*graph.value(out.inputs[index]).data, entry, out.attrs);
    if (!reason.empty()) return reason;
  }
  std::vector<ir::ValueId> kept;
  for (std::size_t i = 0; i < out.inputs.size(); ++i) {
    if (!taken[i]) kept.push_back(out.inputs[i]);
  }
  trim_omitted(kept);
  out.inputs = std::move(kept);
  return {};
}

std::vector<ir::TensorType> input_types(const ir::Graph& graph, const std::vector<ir::ValueId>& inputs) {
  std::vector<ir::TensorType> types;
  types.reserve(inputs.size());
  for (ir::ValueId id : inputs) types.push_back(id == ir::kNoValue ? ir::TensorType{} : graph.value(id).type);
  return types;
}

std::string canonicalize(const ops::OpDef& def, const NodeSource& source, int num_outputs,
                         const std::vector<ir::TensorType>& types, bool runtime, ModelledNode& out) {
  std::vector<ir::TensorType> data_types = types;
  if (runtime) data_types.resize(std::min(data_types.size(), ops::first_operand_slot(def)));
  ops::ImportContext context{out.attrs, data_types, num_outputs, source.opset, runtime};
  try {
    return def.canonicalize(context);
  } catch (const std::exception& error) {
    return std::string("canonicalize failed: ") + error.what();
  }
}

/// Checks graphsub's inferred output types against ONNX's for the same outputs.
std::string compare_types(const NodeSource& source, const std::vector<ir::TensorType>& ours) {
  for (std::size_t i = 0; i < ours.size() && i < source.onnx_output_types.size(); ++i) {
    if (types_conflict(ours[i], source.onnx_output_types[i])) {
      return "graphsub infers " + ir::to_string(ours[i]) + " for output '" + source.node.output(i) +
             "', ONNX infers " + ir::to_string(source.onnx_output_types[i]);
    }
  }
  return {};
}

std::string infer(const ops::OpDef& def, const NodeSource& source, int num_outputs,
                  const std::vector<ir::TensorType>& types, ModelledNode& out) {
  ir::Node probe;
  probe.op = source.kind;
  probe.attrs = out.attrs;
  probe.inputs = out.inputs;
  ops::InferResult result;
  try {
    result = ops::is_runtime_form(def, types.size()) ? def.infer_runtime(probe, types)
                                                      : def.infer(probe, types);
  } catch (const std::exception& error) {
    return std::string("shape inference failed: ") + error.what();
  }
  if (!result.ok()) return "shape inference: " + result.error;
  if (result.outputs.size() != static_cast<std::size_t>(num_outputs)) {
    return "graphsub infers " + std::to_string(result.outputs.size()) + " outputs, the node uses " +
           std::to_string(num_outputs);
  }
  out.output_types = std::move(result.outputs);
  if (std::string conflict = compare_types(source, out.output_types); !conflict.empty()) return conflict;
  for (std::size_t i = 0; i < out.output_types.size() && i < source.onnx_output_types.size(); ++i) {
    out.output_types[i] = refine_type(out.output_types[i], source.onnx_output_types[i]);
  }
  return {};
}

std::vector<int64_t> list_dims(int size) { return {static_cast<int64_t>(size)}; }

}  // namespace

std::string model_node(const NodeSource& source, const ir::Graph& graph, ModelledNode& out) {
  const ops::OpDef& def = ops::op_def(source.kind);
  int num_outputs = 0;
  out.inputs = source.inputs;
  std::string reason = check_opset(def, source.opset);
  if (reason.empty()) reason = count_outputs(source.node, source.opset, num_outputs);
  if (reason.empty()) reason = convert_attributes(source.node, out.attrs);
  bool runtime = false;
  if (reason.empty()) reason = take_attr_inputs(def, graph, out, runtime);
  if (!reason.empty()) return reason;
  const std::vector<ir::TensorType> types = input_types(graph, out.inputs);
  reason = canonicalize(def, source, num_outputs, types, runtime, out);
  if (!reason.empty()) return reason;
  return infer(def, source, num_outputs, types, out);
}

ir::TensorPtr constant_tensor(const onnx::NodeProto& node) {
  if (node.attribute_size() != 1) return nullptr;
  const onnx::AttributeProto& attribute = node.attribute(0);
  const std::string& name = attribute.name();
  if (name == "value" && attribute.has_t()) return ir::share(tensor_from_proto(attribute.t()));
  if (name == "value_float") return ir::share(ir::Tensor::from_floats({}, {attribute.f()}));
  if (name == "value_int") return ir::share(ir::Tensor::from_int64s({}, {attribute.i()}));
  if (name == "value_string") return ir::share(ir::Tensor({}, {attribute.s()}));
  if (name == "value_floats") {
    return ir::share(ir::Tensor::from_floats(list_dims(attribute.floats_size()),
                                             {attribute.floats().begin(), attribute.floats().end()}));
  }
  if (name == "value_ints") {
    return ir::share(ir::Tensor::from_int64s(list_dims(attribute.ints_size()),
                                             {attribute.ints().begin(), attribute.ints().end()}));
  }
  if (name == "value_strings") {
    return ir::share(ir::Tensor(list_dims(attribute.strings_size()),
                                {attribute.strings().begin(), attribute.strings().end()}));
  }
  return nullptr;
}

}  // namespace graphsub::onnx_io
