// Unit tests of ConstantOfShape: the default and normalized value, inference of the rank only, the
// kernel allocating its output from run-time shapes, and its cost.
#include <catch2/catch.hpp>

#include "ir/error.h"
#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;

namespace {

using Ints = std::vector<int64_t>;

ir::TensorType shape_operand(int64_t length) {
  return {ir::DataType::kInt64, ir::Shape::of({length})};
}

ir::Attributes value(ir::Tensor tensor) {
  ir::Attributes attrs;
  attrs.set("value", ir::share(std::move(tensor)));
  return attrs;
}

ir::Tensor int32_scalar(std::vector<int64_t> dims, int32_t number) {
  return testing::int32_tensor(std::move(dims), {number});
}

/// The canonical attributes of a ConstantOfShape, or the reason it stays opaque.
testing::Canonicalized canonical(ir::Attributes attrs, const ir::TensorType& operand) {
  return testing::canonicalize_def(ops::constant_of_shape_op(), std::move(attrs), {operand});
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& operand) {
  return testing::infer_text(ops::constant_of_shape_op(), attrs, {operand});
}

/// Runs the node through the executor, which leaves the output for the kernel to allocate.
ir::Tensor fill(const ir::Attributes& attrs, const Ints& shape) {
  const ir::Tensor operand = ir::Tensor::from_int64s({static_cast<int64_t>(shape.size())}, shape);
  return testing::run_op(ir::OpKind::kConstantOfShape, attrs, {&operand})[0];
}

}  // namespace

TEST_CASE("constant_of_shape canonicalize fills float32 0 and keeps one element",
          "[ops][constant_of_shape]") {
  CHECK(canonical({}, shape_operand(2)).attrs == value(ir::Tensor::from_floats({1}, {0.0f})));
  CHECK(canonical(value(int32_scalar({}, 7)), shape_operand(2)).attrs ==
        value(int32_scalar({1}, 7)));
  CHECK(canonical({}, {ir::DataType::kInt64, ir::Shape::unknown()}).reason.empty());

  CHECK_FALSE(
      canonical(value(ir::Tensor::from_floats({2}, {1, 2})), shape_operand(2)).reason.empty());
  CHECK_FALSE(canonical(value(ir::Tensor({1}, {"text"})), shape_operand(2)).reason.empty());
  CHECK_FALSE(canonical({}, {ir::DataType::kInt32, ir::Shape::of({2})}).reason.empty());
  CHECK_FALSE(canonical({}, {ir::DataType::kInt64, ir::Shape::of({2, 1})}).reason.empty());
  ir::Attributes not_a_tensor;
  not_a_tensor.set("value", 1.0f);
  CHECK_FALSE(canonical(not_a_tensor, shape_operand(2)).reason.empty());
}

TEST_CASE("constant_of_shape infers the value's type and the operand's length as rank",
          "[ops][constant_of_shape]") {
  const ir::Attributes zeros = value(ir::Tensor::from_floats({1}, {0.0f}));
  CHECK(infer(zeros, shape_operand(3)) == "float32[?,?,?]");
  CHECK(infer(zeros, shape_operand(0)) == "float32[]");
  CHECK(infer(value(int32_scalar({1}, 7)),
              {ir::DataType::kInt64, ir::Shape{true, {ir::Dim::named("R")}}}) == "int32[*]");
  CHECK(infer({}, shape_operand(1)).rfind("error", 0) == 0);
}

TEST_CASE("constant_of_shape kernel allocates and fills the run-time shape",
          "[ops][constant_of_shape]") {
  const ir::Tensor ones = fill(value(ir::Tensor::from_floats({1}, {1.0f})), {2, 3});
  CHECK(ones.dims() == Ints{2, 3});
  CHECK(testing::max_abs_diff(ones, ir::Tensor::from_floats({2, 3}, std::vector<float>(6, 1.0f))) ==
        0);

  const ir::Tensor sevens = fill(value(int32_scalar({1}, 7)), {4});
  CHECK(sevens.dtype() == ir::DataType::kInt32);
  CHECK(sevens.to_int64s() == Ints{7, 7, 7, 7});
  CHECK(fill(value(int32_scalar({1}, 7)), {0}).dims() == Ints{0});
  const ir::Tensor scalar = fill(value(ir::Tensor::from_int64s({1}, {-5})), {});
  CHECK(scalar.dims().empty());
  CHECK(scalar.to_int64s() == Ints{-5});

  CHECK_THROWS_AS(fill(value(int32_scalar({1}, 7)), {2, -1}), Error);
}

TEST_CASE("constant_of_shape reads the shape and writes its output", "[ops][constant_of_shape]") {
  ir::Node node;
  ops::CostFeatures features = ops::constant_of_shape_op().features(
      node, {shape_operand(2)}, {{ir::DataType::kFloat, ir::Shape::of({2, 3})}});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 16);
  CHECK(features.bytes_written == 24);
}
