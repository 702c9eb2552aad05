// ConvTranspose: grouped N-d transposed convolution (the adjoint of Conv) with optional bias. The
// kernel is one matrix product per image and group, W^T X, giving every input pixel's contribution
// to every filter tap, then a col2im scatter of those contributions into the output.
#include <algorithm>
#include <optional>
#include <variant>
#include <vector>

#include "ops/common.h"
#include "ops/matrix_kernel.h"
#include "ops/op_list.h"
#include "ops/sliding_window.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Element types with a kernel.
const std::vector<DataType> kFloatTypes = {DataType::kFloat, DataType::kDouble};

/// The canonical attributes. `window` is that of the Conv whose adjoint this is: Conv with it maps
/// the output's spatial block back onto the input's.
struct Transposed {
  SlidingWindow window;
  std::vector<int64_t> output_padding;
  int64_t group;

  /// Reads the attributes; absent strides, dilations, pads and output_padding read as their
  /// defaults (1s and 0s), group as 1.
  static Transposed from(const ir::Attributes& attrs) {
    Transposed t{SlidingWindow::from(attrs), attrs.get_ints("output_padding", {}), attrs.get_int("group", 1)};
    if (t.output_padding.empty()) t.output_padding.assign(t.window.rank(), 0);
    return t;
  }
  /// Empty when the window is valid, output_padding has one entry >= 0 per axis and group >= 1.
  std::string check() const {
    if (std::string error = window.check(); !error.empty()) return error;
    if (output_padding.size() != window.rank()) return "output_padding must have one entry per kernel axis";
    if (std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v < 0; })) {
      return "output_padding must not be negative";
    }
    return group < 1 ? "group must be positive" : std::string{};
  }
  /// The output length along `axis` before pads crop it: stride * (in - 1) + output_padding + extent.
  int64_t full_size(std::size_t axis, int64_t in) const {
    return window.strides[axis] * (in - 1) + output_padding[axis] + window.extent(axis);
  }
  /// What pads crop from `axis`, both ends together.
  int64_t cropped(std::size_t axis) const { return window.pads[axis] + window.pads[axis + window.rank()]; }
};


/// Empty when every attribute is one of ConvTranspose's with its type.
std::string check_attribute_types(const ir::Attributes& attrs) {
  for (const auto& [name, value] : attrs.items()) {
    const bool ints = name == "dilations" || name == "kernel_shape" || name == "output_padding" ||
                      name == "output_shape" || name == "pads" || name == "strides";
    const bool fits = (ints && std::holds_alternative<std::vector<int64_t>>(value)) ||
                      (name == "group" && std::holds_alternative<int64_t>(value)) ||
                      (name == "auto_pad" && std::holds_alternative<std::string>(value));
    if (!fits) return "attribute '" + name + "' is not modelled with that type";
  }
  return {};
}

/// Empty when the node has X, W, an optional B, one output, and one float element type.
std::string check_signature(const ImportContext& context) {
  const std::size_t count = context.input_types.size();
  if (count < 2 || count > 3) return "ConvTranspose takes X, W and an optional B";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  if (std::string reason = require_dtypes(context, kFloatTypes); !reason.empty()) return reason;
  for (const ir::TensorType& type : context.input_types) {
    const DataType dtype = type.dtype;
    if (dtype != DataType::kUndefined && dtype != context.input_types[0].dtype) return "mixed element types";
  }
  return {};
}

/// Takes kernel_shape from W's spatial sizes when absent; rejects one that W contradicts.
std::string fill_kernel_shape(ir::Attributes& attrs, const ir::Shape& weight) {
  std::vector<int64_t> from_weight;
  for (std::size_t i = 2; weight.rank_known && i < weight.rank() && weight.dims[i].is_known(); ++i) {
    from_weight.push_back(weight.dims[i].value);
  }
  const bool complete = weight.rank_known && weight.rank() >= 3 && from_weight.size() == weight.rank() - 2;
  if (!attrs.has("kernel_shape")) {
    if (!complete) return "kernel_shape is absent and W's spatial sizes are unknown";
    attrs.set("kernel_shape", from_weight);
  } else if (complete && from_weight != attrs.get_ints("kernel_shape", {})) {
    return "kernel_shape does not match W";
  }
  return {};
}

/// Opset 11 settled how auto_pad SAME sizes the output and where an odd padding goes; opset 1's text
/// contradicts itself on both.
constexpr int64_t kSettledPaddingOpset = 11;

/// Splits a total padding between the ends of `axis`: the odd one at the end for SAME_UPPER, at
/// the start otherwise (ONNX's rule from opset 11, which onnxruntime follows).
void split_pad(Transposed& t, std::size_t axis, int64_t total, bool upper) {
  const int64_t half = total / 2;
  t.window.pads[axis] = upper ? half : total - half;
  t.window.pads[axis + t.window.rank()] = upper ? total - half : half;
}

