// Softmax along one axis (before opset 13 only the last axis is modelled), numerically stable.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Opset 13 made Softmax per-axis; before, it flattened the input to 2-D at `axis`, which is the
/// same only over the last axis.
constexpr int64_t kPerAxisOpset = 13;

std::string check_signature(const ImportContext& context) {
  if (context.input_types.size() != 1) return "expects 1 input";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  return require_dtypes(context, {ir::DataType::kFloat, ir::DataType::kDouble});
}

/// Normalizes `axis` to [0, rank); before opset 13 (default 1) only the last axis is modelled,
/// from 13 (default -1) any.
std::string canonicalize(ImportContext& context) {
  if (std::string reason = check_signature(context); !reason.empty()) return reason;
  const ir::Shape& shape = context.input_types[0].shape;
  if (!shape.rank_known) return "Softmax of unknown rank";
  const auto rank = static_cast<int64_t>(shape.rank());
  const bool per_axis = context.opset >= kPerAxisOpset;
  const std::optional<int64_t> axis =
      normalize_axis(context.attrs.get_int("axis", per_axis ? -1 : 1), rank);
  if (!axis) return "axis out of range";
  if (!per_axis && *axis != rank - 1) return "opset<13 Softmax over several axes";
  context.attrs.set("axis", *axis);
  return {};
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("expects 1 input");
  const ir::TensorType& input = inputs[0];
  if (input.dtype != ir::DataType::kFloat && input.dtype != ir::DataType::kDouble &&
      input.dtype != ir::DataType::kUndefined) {
    return InferResult::failure("no kernel for element type " + ir::to_string(input.dtype));
  }
  const int64_t axis = node.attrs.get_int("axis", -1);
  if (input.shape.rank_known && (axis < 0 || axis >= static_cast<int64_t>(input.shape.rank()))) {
    return InferResult::failure("axis " + std::to_string(axis) + " out of range for " +
                                ir::to_string(input.shape));
  }
  return InferResult{{input}, {}};
}

/// Softmax of `count` values spaced `stride` apart, less their maximum so exp cannot overflow.
template <class T>
void softmax_line(const T* in, T* out, int64_t count, int64_t stride) {
  T largest = in[0];
  for (int64_t i = 1; i < count; ++i) largest = std::max(largest, in[i * stride]);
  T sum = 0;
  for (int64_t i = 0; i < count; ++i) {
    out[i * stride] = std::exp(in[i * stride] - largest);
    sum += out[i * stride];
  }
  for (int64_t i = 0; i < count; ++i) out[i * stride] /= sum;
}

/// The input seen as [outer, count, inner] with `axis` in the middle.
template <class T>
void softmax(const ir::Tensor& input, int64_t axis, ir::Tensor& output) {
  const std::vector<int64_t>& dims = input.dims();
  const int64_t count = dims[axis];
  if (count == 0) return;
  const int64_t outer = ir::num_elements(std::vector<int64_t>(dims.begin(), dims.begin() + axis));
  const int64_t inner = ir::num_elements(std::vector<int64_t>(dims.begin() + axis + 1, dims.end()));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t start = o * count * inner + i;
      softmax_line(input.data<T>() + start, output.mutable_data<T>() + start, count, inner);
    }
  }
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const int64_t axis = node.attrs.get_int("axis", -1);
  if (inputs[0]->dtype() == ir::DataType::kDouble) {
    softmax<double>(*inputs[0], axis, outputs[0]);
  } else {
    softmax<float>(*inputs[0], axis, outputs[0]);
  }
}

/// Five FLOPs per element: max, subtract, exp, sum, divide.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 5);
}

}  // namespace

OpDef softmax_op() {
  return OpDef{ir::OpKind::kSoftmax, "Softmax", true, 1, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
