// Tests of the shared matrix kernel against a naive triple loop: sizes across block edges, strided
// and transposed views, accumulation, float64, run-to-run determinism.
#include "ops/matrix_kernel.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace graphsub {
namespace {

using ops::MatrixView;
using ops::ProductSizes;

template <class T>
std::vector<T> random_values(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> values(static_cast<std::size_t>(count));
  for (T& v : values) v = dist(rng);
  return values;
}

template <class T>
T at(MatrixView<T> view, int64_t i, int64_t j) {
  return view.data[i * view.row_stride + j * view.col_stride];
}

/// Checks every C[i, j] (row stride `c_row_stride`) against A * B summed in long double, within the
/// bound the header documents: (min(K, 256) + ceil(K / 256) + 1) * u * sum_p |A[i,p] * B[p,j]|,
/// plus `before[i, j]` when the kernel accumulated.
template <class T>
void check_product(ProductSizes sizes, MatrixView<T> a, MatrixView<T> b, const std::vector<T>& c,
                   int64_t c_row_stride, const std::vector<T>& before) {
  const long double unit = std::numeric_limits<T>::epsilon() / 2;
  const int64_t terms = std::min<int64_t>(sizes.k, 256) + (sizes.k + 255) / 256 + 1;
  int64_t failures = 0;
  for (int64_t i = 0; i < sizes.m; ++i) {
    for (int64_t j = 0; j < sizes.n; ++j) {
      long double exact = before.empty() ? 0 : before[i * c_row_stride + j];
      long double magnitude = std::fabs(exact);
      for (int64_t p = 0; p < sizes.k; ++p) {
        const long double product = static_cast<long double>(at(a, i, p)) * at(b, p, j);
        exact += product;
        magnitude += std::fabs(product);
      }
      const long double error = std::fabs(c[i * c_row_stride + j] - exact);
      if (error > terms * unit * magnitude) ++failures;
    }
  }
  CHECK(failures == 0);
}

/// Multiplies dense row-major random A [M, K] and B [K, N] into a fresh C and checks it.
template <class T>
void check_dense(ProductSizes sizes, uint32_t seed) {
  const std::vector<T> a = random_values<T>(sizes.m * sizes.k, seed);
  const std::vector<T> b = random_values<T>(sizes.k * sizes.n, seed + 1);
  std::vector<T> c(static_cast<std::size_t>(sizes.m * sizes.n), T{7});
  ops::multiply_matrices<T>(sizes, {a.data(), sizes.k}, {b.data(), sizes.n}, c.data(), sizes.n, false);
  INFO("M " << sizes.m << ", N " << sizes.n << ", K " << sizes.k);
  check_product<T>(sizes, {a.data(), sizes.k}, {b.data(), sizes.n}, c, sizes.n, {});
}

}  // namespace

TEST_CASE("matrix kernel matches a naive product on sizes across block edges", "[ops][matrix_kernel]") {
  // Blocks are 128 rows, 256 deep and 1024 columns; register tiles 4 x 8.
  const std::vector<ProductSizes> cases = {
      {1, 1, 1},   {1, 9, 1},     {5, 1, 1},    {1, 1, 300},  {1, 37, 19},  {7, 1, 13},
      {3, 5, 7},   {4, 8, 256},   {5, 9, 257},  {129, 17, 3}, {131, 1029, 259},
      {6, 1100, 1}, {2, 3, 513},
  };
  uint32_t seed = 1;
  for (const ProductSizes& sizes : cases) check_dense<float>(sizes, seed += 2);
}

TEST_CASE("matrix kernel in float64", "[ops][matrix_kernel]") {
  check_dense<double>({9, 13, 7}, 41);
  check_dense<double>({133, 35, 300}, 43);
}

TEST_CASE("matrix kernel with K = 0 clears C or leaves it", "[ops][matrix_kernel]") {
  std::vector<float> c(6, 3.0f);
  const float unused = 0;
  ops::multiply_matrices<float>({2, 3, 0}, {&unused, 0}, {&unused, 3}, c.data(), 3, true);
  CHECK(c == std::vector<float>(6, 3.0f));
  ops::multiply_matrices<float>({2, 3, 0}, {&unused, 0}, {&unused, 3}, c.data(), 3, false);
  CHECK(c == std::vector<float>(6, 0.0f));
}

TEST_CASE("matrix kernel reads strided and transposed views and accumulates into a sub-block",
          "[ops][matrix_kernel]") {
  const ProductSizes sizes{11, 21, 263};
  // A is the transpose of a [K, 2M] buffer's left half: element (i, p) at p * 2M + i.
  const std::vector<float> a_buffer = random_values<float>(sizes.k * 2 * sizes.m, 51);
  const MatrixView<float> a{a_buffer.data(), 1, 2 * sizes.m};
  // B takes every third column of a [K, 3N + 1] buffer, from column 1.
  const std::vector<float> b_buffer = random_values<float>(sizes.k * (3 * sizes.n + 1), 52);
  const MatrixView<float> b{b_buffer.data() + 1, 3 * sizes.n + 1, 3};
  // C is the [M, N] block of a [M, N + 5] buffer, added to what is there.
  const int64_t c_row_stride = sizes.n + 5;
  const std::vector<float> before = random_values<float>(sizes.m * c_row_stride, 53);
  std::vector<float> c = before;
  ops::multiply_matrices<float>(sizes, a, b, c.data(), c_row_stride, true);
  check_product<float>(sizes, a, b, c, c_row_stride, before);
  for (int64_t i = 0; i < sizes.m; ++i) {
    for (int64_t j = sizes.n; j < c_row_stride; ++j) {
      CHECK(c[i * c_row_stride + j] == before[i * c_row_stride + j]);
    }
  }
}

TEST_CASE("matrix kernel gives bit-identical results run to run", "[ops][matrix_kernel]") {
  const ProductSizes sizes{37, 1030, 600};
  const std::vector<float> a = random_values<float>(sizes.m * sizes.k, 61);
  const std::vector<float> b = random_values<float>(sizes.k * sizes.n, 62);
  std::vector<float> first(static_cast<std::size_t>(sizes.m * sizes.n));
  std::vector<float> second(first.size(), 1.0f);
  ops::multiply_matrices<float>(sizes, {a.data(), sizes.k}, {b.data(), sizes.n}, first.data(), sizes.n, false);
  ops::multiply_matrices<float>(sizes, {a.data(), sizes.k}, {b.data(), sizes.n}, second.data(), sizes.n, false);
  CHECK(first == second);
}

}  // namespace graphsub
