// CUDA kernels over windows and rows: pooling, row reductions, normalizations, Reduce*, Conv epilogue.
#include <algorithm>
#include <cfloat>

#include <math_constants.h>

#include "runtime/cuda/cuda_check.h"
#include "runtime/cuda/kernels.h"

namespace graphsub::runtime::cuda {
namespace {

constexpr unsigned kThreads = 256;
/// The most blocks a row kernel launches; blocks then loop over the rows with a grid stride.
constexpr int64_t kMaxRowBlocks = 65535LL * 32;

__device__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

/// One block per row, up to kMaxRowBlocks.
unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(std::min(rows, kMaxRowBlocks)); }

struct Add {
  template <class T> __device__ T operator()(T a, T b) const { return a + b; }
};

/// std::max(a, b) of the reference: a NaN operand b never replaces a.
struct MaxSkippingNan {
  __device__ float operator()(float a, float b) const { return a < b ? b : a; }
};

/// Combines one value per thread of a kThreads block in `shared` (kThreads slots); every thread
/// gets the result, and `shared` is free again when it returns.
template <class T, class Combine> __device__ T block_reduce(T value, T* shared, Combine combine) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = combine(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const T total = shared[0];
  __syncthreads();
  return total;
}

// ---- pool ----

/// `params` with the unused trailing spatial axes made size-1 windows without padding.
PoolParams with_unit_axes(PoolParams params) {
  if (params.spatial < 1 || params.spatial > 3) throw Error("pool: 1 to 3 spatial dims are supported");
  for (int axis = params.spatial; axis < 3; ++axis) {
    params.in[axis] = params.out[axis] = params.kernel[axis] = 1;
    params.stride[axis] = params.dilation[axis] = 1;
    params.pad_begin[axis] = params.pad_end[axis] = 0;
  }
  return params;
}

/// Calls visit(offset in the plane) for every window tap inside the input, first axis outermost.
template <class Visit> __device__ void for_each_tap(const PoolParams& p, const int64_t* start, Visit visit) {
  for (int64_t k0 = 0; k0 < p.kernel[0]; ++k0) {
    const int64_t c0 = start[0] + k0 * p.dilation[0];
    if (c0 < 0 || c0 >= p.in[0]) continue;
    for (int64_t k1 = 0; k1 < p.kernel[1]; ++k1) {
      const int64_t c1 = start[1] + k1 * p.dilation[1];
      if (c1 < 0 || c1 >= p.in[1]) continue;
      for (int64_t k2 = 0; k2 < p.kernel[2]; ++k2) {
        const int64_t c2 = start[2] + k2 * p.dilation[2];
        if (c2 >= 0 && c2 < p.in[2]) visit((c0 * p.in[1] + c1) * p.in[2] + c2);
      }
    }
  }
}

/// Window taps before the end of the padded input (the begin padding is never passed), as the
/// reference's WindowScan::padded_count.
__device__ int64_t padded_count(const PoolParams& p, const int64_t* start) {
  int64_t count = 1;
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t room = p.in[axis] + p.pad_end[axis] - start[axis];
    const int64_t taps = (room + p.dilation[axis] - 1) / p.dilation[axis];
    count *= taps < 0 ? 0 : (taps > p.kernel[axis] ? p.kernel[axis] : taps);
  }
  return count;
}

/// Largest tap; -FLT_MAX for a window without taps.
__device__ float window_max(const PoolParams& p, const float* image, const int64_t* start) {
  float best = -FLT_MAX;
  for_each_tap(p, start, [&](int64_t at) { best = MaxSkippingNan{}(best, image[at]); });
  return best;
}

/// Sum in double over the taps, or over the padded extent with count_include_pad (0 / 0 = NaN
/// for an empty window, as the reference).
__device__ float window_average(const PoolParams& p, const float* image, const int64_t* start) {
  double sum = 0;
  int64_t taps = 0;
  for_each_tap(p, start, [&](int64_t at) {
    sum += image[at];
    ++taps;
  });
  const int64_t divisor = p.count_include_pad ? padded_count(p, start) : taps;
  return static_cast<float>(sum / static_cast<double>(divisor));
}

