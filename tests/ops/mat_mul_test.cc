// Tests of MatMul: numpy shape rules (1-D operands, broadcast batches), kernel, FLOP count, and
// graphsub's fused form (summand C and activation).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

namespace graphsub {
namespace {

using ir::DataType;
using testing::float_type;

ops::InferResult infer(const std::vector<ir::TensorType>& inputs) {
  return ops::mat_mul_op().infer(ir::Node{}, inputs);
}

/// The output shape of MatMul on static operand sizes.
ir::Shape product_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  ops::InferResult result = infer({float_type(a), float_type(b)});
  REQUIRE(result.ok());
  return result.outputs[0].shape;
}

/// Runs the kernel the way the executor does: infer, allocate the output, fill it.
ir::Tensor run(const ir::Tensor& a, const ir::Tensor& b) {
  ops::InferResult inferred = infer({float_type(a.dims()), float_type(b.dims())});
  REQUIRE(inferred.ok());
  std::vector<ir::Tensor> outputs;
  outputs.emplace_back(DataType::kFloat, *inferred.outputs[0].shape.sizes());
  ops::mat_mul_op().kernel(ir::Node{}, {&a, &b}, outputs);
  return outputs[0];
}

std::string canonicalize(const std::vector<ir::TensorType>& inputs) {
  ir::Attributes attrs;
  ops::ImportContext context{attrs, inputs, 1, 13};
  return ops::mat_mul_op().canonicalize(context);
}

ir::Attributes with_activation(const std::string& activation) {
  ir::Attributes attrs;
  attrs.set("activation", activation);
  return attrs;
}

/// The output type of a fused MatMul (as text) for A [2,3], B [3,4] and C of `c`.
std::string fused_type(const ir::TensorType& c) {
  return testing::infer_text(ops::mat_mul_op(), with_activation("none"),
                             {float_type({2, 3}), float_type({3, 4}), c});
}

}  // namespace

TEST_CASE("MatMul models float operands of one type", "[ops][mat_mul]") {
  CHECK(canonicalize({float_type({2, 3}), float_type({3, 4})}).empty());
  const ir::TensorType ints{DataType::kInt32, ir::Shape::of({3, 4})};
  CHECK_FALSE(canonicalize({ints, ints}).empty());
  CHECK_FALSE(canonicalize({float_type({2, 3}), ir::TensorType{DataType::kDouble, {}}}).empty());
}

TEST_CASE("MatMul promotes 1-D operands and drops the added dimension", "[ops][mat_mul]") {
  CHECK(product_shape({4}, {4, 5}) == ir::Shape::of({5}));
  CHECK(product_shape({3, 4}, {4}) == ir::Shape::of({3}));
  CHECK(product_shape({4}, {4}) == ir::Shape::of({}));
  CHECK(product_shape({2, 3, 4}, {4}) == ir::Shape::of({2, 3}));
}

TEST_CASE("MatMul broadcasts batch dimensions, keeping symbols", "[ops][mat_mul]") {
  CHECK(product_shape({2, 1, 3, 4}, {5, 4, 6}) == ir::Shape::of({2, 5, 3, 6}));
  const ir::Shape batched{true, {ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::named("K")}};
  ops::InferResult result = infer({ir::TensorType{DataType::kFloat, batched}, float_type({4, 5})});
  REQUIRE(result.ok());
  const ir::Shape expected{true, {ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::known(5)}};
  CHECK(result.outputs[0].shape == expected);
  result = infer({float_type({3, 4}), ir::TensorType{DataType::kFloat, {}}});
  REQUIRE(result.ok());
  CHECK_FALSE(result.outputs[0].shape.rank_known);
}

TEST_CASE("MatMul rejects mismatched inner or batch dimensions", "[ops][mat_mul]") {
  CHECK_FALSE(infer({float_type({3, 4}), float_type({5, 6})}).ok());
  CHECK_FALSE(infer({float_type({4}), float_type({3})}).ok());
  CHECK_FALSE(infer({float_type({2, 3, 4}), float_type({3, 4, 5})}).ok());
  CHECK_FALSE(infer({float_type({}), float_type({3, 4})}).ok());
  CHECK_FALSE(infer({float_type({3, 4})}).ok());
}

TEST_CASE("MatMul multiplies by hand, with 1-D operands", "[ops][mat_mul]") {
  const ir::Tensor a = ir::Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const ir::Tensor b = ir::Tensor::from_floats({3, 2}, {1, 0, 0, 1, 1, 1});
  CHECK(run(a, b).dims() == std::vector<int64_t>{2, 2});
  CHECK(testing::max_abs_diff(run(a, b), ir::Tensor::from_floats({2, 2}, {4, 5, 10, 11})) == 0);
  const ir::Tensor row = ir::Tensor::from_floats({2}, {1, -1});
  CHECK(testing::max_abs_diff(run(row, a), ir::Tensor::from_floats({3}, {-3, -3, -3})) == 0);
  const ir::Tensor column = ir::Tensor::from_floats({3}, {1, 1, 1});
  CHECK(testing::max_abs_diff(run(a, column), ir::Tensor::from_floats({2}, {6, 15})) == 0);
}

