// Tests of Add, Sub, Mul, Div, Mod, Pow, Max, Min: canonicalization, broadcasting, kernels, cost.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

namespace graphsub {
namespace {

using ir::DataType;
using testing::elements;
using testing::float_type;
using testing::int32_tensor;
using testing::typed;

std::string canonicalize(const ops::OpDef& def, const std::vector<ir::TensorType>& inputs,
                         int64_t opset) {
  return testing::canonicalize_def(def, {}, inputs, 1, opset).reason;
}

/// Runs the kernel the way the executor does: infer, allocate the outputs, fill them.
ir::Tensor run(const ops::OpDef& def, const ir::Tensor& a, const ir::Tensor& b) {
  return testing::run_def(def, {}, {&a, &b})[0];
}

}  // namespace

TEST_CASE("binary ops accept opset-7+ forms of one kernel element type", "[ops][binary]") {
  const auto f = float_type({2, 3});
  CHECK(canonicalize(ops::add_op(), {f, f}, 14).empty());
  CHECK(canonicalize(ops::div_op(), {typed(DataType::kInt64, {2}), typed(DataType::kInt64, {2})},
                     13).empty());
  CHECK(canonicalize(ops::max_op(), {f, f}, 13).empty());
  CHECK(canonicalize(ops::pow_op(), {f, typed(DataType::kInt64, {3})}, 15).empty());
}

TEST_CASE("binary ops reject legacy forms, other arities and element types", "[ops][binary]") {
  const auto f = float_type({2, 3});
  CHECK_FALSE(canonicalize(ops::add_op(), {f, f}, 6).empty());
  CHECK_FALSE(canonicalize(ops::max_op(), {f, f}, 7).empty());
  CHECK_FALSE(canonicalize(ops::max_op(), {f, f, f}, 13).empty());
  CHECK_FALSE(canonicalize(ops::min_op(), {f}, 13).empty());
  CHECK_FALSE(canonicalize(ops::mul_op(), {f, typed(DataType::kDouble, {2, 3})}, 14).empty());
  const auto bytes = typed(DataType::kUint8, {2});
  CHECK_FALSE(canonicalize(ops::sub_op(), {bytes, bytes}, 14).empty());
  CHECK_FALSE(canonicalize(ops::pow_op(), {typed(DataType::kInt32, {2}), f}, 15).empty());
}

TEST_CASE("binary inference broadcasts, keeping symbols", "[ops][binary]") {
  ir::Shape batch{true, {ir::Dim::named("N"), ir::Dim::known(3)}};
  ops::InferResult result =
      ops::add_op().infer(ir::Node{}, {ir::TensorType{DataType::kFloat, batch}, float_type({3})});
  REQUIRE(result.ok());
  CHECK(result.outputs[0] == ir::TensorType{DataType::kFloat, batch});

  result = ops::mul_op().infer(ir::Node{}, {float_type({2, 1, 4}), float_type({3, 1})});
  REQUIRE(result.ok());
  CHECK(result.outputs[0] == float_type({2, 3, 4}));

  const ir::TensorType unknown_rank{DataType::kFloat, {}};
  result = ops::sub_op().infer(ir::Node{}, {float_type({2, 3}), unknown_rank});
  REQUIRE(result.ok());
  CHECK_FALSE(result.outputs[0].shape.rank_known);
}

TEST_CASE("binary inference rejects mismatched shapes and types", "[ops][binary]") {
  CHECK_FALSE(ops::add_op().infer(ir::Node{}, {float_type({2, 3}), float_type({4})}).ok());
  const auto longs = typed(DataType::kInt64, {2});
  CHECK_FALSE(ops::add_op().infer(ir::Node{}, {float_type({2}), longs}).ok());
  CHECK_FALSE(ops::add_op().infer(ir::Node{}, {float_type({2})}).ok());
  const auto exponent = typed(DataType::kInt32, {});
  ops::InferResult pow = ops::pow_op().infer(ir::Node{}, {float_type({2}), exponent});
  REQUIRE(pow.ok());
  CHECK(pow.outputs[0] == float_type({2}));
}

TEST_CASE("Add broadcasts like a naive loop on random inputs", "[ops][binary]") {
  const ir::Tensor a = testing::random_tensor({2, 3, 4}, 1);
  const ir::Tensor b = testing::random_tensor({3, 1}, 2);
  const ir::Tensor sum = run(ops::add_op(), a, b);
  REQUIRE(sum.dims() == std::vector<int64_t>{2, 3, 4});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        const int64_t at = (i * 3 + j) * 4 + k;
        CHECK(sum.data<float>()[at] == a.data<float>()[at] + b.data<float>()[j]);
      }
    }
  }
}

