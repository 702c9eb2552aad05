// Pooling: AveragePool and MaxPool over sliding windows, GlobalAveragePool and GlobalMaxPool.
#include <algorithm>
#include <limits>
#include <utility>

#include "ops/common.h"
#include "ops/op_list.h"
#include "ops/sliding_window.h"

namespace graphsub::ops {
namespace {

std::string require_one_float_input(const ImportContext& context) {
  if (std::string error = require_outputs(context, 1); !error.empty()) return error;
  if (std::string error = require_dtypes(context, {ir::DataType::kFloat}); !error.empty()) return error;
  if (context.input_types.size() != 1) return "takes exactly one input";
  return {};
}

/// True when the attribute is absent, 0 or 1.
bool is_flag(const ir::Attributes& attrs, const char* name) {
  const int64_t value = attrs.get_int(name, 0);
  return value == 0 || value == 1;
}

std::string canonicalize_average(ImportContext& context) {
  if (std::string error = require_one_float_input(context); !error.empty()) return error;
  if (!is_flag(context.attrs, "count_include_pad")) return "count_include_pad must be 0 or 1";
  context.attrs.set("count_include_pad", context.attrs.get_int("count_include_pad", 0));
  return canonicalize_window(context.attrs, context.input_types[0].shape, {false, true});
}

std::string canonicalize_max(ImportContext& context) {
  if (context.num_outputs != 1) return "the Indices output of MaxPool is not modelled";
  if (std::string error = require_one_float_input(context); !error.empty()) return error;
  // storage_order only lays out Indices, which a modelled MaxPool never has.
  if (!is_flag(context.attrs, "storage_order")) return "storage_order must be 0 or 1";
  context.attrs.erase("storage_order");
  return canonicalize_window(context.attrs, context.input_types[0].shape, {true, true});
}

std::string canonicalize_global(ImportContext& context) { return require_one_float_input(context); }

InferResult infer_pool(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("pooling takes exactly one input");
  return infer_windowed(SlidingWindow::from(node.attrs), inputs[0], dim_at(inputs[0].shape, 1));
}

/// [N, C, spatial...] to [N, C, 1, ...]; an unknown rank stays unknown.
InferResult infer_global(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("global pooling takes exactly one input");
  ir::TensorType out = inputs[0];
  if (!out.shape.rank_known) return InferResult{{out}, {}};
  if (out.shape.rank() < 2) return InferResult::failure("input must have at least rank 2");
  std::fill(out.shape.dims.begin() + 2, out.shape.dims.end(), ir::Dim::known(1));
  return InferResult{{out}, {}};
}

/// The windows of a pooling node, and the N*C planes of its input and output.
struct PoolPlanes {
  WindowScan scan;
  int64_t planes;
};

PoolPlanes pool_planes(const ir::Node& node, const ir::Tensor& x, const ir::Tensor& y) {
  auto spatial = [](const std::vector<int64_t>& dims) {
    return std::vector<int64_t>(dims.begin() + 2, dims.end());
  };
  return PoolPlanes{WindowScan(SlidingWindow::from(node.attrs), spatial(x.dims()), spatial(y.dims())),
                    x.dims()[0] * x.dims()[1]};
}

/// Sum over the taps, divided by the taps inside the input or, with count_include_pad, by the
/// window elements inside the padded input.
void average_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                    std::vector<ir::Tensor>& outputs) {
  const PoolPlanes pool = pool_planes(node, *inputs[0], outputs[0]);
  const bool include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
  const float* x = inputs[0]->data<float>();
  float* y = outputs[0].mutable_data<float>();
  std::vector<Tap> taps;
  for (int64_t position = 0; position < pool.scan.positions(); ++position) {
    pool.scan.taps(position, taps);
    const auto divisor = static_cast<double>(include_pad ? pool.scan.padded_count(position) : taps.size());
    for (int64_t plane = 0; plane < pool.planes; ++plane) {
      const float* image = x + plane * pool.scan.input_block();
      double sum = 0;
      for (const Tap& tap : taps) sum += image[tap.input];
      y[plane * pool.scan.positions() + position] = static_cast<float>(sum / divisor);
    }
  }
}

/// Largest tap; padding never wins.
void max_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                std::vector<ir::Tensor>& outputs) {
  const PoolPlanes pool = pool_planes(node, *inputs[0], outputs[0]);
  const float* x = inputs[0]->data<float>();
  float* y = outputs[0].mutable_data<float>();
  std::vector<Tap> taps;
  for (int64_t position = 0; position < pool.scan.positions(); ++position) {
    pool.scan.taps(position, taps);
    for (int64_t plane = 0; plane < pool.planes; ++plane) {
      const float* image = x + plane * pool.scan.input_block();
      float best = std::numeric_limits<float>::lowest();
      for (const Tap& tap : taps) best = std::max(best, image[tap.input]);
      y[plane * pool.scan.positions() + position] = best;
    }
  }
}

/// Spatial elements per plane and plane count (N*C) of a [N, C, spatial...] tensor.
std::pair<int64_t, int64_t> block_and_planes(const ir::Tensor& x) {
  const int64_t planes = x.dims()[0] * x.dims()[1];
  return {ir::num_elements({x.dims().begin() + 2, x.dims().end()}), planes};
}

void global_average_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                           std::vector<ir::Tensor>& outputs) {
  const auto [block, planes] = block_and_planes(*inputs[0]);
  const float* x = inputs[0]->data<float>();
  for (int64_t plane = 0; plane < planes; ++plane) {
    double sum = 0;
    for (int64_t i = 0; i < block; ++i) sum += x[plane * block + i];
    outputs[0].mutable_data<float>()[plane] = static_cast<float>(sum / static_cast<double>(block));
  }
}

void global_max_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                       std::vector<ir::Tensor>& outputs) {
  const auto [block, planes] = block_and_planes(*inputs[0]);
  const float* x = inputs[0]->data<float>();
  for (int64_t plane = 0; plane < planes; ++plane) {
    float best = std::numeric_limits<float>::lowest();
    for (int64_t i = 0; i < block; ++i) best = std::max(best, x[plane * block + i]);
    outputs[0].mutable_data<float>()[plane] = best;
  }
}

/// One add or comparison per tap of every output element.
CostFeatures pool_features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                           const std::vector<ir::TensorType>& outputs) {
  const auto taps = static_cast<double>(ir::num_elements(node.attrs.get_ints("kernel_shape", {})));
  return elementwise_features(inputs, outputs, taps);
}

/// One add or comparison per input element.
CostFeatures global_features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                             const std::vector<ir::TensorType>& outputs) {
  CostFeatures cost = elementwise_features(inputs, outputs, 0);
  cost.flops = elements_or_one(inputs[0]);
  return cost;
}

}  // namespace

OpDef average_pool_op() {
  return OpDef{ir::OpKind::kAveragePool, "AveragePool", true, 1, {}, canonicalize_average, infer_pool,
               average_kernel,           pool_features};
}

OpDef max_pool_op() {
  return OpDef{ir::OpKind::kMaxPool, "MaxPool",  true,         1, {}, canonicalize_max,
               infer_pool,           max_kernel, pool_features};
}

OpDef global_average_pool_op() {
  return OpDef{
      ir::OpKind::kGlobalAveragePool, "GlobalAveragePool", true, 1, {}, canonicalize_global, infer_global,
      global_average_kernel,          global_features};
}

OpDef global_max_pool_op() {
  return OpDef{ir::OpKind::kGlobalMaxPool, "GlobalMaxPool", true, 1, {}, canonicalize_global, infer_global,
               global_max_kernel,          global_features};
}

}  // namespace graphsub::ops
