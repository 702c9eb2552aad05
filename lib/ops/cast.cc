// Cast: converts elements to another numeric type (ONNX Cast, opsets 6, 13, 19, 21 and 24).
#include <variant>

#include "ops/common.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `dtype` has a conversion kernel (or is not known yet).
std::string dtype_error(ir::DataType dtype) {
  if (dtype == ir::DataType::kUndefined || is_convertible(dtype)) return {};
  return "casts of " + ir::to_string(dtype) + " have no reference kernel";
}

/// The target type of a valid `to`; kUndefined otherwise.
ir::DataType target_of(const ir::Attributes& attrs) {
  const ir::AttrValue* to = attrs.find("to");
  const auto* code = to ? std::get_if<int64_t>(to) : nullptr;
  if (!code || *code <= 0 || !ir::is_valid(static_cast<int32_t>(*code))) {
    return ir::DataType::kUndefined;
  }
  return static_cast<ir::DataType>(*code);
}

/// Keeps `to` as the one attribute; rejects string and other non-numeric types on either side.
/// Opset 19's saturate and opset 24's round_mode only change casts to float8 and float4 types,
/// which have no reference kernel here (dtype_error refuses them), so a node keeping them is
/// read as the same cast without them.
std::string canonicalize(ImportContext& context) {
  for (const auto& [name, value] : context.attrs.items()) {
    if (name != "to" && name != "saturate" && name != "round_mode") return "attribute '" + name + "' is not modelled";
  }
  if (context.input_types.size() != 1) return "Cast takes one input";
  // An element type graphsub has no code for (float8, int4, ...) reads as undefined: keep opaque.
  if (context.input_types[0].dtype == ir::DataType::kUndefined) return "input element type not modelled";
  const ir::DataType target = target_of(context.attrs);
  if (target == ir::DataType::kUndefined) return "'to' is not an element type code";
  std::string reason = dtype_error(context.input_types[0].dtype);
  if (reason.empty()) reason = dtype_error(target);
  if (!reason.empty()) return reason;
  context.attrs.erase("saturate");
  context.attrs.erase("round_mode");
  return require_outputs(context, 1);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Cast takes one input");
  const ir::DataType target = target_of(node.attrs);
  std::string error = target == ir::DataType::kUndefined ? "'to' is not an element type code" : "";
  if (error.empty()) error = dtype_error(inputs[0].dtype);
  if (error.empty()) error = dtype_error(target);
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{target, inputs[0].shape}}, {}};
}

void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  convert_elements(*inputs[0], outputs[0]);
}

/// One conversion per element.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

}  // namespace

OpDef cast_op() {
  return OpDef{ir::OpKind::kCast, "Cast", true, 6, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
