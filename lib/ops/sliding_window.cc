// Sliding-window geometry and filter costs shared by Conv, ConvTranspose, AveragePool and MaxPool.
#include "ops/sliding_window.h"

#include <algorithm>
#include <utility>

#include "ops/common.h"

namespace graphsub::ops {
namespace {

std::vector<int64_t> ints_or(const ir::Attributes& attrs, const char* name, std::size_t size, int64_t fill) {
  const ir::AttrValue* value = attrs.find(name);
  const auto* values = value ? std::get_if<std::vector<int64_t>>(value) : nullptr;
  if (value && !values) return attrs.get_ints(name, {});  // throws, naming the parameter
  return values && !values->empty() ? *values : std::vector<int64_t>(size, fill);
}

bool all_at_least(const std::vector<int64_t>& values, int64_t lowest) {
  return std::all_of(values.begin(), values.end(), [&](int64_t v) { return v >= lowest; });
}

/// Total padding of a SAME window along `axis`, or -1 when it depends on an unknown input size.
int64_t same_total_pad(const SlidingWindow& window, std::size_t axis, const ir::Dim& input) {
  const int64_t stride = window.strides[axis];
  const int64_t extent = window.extent(axis);
  if (stride == 1) return extent - 1;
  if (!input.is_known()) return -1;
  const int64_t output = (input.value + stride - 1) / stride;
  return std::max<int64_t>(0, (output - 1) * stride + extent - input.value);
}

/// Replaces `window.pads` by the pads a SAME_UPPER or SAME_LOWER auto_pad implies.
std::string resolve_same(const std::string& auto_pad, const ir::Shape& input, SlidingWindow& window) {
  const std::size_t rank = window.rank();
  for (std::size_t axis = 0; axis < rank; ++axis) {
    const int64_t total = same_total_pad(window, axis, dim_at(input, axis + 2));
    if (total < 0) return "auto_pad " + auto_pad + " with stride > 1 needs known input sizes";
    const int64_t small = total / 2;
    const bool upper = auto_pad == "SAME_UPPER";
    window.pads[axis] = upper ? small : total - small;
    window.pads[axis + rank] = upper ? total - small : small;
  }
  return {};
}

/// Applies auto_pad to `window.pads`; explicit pads are only allowed with NOTSET.
std::string resolve_auto_pad(const std::string& auto_pad, bool has_pads, const ir::Shape& input,
                             SlidingWindow& window) {
  if (auto_pad == "NOTSET") return {};
  if (has_pads) return "pads given together with auto_pad " + auto_pad;
  if (auto_pad == "VALID") {
    if (window.ceil_mode) return "auto_pad VALID with ceil_mode is ambiguous in ONNX";
    return {};
  }
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return resolve_same(auto_pad, input, window);
  return "unknown auto_pad " + auto_pad;
}

/// Rejects window attributes the op does not have, and a ceil_mode other than 0 or 1.
std::string check_attribute_set(const ir::Attributes& attrs, WindowAttributes has) {
  if (!has.dilations && attrs.has("dilations")) return "dilations are not modelled for this op";
  if (!has.ceil_mode && attrs.has("ceil_mode")) return "ceil_mode is not an attribute of this op";
  const int64_t ceil_mode = attrs.get_int("ceil_mode", 0);
  if (ceil_mode != 0 && ceil_mode != 1) return "ceil_mode must be 0 or 1";
  return {};
}

/// Output size along `axis` for a known input size; -1 when the window does not fit.
int64_t output_size(const SlidingWindow& window, std::size_t axis, int64_t input) {
  const int64_t stride = window.strides[axis];
  const int64_t pad_begin = window.pads[axis];
  const int64_t span = input + pad_begin + window.pads[axis + window.rank()] - window.extent(axis);
  if (span < 0) return -1;
  int64_t output = (window.ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // ONNX: with ceil_mode the last window must start inside the input or its begin padding.
  if (window.ceil_mode && (output - 1) * stride >= input + pad_begin) --output;
  return output;
}

/// The output dim along `axis`; sets `error` when a known input is too small for the window.
ir::Dim output_dim(const SlidingWindow& window, std::size_t axis, const ir::Dim& input, std::string& error) {
  if (!input.is_known()) {
    const int64_t pad = window.pads[axis] + window.pads[axis + window.rank()];
    const bool same = window.strides[axis] == 1 && pad == window.extent(axis) - 1;
    return same ? input : ir::Dim{};
  }
  const int64_t size = output_size(window, axis, input.value);
  if (size < 0) {
    error = "window of extent " + std::to_string(window.extent(axis)) + " does not fit spatial axis " +
            std::to_string(axis) + " of size " + std::to_string(input.value) + " with its pads";
    return ir::Dim{};
  }
  return ir::Dim::known(size);
}

}  // namespace

SlidingWindow SlidingWindow::from(const ir::Attributes& attrs) {
  SlidingWindow window;
  window.kernel_shape = attrs.get_ints("kernel_shape", {});
  window.strides = ints_or(attrs, "strides", window.rank(), 1);
  window.dilations = ints_or(attrs, "dilations", window.rank(), 1);
  window.pads = ints_or(attrs, "pads", 2 * window.rank(), 0);
  window.ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  return window;
}

std::string SlidingWindow::check() const {
  if (kernel_shape.empty()) return "kernel_shape is missing";
  if (strides.size() != rank() || dilations.size() != rank() || pads.size() != 2 * rank()) {
    return "strides, dilations and pads must have one entry per kernel axis (pads two)";
  }
  if (!all_at_least(kernel_shape, 1) || !all_at_least(strides, 1) || !all_at_least(dilations, 1)) {
    return "kernel_shape, strides and dilations must be positive";
  }
  if (!all_at_least(pads, 0)) return "pads must not be negative";
  return {};
}

std::string canonicalize_window(ir::Attributes& attrs, const ir::Shape& input, WindowAttributes has) {
  if (std::string error = check_attribute_set(attrs, has); !error.empty()) return error;
  SlidingWindow window = SlidingWindow::from(attrs);
  if (std::string error = window.check(); !error.empty()) return error;
  if (input.rank_known && input.rank() != window.rank() + 2) {
    return "input rank " + std::to_string(input.rank()) + " does not fit a " + std::to_string(window.rank()) +
           "-d kernel";
  }
  const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
  const ir::AttrValue* pads = attrs.find("pads");
  const bool has_pads = pads && !std::get<std::vector<int64_t>>(*pads).empty();
  if (std::string error = resolve_auto_pad(auto_pad, has_pads, input, window); !error.empty()) {
    return error;
  }
  attrs.erase("auto_pad");
  attrs.set("kernel_shape", window.kernel_shape);
  attrs.set("strides", window.strides);
  attrs.set("pads", window.pads);
  if (has.dilations) attrs.set("dilations", window.dilations);
  if (has.ceil_mode) attrs.set("ceil_mode", int64_t{window.ceil_mode ? 1 : 0});
  return {};
}

bool has_bias(const std::vector<ir::TensorType>& inputs) {
  return inputs.size() > 2 && inputs[2].dtype != ir::DataType::kUndefined;
}

CostFeatures filter_features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                             const std::vector<ir::TensorType>& outputs, const ir::TensorType& counted) {
  std::vector<ir::TensorType> read(inputs.begin(), inputs.begin() + 2);
  if (has_bias(inputs)) read.push_back(inputs[2]);
  CostFeatures cost = elementwise_features(read, outputs, 0);
  const ir::Dim per_group = dim_at(inputs[1].shape, 1);
  const double macs_per_element =
      static_cast<double>(per_group.is_known() ? per_group.value : 1) *
      static_cast<double>(ir::num_elements(node.attrs.get_ints("kernel_shape", {})));
  cost.flops = 2 * macs_per_element * elements_or_one(counted);
  return cost;
}

ir::Dim dim_at(const ir::Shape& shape, std::size_t axis) {
  return shape.rank_known && axis < shape.rank() ? shape.dims[axis] : ir::Dim{};
}

InferResult infer_windowed(const SlidingWindow& window, const ir::TensorType& input,
                           const ir::Dim& channels) {
  if (std::string error = window.check(); !error.empty()) return InferResult::failure(error);
  const std::size_t rank = window.rank();
  if (input.shape.rank_known && input.shape.rank() != rank + 2) {
    return InferResult::failure("input " + ir::to_string(input.shape) + " does not fit a " +
                                std::to_string(rank) + "-d kernel");
  }
  ir::Shape shape{true, {dim_at(input.shape, 0), channels}};
  std::string error;
  for (std::size_t axis = 0; axis < rank && error.empty(); ++axis) {
    shape.dims.push_back(output_dim(window, axis, dim_at(input.shape, axis + 2), error));
  }
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{input.dtype, std::move(shape)}}, {}};
}

