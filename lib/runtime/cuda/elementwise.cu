// Element-wise CUDA kernels: float unary and binary ops, Where, strided copies, Gather and constant Pad.
#include <cstdint>
#include <string>

#include "ir/error.h"
#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/kernels.h"

namespace graphsub::runtime::cuda {
namespace {

constexpr unsigned kThreads = 256;

/// The output dims and the steps of each of `kOperands` operands, passed to a kernel by value.
template <int kOperands>
struct Layout {
  Dims out;
  Strides steps[kOperands];
};

/// What pad_kernel needs: the input and output dims and where the input starts in each output dim.
struct PadLayout {
  Dims in;
  Dims out;
  int64_t begin[kMaxRank] = {};
};

/// The first output index of this thread in a grid-stride loop.
__device__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

/// The step of a grid-stride loop: every thread of the grid.
__device__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

/// The offset of output element `linear` in each operand: its coordinates, found from the last dim
/// (the fastest) to the first, dotted with the operand's steps. Rank 0 gives offset 0.
template <int kOperands>
__device__ void offsets_of(const Layout<kOperands>& layout, int64_t linear, int64_t (&offset)[kOperands]) {
  for (int k = 0; k < kOperands; ++k) offset[k] = 0;
  for (int d = layout.out.rank - 1; d >= 0; --d) {
    const int64_t coord = linear % layout.out.size[d];
    linear /= layout.out.size[d];
    for (int k = 0; k < kOperands; ++k) offset[k] += coord * layout.steps[k].step[d];
  }
}

/// std::min's choice, kept exactly (b only when b < a) so that NaNs go where the reference's do.
__device__ float std_min(float a, float b) { return b < a ? b : a; }

/// std::max's choice, kept exactly (b only when a < b).
__device__ float std_max(float a, float b) { return a < b ? b : a; }

/// -1, 0 or 1; NaN stays NaN.
__device__ float sign_of(float x) {
  if (x > 0.0f) return 1.0f;
  if (x < 0.0f) return -1.0f;
  return x == 0.0f ? 0.0f : x;
}

/// log(1 + e^x) with neither branch overflowing.
__device__ float softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

/// max(0, min(1, alpha·x + beta)); the explicit roundings stop nvcc from fusing into an FMA, which
/// the host reference does not do.
__device__ float hard_sigmoid(float x, const UnaryParams& p) {
  return std_max(0.0f, std_min(1.0f, __fadd_rn(__fmul_rn(p.alpha, x), p.beta)));
}

/// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), rounded step by step as the reference (no FMA).
__device__ float gelu_tanh(float x) {
  const float cube = 0.044715f * x * x * x;
  const float inner = 0.7978845608028654f * __fadd_rn(x, cube);
  return 0.5f * x * (1.0f + tanhf(inner));
}

/// One unary op on one value, as lib/ops/elementwise_unary.cc computes it in float.
__device__ float apply_unary(UnaryOp op, const UnaryParams& p, float x) {
  switch (op) {
    case UnaryOp::kRelu: return x > 0.0f ? x : 0.0f;
    case UnaryOp::kSigmoid: return 1.0f / (1.0f + expf(-x));
    case UnaryOp::kTanh: return tanhf(x);
    case UnaryOp::kExp: return expf(x);
    case UnaryOp::kLog: return logf(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return x < 0.0f ? -x : x;
    case UnaryOp::kSqrt: return sqrtf(x);
    case UnaryOp::kReciprocal: return 1.0f / x;
    case UnaryOp::kErf: return erff(x);
    case UnaryOp::kFloor: return floorf(x);
    case UnaryOp::kCeil: return ceilf(x);
    case UnaryOp::kSin: return sinf(x);
    case UnaryOp::kCos: return cosf(x);
    case UnaryOp::kSign: return sign_of(x);
    case UnaryOp::kLeakyRelu: return x < 0.0f ? p.alpha * x : x;
    case UnaryOp::kElu: return x < 0.0f ? p.alpha * expm1f(x) : x;
    case UnaryOp::kSoftplus: return softplus(x);
    case UnaryOp::kHardSigmoid: return hard_sigmoid(x, p);
    case UnaryOp::kHardSwish: return __fmul_rn(x, hard_sigmoid(x, UnaryParams{1.0f / 6, 0.5f, 0.0f, 0.0f}));
    case UnaryOp::kClip: return std_min(std_max(x, p.min), p.max);
    case UnaryOp::kGelu: return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
    case UnaryOp::kGeluTanh: return gelu_tanh(x);
    case UnaryOp::kIdentity: break;
  }
  return x;
}

/// One binary op, as lib/ops/elementwise_binary.cc: a NaN operand of Max or Min wins.
__device__ float apply_binary(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return powf(a, b);
    case BinaryOp::kMax: return isnan(a) || b < a ? a : b;
    case BinaryOp::kMin: return isnan(a) || a < b ? a : b;
    case BinaryOp::kPRelu: break;
  }
  return a < 0.0f ? b * a : a;
}

/// Wraps a negative index once and clamps it into [0, size), so a bad index never reads outside.
__device__ int64_t clamp_index(int64_t index, int64_t size) {
  if (index < 0) index += size;
  if (index < 0) return 0;
  return index < size ? index : size - 1;
}

/// Output element `linear` of a constant Pad: the input element it lands on, or `value`.
__device__ float pad_element(const float* x, const PadLayout& layout, float value, int64_t linear) {
  int64_t source = 0;
  int64_t scale = 1;
  for (int d = layout.out.rank - 1; d >= 0; --d) {
    const int64_t coord = linear % layout.out.size[d] - layout.begin[d];
    linear /= layout.out.size[d];
    if (coord < 0 || coord >= layout.in.size[d]) return value;
    source += coord * scale;
    scale *= layout.in.size[d];
  }
  return x[source];
}

__global__ void unary_kernel(UnaryOp op, UnaryParams params, const float* x, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = apply_unary(op, params, x[i]);
}

__global__ void binary_kernel(BinaryOp op, const float* a, const float* b, Layout<2> layout, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t offset[2];
    offsets_of(layout, i, offset);
    y[i] = apply_binary(op, a[offset[0]], b[offset[1]]);
  }
}

__global__ void where_kernel(const uint8_t* cond, const float* a, const float* b, Layout<3> layout, float* y,
                             int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t offset[3];
    offsets_of(layout, i, offset);
    y[i] = cond[offset[0]] != 0 ? a[offset[1]] : b[offset[2]];
  }
}

