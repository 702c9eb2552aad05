// ConstantOfShape: a tensor of a run-time shape filled with one value (ONNX ConstantOfShape,
// opset 9).
#include <algorithm>
#include <cstring>
#include <variant>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// The fill value, or null when the attribute is absent or not a tensor.
ir::TensorPtr value_of(const ir::Attributes& attrs) {
  const ir::AttrValue* value = attrs.find("value");
  const auto* tensor = value ? std::get_if<ir::TensorPtr>(value) : nullptr;
  return tensor ? *tensor : nullptr;
}

/// Empty when `value` is one element of a fixed-size type.
std::string value_error(const ir::TensorPtr& value) {
  if (!value) return "value is not a tensor";
  if (value->num_elements() != 1) return "value does not hold exactly one element";
  if (ir::element_size(value->dtype()) == 0) {
    return ir::to_string(value->dtype()) + " values are not modelled";
  }
  return {};
}

/// Fills ONNX's default value (float32 0) and stores the value as a 1-element 1-D tensor.
std::string canonicalize(ImportContext& context) {
  for (const auto& [name, value] : context.attrs.items()) {
    if (name != "value") return "attribute '" + name + "' is not modelled";
  }
  if (!context.attrs.has("value")) {
    context.attrs.set("value", ir::share(ir::Tensor::from_floats({1}, {0.0f})));
  }
  const ir::TensorPtr value = value_of(context.attrs);
  std::string reason = first_reason({value_error(value), require_inputs(context, 1),
                                     require_outputs(context, 1)});
  if (reason.empty()) reason = shape_operand_error(context.input_types[0]);
  if (!reason.empty()) return reason;
  std::vector<std::byte> bytes(value->bytes(), value->bytes() + value->byte_size());
  context.attrs.set("value", ir::share(ir::Tensor(value->dtype(), {1}, std::move(bytes))));
  return {};
}

/// The value's type; the rank is the shape operand's length when known, the dims are unknown.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("ConstantOfShape takes one shape");
  const ir::TensorPtr value = value_of(node.attrs);
  std::string error = value_error(value);
  if (error.empty()) error = shape_operand_error(inputs[0]);
  if (!error.empty()) return InferResult::failure(error);
  const ir::Shape& operand = inputs[0].shape;
  ir::Shape out = ir::Shape::unknown();
  if (operand.rank_known && operand.dims[0].is_known()) {
    out = ir::Shape{true, std::vector<ir::Dim>(static_cast<std::size_t>(operand.dims[0].value))};
  }
  return InferResult{{ir::TensorType{value->dtype(), out}}, {}};
}

/// Allocates the output from the shape operand's values and copies the value into every element.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::TensorPtr value = value_of(node.attrs);
  const std::vector<int64_t> sizes = inputs[0]->to_int64s();
  if (std::any_of(sizes.begin(), sizes.end(), [](int64_t size) { return size < 0; })) {
    throw Error("ConstantOfShape: the shape has a negative size");
  }
  outputs[0] = ir::Tensor(value->dtype(), sizes);
  const std::size_t size = value->byte_size();
  for (int64_t i = 0; i < outputs[0].num_elements(); ++i) {
    std::memcpy(outputs[0].mutable_bytes() + i * static_cast<int64_t>(size), value->bytes(), size);
  }
}

}  // namespace

OpDef constant_of_shape_op() {
  return OpDef{ir::OpKind::kConstantOfShape, "ConstantOfShape", true, 9, {},
               canonicalize, infer, kernel, copy_features};
}

}  // namespace graphsub::ops
