// Convolutions on cuDNN.
#include "runtime/cuda/conv_plan.h"

#include <climits>
#include <map>
#include <mutex>
#include <utility>

#include "ops/common.h"
#include "runtime/cuda/kernels.h"

namespace graphsub::runtime::cuda {
namespace {

constexpr float kOne = 1;
constexpr float kZero = 0;

int to_int(int64_t value) {
  if (value < 0 || value > INT_MAX) throw Error("a convolution size does not fit cuDNN's int");
  return static_cast<int>(value);
}

/// The algorithm and workspace chosen for each convolution shape of this process.
struct FoundAlgorithm {
  cudnnConvolutionFwdAlgo_t algo;
  std::size_t workspace;
};

FoundAlgorithm find_algorithm(Context& ctx, const std::string& key, cudnnTensorDescriptor_t x,
                              cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y) {
  static std::mutex mutex;
  static std::map<std::string, FoundAlgorithm> found;
  std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = found.find(key); it != found.end()) return it->second;
  cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  check_cudnn(cudnnFindConvolutionForwardAlgorithm(ctx.cudnn, x, w, conv, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                   &returned, results),
              "cudnnFindConvolutionForwardAlgorithm");
  for (int i = 0; i < returned; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS) {
      return found[key] = FoundAlgorithm{results[i].algo, results[i].memory};
    }
  }
  throw Error("cuDNN has no algorithm for the convolution " + key);
}

const char* algorithm_name(cudnnConvolutionFwdAlgo_t algo) {
  switch (algo) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM: return "IMPLICIT_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return "IMPLICIT_PRECOMP_GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return "GEMM";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT: return "DIRECT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT: return "FFT";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return "FFT_TILING";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return "WINOGRAD";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return "WINOGRAD_NONFUSED";
    default: return "UNKNOWN";
  }
}

}  // namespace

TensorDescriptor::TensorDescriptor(int64_t n, int64_t c, int64_t h, int64_t w) {
  check_cudnn(cudnnCreateTensorDescriptor(&desc_), "cudnnCreateTensorDescriptor");
  check_cudnn(cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, to_int(n), to_int(c), to_int(h),
                                         to_int(w)),
              "cudnnSetTensor4dDescriptor");
}

TensorDescriptor::~TensorDescriptor() { cudnnDestroyTensorDescriptor(desc_); }

std::string ConvShape::key() const {
  std::string text;
  for (int64_t v : {n, in_channels, in_h, in_w, out_channels, out_h, out_w, kernel_h, kernel_w, group, stride_h,
                    stride_w, dilation_h, dilation_w, pad_top, pad_left, pad_bottom, pad_right}) {
    text += std::to_string(v) + ",";
  }
  return text;
}

std::optional<ConvShape> conv_shape(const ir::Node& node, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                                    const std::vector<int64_t>& y) {
  const std::size_t rank = x.size();
  if ((rank != 3 && rank != 4) || w.size() != rank || y.size() != rank) return std::nullopt;
  const std::size_t spatial = rank - 2;
  const std::vector<int64_t> strides = node.attrs.get_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> dilations = node.attrs.get_ints("dilations", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = node.attrs.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  const auto activation = ops::parse_activation(node.attrs.get_string("activation", "none"));
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial || !activation) {
    return std::nullopt;
  }
  ConvShape shape;
  shape.n = x[0];
  shape.in_channels = x[1];
  shape.out_channels = y[1];
  shape.group = node.attrs.get_int("group", 1);
  shape.activation = static_cast<int>(*activation);
  const std::size_t h = spatial == 2 ? 0 : SIZE_MAX, wi = spatial - 1;  // the width is the last spatial dim
  if (h == 0) {
    shape.in_h = x[2], shape.out_h = y[2], shape.kernel_h = w[2], shape.stride_h = strides[0];
    shape.dilation_h = dilations[0], shape.pad_top = pads[0], shape.pad_bottom = pads[spatial];
  }
  shape.in_w = x[2 + wi], shape.out_w = y[2 + wi], shape.kernel_w = w[2 + wi], shape.stride_w = strides[wi];
  shape.dilation_w = dilations[wi], shape.pad_left = pads[wi], shape.pad_right = pads[spatial + wi];
  return shape;
}