/// One thread per output element of the [n·c, out...] output.
__global__ void pool_kernel(PoolParams p, const float* x, float* y, int64_t total) {
  const int64_t positions = p.out[0] * p.out[1] * p.out[2];
  const int64_t plane_size = p.in[0] * p.in[1] * p.in[2];
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    int64_t position = i % positions;
    int64_t start[3];
    for (int axis = 2; axis >= 0; --axis) {
      start[axis] = position % p.out[axis] * p.stride[axis] - p.pad_begin[axis];
      position /= p.out[axis];
    }
    const float* image = x + i / positions * plane_size;
    y[i] = p.max ? window_max(p, image, start) : window_average(p, image, start);
  }
}

// ---- rows ----

/// y[row] = mean of the row, summed in double.
__global__ void row_mean_kernel(const float* x, float* y, int64_t rows, int64_t len) {
  __shared__ double shared[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    double sum = 0;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) sum += x[row * len + j];
    const double total = block_reduce(sum, shared, Add{});
    if (threadIdx.x == 0) y[row] = static_cast<float>(total / static_cast<double>(len));
  }
}

/// y[row] = largest value of the row, NaN skipped; -FLT_MAX for an empty row.
__global__ void row_max_kernel(const float* x, float* y, int64_t rows, int64_t len) {
  __shared__ float shared[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    float best = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < len; j += blockDim.x) best = MaxSkippingNan{}(best, x[row * len + j]);
    const float total = block_reduce(best, shared, MaxSkippingNan{});
    if (threadIdx.x == 0) y[row] = total;
  }
}

/// y = (x - mean) · scale / sqrt(var + epsilon) + bias, channel by channel.
__global__ void batch_norm_kernel(const float* x, const float* scale, const float* bias, const float* mean,
                                  const float* var, float epsilon, float* y, int64_t c, int64_t spatial,
                                  int64_t total) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t channel = i / spatial % c;
    const float factor = scale[channel] / sqrtf(var[channel] + epsilon);
    y[i] = (x[i] - mean[channel]) * factor + bias[channel];
  }
}

/// Statistics in double, two passes (mean, then the biased variance); the normalization in float.
__global__ void layer_norm_kernel(const float* x, const float* scale, const float* bias, float epsilon, float* y,
                                  int64_t rows, int64_t cols) {
  __shared__ double shared[kThreads];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float* in = x + row * cols;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) sum += in[j];
    const double mean = block_reduce(sum, shared, Add{}) / static_cast<double>(cols);
    double squares = 0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) squares += (in[j] - mean) * (in[j] - mean);
    const double variance = block_reduce(squares, shared, Add{}) / static_cast<double>(cols);
    const auto inv_std_dev = static_cast<float>(1.0 / sqrt(variance + epsilon));
    const auto mean_f = static_cast<float>(mean);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
      y[row * cols + j] = (in[j] - mean_f) * inv_std_dev * scale[j] + (bias ? bias[j] : 0.0f);
    }
  }
}

// ---- reduce ----

/// The operand offset of the `flat`-th index of `dims` (last dim fastest).
__device__ int64_t offset_of(int64_t flat, const Dims& dims, const Strides& steps) {
  int64_t offset = 0;
  for (int d = dims.rank - 1; d >= 0; --d) {
    offset += flat % dims.size[d] * steps.step[d];
    flat /= dims.size[d];
  }
  return offset;
}

/// The accumulator of an empty reduction, in double as the reference.
__device__ double reduce_start(ReduceOp op) {
  if (op == ReduceOp::kMax) return -CUDART_INF;
  if (op == ReduceOp::kMin) return CUDART_INF;
  return 0;
}

/// Sum, or Max and Min where a NaN wins, as the reference.
__device__ double reduce_combine(ReduceOp op, double acc, double x) {
  if (op == ReduceOp::kMax) return isnan(acc) || x < acc ? acc : x;
  if (op == ReduceOp::kMin) return isnan(acc) || acc < x ? acc : x;
  return acc + x;
}

