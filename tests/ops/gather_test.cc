// Unit tests of Gather: axis normalization and rejections, inference with symbols, the kernel with
// negative and out-of-range indices on several dtypes, and the bytes it moves.
#include <catch2/catch.hpp>

#include "ir/error.h"
#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::int64s;
using testing::type_of;

namespace {

ir::Attributes axis(int64_t value) {
  ir::Attributes attrs;
  attrs.set("axis", value);
  return attrs;
}

/// The canonical attributes of a Gather, or the reason it stays opaque.
testing::Canonicalized canonical(ir::Attributes attrs, const std::vector<ir::TensorType>& inputs,
                                 int64_t opset = 13) {
  return testing::canonicalize_def(ops::gather_op(), std::move(attrs), inputs, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& data,
                  const ir::TensorType& indices) {
  return testing::infer_text(ops::gather_op(), attrs, {data, indices});
}

}  // namespace

TEST_CASE("gather canonicalize fills and normalizes the axis", "[ops][gather]") {
  CHECK(canonical({}, {floats({"N", "4"}), int64s({"3"})}).attrs == axis(0));
  CHECK(canonical(axis(-1), {floats({"N", "4"}), int64s({"3"})}).attrs == axis(1));
  const ir::TensorType int32_indices = type_of(ir::DataType::kInt32, {"3"});
  CHECK(canonical(axis(1), {floats({"2", "4"}), int32_indices}).attrs == axis(1));
  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  CHECK(canonical(axis(2), {unknown_rank, int64s({"3"})}).reason.empty());

  CHECK_FALSE(canonical(axis(2), {floats({"2", "4"}), int64s({"3"})}).reason.empty());
  CHECK_FALSE(canonical(axis(-1), {floats({"2", "4"}), int64s({"3"})}, 10).reason.empty());
  CHECK_FALSE(canonical(axis(-1), {unknown_rank, int64s({"3"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"2"}), floats({"3"})}).reason.empty());
  CHECK_FALSE(canonical({}, {type_of(ir::DataType::kString, {"2"}), int64s({"3"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"2"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({}), int64s({})}).reason.empty());
}

TEST_CASE("gather infers data[:axis] + indices + data[axis+1:]", "[ops][gather]") {
  CHECK(infer(axis(1), floats({"5", "4", "3"}), int64s({"2", "2"})) == "float32[5,2,2,3]");
  CHECK(infer(axis(0), floats({"5", "4"}), int64s({})) == "float32[4]");
  CHECK(infer(axis(1), floats({"N", "?"}), int64s({"K"})) == "float32[N,K]");
  CHECK(infer(axis(0), {ir::DataType::kFloat, ir::Shape::unknown()}, int64s({"2"})) ==
        "float32[*]");
  CHECK(infer(axis(0), floats({"3"}), {ir::DataType::kInt64, ir::Shape::unknown()}) ==
        "float32[*]");
  CHECK(infer(axis(2), floats({"5", "4"}), int64s({"2"})).rfind("error", 0) == 0);
  CHECK(infer(axis(0), floats({"5"}), floats({"2"})).rfind("error", 0) == 0);
}

TEST_CASE("gather kernel picks entries, negative indices from the back", "[ops][gather]") {
  const ir::Tensor data = testing::random_tensor({3, 4}, 3);
  const ir::Tensor indices = testing::int32_tensor({2, 2}, {0, -1, 2, 1});
  const ir::Tensor out = testing::run_def(ops::gather_op(), axis(1), {&data, &indices})[0];
  CHECK(out.dims() == std::vector<int64_t>{3, 2, 2});
  const int64_t picked[] = {0, 3, 2, 1};
  for (int64_t row = 0; row < 3; ++row) {
    for (int64_t k = 0; k < 4; ++k)
      CHECK(out.data<float>()[row * 4 + k] == data.data<float>()[row * 4 + picked[k]]);
  }

  const ir::Tensor rows = ir::Tensor::from_int64s({3, 2}, {10, 11, 20, 21, 30, 31});
  const ir::Tensor which = ir::Tensor::from_int64s({3}, {-1, 0, -3});
  CHECK(testing::run_def(ops::gather_op(), axis(0), {&rows, &which})[0].to_int64s() ==
        std::vector<int64_t>{30, 31, 10, 11, 10, 11});
  const ir::Tensor scalar = ir::Tensor::from_int64s({}, {1});
  const ir::Tensor column = testing::run_def(ops::gather_op(), axis(1), {&rows, &scalar})[0];
  CHECK(column.dims() == std::vector<int64_t>{3});
  CHECK(column.to_int64s() == std::vector<int64_t>{11, 21, 31});
  const ir::Tensor none = ir::Tensor::from_int64s({0}, {});
  CHECK(testing::run_def(ops::gather_op(), axis(0), {&rows, &none})[0].dims() ==
        std::vector<int64_t>{0, 2});

  const ir::Tensor too_far = ir::Tensor::from_int64s({1}, {3});
  CHECK_THROWS_AS(testing::run_def(ops::gather_op(), axis(0), {&rows, &too_far}), Error);
  const ir::Tensor too_negative = ir::Tensor::from_int64s({1}, {-4});
  CHECK_THROWS_AS(testing::run_def(ops::gather_op(), axis(0), {&rows, &too_negative}), Error);
}

TEST_CASE("gather reads the picked elements and the indices", "[ops][gather]") {
  ir::Node node;
  ops::CostFeatures features =
      ops::gather_op().features(node, {floats({"5", "4"}), int64s({"3"})}, {floats({"3", "4"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 48 + 24);
  CHECK(features.bytes_written == 48);
}
