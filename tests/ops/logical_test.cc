// Not, And, Or: bool-only forms, broadcasting inference, truth tables, cost.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using ir::DataType;
using testing::bool_tensor;
using testing::bool_values;

namespace {

ir::TensorType bool_type(const std::vector<int64_t>& dims) {
  return {DataType::kBool, ir::Shape::of(dims)};
}

std::string reason(const ops::OpDef& def, const std::vector<ir::TensorType>& inputs,
                   int64_t opset = 7, int outputs = 1) {
  return testing::canonicalize_def(def, {}, inputs, outputs, opset).reason;
}

}  // namespace

TEST_CASE("logical ops accept bool operands only", "[ops][logical]") {
  const auto b = bool_type({2, 3});
  const auto f = testing::float_type({2, 3});
  CHECK(reason(ops::not_op(), {b}, 1).empty());
  CHECK(reason(ops::and_op(), {b, bool_type({3})}).empty());
  CHECK(reason(ops::or_op(), {b, b}, 17).empty());

  CHECK_FALSE(reason(ops::not_op(), {f}).empty());
  CHECK_FALSE(reason(ops::not_op(), {b, b}).empty());
  CHECK_FALSE(reason(ops::not_op(), {b}, 1, 2).empty());
  CHECK_FALSE(reason(ops::and_op(), {b, b}, 1).empty());
  CHECK_FALSE(reason(ops::and_op(), {f, f}).empty());
  CHECK_FALSE(reason(ops::or_op(), {b}).empty());
}

TEST_CASE("logical inference: Not keeps the shape, And/Or broadcast", "[ops][logical]") {
  const ir::TensorType symbolic{DataType::kBool,
                                ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(4)}}};
  auto not_result = testing::infer_def(ops::not_op(), {}, {symbolic});
  REQUIRE(not_result.ok());
  CHECK(not_result.outputs[0] == symbolic);
  auto or_result = testing::infer_def(ops::or_op(), {}, {symbolic, bool_type({1, 4})});
  REQUIRE(or_result.ok());
  CHECK(or_result.outputs[0] == symbolic);

  CHECK_FALSE(testing::infer_def(ops::not_op(), {}, {testing::float_type({2})}).ok());
  CHECK_FALSE(testing::infer_def(ops::and_op(), {}, {bool_type({2}), bool_type({3})}).ok());
}

TEST_CASE("logical kernels follow the truth tables", "[ops][logical]") {
  const ir::Tensor a = bool_tensor({4}, {0, 0, 1, 1});
  const ir::Tensor b = bool_tensor({4}, {0, 1, 0, 1});
  CHECK(bool_values(testing::run_def(ops::not_op(), {}, {&a})[0]) == std::vector<int>{1, 1, 0, 0});
  CHECK(bool_values(testing::run_def(ops::and_op(), {}, {&a, &b})[0]) == std::vector<int>{0, 0, 0, 1});
  CHECK(bool_values(testing::run_def(ops::or_op(), {}, {&a, &b})[0]) == std::vector<int>{0, 1, 1, 1});
}

TEST_CASE("And and Or broadcast", "[ops][logical]") {
  const ir::Tensor column = bool_tensor({2, 1}, {0, 1});
  const ir::Tensor row = bool_tensor({3}, {1, 0, 1});
  CHECK(bool_values(testing::run_def(ops::and_op(), {}, {&column, &row})[0]) ==
        std::vector<int>{0, 0, 0, 1, 0, 1});
  CHECK(bool_values(testing::run_def(ops::or_op(), {}, {&column, &row})[0]) ==
        std::vector<int>{1, 0, 1, 1, 1, 1});
}

TEST_CASE("logical features count one operation per output element", "[ops][logical]") {
  const ops::CostFeatures cost =
      ops::and_op().features(ir::Node{}, {bool_type({4, 5}), bool_type({5})}, {bool_type({4, 5})});
  CHECK(cost.flops == 20);
  CHECK(cost.bytes_read == 25);
  CHECK(cost.bytes_written == 20);
  CHECK(ops::not_op().features(ir::Node{}, {bool_type({6})}, {bool_type({6})}).flops == 6);
}
