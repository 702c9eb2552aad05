// Conv: grouped N-d convolution with optional bias, graphsub's optional residual summand Z and fused
// `activation`; the kernel is an im2col gather and the shared matrix multiply.
#include <cmath>
#include <optional>
#include <vector>

#include "ops/common.h"
#include "ops/matrix_kernel.h"
#include "ops/op_list.h"
#include "ops/sliding_window.h"

namespace graphsub::ops {
namespace {



/// W's spatial sizes, when its rank and every spatial dim are known.
std::optional<std::vector<int64_t>> weight_kernel_shape(const ir::Shape& weight) {
  if (!weight.rank_known || weight.rank() < 3) return std::nullopt;
  std::vector<int64_t> sizes;
  for (std::size_t i = 2; i < weight.rank(); ++i) {
    if (!weight.dims[i].is_known()) return std::nullopt;
    sizes.push_back(weight.dims[i].value);
  }
  return sizes;
}

/// Takes kernel_shape from W when absent; rejects one that W contradicts.
std::string fill_kernel_shape(ir::Attributes& attrs, const ir::Shape& weight) {
  const std::optional<std::vector<int64_t>> from_weight = weight_kernel_shape(weight);
  if (!attrs.has("kernel_shape")) {
    if (!from_weight) return "kernel_shape is absent and W's spatial sizes are unknown";
    attrs.set("kernel_shape", *from_weight);
    return {};
  }
  if (from_weight && *from_weight != attrs.get_ints("kernel_shape", {})) {
    return "kernel_shape does not match W";
  }
  return {};
}

/// Fills group (1) and activation ("none") and validates both.
std::string fill_group_and_activation(ir::Attributes& attrs) {
  const int64_t group = attrs.get_int("group", 1);
  if (group < 1) return "group must be positive";
  attrs.set("group", group);
  const std::string activation = attrs.get_string("activation", "none");
  if (!parse_activation(activation)) return "unknown activation " + activation;
  attrs.set("activation", activation);
  return {};
}

/// Empty when the inputs are X, W, an optional B and, after a present B, an optional Z. Z is
/// graphsub's own (cuDNN's conv-bias-add): ONNX's checker refuses a 4-input Conv before import gets
/// here, so only a rule's target carries one.
std::string check_input_count(const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() < 2 || inputs.size() > 4) return "Conv takes X, W, an optional B and an optional Z";
  if (inputs.size() == 4 && !has_bias(inputs)) return "Conv's residual Z needs the bias B";
  return {};
}

std::string canonicalize(ImportContext& context) {
  if (std::string error = require_outputs(context, 1); !error.empty()) return error;
  if (std::string error = require_dtypes(context, {ir::DataType::kFloat}); !error.empty()) return error;
  if (std::string error = check_input_count(context.input_types); !error.empty()) return error;
  if (std::string error = fill_kernel_shape(context.attrs, context.input_types[1].shape); !error.empty()) {
    return error;
  }
  if (std::string error = fill_group_and_activation(context.attrs); !error.empty()) return error;
  return canonicalize_window(context.attrs, context.input_types[0].shape, {true, false});
}

/// W [M, C/group, k...] against the window and group, where its dims are known.
std::string check_weight(const ir::Shape& weight, const SlidingWindow& window, int64_t group) {
  if (!weight.rank_known) return {};
  if (weight.rank() != window.rank() + 2) return "W " + ir::to_string(weight) + " does not fit kernel_shape";
  for (std::size_t axis = 0; axis < window.rank(); ++axis) {
    const ir::Dim& dim = weight.dims[axis + 2];
    if (dim.is_known() && dim.value != window.kernel_shape[axis]) return "W does not match kernel_shape";
  }
  const ir::Dim& filters = weight.dims[0];
  if (filters.is_known() && filters.value % group != 0) return "W's filter count is not a multiple of group";
  return {};
}

/// X's channels against W's channels per group.
std::string check_channels(const ir::Shape& input, const ir::Shape& weight, int64_t group) {
  const ir::Dim channels = dim_at(input, 1);
  const ir::Dim per_group = dim_at(weight, 1);
  if (channels.is_known() && channels.value % group != 0) return "X's channels are not a multiple of group";
  if (channels.is_known() && per_group.is_known() && channels.value != per_group.value * group) {
    return "X has " + std::to_string(channels.value) + " channels, W expects " +
           std::to_string(per_group.value * group);
  }
  return {};
}

/// B [M] against W [M, ...].
std::string check_bias(const ir::Shape& bias, const ir::Shape& weight) {
  if (!bias.rank_known) return {};
  if (bias.rank() != 1) return "B must have rank 1";
  const ir::Dim filters = dim_at(weight, 0);
  if (bias.dims[0].is_known() && filters.is_known() && bias.dims[0].value != filters.value) {
    return "B has " + std::to_string(bias.dims[0].value) + " entries, W has " +
           std::to_string(filters.value) + " filters";
  }
  return {};
}

/// Everything infer checks besides the window itself.
std::string check_operands(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                           const SlidingWindow& window) {
  if (std::string error = check_input_count(inputs); !error.empty()) return error;
  const int64_t group = node.attrs.get_int("group", 1);
  if (group < 1) return "group must be positive";
  if (!parse_activation(node.attrs.get_string("activation", "none"))) return "unknown activation";
  if (std::string error = check_weight(inputs[1].shape, window, group); !error.empty()) return error;
  if (std::string error = check_channels(inputs[0].shape, inputs[1].shape, group); !error.empty()) {
    return error;
  }
  return has_bias(inputs) ? check_bias(inputs[2].shape, inputs[1].shape) : std::string{};
}

/// Z is added element by element, never broadcast (as cuDNN adds its y operand): it has Y's type.
std::string check_residual(const ir::TensorType& residual, const ir::TensorType& output) {
  if (residual == output) return {};
  return "Z " + ir::to_string(residual) + " does not have Y's type " + ir::to_string(output);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  const SlidingWindow window = SlidingWindow::from(node.attrs);
  if (std::string error = window.check(); !error.empty()) return InferResult::failure(error);
  if (std::string error = check_operands(node, inputs, window); !error.empty()) {
    return InferResult::failure(error);
  }
  InferResult result = infer_windowed(window, inputs[0], dim_at(inputs[1].shape, 0));
  if (!result.ok() || inputs.size() < 4) return result;
  if (std::string error = check_residual(inputs[3], result.outputs[0]); !error.empty()) {
    return InferResult::failure(error);
  }
  return result;
}

/// Sizes of one convolution, read from its tensors.
struct ConvSizes {
  int64_t batch;
  int64_t channels;
  int64_t filters;
  int64_t group;
  int64_t kernel_block;  ///< Elements of one kernel: prod(kernel_shape).
  int64_t positions;     ///< Elements of one output spatial block: prod(Y's spatial sizes).
  int64_t input_block;   ///< Elements of one input spatial block: prod(X's spatial sizes).

