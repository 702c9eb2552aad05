// Sum and Mean: opset-8+ forms of one float type, inference broadcasting every operand (symbols
// kept), kernels against a naive broadcast loop, cost.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using ir::DataType;
using testing::floats;
using testing::typed;

namespace {

std::string reason(const ops::OpDef& def, const std::vector<ir::TensorType>& inputs, int64_t opset = 13,
                   ir::Attributes attrs = {}) {
  return testing::canonicalize_def(def, std::move(attrs), inputs, 1, opset).reason;
}

std::string infer(const ops::OpDef& def, const std::vector<ir::TensorType>& inputs) {
  return testing::infer_text(def, {}, inputs);
}

}  // namespace

TEST_CASE("Sum and Mean accept one or more float operands from opset 8", "[ops][variadic]") {
  for (const ops::OpDef& def : {ops::sum_op(), ops::mean_op()}) {
    INFO(def.name);
    CHECK(reason(def, {floats({"3"})}).empty());
    CHECK(reason(def, {floats({"2", "3"}), floats({"3"}), floats({"1", "1"})}, 8).empty());
    CHECK(reason(def, {typed(DataType::kDouble, {2}), typed(DataType::kDouble, {2})}).empty());
    CHECK(testing::canonicalize_def(def, {}, {floats({"3"})}).attrs.empty());

    CHECK_FALSE(reason(def, {floats({"3"}), floats({"3"})}, 7).empty());
    CHECK_FALSE(reason(def, {}).empty());
    CHECK_FALSE(reason(def, {floats({"3"}), typed(DataType::kDouble, {3})}).empty());
    CHECK_FALSE(reason(def, {typed(DataType::kInt64, {3})}).empty());
    ir::Attributes legacy;
    legacy.set("consumed_inputs", std::vector<int64_t>{0});
    CHECK_FALSE(reason(def, {floats({"3"})}, 13, legacy).empty());
    CHECK_FALSE(testing::canonicalize_def(def, {}, {floats({"3"})}, 2).reason.empty());
  }
}

TEST_CASE("Sum and Mean infer the broadcast of every operand", "[ops][variadic]") {
  CHECK(infer(ops::sum_op(), {floats({"3"})}) == "float32[3]");
  CHECK(infer(ops::sum_op(), {floats({"2", "1"}), floats({"3"}), floats({"4", "1", "1"})}) ==
        "float32[4,2,3]");
  CHECK(infer(ops::mean_op(), {floats({"N", "1"}), floats({"4"}), floats({"N", "4"})}) == "float32[N,4]");
  CHECK(infer(ops::mean_op(), {floats({"2"}), testing::kUnknownRank}) == "float32[*]");
  CHECK(infer(ops::sum_op(), {typed(DataType::kDouble, {2}), {DataType::kUndefined, ir::Shape::of({2})}}) ==
        "float64[2]");

  CHECK(infer(ops::sum_op(), {}).rfind("error", 0) == 0);
  CHECK(infer(ops::sum_op(), {floats({"2"}), floats({"3"})}).rfind("error", 0) == 0);
  CHECK(infer(ops::mean_op(), {floats({"2"}), typed(DataType::kDouble, {2})}).rfind("error", 0) == 0);
  CHECK(infer(ops::mean_op(), {typed(DataType::kInt32, {2})}).rfind("error", 0) == 0);
}

TEST_CASE("Sum and Mean kernels match a naive broadcast loop", "[ops][variadic]") {
  const ir::Tensor a = testing::random_tensor({2, 1, 4}, 1);
  const ir::Tensor b = testing::random_tensor({3, 1}, 2);
  const ir::Tensor c = testing::random_tensor({4}, 3);
  const ir::Tensor sum = testing::run_def(ops::sum_op(), {}, {&a, &b, &c})[0];
  const ir::Tensor mean = testing::run_def(ops::mean_op(), {}, {&a, &b, &c})[0];
  REQUIRE(sum.dims() == std::vector<int64_t>{2, 3, 4});
  REQUIRE(mean.dims() == std::vector<int64_t>{2, 3, 4});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        const double total = double{a.data<float>()[i * 4 + k]} + b.data<float>()[j] + c.data<float>()[k];
        CHECK(sum.data<float>()[(i * 3 + j) * 4 + k] == Approx(total).epsilon(1e-6));
        CHECK(mean.data<float>()[(i * 3 + j) * 4 + k] == Approx(total / 3).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("Sum and Mean by hand, one operand and float64", "[ops][variadic]") {
  const ir::Tensor x = ir::Tensor::from_floats({3}, {1, -2, 3.5f});
  CHECK(testing::elements(testing::run_def(ops::sum_op(), {}, {&x})[0]) == std::vector<double>{1, -2, 3.5});
  CHECK(testing::elements(testing::run_def(ops::mean_op(), {}, {&x})[0]) == std::vector<double>{1, -2, 3.5});
  const ir::Tensor y = testing::tensor_of<double>(DataType::kDouble, {2}, {1, 2});
  const ir::Tensor z = testing::tensor_of<double>(DataType::kDouble, {}, {4});
  const ir::Tensor mean = testing::run_def(ops::mean_op(), {}, {&y, &z})[0];
  CHECK(mean.dtype() == DataType::kDouble);
  CHECK(testing::elements(mean) == std::vector<double>{2.5, 3});
  CHECK(testing::elements(testing::run_def(ops::sum_op(), {}, {&y, &z, &y})[0]) == std::vector<double>{6, 8});
}

TEST_CASE("Sum and Mean cost one addition per extra operand, Mean a division more", "[ops][variadic]") {
  const std::vector<ir::TensorType> inputs = {floats({"4", "5"}), floats({"5"}), floats({"4", "1"})};
  const ops::CostFeatures sum = ops::sum_op().features(ir::Node{}, inputs, {floats({"4", "5"})});
  CHECK(sum.flops == 2 * 20);
  CHECK(sum.bytes_read == (20 + 5 + 4) * 4);
  CHECK(sum.bytes_written == 20 * 4);
  CHECK(ops::mean_op().features(ir::Node{}, inputs, {floats({"4", "5"})}).flops == 3 * 20);
}
