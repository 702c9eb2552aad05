// Equal, Less, Greater: opset-7+ forms, bool results of the broadcast shape, kernels, cost.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using ir::DataType;
using testing::bool_tensor;
using testing::float_type;
using testing::typed;

namespace {

std::string reason(const ops::OpDef& def, const std::vector<ir::TensorType>& inputs,
                   int64_t opset = 13, int outputs = 1) {
  return testing::canonicalize_def(def, {}, inputs, outputs, opset).reason;
}

std::vector<int> run(const ops::OpDef& def, const ir::Tensor& a, const ir::Tensor& b) {
  return testing::bool_values(testing::run_def(def, {}, {&a, &b})[0]);
}

}  // namespace

TEST_CASE("comparisons accept opset-7+ operands of one kernel type", "[ops][comparison]") {
  const auto f = float_type({2, 3});
  CHECK(reason(ops::equal_op(), {f, f}).empty());
  CHECK(reason(ops::less_op(), {typed(DataType::kInt64, {2}), typed(DataType::kInt64, {})}, 9)
            .empty());
  CHECK(reason(ops::greater_op(), {typed(DataType::kDouble, {2}), typed(DataType::kDouble, {2})})
            .empty());
  CHECK(reason(ops::equal_op(), {typed(DataType::kBool, {2}), typed(DataType::kBool, {2})}, 11)
            .empty());
  auto canonical = testing::canonicalize_def(ops::less_op(), {}, {f, f});
  CHECK(canonical.attrs.empty());
}

TEST_CASE("comparisons reject legacy forms, other arities and types", "[ops][comparison]") {
  const auto f = float_type({2, 3});
  const auto b = typed(DataType::kBool, {2});
  CHECK_FALSE(reason(ops::equal_op(), {f, f}, 1).empty());
  CHECK_FALSE(reason(ops::less_op(), {f}).empty());
  CHECK_FALSE(reason(ops::greater_op(), {f, f}, 13, 2).empty());
  CHECK_FALSE(reason(ops::less_op(), {f, typed(DataType::kDouble, {2, 3})}).empty());
  CHECK_FALSE(reason(ops::less_op(), {b, b}).empty());
  CHECK_FALSE(reason(ops::equal_op(), {typed(DataType::kUint8, {2}), typed(DataType::kUint8, {2})})
                  .empty());
}

TEST_CASE("comparison inference gives bool of the broadcast shape, keeping symbols",
          "[ops][comparison]") {
  const ir::TensorType batch{DataType::kFloat,
                             ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(3)}}};
  auto result = testing::infer_def(ops::less_op(), {}, {batch, float_type({3})});
  REQUIRE(result.ok());
  CHECK(ir::to_string(result.outputs[0]) == "bool[N,3]");
  result = testing::infer_def(ops::equal_op(), {}, {float_type({2, 1, 4}), float_type({3, 1})});
  REQUIRE(result.ok());
  CHECK(result.outputs[0] == typed(DataType::kBool, {2, 3, 4}));

  CHECK_FALSE(testing::infer_def(ops::equal_op(), {}, {float_type({2}), float_type({3})}).ok());
  CHECK_FALSE(
      testing::infer_def(ops::equal_op(), {}, {float_type({2}), typed(DataType::kInt32, {2})})
          .ok());
  CHECK_FALSE(testing::infer_def(ops::greater_op(), {},
                                 {typed(DataType::kBool, {2}), typed(DataType::kBool, {2})})
                  .ok());
  CHECK_FALSE(testing::infer_def(ops::greater_op(), {}, {float_type({2})}).ok());
}

TEST_CASE("comparison kernels compute by hand with broadcasting", "[ops][comparison]") {
  const ir::Tensor a = ir::Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const ir::Tensor b = ir::Tensor::from_floats({3}, {1, 5, 4});
  CHECK(run(ops::equal_op(), a, b) == std::vector<int>{1, 0, 0, 0, 1, 0});
  CHECK(run(ops::less_op(), a, b) == std::vector<int>{0, 1, 1, 0, 0, 0});
  CHECK(run(ops::greater_op(), a, b) == std::vector<int>{0, 0, 0, 1, 0, 1});

  const ir::Tensor column = ir::Tensor::from_int64s({2, 1}, {2, 7});
  const ir::Tensor row = ir::Tensor::from_int64s({3}, {1, 2, 9});
  CHECK(run(ops::less_op(), column, row) == std::vector<int>{0, 0, 1, 0, 0, 1});
  CHECK(run(ops::equal_op(), bool_tensor({2}, {1, 0}), bool_tensor({}, {0})) ==
        std::vector<int>{0, 1});
}

TEST_CASE("comparisons with NaN are false", "[ops][comparison]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor a = ir::Tensor::from_floats({1}, {nan});
  for (const ops::OpDef& def : {ops::equal_op(), ops::less_op(), ops::greater_op()}) {
    CHECK(run(def, a, a) == std::vector<int>{0});
  }
}

TEST_CASE("comparison features count one operation per output element", "[ops][comparison]") {
  const ops::CostFeatures cost = ops::greater_op().features(
      ir::Node{}, {float_type({4, 5}), float_type({5})}, {typed(DataType::kBool, {4, 5})});
  CHECK(cost.flops == 20);
  CHECK(cost.bytes_read == (20 + 5) * 4);
  CHECK(cost.bytes_written == 20);
}

TEST_CASE("GreaterOrEqual and LessOrEqual from opset 12", "[ops][comparison]") {
  const auto f = float_type({2, 3});
  for (const ops::OpDef& def : {ops::greater_or_equal_op(), ops::less_or_equal_op()}) {
    INFO(def.name);
    CHECK(def.since_opset == 12);
    CHECK(reason(def, {f, f}, 12).empty());
    CHECK(reason(def, {typed(DataType::kInt32, {2}), typed(DataType::kInt32, {})}, 16).empty());
    CHECK_FALSE(reason(def, {f, f}, 11).empty());
    CHECK_FALSE(reason(def, {typed(DataType::kBool, {2}), typed(DataType::kBool, {2})}).empty());
    CHECK_FALSE(reason(def, {f, typed(DataType::kInt64, {2, 3})}).empty());
    const ir::TensorType batch{DataType::kFloat, ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(1)}}};
    CHECK(testing::infer_text(def, {}, {batch, float_type({4})}) == "bool[N,4]");
  }
}

TEST_CASE("GreaterOrEqual and LessOrEqual compute by hand, NaN false", "[ops][comparison]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor a = ir::Tensor::from_floats({2, 3}, {1, 2, 3, 4, 5, nan});
  const ir::Tensor b = ir::Tensor::from_floats({3}, {1, 5, 4});
  CHECK(run(ops::greater_or_equal_op(), a, b) == std::vector<int>{1, 0, 0, 1, 1, 0});
  CHECK(run(ops::less_or_equal_op(), a, b) == std::vector<int>{1, 1, 1, 0, 1, 0});
  const ir::Tensor column = ir::Tensor::from_int64s({2, 1}, {2, 7});
  const ir::Tensor row = ir::Tensor::from_int64s({3}, {1, 2, 9});
  CHECK(run(ops::greater_or_equal_op(), column, row) == std::vector<int>{1, 1, 0, 1, 1, 0});
  CHECK(run(ops::less_or_equal_op(), column, row) == std::vector<int>{0, 1, 1, 0, 0, 1});
}
