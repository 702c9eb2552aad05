// Tests of Softmax: axis defaults per opset, the opset<13 restriction, a stable kernel, cost.
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

using testing::float_type;

/// The canonical axis, or -1 when canonicalize refuses (the reason goes to the test log).
int64_t canonical_axis(const ir::TensorType& input, int64_t opset, ir::Attributes attrs = {}) {
  const std::string reason = testing::canonicalize_in_place(ops::softmax_op(), attrs, {input}, 1, opset);
  INFO(reason);
  return reason.empty() ? attrs.get_int("axis", -1) : -1;
}

ir::Attributes axis_attr(int64_t axis) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  return attrs;
}

/// Runs the kernel the way the executor does: infer, allocate the output, fill it.
ir::Tensor run(const ir::Tensor& input, int64_t axis) {
  return testing::run_def(ops::softmax_op(), axis_attr(axis), {&input})[0];
}

}  // namespace

TEST_CASE("Softmax axis defaults to the last from opset 13, normalized", "[ops][softmax]") {
  CHECK(canonical_axis(float_type({3, 4, 5}), 13) == 2);
  CHECK(canonical_axis(float_type({3, 4, 5}), 13, axis_attr(-2)) == 1);
  CHECK(canonical_axis(float_type({3, 4, 5}), 13, axis_attr(0)) == 0);
  CHECK(canonical_axis(float_type({3, 4, 5}), 13, axis_attr(3)) == -1);
}

TEST_CASE("Softmax before opset 13 is modelled only over the last axis", "[ops][softmax]") {
  CHECK(canonical_axis(float_type({2, 4}), 11) == 1);
  CHECK(canonical_axis(float_type({3, 4, 5}), 11) == -1);
  CHECK(canonical_axis(float_type({3, 4, 5}), 1, axis_attr(-1)) == 2);
  CHECK(canonical_axis(ir::TensorType{ir::DataType::kFloat, {}}, 13) == -1);
  CHECK(canonical_axis(ir::TensorType{ir::DataType::kInt32, ir::Shape::of({2})}, 13) == -1);
}

TEST_CASE("Softmax inference keeps the type and checks the axis", "[ops][softmax]") {
  ir::Node node;
  node.attrs = axis_attr(1);
  const ir::TensorType symbolic{ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named("N"), {}}}};
  ops::InferResult result = ops::softmax_op().infer(node, {symbolic});
  REQUIRE(result.ok());
  CHECK(result.outputs[0] == symbolic);
  CHECK_FALSE(ops::softmax_op().infer(node, {float_type({4})}).ok());
}

TEST_CASE("Softmax matches exp(x) / sum(exp(x)) along a middle axis", "[ops][softmax]") {
  const ir::Tensor input = testing::random_tensor({3, 4, 5}, 41, -3, 3);
  const ir::Tensor out = run(input, 1);
  const float* x = input.data<float>();
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t k = 0; k < 5; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < 4; ++j) sum += std::exp(double{x[(i * 4 + j) * 5 + k]});
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t at = (i * 4 + j) * 5 + k;
        CHECK(out.data<float>()[at] == Approx(std::exp(double{x[at]}) / sum).margin(1e-6));
      }
    }
  }
}

TEST_CASE("Softmax does not overflow on large inputs", "[ops][softmax]") {
  const ir::Tensor out = run(ir::Tensor::from_floats({1, 2}, {1000, 1001}), 1);
  CHECK(out.data<float>()[0] == Approx(1 / (1 + std::exp(1.0))));
  CHECK(out.data<float>()[1] == Approx(1 / (1 + std::exp(-1.0))));
}

TEST_CASE("Softmax costs five FLOPs per element", "[ops][softmax]") {
  const std::vector<ir::TensorType> types = {float_type({2, 10})};
  CHECK(ops::softmax_op().features(ir::Node{}, types, types).flops == 100);
}

}  // namespace graphsub
