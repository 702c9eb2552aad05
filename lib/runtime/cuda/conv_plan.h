// Convolutions on cuDNN: descriptors, the algorithm found per shape, and the fused bias-activation form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/cuda/cuda_context.h"

namespace graphsub::runtime::cuda {

/// A 4-d float tensor descriptor, NCHW, owned.
class TensorDescriptor {
 public:
  TensorDescriptor(int64_t n, int64_t c, int64_t h, int64_t w);
  ~TensorDescriptor();
  TensorDescriptor(const TensorDescriptor&) = delete;
  TensorDescriptor& operator=(const TensorDescriptor&) = delete;
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

/// A Conv node's geometry, 1-d convolutions as 2-d ones of height 1.
struct ConvShape {
  int64_t n = 1, in_channels = 1, in_h = 1, in_w = 1;
  int64_t out_channels = 1, out_h = 1, out_w = 1;
  int64_t kernel_h = 1, kernel_w = 1, group = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int activation = 0;  ///< 0 none, 1 relu, 2 sigmoid, 3 tanh (ops::Activation's order).

  /// cuDNN takes one pad per side pair: unequal pads are applied by a copy into a padded input.
  bool needs_padding() const { return pad_top != pad_bottom || pad_left != pad_right; }
  int64_t padded_h() const { return in_h + (needs_padding() ? pad_top + pad_bottom : 0); }
  int64_t padded_w() const { return in_w + (needs_padding() ? pad_left + pad_right : 0); }
  std::size_t padded_bytes() const {
    return static_cast<std::size_t>(n * in_channels * padded_h() * padded_w()) * sizeof(float);
  }
  /// The key of the algorithm choice: every field.
  std::string key() const;
};

/// The geometry of a float Conv of 1 or 2 spatial dims with these sizes, or nullopt when cuDNN's
/// 2-d convolution does not cover it (3-d, sizes beyond int).
std::optional<ConvShape> conv_shape(const ir::Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                    const std::vector<int64_t>& y);

/// One planned convolution: descriptors, the algorithm cudnnFindConvolutionForwardAlgorithm chose
/// for its shape (once per shape and process), and its run: cudnnConvolutionBiasActivationForward
/// for the relu form, with the residual added (the fused kernels TASO's conv+relu fusion and
/// onnxruntime's CUDA FusedConv target), else cudnnConvolutionForward then graphsub's kernels.
class ConvPlan {
 public:
  /// `bias` may be null; with activation relu it must not be (the executor passes zeros).
  /// `residual` (null: none) is a tensor of y's shape added before the activation: graphsub's
  /// Conv Z input, or the Conv → Add → Relu of a residual block; with relu, one cuDNN call.
  ConvPlan(Context& ctx, const ConvShape& shape, const void* x, const void* w, const void* bias, bool has_bias,
           const void* residual, void* y, void* padded);
  ~ConvPlan();
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;

  std::size_t workspace_bytes() const { return workspace_bytes_; }
  void set_workspace(void* workspace, std::size_t bytes) {
    workspace_ = workspace;
    workspace_limit_ = bytes;
  }
  /// The algorithm's name, e.g. "IMPLICIT_PRECOMP_GEMM".
  std::string algorithm() const;
  void run();

 private:
  void run_unfused(const void* x);

  Context& ctx_;
  ConvShape shape_;
  const void* x_;
  const void* w_;
  const void* bias_;
  bool has_bias_;
  const void* residual_;
  void* y_;
  void* padded_;
  TensorDescriptor x_desc_, y_desc_, bias_desc_;
  cudnnFilterDescriptor_t w_desc_ = nullptr;
  cudnnConvolutionDescriptor_t conv_desc_ = nullptr;
  cudnnActivationDescriptor_t relu_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_{};
  std::size_t workspace_bytes_ = 0;
  void* workspace_ = nullptr;
  std::size_t workspace_limit_ = 0;
  bool fused_ = false;
};

}  // namespace graphsub::runtime::cuda