/// The pads that crop the full output to `output_shape` (spatial sizes), for a known input size.
/// A larger output_shape extends the output at the end, as output_padding does: ONNX's reference
/// and onnxruntime agree on that, except with SAME_UPPER.
std::string pads_for_output_shape(const std::vector<int64_t>& output_shape, const ir::Shape& input,
                                  bool upper, bool legacy, Transposed& t) {
  if (output_shape.size() != t.window.rank()) return "output_shape must give one size per spatial axis";
  for (std::size_t axis = 0; axis < t.window.rank(); ++axis) {
    const ir::Dim in = dim_at(input, axis + 2);
    if (!in.is_known()) return "output_shape needs known input sizes";
    const int64_t total = t.full_size(axis, in.value) - output_shape[axis];
    if (legacy && (total < 0 || total % 2 != 0)) {
      return "before opset 11 ONNX leaves the side of an odd or negative padding unclear";
    }
    if (total >= 0) {
      split_pad(t, axis, total, upper);
    } else if (upper) {
      return "output_shape beyond the full output with SAME_UPPER: ONNX and onnxruntime disagree";
    } else {
      t.output_padding[axis] -= total;
    }
  }
  return {};
}

/// Empty unless an output_padding reaches max(stride, dilation), which onnxruntime rejects (ONNX
/// leaves it open).
std::string output_padding_reason(const Transposed& t) {
  for (std::size_t axis = 0; axis < t.window.rank(); ++axis) {
    if (t.output_padding[axis] >= std::max(t.window.strides[axis], t.window.dilations[axis])) {
      return "output_padding of max(stride, dilation) or more";
    }
  }
  return {};
}

/// SAME makes the output input * stride, so the total padding, output_padding + extent - stride,
/// does not depend on the input size.
std::string pads_for_same(bool upper, Transposed& t) {
  for (std::size_t axis = 0; axis < t.window.rank(); ++axis) {
    const int64_t total = t.output_padding[axis] + t.window.extent(axis) - t.window.strides[axis];
    if (total < 0) return "auto_pad SAME with a kernel extent below the stride";
    split_pad(t, axis, total, upper);
  }
  return {};
}

/// Replaces `t.window.pads` by those that auto_pad or output_shape imply (NOTSET keeps the given
/// pads, VALID has none).
std::string resolve_pads(const ir::Attributes& attrs, const ir::Shape& input, int64_t opset, Transposed& t) {
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  const std::vector<int64_t> output_shape = attrs.get_ints("output_shape", {});
  const bool has_pads = !attrs.get_ints("pads", {}).empty();
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID") return "unknown auto_pad " + auto_pad;
  if (auto_pad != "NOTSET" && has_pads) return "pads given together with auto_pad " + auto_pad;
  const bool legacy = opset < kSettledPaddingOpset;
  if (same && legacy) return "before opset 11 ONNX leaves what auto_pad " + auto_pad + " means unclear";
  if (!output_shape.empty()) {
    if (has_pads) return "pads given together with output_shape";
    if (auto_pad == "VALID") return "output_shape given together with auto_pad VALID";
    return pads_for_output_shape(output_shape, input, auto_pad == "SAME_UPPER", legacy, t);
  }
  return same ? pads_for_same(auto_pad == "SAME_UPPER", t) : std::string{};
}

/// Canonical form: kernel_shape, strides, dilations, pads, output_padding and group, all explicit;
/// auto_pad and output_shape are resolved into pads and removed.
std::string canonicalize(ImportContext& context) {
  ir::Attributes& attrs = context.attrs;
  std::string reason = check_signature(context);
  if (reason.empty()) reason = check_attribute_types(attrs);
  if (reason.empty()) reason = fill_kernel_shape(attrs, context.input_types[1].shape);
  if (!reason.empty()) return reason;
  Transposed t = Transposed::from(attrs);
  if (std::string error = t.check(); !error.empty()) return error;
  const ir::Shape& input = context.input_types[0].shape;
  if (input.rank_known && input.rank() != t.window.rank() + 2) return "X's rank does not fit kernel_shape";
  if (std::string error = resolve_pads(attrs, input, context.opset, t); !error.empty()) return error;
  if (std::string error = output_padding_reason(t); !error.empty()) return error;
  attrs.erase("auto_pad");
  attrs.erase("output_shape");
  attrs.set("kernel_shape", t.window.kernel_shape);
  attrs.set("strides", t.window.strides);
  attrs.set("dilations", t.window.dilations);
  attrs.set("pads", t.window.pads);
  attrs.set("output_padding", t.output_padding);
  attrs.set("group", t.group);
  return {};
}

