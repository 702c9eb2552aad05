// Sliding windows of Conv, ConvTranspose and the pools: attributes, output sizes, taps, costs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace graphsub::ops {

/// The canonical window attributes of a node, one entry per spatial axis. Conv and the pools share
/// ONNX's conventions: pads hold every axis's begin, then every axis's end.
struct SlidingWindow {
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  bool ceil_mode = false;

  /// Reads the window attributes; absent or empty strides and dilations read as 1s, pads as 0s,
  /// ceil_mode as 0 (so ops without those attributes read their ONNX defaults).
  static SlidingWindow from(const ir::Attributes& attrs);
  /// Number of spatial axes.
  std::size_t rank() const { return kernel_shape.size(); }
  /// Input elements one window spans along `axis`, dilation included.
  int64_t extent(std::size_t axis) const { return (kernel_shape[axis] - 1) * dilations[axis] + 1; }
  /// Empty when every list has one entry per axis (two for pads) in range; else what is wrong.
  std::string check() const;
};

/// Which window attributes an op has besides kernel_shape, strides and pads.
struct WindowAttributes {
  bool dilations;
  bool ceil_mode;
};

/// For canonicalize: with kernel_shape already set, fills default strides, dilations and pads,
/// replaces auto_pad by explicit pads for an input of shape `input` [N, C, spatial...] (SAME_UPPER
/// puts the odd pad at the end, SAME_LOWER at the start) and removes it. Returns why the node
/// stays opaque: invalid attributes, or a SAME auto_pad with stride > 1 on an unknown input size.
std::string canonicalize_window(ir::Attributes& attrs, const ir::Shape& input, WindowAttributes has);

/// True when Conv's or ConvTranspose's optional bias (input 2) is present.
bool has_bias(const std::vector<ir::TensorType>& inputs);

/// Cost of Conv and ConvTranspose: X, W and the bias read, Y written, and a multiply-add (2 FLOPs)
/// per (W's dim 1) · prod(kernel_shape) for each element of `counted` (Y for Conv, X for
/// ConvTranspose).
CostFeatures filter_features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                             const std::vector<ir::TensorType>& outputs, const ir::TensorType& counted);

/// The dim at `axis`, or an unknown dim when the rank is unknown or too small.
ir::Dim dim_at(const ir::Shape& shape, std::size_t axis);

/// The output type of a windowed op on `input` [N, C, spatial...]: [N, channels, out...], each
/// output size floor (or, with ceil_mode, ceil) of (in + pads - extent) / stride + 1. A spatial
/// size that cannot be computed is unknown, except that a stride-1 "same" window keeps the input's
/// dim. Fails when the rank is wrong or a window does not fit in the padded input.
InferResult infer_windowed(const SlidingWindow& window, const ir::TensorType& input, const ir::Dim& channels);

/// One input element under a window: its offset in the input's spatial block and in the kernel's.
struct Tap {
  int64_t input;
  int64_t kernel;
};

/// The windows over one spatial block (one image of one channel), output position by position;
/// shared by every batch item and channel, since they all see the same geometry.
class WindowScan {
 public:
  WindowScan(const SlidingWindow& window, std::vector<int64_t> input_sizes,
             std::vector<int64_t> output_sizes);
  /// Number of output positions in one spatial block.
  int64_t positions() const { return positions_; }
  /// Elements of one input spatial block.
  int64_t input_block() const { return input_block_; }
  /// The taps of output position `position` (row-major) that fall inside the input, in kernel
  /// order; padding is skipped.
  void taps(int64_t position, std::vector<Tap>& out) const;
  /// How many elements of that window lie inside the padded input (begin pads to end pads): what
  /// AveragePool divides by with count_include_pad, as ONNX Runtime and the ONNX reference do.
  int64_t padded_count(int64_t position) const;

 private:
  /// The first input coordinate the window of `position` covers along each axis (may be < 0).
  std::vector<int64_t> starts(int64_t position) const;

  SlidingWindow window_;
  std::vector<int64_t> input_sizes_;
  std::vector<int64_t> output_sizes_;
  int64_t positions_;
  int64_t input_block_;
};

}  // namespace graphsub::ops