TEST_CASE("batched MatMul matches a naive formula on random inputs", "[ops][mat_mul]") {
  // a: [2, 1, 3, 4] broadcasts over b's batch of 5; b: [5, 4, 6] over a's batch of 2.
  const ir::Tensor a = testing::random_tensor({2, 1, 3, 4}, 11);
  const ir::Tensor b = testing::random_tensor({5, 4, 6}, 12);
  const ir::Tensor out = run(a, b);
  REQUIRE(out.dims() == std::vector<int64_t>{2, 5, 3, 6});
  for (int64_t p = 0; p < 2; ++p) {
    for (int64_t q = 0; q < 5; ++q) {
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t j = 0; j < 6; ++j) {
          double sum = 0;
          for (int64_t k = 0; k < 4; ++k) {
            const double a_ik = a.data<float>()[(p * 3 + i) * 4 + k];
            sum += a_ik * b.data<float>()[(q * 4 + k) * 6 + j];
          }
          CHECK(out.data<float>()[((p * 5 + q) * 3 + i) * 6 + j] == Approx(sum).margin(1e-5));
        }
      }
    }
  }
}

TEST_CASE("batched MatMul across matrix-kernel blocks matches a naive formula", "[ops][mat_mul]") {
  // 130 rows, 1030 columns and 260 of depth cross the kernel's 128 x 1024 x 256 blocks; b's
  // batch of 1 broadcasts over a's 2.
  const ir::Tensor a = testing::random_tensor({2, 130, 260}, 13);
  const ir::Tensor b = testing::random_tensor({1, 260, 1030}, 14);
  const ir::Tensor out = run(a, b);
  REQUIRE(out.dims() == std::vector<int64_t>{2, 130, 1030});
  int64_t failures = 0;
  for (int64_t p = 0; p < 2; ++p) {
    for (int64_t i = 0; i < 130; ++i) {
      for (int64_t j = 0; j < 1030; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 260; ++k) {
          sum += double{a.data<float>()[(p * 130 + i) * 260 + k]} * b.data<float>()[k * 1030 + j];
        }
        if (std::fabs(out.data<float>()[(p * 130 + i) * 1030 + j] - sum) > 1e-4) ++failures;
      }
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("MatMul multiplies float64 operands in float64", "[ops][mat_mul]") {
  ir::Tensor a(DataType::kDouble, {3, 2});
  ir::Tensor b(DataType::kDouble, {2, 5});
  for (int64_t i = 0; i < 6; ++i) a.mutable_data<double>()[i] = 1.0 + 1e-12 * static_cast<double>(i);
  for (int64_t i = 0; i < 10; ++i) b.mutable_data<double>()[i] = static_cast<double>(i) + 0.5;
  std::vector<ir::Tensor> outputs;
  outputs.emplace_back(DataType::kDouble, std::vector<int64_t>{3, 5});
  ops::mat_mul_op().kernel(ir::Node{}, {&a, &b}, outputs);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      const double expected = a.data<double>()[i * 2] * b.data<double>()[j] +
                              a.data<double>()[i * 2 + 1] * b.data<double>()[5 + j];
      CHECK(outputs[0].data<double>()[i * 5 + j] == Approx(expected).epsilon(1e-15));
    }
  }
}

TEST_CASE("MatMul costs 2*M*N*K FLOPs per batch", "[ops][mat_mul]") {
  const std::vector<ir::TensorType> inputs = {float_type({2, 3, 4}), float_type({4, 5})};
  const ops::CostFeatures features =
      ops::mat_mul_op().features(ir::Node{}, inputs, {float_type({2, 3, 5})});
  CHECK(features.flops == 2.0 * 3 * 5 * 4 * 2);
  CHECK(features.bytes_read == (24 + 20) * 4);
  CHECK(features.bytes_written == 30 * 4);
}

TEST_CASE("MatMul canonicalize fills the activation and takes graphsub's C", "[ops][mat_mul]") {
  const ops::OpDef mat_mul = ops::mat_mul_op();
  const ir::TensorType a = float_type({2, 3});
  const ir::TensorType b = float_type({3, 4});
  const testing::Canonicalized plain = testing::canonicalize_def(mat_mul, {}, {a, b});
  REQUIRE(plain.reason.empty());
  CHECK(plain.attrs == with_activation("none"));
  const testing::Canonicalized fused =
      testing::canonicalize_def(mat_mul, with_activation("tanh"), {a, b, float_type({4})});
  REQUIRE(fused.reason.empty());
  CHECK(fused.attrs == with_activation("tanh"));
  CHECK_FALSE(testing::canonicalize_def(mat_mul, with_activation("gelu"), {a, b}).reason.empty());
  const ir::TensorType c = float_type({4});
  CHECK_FALSE(testing::canonicalize_def(mat_mul, {}, {a, b, c, c}).reason.empty());
  const ir::TensorType doubles{DataType::kDouble, ir::Shape::of({4})};
  CHECK_FALSE(testing::canonicalize_def(mat_mul, {}, {a, b, doubles}).reason.empty());
}