WindowScan::WindowScan(const SlidingWindow& window, std::vector<int64_t> input_sizes,
                       std::vector<int64_t> output_sizes)
    : window_(window),
      input_sizes_(std::move(input_sizes)),
      output_sizes_(std::move(output_sizes)),
      positions_(ir::num_elements(output_sizes_)),
      input_block_(ir::num_elements(input_sizes_)) {}

std::vector<int64_t> WindowScan::starts(int64_t position) const {
  std::vector<int64_t> start(window_.rank());
  for (std::size_t axis = window_.rank(); axis-- > 0;) {
    const int64_t coordinate = position % output_sizes_[axis];
    position /= output_sizes_[axis];
    start[axis] = coordinate * window_.strides[axis] - window_.pads[axis];
  }
  return start;
}

void WindowScan::taps(int64_t position, std::vector<Tap>& out) const {
  const std::vector<int64_t> start = starts(position);
  out.assign(1, Tap{0, 0});
  std::vector<Tap> axis_taps;
  for (std::size_t axis = 0; axis < window_.rank(); ++axis) {
    axis_taps.clear();
    for (int64_t k = 0; k < window_.kernel_shape[axis]; ++k) {
      const int64_t coordinate = start[axis] + k * window_.dilations[axis];
      if (coordinate >= 0 && coordinate < input_sizes_[axis]) axis_taps.push_back({coordinate, k});
    }
    // Extend every partial tap by every in-bounds index of this axis, back to front in place.
    const std::size_t partial = out.size();
    const std::size_t count = axis_taps.size();
    out.resize(partial * count);
    for (std::size_t i = partial; count > 0 && i-- > 0;) {
      const Tap base = out[i];
      for (std::size_t t = 0; t < count; ++t) {
        out[i * count + t] = Tap{base.input * input_sizes_[axis] + axis_taps[t].input,
                                 base.kernel * window_.kernel_shape[axis] + axis_taps[t].kernel};
      }
    }
  }
}

int64_t WindowScan::padded_count(int64_t position) const {
  const std::vector<int64_t> start = starts(position);
  int64_t count = 1;
  for (std::size_t axis = 0; axis < window_.rank(); ++axis) {
    const int64_t room = input_sizes_[axis] + window_.pads[axis + window_.rank()] - start[axis];
    const int64_t dilation = window_.dilations[axis];
    count *= std::clamp<int64_t>((room + dilation - 1) / dilation, 0, window_.kernel_shape[axis]);
  }
  return count;
}

}  // namespace graphsub::ops
