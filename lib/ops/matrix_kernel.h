// The one matrix multiply the reference kernels share (Conv via im2col, MatMul, Gemm): cache-blocked,
// single-threaded, deterministic.
#pragma once

#include <cstdint>

namespace graphsub::ops {

/// A read-only strided view of a matrix: element (i, j) is data[i * row_stride + j * col_stride].
/// A transposed operand is the same data with the two strides swapped, so no copy is needed.
template <class T>
struct MatrixView {
  const T* data;
  int64_t row_stride;
  int64_t col_stride = 1;
};

/// The sizes of C[M, N] = A[M, K] * B[K, N].
struct ProductSizes {
  int64_t m;
  int64_t n;
  int64_t k;
};

/// C[M, N] = A[M, K] * B[K, N], or C += A * B when `accumulate`; C is row-major with row stride
/// `c_row_stride`. T is float or double.
///
/// Blocking: K is cut into blocks of 256; within a block each C element is summed in T, one
/// product after the other, and the block sums are added to C in block order. The order depends
/// only on the sizes, so a build gives bit-identical results from run to run (no threads).
///
/// Accuracy: with u the unit roundoff of T (2^-24 for float), |computed - exact| is at most about
/// (min(K, 256) + ceil(K / 256)) * u * sum_p |A[i,p] * B[p,j]| — the blocking acts as a two-level
/// summation, tighter than the K * u of a plain running sum, though looser than the ~u of summing
/// float products in double, which the kernels did before and which costs a factor of ~2 in speed.
/// For the sizes of real models (K up to ~5000) that is ~2e-5 relative to sum |A*B| in the worst
/// case (typical errors are far smaller), inside the tolerances `optimize --check` compares with.
template <class T>
void multiply_matrices(ProductSizes sizes, MatrixView<T> a, MatrixView<T> b, T* c, int64_t c_row_stride,
                       bool accumulate);

}  // namespace graphsub::ops