/// Empty when every known element type is a float type and they agree.
std::string check_dtypes(const std::vector<ir::TensorType>& inputs) {
  const DataType first = inputs[0].dtype != DataType::kUndefined ? inputs[0].dtype : inputs[1].dtype;
  for (const ir::TensorType& type : inputs) {
    if (type.dtype == DataType::kUndefined) continue;
    if (type.dtype != first)
      return "element types " + ir::to_string(first) + " and " + ir::to_string(type.dtype) + " differ";
    if (type.dtype != DataType::kFloat && type.dtype != DataType::kDouble) {
      return "no kernel for element type " + ir::to_string(type.dtype);
    }
  }
  return {};
}

/// W [C, M/group, k...] against the window, and X [N, C, ...] against W and group.
std::string check_weight(const ir::Shape& input, const ir::Shape& weight, const Transposed& t) {
  const std::size_t rank = t.window.rank();
  if (input.rank_known && input.rank() != rank + 2)
    return "X " + ir::to_string(input) + " does not fit kernel_shape";
  if (weight.rank_known && weight.rank() != rank + 2)
    return "W " + ir::to_string(weight) + " does not fit kernel_shape";
  for (std::size_t axis = 0; weight.rank_known && axis < rank; ++axis) {
    const ir::Dim& dim = weight.dims[axis + 2];
    if (dim.is_known() && dim.value != t.window.kernel_shape[axis]) return "W does not match kernel_shape";
  }
  const ir::Dim channels = dim_at(input, 1);
  const ir::Dim weight_channels = dim_at(weight, 0);
  if (channels.is_known() && channels.value % t.group != 0) return "X's channels are not a multiple of group";
  if (channels.is_known() && weight_channels.is_known() && channels.value != weight_channels.value) {
    return "X has " + std::to_string(channels.value) + " channels, W " +
           std::to_string(weight_channels.value);
  }
  return {};
}

/// M = group * W's dim 1; a symbol passes through only with one group.
ir::Dim output_channels(const ir::Shape& weight, int64_t group) {
  const ir::Dim per_group = dim_at(weight, 1);
  if (per_group.is_known()) return ir::Dim::known(per_group.value * group);
  return group == 1 ? per_group : ir::Dim{};
}

/// B [M] against the output channels.
std::string check_bias(const ir::Shape& bias, const ir::Dim& channels) {
  if (!bias.rank_known) return {};
  if (bias.rank() != 1) return "B must have rank 1";
  if (bias.dims[0].is_known() && channels.is_known() && bias.dims[0].value != channels.value) {
    return "B has " + std::to_string(bias.dims[0].value) + " entries for " + std::to_string(channels.value) +
           " output channels";
  }
  return {};
}

/// The output dim along `axis`: known for a known input; an unknown input's dim passes through
/// when the op keeps sizes (stride 1, pads cropping what kernel and output_padding add).
ir::Dim output_dim(const Transposed& t, std::size_t axis, const ir::Dim& in, std::string& error) {
  if (!in.is_known()) {
    const bool keeps = t.window.strides[axis] == 1 && t.full_size(axis, 1) - 1 == t.cropped(axis);
    return keeps ? in : ir::Dim{};
  }
  const int64_t size = t.full_size(axis, in.value) - t.cropped(axis);
  if (in.value == 0 || size < 1) {
    error = "spatial axis " + std::to_string(axis) + " of size " + std::to_string(in.value) +
            " leaves no output with these pads";
  }
  return ir::Dim::known(size);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() < 2 || inputs.size() > 3)
    return InferResult::failure("ConvTranspose takes X, W and an optional B");
  const Transposed t = Transposed::from(node.attrs);
  const ir::Shape& input = inputs[0].shape;
  const ir::Dim channels = output_channels(inputs[1].shape, t.group);
  std::string error = t.check();
  if (error.empty()) error = check_dtypes(inputs);
  if (error.empty()) error = check_weight(input, inputs[1].shape, t);
  if (error.empty() && has_bias(inputs)) error = check_bias(inputs[2].shape, channels);
  ir::Shape out{true, {dim_at(input, 0), channels}};
  for (std::size_t axis = 0; error.empty() && axis < t.window.rank(); ++axis) {
    out.dims.push_back(output_dim(t, axis, dim_at(input, axis + 2), error));
  }
  if (!error.empty()) return InferResult::failure(error);
  const DataType dtype = inputs[0].dtype != DataType::kUndefined ? inputs[0].dtype : inputs[1].dtype;
  return InferResult{{ir::TensorType{dtype, std::move(out)}}, {}};
}

/// Sizes of one transposed convolution, read from its tensors.
struct Sizes {
  int64_t batch;
  int64_t channels;      ///< C: X's channels, W's dim 0.
  int64_t filters;       ///< M: Y's channels.
  int64_t group;
  int64_t kernel_block;  ///< Elements of one kernel: prod(kernel_shape).
  int64_t positions;     ///< Elements of one input spatial block: prod(X's spatial sizes).
  int64_t output_block;  ///< Elements of one output spatial block: prod(Y's spatial sizes).

