// IsNaN (opset 9+) and IsInf (opset 10+): which elements of a float tensor are NaN, or infinite
// (of the signs IsInf's detect_negative and detect_positive ask for). Exporters write them around
// attention (sdpa's fully masked rows: Where(IsNaN(softmax), 0, softmax)).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

const std::vector<ir::DataType> kFloating = {ir::DataType::kFloat, ir::DataType::kDouble};

std::string canonicalize_is_nan(ImportContext& context) {
  if (context.input_types.size() != 1) return "expects 1 input";
  if (std::string reason = check_attributes(context.attrs, {}); !reason.empty()) return reason;
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  return require_dtypes(context, kFloating);
}

std::string canonicalize_is_inf(ImportContext& context) {
  if (context.input_types.size() != 1) return "expects 1 input";
  if (std::string reason = check_attributes(context.attrs, {{"detect_negative", AttrType::kInt},
                                                            {"detect_positive", AttrType::kInt}});
      !reason.empty()) {
    return reason;
  }
  for (const char* name : {"detect_negative", "detect_positive"}) {
    const int64_t value = context.attrs.get_int(name, 1);
    if (value != 0 && value != 1) return std::string(name) + " must be 0 or 1";
    context.attrs.set(name, value);
  }
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  return require_dtypes(context, kFloating);
}

/// A bool tensor of the input's shape.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("expects 1 input");
  const ir::DataType dtype = inputs[0].dtype;
  if (dtype != ir::DataType::kFloat && dtype != ir::DataType::kDouble && dtype != ir::DataType::kUndefined) {
    return InferResult::failure(std::string(node.op == ir::OpKind::kIsNaN ? "IsNaN" : "IsInf") +
                                " takes float or double, not " + ir::to_string(dtype));
  }
  return InferResult{{ir::TensorType{ir::DataType::kBool, inputs[0].shape}}, {}};
}

void is_nan_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs, std::vector<ir::Tensor>& outputs) {
  dispatch_floating(inputs[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = inputs[0]->data<T>();
    uint8_t* out = outputs[0].mutable_data<uint8_t>();
    for (int64_t i = 0; i < inputs[0]->num_elements(); ++i) out[i] = std::isnan(in[i]) ? 1 : 0;
  });
}

void is_inf_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs, std::vector<ir::Tensor>& outputs) {
  const bool negative = node.attrs.get_int("detect_negative", 1) != 0;
  const bool positive = node.attrs.get_int("detect_positive", 1) != 0;
  dispatch_floating(inputs[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* in = inputs[0]->data<T>();
    uint8_t* out = outputs[0].mutable_data<uint8_t>();
    for (int64_t i = 0; i < inputs[0]->num_elements(); ++i) {
      out[i] = std::isinf(in[i]) && (in[i] > 0 ? positive : negative) ? 1 : 0;
    }
  });
}

/// One test per element.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

}  // namespace

OpDef is_nan_op() {
  return OpDef{ir::OpKind::kIsNaN, "IsNaN", true, 9, {}, canonicalize_is_nan, infer, is_nan_kernel, features};
}

OpDef is_inf_op() {
  return OpDef{ir::OpKind::kIsInf, "IsInf", true, 10, {}, canonicalize_is_inf, infer, is_inf_kernel, features};
}

}  // namespace graphsub::ops
