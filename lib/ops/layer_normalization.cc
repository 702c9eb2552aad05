// LayerNormalization (opset 17), output Y only: normalizes X over axes [axis, rank), then
// Y = normalized * Scale + B with Scale and B broadcast to X. Computed in double, stored float32.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"
#include "ops/strided_offset.h"

namespace graphsub::ops {
namespace {

constexpr float kDefaultEpsilon = 1e-5f;
/// stash_type 1 (float32) is the only precision ONNX defines for the statistics of float32 data.
constexpr int64_t kFloatStash = 1;

/// Only Y is modelled: the Mean and InvStdDev outputs serve training.
std::string check_signature(const ImportContext& context) {
  if (context.num_outputs != 1) return "the Mean and InvStdDev outputs are not modelled";
  if (context.input_types.size() < 2 || context.input_types.size() > 3) {
    return "LayerNormalization takes X, Scale and an optional B";
  }
  if (context.attrs.get_int("stash_type", kFloatStash) != kFloatStash) {
    return "stash_type other than 1 is not modelled";
  }
  return require_dtypes(context, {ir::DataType::kFloat});
}

/// Fills epsilon and stash_type and normalizes axis (default -1) into [0, rank).
std::string canonicalize(ImportContext& context) {
  if (std::string reason = check_signature(context); !reason.empty()) return reason;
  const ir::Shape& shape = context.input_types[0].shape;
  if (!shape.rank_known) return "LayerNormalization of unknown rank";
  const std::optional<int64_t> axis =
      normalize_axis(context.attrs.get_int("axis", -1), static_cast<int64_t>(shape.rank()));
  if (!axis) return "axis out of range";
  context.attrs.set("axis", *axis);
  context.attrs.set("epsilon", context.attrs.get_float("epsilon", kDefaultEpsilon));
  context.attrs.set("stash_type", kFloatStash);
  return {};
}

/// Empty when `parameter` broadcasts to `x` without enlarging it (as far as the dims are known).
std::string check_broadcasts_to(const ir::Shape& parameter, const ir::Shape& x) {
  if (!parameter.rank_known || !x.rank_known) return {};
  if (parameter.rank() > x.rank()) return "Scale and B may not have a higher rank than X";
  const std::size_t offset = x.rank() - parameter.rank();
  for (std::size_t i = 0; i < parameter.rank(); ++i) {
    const ir::Dim& p = parameter.dims[i];
    const ir::Dim& d = x.dims[offset + i];
    if (p.is_known() && p.value != 1 && d.is_known() && d.value != p.value) {
      return "shape " + ir::to_string(parameter) + " does not broadcast to X " + ir::to_string(x);
    }
  }
  return {};
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() < 2 || inputs.size() > 3) {
    return InferResult::failure("LayerNormalization takes X, Scale and an optional B");
  }
  for (const ir::TensorType& input : inputs) {
    if (input.dtype != ir::DataType::kFloat && input.dtype != ir::DataType::kUndefined) {
      return InferResult::failure("no kernel for element type " + ir::to_string(input.dtype));
    }
  }
  const ir::Shape& x = inputs[0].shape;
  const int64_t axis = node.attrs.get_int("axis", -1);
  if (x.rank_known && (axis < 0 || axis >= static_cast<int64_t>(x.rank()))) {
    return InferResult::failure("axis " + std::to_string(axis) + " out of range for " +
                                ir::to_string(x));
  }
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    if (std::string error = check_broadcasts_to(inputs[i].shape, x); !error.empty()) {
      return InferResult::failure(error);
    }
  }
  return InferResult{{ir::TensorType{ir::DataType::kFloat, x}}, {}};
}

/// Mean and 1 / sqrt(variance + epsilon) of `count` values, in double.
struct RowStatistics {
  double mean = 0;
  double inv_std_dev = 0;
};

RowStatistics row_statistics(const float* row, int64_t count, double epsilon) {
  double sum = 0;
  for (int64_t i = 0; i < count; ++i) sum += row[i];
  const double mean = sum / static_cast<double>(count);
  double squares = 0;
  for (int64_t i = 0; i < count; ++i) squares += (row[i] - mean) * (row[i] - mean);
  return {mean, 1 / std::sqrt(squares / static_cast<double>(count) + epsilon)};
}

/// An operand broadcast to X's sizes: its data and strides, or 0 and no data when omitted.
struct Broadcast {
  const float* data = nullptr;
  std::vector<int64_t> strides;
  double at(int64_t flat, const std::vector<int64_t>& sizes) const {
    return data ? data[strided_offset(flat, sizes, strides)] : 0.0;
  }
};

Broadcast broadcast_to(const ir::Tensor* operand, const std::vector<int64_t>& sizes) {
  if (!operand) return {};
  return {operand->data<float>(), broadcast_strides(operand->dims(), sizes)};
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& x = *inputs[0];
  const std::vector<int64_t>& sizes = x.dims();
  const auto axis = static_cast<std::size_t>(node.attrs.get_int("axis", -1));
  const int64_t row_size = product_of_sizes(sizes, axis, sizes.size());
  const double epsilon = node.attrs.get_float("epsilon", kDefaultEpsilon);
  const Broadcast scale = broadcast_to(inputs[1], sizes);
  const Broadcast bias = broadcast_to(inputs.size() > 2 ? inputs[2] : nullptr, sizes);
  float* y = outputs[0].mutable_data<float>();
  for (int64_t start = 0; start < x.num_elements(); start += row_size) {
    const RowStatistics stats = row_statistics(x.data<float>() + start, row_size, epsilon);
    for (int64_t i = start; i < start + row_size; ++i) {
      const double normalized = (x.data<float>()[i] - stats.mean) * stats.inv_std_dev;
      y[i] = static_cast<float>(normalized * scale.at(i, sizes) + bias.at(i, sizes));
    }
  }
}

/// About five FLOPs per element: one pass for the mean, one for the variance, then normalize, scale
/// and shift.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 5);
}

}  // namespace

OpDef layer_normalization_op() {
  return OpDef{ir::OpKind::kLayerNormalization,
               "LayerNormalization",
               true,
               17,
               {},
               canonicalize,
               infer,
               kernel,
               features};
}

}  // namespace graphsub::ops