ConvPlan::ConvPlan(Context& ctx, const ConvShape& shape, const void* x, const void* w, const void* bias, bool has_bias,
                   const void* residual, void* y, void* padded)
    : ctx_(ctx), shape_(shape), x_(x), w_(w), bias_(bias), has_bias_(has_bias), residual_(residual), y_(y),
      padded_(padded),
      x_desc_(shape.n, shape.in_channels, shape.padded_h(), shape.padded_w()),
      y_desc_(shape.n, shape.out_channels, shape.out_h, shape.out_w), bias_desc_(1, shape.out_channels, 1, 1) {
  check_cudnn(cudnnCreateFilterDescriptor(&w_desc_), "cudnnCreateFilterDescriptor");
  check_cudnn(cudnnSetFilter4dDescriptor(w_desc_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, to_int(shape.out_channels),
                                         to_int(shape.in_channels / shape.group), to_int(shape.kernel_h),
                                         to_int(shape.kernel_w)),
              "cudnnSetFilter4dDescriptor");
  check_cudnn(cudnnCreateConvolutionDescriptor(&conv_desc_), "cudnnCreateConvolutionDescriptor");
  const bool copy = shape.needs_padding();
  check_cudnn(cudnnSetConvolution2dDescriptor(conv_desc_, copy ? 0 : to_int(shape.pad_top),
                                              copy ? 0 : to_int(shape.pad_left), to_int(shape.stride_h),
                                              to_int(shape.stride_w), to_int(shape.dilation_h),
                                              to_int(shape.dilation_w), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "cudnnSetConvolution2dDescriptor");
  check_cudnn(cudnnSetConvolutionGroupCount(conv_desc_, to_int(shape.group)), "cudnnSetConvolutionGroupCount");
  // Plain fp32 multiply-adds: no TF32, so results match the reference executor.
  check_cudnn(cudnnSetConvolutionMathType(conv_desc_, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  int n = 0, c = 0, h = 0, wd = 0;
  check_cudnn(cudnnGetConvolution2dForwardOutputDim(conv_desc_, x_desc_.get(), w_desc_, &n, &c, &h, &wd),
              "cudnnGetConvolution2dForwardOutputDim");
  if (n != shape.n || c != shape.out_channels || h != shape.out_h || wd != shape.out_w) {
    throw Error("cuDNN computes another output size for the convolution " + shape.key());
  }
  const FoundAlgorithm found = find_algorithm(ctx, shape.key(), x_desc_.get(), w_desc_, conv_desc_, y_desc_.get());
  algo_ = found.algo;
  workspace_bytes_ = found.workspace;
  fused_ = shape.activation == 1;
  check_cudnn(cudnnCreateActivationDescriptor(&relu_), "cudnnCreateActivationDescriptor");
  check_cudnn(cudnnSetActivationDescriptor(relu_, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
              "cudnnSetActivationDescriptor");
}

ConvPlan::~ConvPlan() {
  cudnnDestroyActivationDescriptor(relu_);
  cudnnDestroyConvolutionDescriptor(conv_desc_);
  cudnnDestroyFilterDescriptor(w_desc_);
}

std::string ConvPlan::algorithm() const { return algorithm_name(algo_); }

void ConvPlan::run() {
  const void* x = x_;
  if (padded_) {
    Dims in, out;
    in.rank = out.rank = 4;
    const int64_t in_sizes[4] = {shape_.n, shape_.in_channels, shape_.in_h, shape_.in_w};
    const int64_t out_sizes[4] = {shape_.n, shape_.in_channels, shape_.padded_h(), shape_.padded_w()};
    for (int i = 0; i < 4; ++i) in.size[i] = in_sizes[i], out.size[i] = out_sizes[i];
    const int64_t begin[4] = {0, 0, shape_.pad_top, shape_.pad_left};
    pad_constant(static_cast<const float*>(x_), in, begin, 0.0f, static_cast<float*>(padded_), out, ctx_.stream);
    x = padded_;
  }
  if (!fused_) {
    run_unfused(x);
    return;
  }
  const cudnnStatus_t status = cudnnConvolutionBiasActivationForward(
      ctx_.cudnn, &kOne, x_desc_.get(), x, w_desc_, w_, conv_desc_, algo_, workspace_, workspace_bytes_,
      residual_ ? &kOne : &kZero, y_desc_.get(), residual_ ? residual_ : y_, bias_desc_.get(), bias_, relu_,
      y_desc_.get(), y_);
  if (status == CUDNN_STATUS_NOT_SUPPORTED) {
    fused_ = false;  // this algorithm has no fused form: the unfused form from now on
    run_unfused(x);
    return;
  }
  check_cudnn(status, "cudnnConvolutionBiasActivationForward");
}

void ConvPlan::run_unfused(const void* x) {
  check_cudnn(cudnnConvolutionForward(ctx_.cudnn, &kOne, x_desc_.get(), x, w_desc_, w_, conv_desc_, algo_, workspace_,
                                      workspace_bytes_, &kZero, y_desc_.get(), y_),
              "cudnnConvolutionForward");
  auto* y = static_cast<float*>(y_);
  const int64_t spatial = shape_.out_h * shape_.out_w;
  if (!residual_) {
    if (has_bias_ || shape_.activation != 0) {
      bias_activation(y, has_bias_ ? static_cast<const float*>(bias_) : nullptr, shape_.activation, shape_.n,
                      shape_.out_channels, spatial, ctx_.stream);
    }
    return;
  }
  bias_activation(y, has_bias_ ? static_cast<const float*>(bias_) : nullptr, 0, shape_.n, shape_.out_channels, spatial,
                  ctx_.stream);
  Dims dims;
  dims.rank = 1;
  dims.size[0] = shape_.n * shape_.out_channels * spatial;
  Strides dense;
  dense.step[0] = 1;
  binary(BinaryOp::kAdd, y, dense, static_cast<const float*>(residual_), dense, y, dims, ctx_.stream);
  bias_activation(y, nullptr, shape_.activation, shape_.n, shape_.out_channels, spatial, ctx_.stream);
}

}  // namespace graphsub::runtime::cuda