TEST_CASE("Sub, Mul, Div, Max, Min compute by hand", "[ops][binary]") {
  const ir::Tensor a = ir::Tensor::from_floats({2, 2}, {1, -2, 3, 8});
  const ir::Tensor b = ir::Tensor::from_floats({2}, {2, 4});
  CHECK(elements(run(ops::sub_op(), a, b)) == std::vector<double>{-1, -6, 1, 4});
  CHECK(elements(run(ops::mul_op(), a, b)) == std::vector<double>{2, -8, 6, 32});
  CHECK(elements(run(ops::div_op(), a, b)) == std::vector<double>{0.5, -0.5, 1.5, 2});
  CHECK(elements(run(ops::max_op(), a, b)) == std::vector<double>{2, 4, 3, 8});
  CHECK(elements(run(ops::min_op(), b, a)) == std::vector<double>{1, -2, 2, 4});
}

TEST_CASE("integer Div truncates toward zero and defines x / 0 as 0", "[ops][binary]") {
  const ir::Tensor a = ir::Tensor::from_int64s({5}, {7, -7, 7, -7, 5});
  const ir::Tensor b = ir::Tensor::from_int64s({5}, {2, 2, -2, -2, 0});
  CHECK(elements(run(ops::div_op(), a, b)) == std::vector<double>{3, -3, -3, 3, 0});
  const int32_t lowest = std::numeric_limits<int32_t>::lowest();
  const ir::Tensor low = int32_tensor({1}, {lowest});
  CHECK(run(ops::div_op(), low, int32_tensor({1}, {-1})).data<int32_t>()[0] == lowest);
}

TEST_CASE("Mod takes the divisor's sign, or the dividend's with fmod=1", "[ops][binary]") {
  const ir::Tensor a = ir::Tensor::from_int64s({5}, {7, -7, 7, -7, 5});
  const ir::Tensor b = ir::Tensor::from_int64s({5}, {3, 3, -3, -3, 0});
  ir::Attributes python;
  python.set("fmod", int64_t{0});
  ir::Attributes c_style;
  c_style.set("fmod", int64_t{1});
  CHECK(elements(testing::run_def(ops::mod_op(), python, {&a, &b})[0]) ==
        std::vector<double>{1, 2, -2, -1, 0});
  CHECK(elements(testing::run_def(ops::mod_op(), c_style, {&a, &b})[0]) ==
        std::vector<double>{1, -1, 1, -1, 0});
  const ir::Tensor x = ir::Tensor::from_floats({2}, {5.5f, -5.5f});
  const ir::Tensor y = ir::Tensor::from_floats({2}, {2.0f, 2.0f});
  CHECK(elements(testing::run_def(ops::mod_op(), c_style, {&x, &y})[0]) == std::vector<double>{1.5, -1.5});
  const auto f = float_type({2});
  CHECK_FALSE(testing::canonicalize_def(ops::mod_op(), python, {f, f}, 1, 13).reason.empty());
  CHECK(testing::canonicalize_def(ops::mod_op(), c_style, {f, f}, 1, 13).reason.empty());
}

TEST_CASE("integer Add wraps on overflow", "[ops][binary]") {
  const int32_t highest = std::numeric_limits<int32_t>::max();
  const ir::Tensor sum = run(ops::add_op(), int32_tensor({1}, {highest}), int32_tensor({}, {1}));
  CHECK(sum.data<int32_t>()[0] == std::numeric_limits<int32_t>::lowest());
}

TEST_CASE("Max and Min propagate NaN from either side", "[ops][binary]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor a = ir::Tensor::from_floats({2}, {nan, 1});
  const ir::Tensor b = ir::Tensor::from_floats({2}, {1, nan});
  for (const ops::OpDef& def : {ops::max_op(), ops::min_op()}) {
    const ir::Tensor out = run(def, a, b);
    CHECK(std::isnan(out.data<float>()[0]));
    CHECK(std::isnan(out.data<float>()[1]));
  }
}

