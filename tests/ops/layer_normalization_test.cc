// LayerNormalization: canonical attributes, the Y-only form, inference with broadcast parameters,
// the kernel against its formula, cost.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::float_type;
using testing::values_of;

namespace {

ir::Attributes ln_attrs(int64_t axis, float epsilon) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  attrs.set("epsilon", epsilon);
  attrs.set("stash_type", int64_t{1});
  return attrs;
}

ir::Attributes axis_attr(int64_t axis) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  return attrs;
}

std::string reason(const ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs,
                   int outputs = 1) {
  return testing::canonicalize_def(ops::layer_normalization_op(), attrs, inputs, outputs, 17)
      .reason;
}

/// Y = (x - mean) / sqrt(var + epsilon) * scale + bias over the last `row` elements, with scale
/// and bias indexed by position within the row.
std::vector<float> direct_ln(const ir::Tensor& x, int64_t row, const std::vector<float>& scale,
                             const std::vector<float>& bias, double epsilon) {
  std::vector<float> y;
  for (int64_t start = 0; start < x.num_elements(); start += row) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < row; ++i) mean += x.data<float>()[start + i] / static_cast<double>(row);
    for (int64_t i = 0; i < row; ++i) {
      var += std::pow(x.data<float>()[start + i] - mean, 2) / static_cast<double>(row);
    }
    for (int64_t i = 0; i < row; ++i) {
      const double normalized = (x.data<float>()[start + i] - mean) / std::sqrt(var + epsilon);
      y.push_back(static_cast<float>(normalized * scale[i] + bias[i]));
    }
  }
  return y;
}

}  // namespace

TEST_CASE("LayerNormalization canonicalize fills every default", "[ops][layer_normalization]") {
  const ops::OpDef ln = ops::layer_normalization_op();
  const std::vector<ir::TensorType> types = {float_type({2, 3, 4}), float_type({4}),
                                             float_type({4})};
  auto defaults = testing::canonicalize_def(ln, {}, types, 1, 17);
  REQUIRE(defaults.reason.empty());
  CHECK(defaults.attrs == ln_attrs(2, 1e-5f));

  ir::Attributes given = axis_attr(-2);
  given.set("epsilon", 0.1f);
  auto normalized = testing::canonicalize_def(ln, given, {types[0], float_type({3, 4})}, 1, 17);
  REQUIRE(normalized.reason.empty());
  CHECK(normalized.attrs == ln_attrs(1, 0.1f));
}

TEST_CASE("LayerNormalization models only Y with float32 statistics",
          "[ops][layer_normalization]") {
  const std::vector<ir::TensorType> types = {float_type({2, 4}), float_type({4}), float_type({4})};
  CHECK_FALSE(reason({}, types, 3).empty());
  CHECK_FALSE(reason({}, types, 2).empty());
  ir::Attributes double_stash;
  double_stash.set("stash_type", int64_t{11});
  CHECK_FALSE(reason(double_stash, types).empty());
  CHECK_FALSE(reason(axis_attr(2), types).empty());
  CHECK_FALSE(
      reason({}, {ir::TensorType{ir::DataType::kFloat, ir::Shape::unknown()}, types[1]}).empty());
  CHECK_FALSE(
      reason({}, {ir::TensorType{ir::DataType::kDouble, ir::Shape::of({2, 4})}, types[1]}).empty());
  CHECK_FALSE(reason({}, {types[0]}).empty());
  CHECK_FALSE(reason({}, {types[0], types[1], types[2], types[2]}).empty());
}

TEST_CASE("LayerNormalization infers X's type, and Scale and B broadcast to X",
          "[ops][layer_normalization]") {
  const ops::OpDef ln = ops::layer_normalization_op();
  const ir::TensorType symbolic{
      ir::DataType::kFloat,
      ir::Shape{true, {ir::Dim::named("N"), ir::Dim::named("T"), ir::Dim::known(8)}}};
  auto result =
      testing::infer_def(ln, ln_attrs(2, 1e-5f), {symbolic, float_type({8}), float_type({1, 8})});
  REQUIRE(result.ok());
  CHECK(result.outputs[0] == symbolic);
  CHECK(testing::infer_def(ln, ln_attrs(1, 1e-5f), {symbolic, float_type({4, 8})}).ok());

  CHECK_FALSE(testing::infer_def(ln, ln_attrs(2, 1e-5f), {symbolic, float_type({4})}).ok());
  CHECK_FALSE(
      testing::infer_def(ln, ln_attrs(2, 1e-5f), {float_type({1, 8}), float_type({2, 8})}).ok());
  CHECK_FALSE(
      testing::infer_def(ln, ln_attrs(2, 1e-5f), {symbolic, float_type({1, 1, 1, 8})}).ok());
  CHECK_FALSE(testing::infer_def(ln, ln_attrs(3, 1e-5f), {symbolic, float_type({8})}).ok());
  CHECK_FALSE(testing::infer_def(ln, ln_attrs(2, 1e-5f), {symbolic}).ok());
}

TEST_CASE("LayerNormalization normalizes a row by hand", "[ops][layer_normalization]") {
  const ir::Tensor x = ir::Tensor::from_floats({2, 2}, {1, 3, -4, 0});
  const ir::Tensor scale = ir::Tensor::from_floats({2}, {2, 1});
  const ir::Tensor bias = ir::Tensor::from_floats({2}, {0, 10});
  const ir::Tensor y =
      testing::run_def(ops::layer_normalization_op(), ln_attrs(1, 0), {&x, &scale, &bias})[0];
  CHECK(values_of(y) == std::vector<float>{-2, 11, -2, 11});
  const ir::Tensor unbiased =
      testing::run_def(ops::layer_normalization_op(), ln_attrs(1, 0), {&x, &scale})[0];
  CHECK(values_of(unbiased) == std::vector<float>{-2, 1, -2, 1});
}

TEST_CASE("LayerNormalization matches its formula over trailing axes",
          "[ops][layer_normalization]") {
  const ir::Tensor x = testing::random_tensor({2, 3, 4}, 7, -2, 2);
  const ir::Tensor scale = testing::random_tensor({3, 4}, 8);
  const ir::Tensor bias = testing::random_tensor({4}, 9);
  const ir::Tensor y =
      testing::run_def(ops::layer_normalization_op(), ln_attrs(1, 1e-3f), {&x, &scale, &bias})[0];
  std::vector<float> bias_row;
  for (int i = 0; i < 3; ++i)
    bias_row.insert(bias_row.end(), bias.data<float>(), bias.data<float>() + 4);
  const std::vector<float> expected = direct_ln(x, 12, values_of(scale), bias_row, double{1e-3f});
  CHECK(y.dims() == x.dims());
  CHECK_THAT(values_of(y), Catch::Matchers::Approx(expected).margin(1e-5));
}

TEST_CASE("LayerNormalization costs about five FLOPs per element", "[ops][layer_normalization]") {
  const ops::OpDef ln = ops::layer_normalization_op();
  const std::vector<ir::TensorType> inputs = {float_type({4, 8}), float_type({8}), float_type({8})};
  const ops::CostFeatures cost =
      ln.features(testing::node_of(ln, ln_attrs(1, 1e-5f)), inputs, {inputs[0]});
  CHECK(cost.flops == 5 * 32);
  CHECK(cost.bytes_read == 4 * (32 + 8 + 8));
  CHECK(cost.bytes_written == 4 * 32);
}
