// Unit tests of GatherElements: axis normalization and rejections, inference with symbols and
// invalid shapes, the kernel against numpy's take_along_axis by hand (negative indices, several
// dtypes, out-of-range indices), and the bytes it moves.
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

testing::Canonicalized canonical(ir::Attributes attrs, const std::vector<ir::TensorType>& inputs) {
  return testing::canonicalize_def(ops::gather_elements_op(), std::move(attrs), inputs, 1, 13);
}

std::string infer(const ir::Attributes& attrs, const ir::TensorType& data, const ir::TensorType& indices) {
  return testing::infer_text(ops::gather_elements_op(), attrs, {data, indices});
}

std::vector<int64_t> gather(int64_t along, const ir::Tensor& data, const ir::Tensor& indices) {
  return testing::run_def(ops::gather_elements_op(), axis(along), {&data, &indices})[0].to_int64s();
}

}  // namespace

TEST_CASE("gather_elements canonicalize fills and normalizes the axis", "[ops][gather_elements]") {
  CHECK(canonical({}, {floats({"N", "4"}), int64s({"N", "2"})}).attrs == axis(0));
  CHECK(canonical(axis(-1), {floats({"N", "4"}), int64s({"N", "2"})}).attrs == axis(1));
  const ir::TensorType int32_indices = type_of(ir::DataType::kInt32, {"2", "3"});
  CHECK(canonical(axis(1), {floats({"2", "4"}), int32_indices}).reason.empty());
  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  CHECK(canonical(axis(1), {unknown_rank, int64s({"3", "1"})}).reason.empty());

  CHECK_FALSE(canonical(axis(2), {floats({"2", "4"}), int64s({"2", "4"})}).reason.empty());
  CHECK_FALSE(canonical(axis(-1), {unknown_rank, int64s({"3"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"2"}), floats({"2"})}).reason.empty());
  CHECK_FALSE(canonical({}, {type_of(ir::DataType::kString, {"2"}), int64s({"2"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"2"})}).reason.empty());
  ir::Attributes unknown = axis(0);
  unknown.set("batch_dims", int64_t{1});
  CHECK_FALSE(canonical(unknown, {floats({"2"}), int64s({"2"})}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::gather_elements_op(), {}, {floats({"2"}), int64s({"2"})}, 2, 13)
                  .reason.empty());
}

TEST_CASE("gather_elements infers the indices' shape with the data's type", "[ops][gather_elements]") {
  CHECK(infer(axis(1), floats({"3", "4"}), int64s({"3", "7"})) == "float32[3,7]");
  CHECK(infer(axis(0), floats({"N", "4"}), int64s({"K", "2"})) == "float32[K,2]");
  CHECK(infer(axis(0), {ir::DataType::kFloat, ir::Shape::unknown()}, int64s({"2"})) == "float32[2]");
  CHECK(infer(axis(0), type_of(ir::DataType::kInt32, {"5"}), int64s({"?"})) == "int32[?]");
  CHECK(infer(axis(0), floats({"5"}), {ir::DataType::kInt64, ir::Shape::unknown()}) == "float32[*]");

  CHECK(infer(axis(1), floats({"3", "4"}), int64s({"3"})).rfind("error", 0) == 0);
  CHECK(infer(axis(1), floats({"3", "4"}), int64s({"4", "4"})).rfind("error", 0) == 0);
  CHECK(infer(axis(2), floats({"3", "4"}), int64s({"3", "4"})).rfind("error", 0) == 0);
  CHECK(infer(axis(0), floats({"3"}), floats({"3"})).rfind("error", 0) == 0);
}

TEST_CASE("gather_elements kernel is take_along_axis, negative indices from the back",
          "[ops][gather_elements]") {
  // ONNX's examples: data [[1, 2], [3, 4]], axis 1; data [[1..3], [4..6], [7..9]], axis 0.
  const ir::Tensor small = ir::Tensor::from_int64s({2, 2}, {1, 2, 3, 4});
  CHECK(gather(1, small, ir::Tensor::from_int64s({2, 2}, {0, 0, 1, 0})) == std::vector<int64_t>{1, 1, 4, 3});
  const ir::Tensor square = ir::Tensor::from_int64s({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(gather(0, square, ir::Tensor::from_int64s({2, 3}, {1, 2, 0, 2, 0, 0})) ==
        std::vector<int64_t>{4, 8, 3, 7, 2, 3});
  CHECK(gather(0, square, testing::int32_tensor({2, 3}, {-1, -2, 0, -2, 0, 0})) ==
        std::vector<int64_t>{7, 5, 3, 4, 2, 3});

  // Axis 1 of a 3-d float tensor: out[i, j, k] = data[i, indices[i, j, k], k].
  const ir::Tensor data = testing::random_tensor({2, 4, 3}, 5);
  const ir::Tensor indices = ir::Tensor::from_int64s({2, 2, 2}, {3, 0, -1, 1, 2, 2, 0, -4});
  const ir::Tensor out = testing::run_def(ops::gather_elements_op(), axis(1), {&data, &indices})[0];
  REQUIRE(out.dims() == std::vector<int64_t>{2, 2, 2});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 2; ++j) {
      for (int64_t k = 0; k < 2; ++k) {
        int64_t index = indices.data<int64_t>()[(i * 2 + j) * 2 + k];
        index = index < 0 ? index + 4 : index;
        CHECK(out.data<float>()[(i * 2 + j) * 2 + k] == data.data<float>()[(i * 4 + index) * 3 + k]);
      }
    }
  }

  const ir::Tensor bools = testing::bool_tensor({3}, {1, 0, 1});
  const ir::Tensor which = ir::Tensor::from_int64s({2}, {1, 2});
  const ir::Tensor picked = testing::run_def(ops::gather_elements_op(), axis(0), {&bools, &which})[0];
  CHECK(testing::bool_values(picked) == std::vector<int>{0, 1});
  const ir::Tensor none = ir::Tensor::from_int64s({0, 2}, {});
  CHECK(testing::run_def(ops::gather_elements_op(), axis(0), {&small, &none})[0].dims() ==
        std::vector<int64_t>{0, 2});

  CHECK_THROWS_AS(gather(0, small, ir::Tensor::from_int64s({1, 2}, {2, 0})), Error);
  CHECK_THROWS_AS(gather(1, small, ir::Tensor::from_int64s({1, 2}, {0, -3})), Error);
}

TEST_CASE("gather_elements reads the picked elements and the indices", "[ops][gather_elements]") {
  const ops::CostFeatures features = ops::gather_elements_op().features(
      ir::Node{}, {floats({"5", "4"}), int64s({"3", "4"})}, {floats({"3", "4"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 96 + 48);
  CHECK(features.bytes_written == 48);
}