  int64_t group_channels() const { return channels / group; }
  int64_t group_filters() const { return filters / group; }
  /// Rows of one group's im2col matrix, and columns of its filter matrix.
  int64_t depth() const { return group_channels() * kernel_block; }
};

std::vector<int64_t> spatial_sizes(const std::vector<int64_t>& dims) {
  return {dims.begin() + 2, dims.end()};
}

/// The im2col gather table, shared by every image, group and channel: entry [tap][position] is the
/// offset in one input spatial block that kernel tap `tap` reads for output `position`, or -1
/// where it falls in the padding.
std::vector<int64_t> gather_table(const WindowScan& scan, int64_t kernel_block) {
  std::vector<int64_t> table(kernel_block * scan.positions(), -1);
  std::vector<Tap> taps;
  for (int64_t position = 0; position < scan.positions(); ++position) {
    scan.taps(position, taps);
    for (const Tap& tap : taps) table[tap.kernel * scan.positions() + position] = tap.input;
  }
  return table;
}

/// True when the table reads each input element once, in order (a 1x1 kernel with unit strides
/// and no pads): the input block is then its own im2col matrix.
bool reads_input_as_is(const std::vector<int64_t>& table, int64_t input_block) {
  if (static_cast<int64_t>(table.size()) != input_block) return false;
  for (int64_t i = 0; i < input_block; ++i) {
    if (table[i] != i) return false;
  }
  return true;
}

/// im2col: row c * kernel_block + tap of `columns` holds, for every output position, the element of
/// input channel c that the tap reads (0 in the padding).
void gather_columns(const float* image, const ConvSizes& sizes, const std::vector<int64_t>& table,
                    float* columns) {
  const int64_t row_block = static_cast<int64_t>(table.size());
  for (int64_t c = 0; c < sizes.group_channels(); ++c) {
    const float* plane = image + c * sizes.input_block;
    float* rows = columns + c * row_block;
    for (int64_t i = 0; i < row_block; ++i) rows[i] = table[i] < 0 ? 0.0f : plane[table[i]];
  }
}

/// Y's block of filters [M/group, positions] for one image and group: W's filters of the group
/// [M/group, C/group * kernel_block] times the group's im2col matrix [C/group * kernel_block,
/// positions], gathered into `columns`, or the image itself when `columns` is empty.
void convolve_group(const float* image, const float* filters, const ConvSizes& sizes,
                    const std::vector<int64_t>& table, std::vector<float>& columns, float* y) {
  const float* input = image;
  if (!columns.empty()) {
    gather_columns(image, sizes, table, columns.data());
    input = columns.data();
  }
  multiply_matrices<float>({sizes.group_filters(), sizes.positions, sizes.depth()}, {filters, sizes.depth()},
                           {input, sizes.positions}, y, sizes.positions, false);
}

/// Adds `offset`, then the residual `summand` when there is one, to `count` values in place: in
/// that order, so the result is bit for bit what Conv(X, W, B) followed by Add(·, Z) computes.
void add_summands(float offset, const float* summand, int64_t count, float* values) {
  if (!summand) {
    for (int64_t i = 0; i < count; ++i) values[i] += offset;
    return;
  }
  for (int64_t i = 0; i < count; ++i) values[i] = (values[i] + offset) + summand[i];
}

/// Applies the activation to `count` values in place. One switch per call keeps the loops simple
/// enough to vectorize; sigmoid and tanh are computed in double.
void activate(Activation activation, int64_t count, float* values) {
  switch (activation) {
    case Activation::kNone:
      return;
    case Activation::kRelu:
      for (int64_t i = 0; i < count; ++i) values[i] = values[i] > 0 ? values[i] : 0.0f;
      return;
    case Activation::kSigmoid:
      for (int64_t i = 0; i < count; ++i) {
        values[i] = static_cast<float>(1.0 / (1.0 + std::exp(-double{values[i]})));
      }
      return;
    case Activation::kTanh:
      for (int64_t i = 0; i < count; ++i) values[i] = static_cast<float>(std::tanh(double{values[i]}));
      return;
  }
}

/// Adds the bias and the residual Z (each may be null) and applies the activation to every output
/// element, in place: cuDNN's conv-bias-activation epilogue with alpha2 = 1.
void finish_outputs(const ConvSizes& sizes, const float* bias, const float* residual, Activation activation,
                    float* y) {
  for (int64_t row = 0; row < sizes.batch * sizes.filters; ++row) {
    float* values = y + row * sizes.positions;
    const float offset = bias ? bias[row % sizes.filters] : 0.0f;
    add_summands(offset, residual ? residual + row * sizes.positions : nullptr, sizes.positions, values);
    activate(activation, sizes.positions, values);
  }
}

/// Per image and group, an im2col gather and one matrix product; then bias, residual and activation.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& x = *inputs[0];
  const ir::Tensor& w = *inputs[1];
  const float* bias = inputs.size() > 2 && inputs[2] ? inputs[2]->data<float>() : nullptr;
  const float* residual = inputs.size() > 3 && inputs[3] ? inputs[3]->data<float>() : nullptr;
  float* y = outputs[0].mutable_data<float>();
  const SlidingWindow window = SlidingWindow::from(node.attrs);
  const Activation activation = *parse_activation(node.attrs.get_string("activation", "none"));
  const WindowScan scan(window, spatial_sizes(x.dims()), spatial_sizes(outputs[0].dims()));
  const ConvSizes sizes{x.dims()[0], x.dims()[1], w.dims()[0], node.attrs.get_int("group", 1),
                        ir::num_elements(window.kernel_shape), scan.positions(), scan.input_block()};
  const std::vector<int64_t> table = gather_table(scan, sizes.kernel_block);
  std::vector<float> columns;
  if (!reads_input_as_is(table, sizes.input_block)) columns.resize(sizes.depth() * sizes.positions);
  for (int64_t n = 0; n < sizes.batch; ++n) {
    for (int64_t g = 0; g < sizes.group; ++g) {
      const int64_t first_channel = n * sizes.channels + g * sizes.group_channels();
      const int64_t first_filter = g * sizes.group_filters();
      convolve_group(x.data<float>() + first_channel * sizes.input_block,
                     w.data<float>() + first_filter * sizes.depth(), sizes, table, columns,
                     y + (n * sizes.filters + first_filter) * sizes.positions);
    }
  }
  finish_outputs(sizes, bias, residual, activation, y);
}

/// A multiply-add per tap: 2 * N * M * prod(out) * (C / group) * prod(kernel_shape) FLOPs. A
/// residual Z adds its read and nothing else: the unfused Add would also cost a launch and a write
/// and re-read of Y.
CostFeatures features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  CostFeatures cost = filter_features(node, inputs, outputs, outputs[0]);
  if (inputs.size() > 3) cost.bytes_read += bytes_or_one(inputs[3]);
  return cost;
}

}  // namespace

OpDef conv_op() {
  return OpDef{ir::OpKind::kConv, "Conv", true, 1, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