  int64_t group_channels() const { return channels / group; }
  int64_t group_filters() const { return filters / group; }
  /// Rows of one group's contribution matrix: every filter's every tap.
  int64_t depth() const { return group_filters() * kernel_block; }
};

/// The col2im table, shared by every image, group and filter: entry [tap][position] is the offset in
/// one output spatial block that input `position` reaches through kernel tap `tap`, or -1 where it
/// falls in the cropped pads. The Conv whose adjoint this is reads exactly those offsets.
std::vector<int64_t> scatter_table(const WindowScan& scan, int64_t kernel_block) {
  std::vector<int64_t> table(kernel_block * scan.positions(), -1);
  std::vector<Tap> taps;
  for (int64_t position = 0; position < scan.positions(); ++position) {
    scan.taps(position, taps);
    for (const Tap& tap : taps) table[tap.kernel * scan.positions() + position] = tap.input;
  }
  return table;
}

/// Adds each row of `columns` [filters * taps, positions] into its filter's output plane.
template <class T>
void scatter(const T* columns, const Sizes& sizes, const std::vector<int64_t>& table, T* planes) {
  for (int64_t m = 0; m < sizes.group_filters(); ++m) {
    T* plane = planes + m * sizes.output_block;
    for (int64_t tap = 0; tap < sizes.kernel_block; ++tap) {
      const T* row = columns + (m * sizes.kernel_block + tap) * sizes.positions;
      const int64_t* targets = table.data() + tap * sizes.positions;
      for (int64_t p = 0; p < sizes.positions; ++p) {
        if (targets[p] >= 0) plane[targets[p]] += row[p];
      }
    }
  }
}

std::vector<int64_t> spatial_sizes(const std::vector<int64_t>& dims) {
  return {dims.begin() + 2, dims.end()};
}

/// Per image and group: W_g^T [M/g * taps, C/g] times X_g [C/g, positions], scattered into Y; then
/// the bias.
template <class T> void transpose_convolve(const ir::Tensor& x, const ir::Tensor& w, const ir::Tensor* bias,
                                           const Transposed& t, ir::Tensor& y) {
  const WindowScan scan(t.window, spatial_sizes(y.dims()), spatial_sizes(x.dims()));
  const Sizes sizes{x.dims()[0], x.dims()[1], y.dims()[1], t.group, ir::num_elements(t.window.kernel_shape),
                    scan.positions(), scan.input_block()};
  const std::vector<int64_t> table = scatter_table(scan, sizes.kernel_block);
  std::vector<T> columns(static_cast<std::size_t>(sizes.depth() * sizes.positions));
  T* out = y.mutable_data<T>();
  std::fill(out, out + y.num_elements(), T{0});
  for (int64_t n = 0; n < sizes.batch; ++n) {
    for (int64_t g = 0; g < sizes.group; ++g) {
      const T* image = x.data<T>() + (n * sizes.channels + g * sizes.group_channels()) * sizes.positions;
      const T* filters = w.data<T>() + g * sizes.group_channels() * sizes.depth();
      multiply_matrices<T>({sizes.depth(), sizes.positions, sizes.group_channels()},
                           {filters, 1, sizes.depth()}, {image, sizes.positions}, columns.data(),
                           sizes.positions, false);
      scatter(columns.data(), sizes, table,
              out + (n * sizes.filters + g * sizes.group_filters()) * sizes.output_block);
    }
  }
  for (int64_t row = 0; bias && row < sizes.batch * sizes.filters; ++row) {
    T* plane = out + row * sizes.output_block;
    const T offset = bias->data<T>()[row % sizes.filters];
    for (int64_t i = 0; i < sizes.output_block; ++i) plane[i] += offset;
  }
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor* bias = inputs.size() > 2 ? inputs[2] : nullptr;
  const Transposed t = Transposed::from(node.attrs);
  dispatch_floating(inputs[0]->dtype(), [&](auto tag) {
    transpose_convolve<decltype(tag)>(*inputs[0], *inputs[1], bias, t, outputs[0]);
  });
}

/// A multiply-add per input element, filter of its group and tap:
/// 2 * N * C * prod(X's spatial sizes) * (M / group) * prod(kernel_shape) FLOPs.
CostFeatures features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return filter_features(node, inputs, outputs, inputs[0]);
}

}  // namespace

OpDef conv_transpose_op() {
  return OpDef{ir::OpKind::kConvTranspose, "ConvTranspose", true, 1, {}, canonicalize, infer, kernel,
               features};
}

}  // namespace graphsub::ops