/// One thread per output element, looping over the reduced index space.
__global__ void reduce_kernel(ReduceOp op, const float* x, Strides x_steps, Dims out, Strides red_steps,
                              Dims reduced, float* y, int64_t total, int64_t count) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const float* base = x + offset_of(i, out, x_steps);
    double acc = reduce_start(op);
    for (int64_t r = 0; r < count; ++r) acc = reduce_combine(op, acc, base[offset_of(r, reduced, red_steps)]);
    if (op == ReduceOp::kMean) acc /= static_cast<double>(count);
    y[i] = static_cast<float>(acc);
  }
}

/// The number of elements of `dims` (1 for rank 0).
int64_t element_count(const Dims& dims) {
  int64_t count = 1;
  for (int d = 0; d < dims.rank; ++d) count *= dims.size[d];
  return count;
}

// ---- bias_activation ----

/// The Conv activations of the reference (conv.cc `activate`): 1 relu, 2 sigmoid, 3 tanh.
__device__ float activate(int activation, float v) {
  if (activation == 1) return v > 0 ? v : 0.0f;
  if (activation == 2) return 1.0f / (1.0f + expf(-v));
  if (activation == 3) return tanhf(v);
  return v;
}

__global__ void bias_activation_kernel(float* y, const float* bias, int activation, int64_t c, int64_t spatial,
                                       int64_t total) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const float offset = bias ? bias[i / spatial % c] : 0.0f;
    y[i] = activate(activation, y[i] + offset);
  }
}

}  // namespace

void pool(const PoolParams& params, const float* x, float* y, cudaStream_t stream) {
  const PoolParams p = with_unit_axes(params);
  const int64_t total = p.n * p.c * p.out[0] * p.out[1] * p.out[2];
  if (total == 0) return;
  pool_kernel<<<grid_for(total), kThreads, 0, stream>>>(p, x, y, total);
  check_launch("pool");
}

void reduce_rows(bool max, const float* x, float* y, int64_t rows, int64_t len, cudaStream_t stream) {
  if (rows == 0) return;
  if (max) {
    row_max_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(x, y, rows, len);
  } else {
    row_mean_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(x, y, rows, len);
  }
  check_launch("reduce_rows");
}

void batch_norm(const float* x, const float* scale, const float* bias, const float* mean, const float* var,
                float epsilon, float* y, int64_t n, int64_t c, int64_t spatial, cudaStream_t stream) {
  const int64_t total = n * c * spatial;
  if (total == 0) return;
  batch_norm_kernel<<<grid_for(total), kThreads, 0, stream>>>(x, scale, bias, mean, var, epsilon, y, c, spatial,
                                                              total);
  check_launch("batch_norm");
}

void layer_norm(const float* x, const float* scale, const float* bias, float epsilon, float* y, int64_t rows,
                int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  layer_norm_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(x, scale, bias, epsilon, y, rows, cols);
  check_launch("layer_norm");
}

void reduce(ReduceOp op, const float* x, const Strides& x_steps, const Dims& out, const Strides& red_steps,
            const Dims& reduced, float* y, cudaStream_t stream) {
  const int64_t total = element_count(out);
  if (total == 0) return;
  reduce_kernel<<<grid_for(total), kThreads, 0, stream>>>(op, x, x_steps, out, red_steps, reduced, y, total,
                                                          element_count(reduced));
  check_launch("reduce");
}

void bias_activation(float* y, const float* bias, int activation, int64_t n, int64_t c, int64_t spatial,
                     cudaStream_t stream) {
  if (activation < 0 || activation > 3) throw Error("bias_activation: unknown activation");
  const int64_t total = n * c * spatial;
  if (total == 0 || (!bias && activation == 0)) return;
  bias_activation_kernel<<<grid_for(total), kThreads, 0, stream>>>(y, bias, activation, c, spatial, total);
  check_launch("bias_activation");
}

}  // namespace graphsub::runtime::cuda