TEST_CASE("Pow raises float bases to float and integer exponents", "[ops][binary]") {
  const ir::Tensor base = ir::Tensor::from_floats({3}, {2, 3, 4});
  CHECK(elements(run(ops::pow_op(), base, ir::Tensor::from_int64s({3}, {3, 2, -1}))) ==
        std::vector<double>{8, 9, 0.25});
  CHECK(elements(run(ops::pow_op(), base, ir::Tensor::from_floats({}, {0.5f})))[2] == 2);
}

TEST_CASE("PRelu from opset 7 on float operands of one type", "[ops][binary]") {
  const auto f = float_type({2, 3});
  CHECK(canonicalize(ops::prelu_op(), {f, float_type({3})}, 7).empty());
  CHECK(canonicalize(ops::prelu_op(), {typed(DataType::kDouble, {2}), typed(DataType::kDouble, {1})}, 16)
            .empty());
  CHECK(testing::canonicalize_def(ops::prelu_op(), {}, {f, f}, 1, 16).attrs.empty());
  CHECK_FALSE(canonicalize(ops::prelu_op(), {f, f}, 6).empty());
  CHECK_FALSE(canonicalize(ops::prelu_op(), {f, typed(DataType::kDouble, {3})}, 16).empty());
  CHECK_FALSE(canonicalize(ops::prelu_op(), {typed(DataType::kInt32, {2}), typed(DataType::kInt32, {2})}, 16)
                  .empty());
  CHECK_FALSE(canonicalize(ops::prelu_op(), {f}, 16).empty());
}

TEST_CASE("PRelu infers X's type, its slope broadcast to it one way", "[ops][binary]") {
  const ops::OpDef prelu = ops::prelu_op();
  const ir::TensorType x = testing::floats({"N", "3", "H", "W"});
  CHECK(testing::infer_text(prelu, {}, {x, testing::floats({"3", "1", "1"})}) == "float32[N,3,H,W]");
  CHECK(testing::infer_text(prelu, {}, {x, testing::floats({"1"})}) == "float32[N,3,H,W]");
  CHECK(testing::infer_text(prelu, {}, {x, testing::floats({"C", "1", "1"})}) == "float32[N,3,H,W]");
  CHECK(testing::infer_text(prelu, {}, {testing::kUnknownRank, testing::floats({"3"})}) == "float32[*]");
  CHECK(testing::infer_text(prelu, {}, {x, testing::floats({"4", "1", "1"})}).rfind("error", 0) == 0);
  CHECK(testing::infer_text(prelu, {}, {float_type({3}), float_type({2, 3})}).rfind("error", 0) == 0);
  const std::string mixed = testing::infer_text(prelu, {}, {float_type({3}), typed(DataType::kDouble, {3})});
  CHECK(mixed.rfind("error", 0) == 0);
}

TEST_CASE("PRelu scales negatives by the broadcast slope", "[ops][binary]") {
  const ir::Tensor x = testing::random_tensor({2, 3, 4}, 4);
  const ir::Tensor slope = testing::random_tensor({3, 1}, 5);
  const ir::Tensor out = run(ops::prelu_op(), x, slope);
  REQUIRE(out.dims() == x.dims());
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const float value = x.data<float>()[i];
    const float expected = value < 0 ? slope.data<float>()[(i / 4) % 3] * value : value;
    CHECK(out.data<float>()[i] == expected);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor special = run(ops::prelu_op(), ir::Tensor::from_floats({3}, {nan, -2, 0}),
                                 ir::Tensor::from_floats({}, {0.5f}));
  CHECK(std::isnan(special.data<float>()[0]));
  CHECK(elements(special)[1] == -1.0);
  CHECK(elements(special)[2] == 0.0);
}

TEST_CASE("binary features count one FLOP per output element", "[ops][binary]") {
  const std::vector<ir::TensorType> inputs = {float_type({4, 5}), float_type({5})};
  const ops::CostFeatures features =
      ops::add_op().features(ir::Node{}, inputs, {float_type({4, 5})});
  CHECK(features.flops == 20);
  CHECK(features.bytes_read == (20 + 5) * 4);
  CHECK(features.bytes_written == 20 * 4);
}

}  // namespace graphsub
