// BatchNormalization in inference mode: y = scale * (x - mean) / sqrt(var + epsilon) + B on axis 1.
#include <cmath>

#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

constexpr float kDefaultEpsilon = 1e-5f;

/// Rejects the training forms: statistics outputs, training_mode 1 (opset 14+), and per-activation
/// statistics, spatial 0 (opset < 9).
std::string require_inference_mode(const ImportContext& context) {
  if (context.num_outputs != 1) return "the training outputs of BatchNormalization are not modelled";
  if (context.attrs.get_int("training_mode", 0) != 0) return "training_mode is not modelled";
  if (context.attrs.get_int("spatial", 1) != 1) return "spatial = 0 is not modelled";
  return {};
}

/// Keeps epsilon alone: momentum only updates running statistics, is_test (opset < 7) is read as
/// inference, and spatial and training_mode were checked.
std::string canonicalize(ImportContext& context) {
  if (std::string error = require_inference_mode(context); !error.empty()) return error;
  if (std::string error = require_dtypes(context, {ir::DataType::kFloat}); !error.empty()) return error;
  if (context.input_types.size() != 5) return "BatchNormalization takes X, scale, B, mean and var";
  context.attrs.set("epsilon", context.attrs.get_float("epsilon", kDefaultEpsilon));
  for (const char* unused : {"momentum", "is_test", "spatial", "training_mode"}) context.attrs.erase(unused);
  return {};
}

/// A per-channel parameter: rank 1 with one entry per channel of X.
std::string check_parameter(const ir::Shape& parameter, const ir::Dim& channels) {
  if (!parameter.rank_known) return {};
  if (parameter.rank() != 1) return "scale, B, mean and var must have rank 1";
  const ir::Dim& size = parameter.dims[0];
  if (size.is_known() && channels.is_known() && size.value != channels.value) {
    return "a parameter has " + std::to_string(size.value) + " entries, X has " +
           std::to_string(channels.value) + " channels";
  }
  return {};
}

InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 5) return InferResult::failure("BatchNormalization takes X, scale, B, mean and var");
  const ir::Shape& x = inputs[0].shape;
  if (x.rank_known && x.rank() < 2) return InferResult::failure("X must have at least rank 2");
  const ir::Dim channels = x.rank_known ? x.dims[1] : ir::Dim{};
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    if (std::string error = check_parameter(inputs[i].shape, channels); !error.empty()) {
      return InferResult::failure(error);
    }
  }
  return InferResult{{inputs[0]}, {}};
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const std::vector<int64_t>& dims = inputs[0]->dims();
  const int64_t channels = dims[1];
  const int64_t block = ir::num_elements({dims.begin() + 2, dims.end()});
  const double epsilon = node.attrs.get_float("epsilon", kDefaultEpsilon);
  const float* x = inputs[0]->data<float>();
  const float* scale = inputs[1]->data<float>();
  const float* bias = inputs[2]->data<float>();
  const float* mean = inputs[3]->data<float>();
  const float* var = inputs[4]->data<float>();
  float* y = outputs[0].mutable_data<float>();
  for (int64_t plane = 0; plane < dims[0] * channels; ++plane) {
    const int64_t c = plane % channels;
    const double factor = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
    for (int64_t i = plane * block; i < (plane + 1) * block; ++i) {
      y[i] = static_cast<float>((x[i] - static_cast<double>(mean[c])) * factor + bias[c]);
    }
  }
}

/// A multiply and an add per element (the per-channel factors are precomputable).
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 2);
}

}  // namespace

OpDef batch_normalization_op() {
  return OpDef{ir::OpKind::kBatchNormalization,
               "BatchNormalization",
               true,
               6,
               {},
               canonicalize,
               infer,
               kernel,
               features};
}

}  // namespace graphsub::ops
