// ArgMax and ArgMin: canonical attributes, int64 inference with keepdims and symbols, kernels by
// hand (ties, select_last_index, NaN) and against a naive scan, cost.
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
using testing::floats;

namespace {

ir::Attributes arg_attrs(int64_t axis, int64_t keepdims = 1, int64_t last = 0) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  attrs.set("keepdims", keepdims);
  attrs.set("select_last_index", last);
  return attrs;
}

testing::Canonicalized canonical(const ops::OpDef& def, ir::Attributes attrs, const ir::TensorType& input,
                                 int64_t opset = 13) {
  return testing::canonicalize_def(def, std::move(attrs), {input}, 1, opset);
}

std::vector<int64_t> run(const ops::OpDef& def, const ir::Attributes& attrs, const ir::Tensor& input) {
  const ir::Tensor out = testing::run_def(def, attrs, {&input})[0];
  REQUIRE(out.dtype() == DataType::kInt64);
  return out.to_int64s();
}

}  // namespace

TEST_CASE("arg reductions fill axis, keepdims and select_last_index", "[ops][arg_reduce]") {
  for (const ops::OpDef& def : {ops::arg_max_op(), ops::arg_min_op()}) {
    INFO(def.name);
    CHECK(canonical(def, {}, floats({"2", "3"})).attrs == arg_attrs(0));
    ir::Attributes given;
    given.set("axis", int64_t{-1});
    given.set("keepdims", int64_t{0});
    given.set("select_last_index", int64_t{1});
    CHECK(canonical(def, given, floats({"N", "3", "4"})).attrs == arg_attrs(2, 0, 1));
    CHECK(canonical(def, arg_attrs(1), testing::kUnknownRank).reason.empty());
    CHECK(canonical(def, {}, testing::typed(DataType::kInt32, {3}), 1).reason.empty());

    CHECK_FALSE(canonical(def, given, floats({"2", "3"}), 10).reason.empty());
    CHECK_FALSE(canonical(def, arg_attrs(2), floats({"2", "3"})).reason.empty());
    CHECK_FALSE(canonical(def, arg_attrs(-1), testing::kUnknownRank).reason.empty());
    CHECK_FALSE(canonical(def, {}, testing::typed(DataType::kBool, {3})).reason.empty());
    ir::Attributes unknown;
    unknown.set("axes", std::vector<int64_t>{0});
    CHECK_FALSE(canonical(def, unknown, floats({"3"})).reason.empty());
    CHECK_FALSE(testing::canonicalize_def(def, {}, {floats({"3"})}, 2).reason.empty());
  }
}

TEST_CASE("arg reductions infer int64 without the axis, or with it as 1", "[ops][arg_reduce]") {
  const ops::OpDef def = ops::arg_max_op();
  CHECK(testing::infer_text(def, arg_attrs(1), {floats({"N", "3", "L"})}) == "int64[N,1,L]");
  CHECK(testing::infer_text(def, arg_attrs(1, 0), {floats({"N", "3", "L"})}) == "int64[N,L]");
  CHECK(testing::infer_text(def, arg_attrs(0, 0), {floats({"5"})}) == "int64[]");
  CHECK(testing::infer_text(def, arg_attrs(0), {testing::kUnknownRank}) == "int64[*]");
  CHECK(testing::infer_text(def, arg_attrs(2), {floats({"2", "3"})}).rfind("error", 0) == 0);
  CHECK(testing::infer_text(def, arg_attrs(0), {floats({"0", "3"})}).rfind("error", 0) == 0);
  CHECK(testing::infer_text(def, arg_attrs(0), {testing::typed(DataType::kUint8, {2})}).rfind("error", 0) ==
        0);
}

TEST_CASE("arg reductions by hand: ties, select_last_index, NaN", "[ops][arg_reduce]") {
  // [[2, 1], [3, 10]]: ONNX's example.
  const ir::Tensor example = ir::Tensor::from_floats({2, 2}, {2, 1, 3, 10});
  CHECK(run(ops::arg_max_op(), arg_attrs(0), example) == std::vector<int64_t>{1, 1});
  CHECK(run(ops::arg_max_op(), arg_attrs(1), example) == std::vector<int64_t>{0, 1});
  CHECK(run(ops::arg_min_op(), arg_attrs(1, 0), example) == std::vector<int64_t>{1, 0});

  const ir::Tensor ties = ir::Tensor::from_int64s({2, 3}, {4, 9, 9, 1, 1, 5});
  CHECK(run(ops::arg_max_op(), arg_attrs(1), ties) == std::vector<int64_t>{1, 2});
  CHECK(run(ops::arg_max_op(), arg_attrs(1, 1, 1), ties) == std::vector<int64_t>{2, 2});
  CHECK(run(ops::arg_min_op(), arg_attrs(1), ties) == std::vector<int64_t>{0, 0});
  CHECK(run(ops::arg_min_op(), arg_attrs(1, 1, 1), ties) == std::vector<int64_t>{0, 1});

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor with_nan = ir::Tensor::from_floats({5}, {1, nan, 7, nan, -3});
  CHECK(run(ops::arg_max_op(), arg_attrs(0), with_nan) == std::vector<int64_t>{1});
  CHECK(run(ops::arg_min_op(), arg_attrs(0), with_nan) == std::vector<int64_t>{1});
  CHECK(run(ops::arg_max_op(), arg_attrs(0, 1, 1), with_nan) == std::vector<int64_t>{3});
  CHECK(run(ops::arg_min_op(), arg_attrs(0, 0, 0), testing::int32_tensor({3}, {5, -2, 8})) ==
        std::vector<int64_t>{1});
}

TEST_CASE("ArgMax over a middle axis matches a naive scan", "[ops][arg_reduce]") {
  const ir::Tensor input = testing::random_tensor({3, 5, 4}, 9);
  const std::vector<int64_t> got = run(ops::arg_max_op(), arg_attrs(1, 0), input);
  REQUIRE(got.size() == 12);
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t k = 0; k < 4; ++k) {
      int64_t best = 0;
      for (int64_t j = 1; j < 5; ++j) {
        if (input.data<float>()[(i * 5 + j) * 4 + k] > input.data<float>()[(i * 5 + best) * 4 + k]) best = j;
      }
      CHECK(got[i * 4 + k] == best);
    }
  }
}

TEST_CASE("arg reductions cost one comparison per input element", "[ops][arg_reduce]") {
  const ops::CostFeatures cost = ops::arg_min_op().features(ir::Node{}, {floats({"4", "5"})},
                                                            {testing::typed(DataType::kInt64, {4, 1})});
  CHECK(cost.flops == 20);
  CHECK(cost.bytes_read == 80);
  CHECK(cost.bytes_written == 32);
}
