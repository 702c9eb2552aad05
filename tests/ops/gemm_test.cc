// Tests of Gemm: canonical attributes, shapes with transposes and bias broadcast, kernel, cost.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_list.h"
#include "test_util.h"

namespace graphsub {
namespace {

using ir::DataType;
using testing::float_type;

std::string canonicalize(ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs,
                         int64_t opset = 13) {
  ops::ImportContext context{attrs, inputs, 1, opset};
  return ops::gemm_op().canonicalize(context);
}

ir::Attributes gemm_attrs(float alpha, float beta, int64_t trans_a, int64_t trans_b) {
  ir::Attributes attrs;
  attrs.set("alpha", alpha);
  attrs.set("beta", beta);
  attrs.set("transA", trans_a);
  attrs.set("transB", trans_b);
  return attrs;
}

ops::InferResult infer(const ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs) {
  ir::Node node;
  node.attrs = attrs;
  return ops::gemm_op().infer(node, inputs);
}

/// Runs the kernel the way the executor does: infer, allocate the output, fill it.
ir::Tensor run(const ir::Attributes& attrs, const std::vector<const ir::Tensor*>& inputs) {
  std::vector<ir::TensorType> types;
  for (const ir::Tensor* input : inputs) {
    types.push_back(input ? float_type(input->dims()) : ir::TensorType{});
  }
  ops::InferResult inferred = infer(attrs, types);
  REQUIRE(inferred.ok());
  std::vector<ir::Tensor> outputs;
  outputs.emplace_back(DataType::kFloat, *inferred.outputs[0].shape.sizes());
  ir::Node node;
  node.attrs = attrs;
  ops::gemm_op().kernel(node, inputs, outputs);
  return outputs[0];
}

}  // namespace

TEST_CASE("Gemm canonicalization fills alpha, beta, transA, transB", "[ops][gemm]") {
  ir::Attributes attrs;
  attrs.set("transB", int64_t{1});
  REQUIRE(canonicalize(attrs, {float_type({2, 3}), float_type({4, 3})}).empty());
  CHECK(attrs == gemm_attrs(1.0f, 1.0f, 0, 1));
}

TEST_CASE("Gemm canonicalization rejects old opsets, bad flags and types", "[ops][gemm]") {
  const std::vector<ir::TensorType> floats = {float_type({2, 3}), float_type({3, 4})};
  ir::Attributes none;
  CHECK_FALSE(canonicalize(none, floats, 6).empty());
  ir::Attributes bad_flag;
  bad_flag.set("transA", int64_t{2});
  CHECK_FALSE(canonicalize(bad_flag, floats).empty());
  const ir::TensorType ints{DataType::kInt64, ir::Shape::of({2, 2})};
  CHECK_FALSE(canonicalize(none, {ints, ints}).empty());
  CHECK_FALSE(canonicalize(none, {float_type({2, 3})}).empty());
}

TEST_CASE("Gemm infers [M, N] through transposes, keeping symbols", "[ops][gemm]") {
  const ir::Shape a{true, {ir::Dim::known(4), ir::Dim::named("M")}};
  ops::InferResult result = infer(gemm_attrs(1, 1, 1, 1),
                                  {ir::TensorType{DataType::kFloat, a}, float_type({5, 4})});
  REQUIRE(result.ok());
  const ir::Shape expected{true, {ir::Dim::named("M"), ir::Dim::known(5)}};
  CHECK(result.outputs[0].shape == expected);
}

TEST_CASE("Gemm accepts C that broadcasts to [M, N] and rejects others", "[ops][gemm]") {
  const ir::Attributes attrs = gemm_attrs(1, 1, 0, 0);
  const auto a = float_type({3, 4});
  const auto b = float_type({4, 5});
  const std::vector<std::vector<int64_t>> biases = {{}, {1}, {5}, {1, 5}, {3, 1}, {3, 5}};
  for (const std::vector<int64_t>& bias : biases) {
    CHECK(infer(attrs, {a, b, float_type(bias)}).ok());
  }
  CHECK(infer(attrs, {a, b, ir::TensorType{}}).ok());
  CHECK_FALSE(infer(attrs, {a, b, float_type({2, 5})}).ok());
  CHECK_FALSE(infer(attrs, {a, b, float_type({1, 3, 5})}).ok());
  CHECK_FALSE(infer(attrs, {a, float_type({5, 4})}).ok());
  CHECK_FALSE(infer(attrs, {float_type({3, 4, 1}), b}).ok());
}

TEST_CASE("Gemm matches a naive formula with every attribute set", "[ops][gemm]") {
  const ir::Tensor a = testing::random_tensor({4, 3}, 21);  // A' = A^T is [3, 4].
  const ir::Tensor b = testing::random_tensor({5, 4}, 22);  // B' = B^T is [4, 5].
  const ir::Tensor c = testing::random_tensor({1, 5}, 23);
  const ir::Tensor y = run(gemm_attrs(0.25f, 0.35f, 1, 1), {&a, &b, &c});
  REQUIRE(y.dims() == std::vector<int64_t>{3, 5});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      double product = 0;
      for (int64_t k = 0; k < 4; ++k) {
        product += double{a.data<float>()[k * 3 + i]} * b.data<float>()[j * 4 + k];
      }
      const double expected = 0.25 * product + 0.35 * c.data<float>()[j];
      CHECK(y.data<float>()[i * 5 + j] == Approx(expected).margin(1e-6));
    }
  }
}