TEST_CASE("MatMul's C broadcasts to the product and may not change its shape", "[ops][mat_mul]") {
  CHECK(fused_type(float_type({4})) == "float32[2,4]");
  CHECK(fused_type(float_type({2, 1})) == "float32[2,4]");
  CHECK(fused_type(float_type({1, 4})) == "float32[2,4]");
  CHECK(fused_type(float_type({2, 4})) == "float32[2,4]");
  CHECK(fused_type(float_type({})) == "float32[2,4]");
  CHECK(fused_type(testing::kUnknownRank) == "float32[2,4]");
  CHECK(fused_type(float_type({3})).rfind("error: ", 0) == 0);
  CHECK(fused_type(float_type({3, 2, 4})).rfind("error: ", 0) == 0);
  CHECK(fused_type(float_type({2, 2, 1})).rfind("error: ", 0) == 0);
  CHECK(fused_type(ir::TensorType{DataType::kDouble, ir::Shape::of({4})}).rfind("error: ", 0) == 0);
  const std::vector<ir::TensorType> plain = {float_type({2, 3}), float_type({3, 4})};
  CHECK_FALSE(testing::infer_def(ops::mat_mul_op(), with_activation("gelu"), plain).ok());
}

TEST_CASE("MatMul with C and an activation computes act(A*B + C), by hand", "[ops][mat_mul]") {
  // A*B = [[4, 5], [10, 11]] (as in the hand test above).
  const ir::Tensor a = ir::Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const ir::Tensor b = ir::Tensor::from_floats({3, 2}, {1, 0, 0, 1, 1, 1});
  const ir::Tensor row = ir::Tensor::from_floats({2}, {-5, 1});
  const ir::Tensor column = ir::Tensor::from_floats({2, 1}, {-4, -11});
  const auto run_fused = [&](const std::string& activation, const ir::Tensor& c) {
    return testing::run_def(ops::mat_mul_op(), with_activation(activation), {&a, &b, &c})[0];
  };
  CHECK(testing::max_abs_diff(run_fused("none", row), ir::Tensor::from_floats({2, 2}, {-1, 6, 5, 12})) == 0);
  CHECK(testing::max_abs_diff(run_fused("relu", row), ir::Tensor::from_floats({2, 2}, {0, 6, 5, 12})) == 0);
  CHECK(testing::max_abs_diff(run_fused("relu", column), ir::Tensor::from_floats({2, 2}, {0, 1, 0, 0})) == 0);
  const float s0 = 1.0f / (1.0f + std::exp(0.0f)), s1 = 1.0f / (1.0f + std::exp(-1.0f));
  const float sm1 = 1.0f / (1.0f + std::exp(1.0f));
  const ir::Tensor sigmoids = ir::Tensor::from_floats({2, 2}, {s0, s1, sm1, s0});
  CHECK(testing::max_abs_diff(run_fused("sigmoid", column), sigmoids) < 1e-7);
  const ir::Tensor tanhs = ir::Tensor::from_floats({2, 2}, {0, std::tanh(1.0f), std::tanh(-1.0f), 0});
  CHECK(testing::max_abs_diff(run_fused("tanh", column), tanhs) < 1e-7);
}

TEST_CASE("MatMul with an activation and no C applies it to the product", "[ops][mat_mul]") {
  const ir::Tensor a = ir::Tensor::from_floats({2, 2}, {1, -2, 3, 4});
  const ir::Tensor b = ir::Tensor::from_floats({2, 1}, {1, 1});
  const ir::Tensor out = testing::run_def(ops::mat_mul_op(), with_activation("relu"), {&a, &b})[0];
  CHECK(testing::max_abs_diff(out, ir::Tensor::from_floats({2, 1}, {0, 7})) == 0);
}

TEST_CASE("MatMul's features read C in the same launch", "[ops][mat_mul]") {
  const std::vector<ir::TensorType> plain = {float_type({2, 3, 4}), float_type({4, 5})};
  std::vector<ir::TensorType> fused = plain;
  fused.push_back(float_type({5}));
  const ir::Node node = testing::node_of(ops::mat_mul_op(), with_activation("relu"));
  const ops::CostFeatures without = ops::mat_mul_op().features(node, plain, {float_type({2, 3, 5})});
  const ops::CostFeatures with = ops::mat_mul_op().features(node, fused, {float_type({2, 3, 5})});
  CHECK(with.flops == without.flops);
  CHECK(with.bytes_read == without.bytes_read + 5 * 4);
  CHECK(with.bytes_written == without.bytes_written);
}

}  // namespace graphsub