template <class T>
__global__ void strided_copy_kernel(const T* x, int64_t base, Layout<1> layout, T* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t offset[1];
    offsets_of(layout, i, offset);
    y[i] = x[base + offset[0]];
  }
}

/// y[o, j, i] = x[o, indices[j], i], with y's index decomposed as ((o·count + j)·inner + i).
template <class T>
__global__ void gather_kernel(const T* x, int64_t axis_size, int64_t inner, const int64_t* indices, int64_t count,
                              T* y, int64_t n) {
  for (int64_t t = first_index(); t < n; t += grid_stride()) {
    const int64_t i = t % inner;
    const int64_t row = t / inner;
    const int64_t j = row % count;
    const int64_t o = row / count;
    y[t] = x[(o * axis_size + clamp_index(indices[j], axis_size)) * inner + i];
  }
}

__global__ void pad_kernel(const float* x, PadLayout layout, float value, float* y, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = pad_element(x, layout, value, i);
}

/// Throws unless `dims` has a rank a strided kernel takes (0 to kMaxRank).
void check_rank(const Dims& dims, const char* what) {
  if (dims.rank < 0 || dims.rank > kMaxRank) {
    throw Error(std::string(what) + ": rank " + std::to_string(dims.rank) + " is outside 0.." +
                std::to_string(kMaxRank));
  }
}

/// The element count of `dims`: 1 for rank 0.
int64_t count_of(const Dims& dims) {
  int64_t count = 1;
  for (int d = 0; d < dims.rank; ++d) count *= dims.size[d];
  return count;
}

/// Calls `launch` with a value of the unsigned type of `element_bytes` bytes (1, 2, 4 or 8), so
/// that one kernel template moves elements of any dtype; throws on other sizes.
template <class Launch>
void dispatch_bytes(int element_bytes, const char* what, Launch&& launch) {
  switch (element_bytes) {
    case 1: return launch(uint8_t{});
    case 2: return launch(uint16_t{});
    case 4: return launch(uint32_t{});
    case 8: return launch(uint64_t{});
    default: throw Error(std::string(what) + ": elements of " + std::to_string(element_bytes) + " bytes");
  }
}

}  // namespace

void unary(UnaryOp op, const UnaryParams& params, const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  unary_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(op, params, x, y, n);
  check_launch("unary");
}

void binary(BinaryOp op, const float* a, const Strides& a_steps, const float* b, const Strides& b_steps, float* y,
            const Dims& out, cudaStream_t stream) {
  check_rank(out, "binary");
  const int64_t n = count_of(out);
  if (n == 0) return;
  const Layout<2> layout{out, {a_steps, b_steps}};
  binary_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(op, a, b, layout, y, n);
  check_launch("binary");
}

void where(const uint8_t* cond, const Strides& cond_steps, const float* a, const Strides& a_steps, const float* b,
           const Strides& b_steps, float* y, const Dims& out, cudaStream_t stream) {
  check_rank(out, "where");
  const int64_t n = count_of(out);
  if (n == 0) return;
  const Layout<3> layout{out, {cond_steps, a_steps, b_steps}};
  where_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(cond, a, b, layout, y, n);
  check_launch("where");
}

void strided_copy(const void* x, int64_t offset, const Strides& x_steps, void* y, const Dims& out, int element_bytes,
                  cudaStream_t stream) {
  check_rank(out, "strided_copy");
  const int64_t n = count_of(out);
  if (n == 0) return;
  const Layout<1> layout{out, {x_steps}};
  dispatch_bytes(element_bytes, "strided_copy", [&](auto tag) {
    using T = decltype(tag);
    strided_copy_kernel<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(x), offset, layout,
                                                                           static_cast<T*>(y), n);
  });
  check_launch("strided_copy");
}

void gather(const void* x, int64_t outer, int64_t axis_size, int64_t inner, const int64_t* indices, int64_t count,
            void* y, int element_bytes, cudaStream_t stream) {
  const int64_t n = outer * count * inner;
  if (n == 0) return;
  if (axis_size <= 0) throw Error("gather: indices into an empty axis");
  dispatch_bytes(element_bytes, "gather", [&](auto tag) {
    using T = decltype(tag);
    gather_kernel<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(x), axis_size, inner,
                                                                     indices, count, static_cast<T*>(y), n);
  });
  check_launch("gather");
}

void pad_constant(const float* x, const Dims& in, const int64_t* begin, float value, float* y, const Dims& out,
                  cudaStream_t stream) {
  check_rank(out, "pad_constant");
  if (in.rank != out.rank) throw Error("pad_constant: input and output ranks differ");
  const int64_t n = count_of(out);
  if (n == 0) return;
  PadLayout layout{in, out};
  for (int d = 0; d < in.rank; ++d) layout.begin[d] = begin[d];
  pad_kernel<<<grid_for(n, kThreads), kThreads, 0, stream>>>(x, layout, value, y, n);
  check_launch("pad_constant");
}

}  // namespace graphsub::runtime::cuda