TEST_CASE("Gemm across matrix-kernel blocks matches a naive formula for every transpose",
          "[ops][gemm]") {
  // M = 131, N = 1027, K = 259 cross the kernel's 128 x 1024 x 256 blocks; C is a column [M, 1].
  const int64_t m = 131, n = 1027, k = 259;
  const ir::Tensor c = testing::random_tensor({m, 1}, 33);
  for (int64_t trans_a = 0; trans_a < 2; ++trans_a) {
    for (int64_t trans_b = 0; trans_b < 2; ++trans_b) {
      const ir::Tensor a = testing::random_tensor(trans_a ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k},
                                                  uint32_t(31 + 2 * trans_a));
      const ir::Tensor b = testing::random_tensor(trans_b ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n},
                                                  uint32_t(32 + 2 * trans_b));
      const ir::Tensor y = run(gemm_attrs(0.5f, 2.0f, trans_a, trans_b), {&a, &b, &c});
      REQUIRE(y.dims() == std::vector<int64_t>{m, n});
      int64_t failures = 0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double product = 0;
          for (int64_t p = 0; p < k; ++p) {
            const float a_ip = a.data<float>()[trans_a ? p * m + i : i * k + p];
            product += double{a_ip} * b.data<float>()[trans_b ? j * k + p : p * n + j];
          }
          const double expected = 0.5 * product + 2.0 * c.data<float>()[i];
          if (std::fabs(y.data<float>()[i * n + j] - expected) > 1e-4) ++failures;
        }
      }
      INFO("transA " << trans_a << ", transB " << trans_b);
      CHECK(failures == 0);
    }
  }
}

TEST_CASE("Gemm multiplies float64 operands in float64", "[ops][gemm]") {
  ir::Tensor a(DataType::kDouble, {2, 3});  // transposed: A' is [3, 2]
  ir::Tensor b(DataType::kDouble, {2, 4});
  ir::Tensor c(DataType::kDouble, {4});
  for (int64_t i = 0; i < 6; ++i) a.mutable_data<double>()[i] = 1.0 + 1e-12 * static_cast<double>(i);
  for (int64_t i = 0; i < 8; ++i) b.mutable_data<double>()[i] = static_cast<double>(i) + 0.5;
  for (int64_t i = 0; i < 4; ++i) c.mutable_data<double>()[i] = 1e-13 * static_cast<double>(i);
  ir::Node node;
  node.attrs = gemm_attrs(1.5f, 0.5f, 1, 0);
  std::vector<ir::Tensor> outputs;
  outputs.emplace_back(DataType::kDouble, std::vector<int64_t>{3, 4});
  ops::gemm_op().kernel(node, {&a, &b, &c}, outputs);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      const double product = a.data<double>()[i] * b.data<double>()[j] +
                             a.data<double>()[3 + i] * b.data<double>()[4 + j];
      const double expected = 1.5 * product + 0.5 * c.data<double>()[j];
      CHECK(outputs[0].data<double>()[i * 4 + j] == Approx(expected).epsilon(1e-15));
    }
  }
}

TEST_CASE("Gemm without C is the scaled product", "[ops][gemm]") {
  const ir::Tensor a = ir::Tensor::from_floats({1, 2}, {1, 2});
  const ir::Tensor b = ir::Tensor::from_floats({2, 2}, {1, 2, 3, 4});
  const ir::Tensor y = run(gemm_attrs(2, 1, 0, 0), {&a, &b, nullptr});
  CHECK(testing::max_abs_diff(y, ir::Tensor::from_floats({1, 2}, {14, 20})) == 0);
}

TEST_CASE("Gemm costs 2*M*N*K plus the alpha and bias terms", "[ops][gemm]") {
  const ir::Node node;
  const std::vector<ir::TensorType> inputs = {float_type({3, 4}), float_type({4, 5}),
                                             float_type({5})};
  const ops::CostFeatures features = ops::gemm_op().features(node, inputs, {float_type({3, 5})});
  CHECK(features.flops == 2.0 * 3 * 4 * 5 + 3 * 15);
  CHECK(features.bytes_read == (12 + 20 + 5) * 4);
}

}  // namespace graphsub
