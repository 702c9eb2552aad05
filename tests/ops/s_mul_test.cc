// Tests of SMul: never imported from ONNX, scalar shape rules, kernel, cost.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "ops/op_list.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::float_type;

ops::InferResult infer(const ir::TensorType& x, const ir::TensorType& s) {
  return ops::s_mul_op().infer(ir::Node{}, {x, s});
}

}  // namespace

TEST_CASE("SMul is graphsub's own operator", "[ops][s_mul]") {
  const ops::OpDef def = ops::s_mul_op();
  CHECK_FALSE(def.is_onnx);
  ir::Attributes attrs;
  const std::vector<ir::TensorType> inputs = {float_type({2}), float_type({})};
  ops::ImportContext context{attrs, inputs, 1, 13};
  CHECK(def.canonicalize(context) == "not an ONNX operator");
}

TEST_CASE("SMul takes a one-element scalar of rank at most x's", "[ops][s_mul]") {
  const ir::Shape shape{true, {ir::Dim::named("N"), ir::Dim::known(3)}};
  const ir::TensorType x{ir::DataType::kFloat, shape};
  for (const std::vector<int64_t>& scalar : {std::vector<int64_t>{}, {1}, {1, 1}}) {
    ops::InferResult result = infer(x, float_type(scalar));
    REQUIRE(result.ok());
    CHECK(result.outputs[0] == x);
  }
  CHECK(infer(x, ir::TensorType{ir::DataType::kFloat, {}}).ok());
  CHECK_FALSE(infer(x, float_type({1, 1, 1})).ok());
  CHECK_FALSE(infer(x, float_type({3})).ok());
  const ir::Shape symbolic{true, {ir::Dim::named("S")}};
  CHECK_FALSE(infer(x, ir::TensorType{ir::DataType::kFloat, symbolic}).ok());
  CHECK_FALSE(infer(x, ir::TensorType{ir::DataType::kDouble, ir::Shape::of({})}).ok());
}

TEST_CASE("SMul scales every element", "[ops][s_mul]") {
  const ir::Tensor x = testing::random_tensor({2, 3}, 31);
  const ir::Tensor s = ir::Tensor::from_floats({1, 1}, {-1.5f});
  std::vector<ir::Tensor> outputs;
  outputs.emplace_back(ir::DataType::kFloat, std::vector<int64_t>{2, 3});
  ops::s_mul_op().kernel(ir::Node{}, {&x, &s}, outputs);
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    CHECK(outputs[0].data<float>()[i] == x.data<float>()[i] * -1.5f);
  }
}

TEST_CASE("SMul costs one FLOP per element", "[ops][s_mul]") {
  const std::vector<ir::TensorType> inputs = {float_type({4, 5}), float_type({})};
  CHECK(ops::s_mul_op().features(ir::Node{}, inputs, {float_type({4, 5})}).flops == 20);
}

}  // namespace graphsub
