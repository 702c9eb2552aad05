// graphsub's own CUDA kernels: what cuDNN and cuBLAS do not cover, launched on a stream.
//
// Every function enqueues its work on `stream` and returns at once; it checks its launch with
// cudaGetLastError and throws graphsub::Error on a failure. Pointers are device memory; tensors are
// dense and row-major (the last dim varies fastest). Sizes are in elements unless a name says bytes.
// The executor (cuda_executor.cc) computes every shape and stride on the host and calls these.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace graphsub::runtime::cuda {

/// The most dims a strided kernel takes; the executor runs a node of higher rank on the host.
constexpr int kMaxRank = 8;

/// The sizes of a kernel's output, and for each output dim the step (in elements) that moves one
/// position along it in an operand; 0 where the operand is broadcast along that dim.
struct Dims {
  int rank = 0;
  int64_t size[kMaxRank] = {};
};
struct Strides {
  int64_t step[kMaxRank] = {};
};

// ---- elementwise.cu ----------------------------------------------------------------------------

/// Float unary ops, ONNX semantics as the reference kernels in lib/ops/elementwise_unary.cc.
enum class UnaryOp {
  kRelu, kSigmoid, kTanh, kExp, kLog, kNeg, kAbs, kSqrt, kReciprocal, kErf, kFloor, kCeil, kSin, kCos,
  kSign, kLeakyRelu, kElu, kSoftplus, kHardSigmoid, kHardSwish, kClip, kGelu, kGeluTanh, kIdentity,
};
/// LeakyRelu, Elu: alpha; HardSigmoid: alpha, beta; Clip: min, max; the others read none.
struct UnaryParams {
  float alpha = 0;
  float beta = 0;
  float min = 0;
  float max = 0;
};
/// y[i] = op(x[i]) for i < n. x == y is allowed (in place).
void unary(UnaryOp op, const UnaryParams& params, const float* x, float* y, int64_t n, cudaStream_t stream);

/// Float binary ops with numpy broadcasting: PRelu is x < 0 ? slope * x : x with a = x, b = slope;
/// Pow is powf; Max, Min as fmaxf, fminf except that a NaN operand gives NaN.
enum class BinaryOp { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin, kPRelu };
/// y[idx] = op(a[sum idx·a_steps], b[sum idx·b_steps]) over every index idx of `out` (y dense).
void binary(BinaryOp op, const float* a, const Strides& a_steps, const float* b, const Strides& b_steps, float* y,
            const Dims& out, cudaStream_t stream);

/// Where: y[idx] = cond[..] ? a[..] : b[..], with broadcasting as `binary`; cond holds one byte
/// per bool (0 or 1).
void where(const uint8_t* cond, const Strides& cond_steps, const float* a, const Strides& a_steps, const float* b,
           const Strides& b_steps, float* y, const Dims& out, cudaStream_t stream);

/// y[idx] = x[offset + sum idx·x_steps] for every index idx of `out`, y dense, elements of
/// `element_bytes` (1, 2, 4 or 8) bytes: Transpose (permuted steps), Slice (offset of the
/// starts, steps times the slice's steps, negative ones too), Expand (0 steps), any dtype.
void strided_copy(const void* x, int64_t offset, const Strides& x_steps, void* y, const Dims& out, int element_bytes,
                  cudaStream_t stream);

/// Gather along one axis: x viewed as [outer, axis_size, inner], indices (int64, `count` of them,
/// a negative index counts from the end) pick rows: y viewed as [outer, count, inner] with
/// y[o, j, i] = x[o, indices[j], i]. Indices outside [-axis_size, axis_size) are an error the
/// executor checks before the launch (it reads constant indices on the host); the kernel clamps
/// them so that a bad index never reads outside x. Elements of `element_bytes` bytes.
void gather(const void* x, int64_t outer, int64_t axis_size, int64_t inner, const int64_t* indices, int64_t count,
            void* y, int element_bytes, cudaStream_t stream);

/// Pad, constant mode: y (of `out` dims) is x (of `in` dims, same rank) placed at `begin` in each
/// dim (begin[d] may be negative: a crop), everything else `value`.
void pad_constant(const float* x, const Dims& in, const int64_t* begin, float value, float* y, const Dims& out,
                  cudaStream_t stream);

// ---- windowed.cu -------------------------------------------------------------------------------

/// Windowed pooling over 1 to 3 spatial dims of an [n, c, spatial...] tensor, ONNX semantics of
/// MaxPool and AveragePool: output size given (the executor computes it, ceil_mode included), pads
/// at the beginning given (the end's pads follow from the sizes), positions outside the input are
/// skipped by MaxPool and, for AveragePool, counted in the divisor only when count_include_pad
/// (and then only those inside the padded extent: in + pad_begin + pad_end, as onnxruntime does).
struct PoolParams {
  bool max = true;
  bool count_include_pad = false;
  int spatial = 2;
  int64_t n = 1;
  int64_t c = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0};
  int64_t pad_end[3] = {0, 0, 0};
};
void pool(const PoolParams& params, const float* x, float* y, cudaStream_t stream);

/// GlobalAveragePool, GlobalMaxPool, and any reduction of a row: y[r] = mean or max of
/// x[r·len .. r·len + len).
void reduce_rows(bool max, const float* x, float* y, int64_t rows, int64_t len, cudaStream_t stream);

/// Inference BatchNormalization of x viewed as [n, c, spatial]:
/// y = (x - mean[c]) / sqrt(var[c] + epsilon) · scale[c] + bias[c].
void batch_norm(const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                float epsilon, float* y, int64_t n, int64_t c, int64_t spatial, cudaStream_t stream);

/// LayerNormalization of x viewed as [rows, cols] (normalized over each row):
/// y = (x - mean) / sqrt(variance + epsilon) · scale + bias, where scale and bias hold `cols`
/// values (bias may be null: none). Mean and variance (the biased one, divided by cols) are
/// computed in double in two passes, as the reference kernel does.
void layer_norm(const float* x, const float* scale, const float* bias, float epsilon, float* y, int64_t rows,
                int64_t cols, cudaStream_t stream);

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin: each element of `out` reduces the elements of x at
/// x[sum out_idx·x_steps + sum red_idx·red_steps] over every index red_idx of `reduced`. Mean
/// divides by the count of reduced elements; an empty reduction gives 0 (sum), NaN (mean: 0/0, as
/// the reference kernel), -inf (max) and +inf (min).
enum class ReduceOp { kSum, kMean, kMax, kMin };
void reduce(ReduceOp op, const float* x, const Strides& x_steps, const Dims& out, const Strides& red_steps,
            const Dims& reduced, float* y, cudaStream_t stream);

/// y viewed as [n, c, spatial]: y += bias[c] (when bias is not null), then the activation
/// (0 none, 1 relu, 2 sigmoid, 3 tanh) in place: what a Conv with a bias or an activation that
/// cuDNN does not fuse needs after cudnnConvolutionForward.
void bias_activation(float* y, const float* bias, int activation, int64_t n, int64_t c, int64_t spatial,
                     cudaStream_t stream);

}  // namespace graphsub::runtime::cuda
