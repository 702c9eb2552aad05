// BatchNormalization: inference-only canonical form, shape inference, the kernel against its formula.
#include <catch2/catch.hpp>
#include <cmath>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::float_type;

namespace {

std::vector<ir::TensorType> bn_types(const ir::TensorType& x, int64_t channels) {
  return {x, float_type({channels}), float_type({channels}), float_type({channels}), float_type({channels})};
}

ir::Attributes epsilon_attrs(float epsilon) {
  ir::Attributes attrs;
  attrs.set("epsilon", epsilon);
  return attrs;
}

/// y = scale * (x - mean) / sqrt(var + epsilon) + B over axis 1 of x, element by element.
std::vector<float> direct_bn(const ir::Tensor& x, const std::vector<const ir::Tensor*>& params,
                             float epsilon) {
  const int64_t channels = x.dims()[1];
  const int64_t block = x.num_elements() / (x.dims()[0] * channels);
  std::vector<float> y;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    const int64_t c = i / block % channels;
    const double scale = params[0]->data<float>()[c], bias = params[1]->data<float>()[c];
    const double mean = params[2]->data<float>()[c], var = params[3]->data<float>()[c];
    y.push_back(static_cast<float>(scale * (x.data<float>()[i] - mean) / std::sqrt(var + epsilon) + bias));
  }
  return y;
}

}  // namespace

TEST_CASE("BatchNormalization canonicalize keeps epsilon alone", "[batch_normalization]") {
  const ops::OpDef bn = ops::batch_normalization_op();
  const auto types = bn_types(float_type({2, 3, 4, 4}), 3);
  auto defaults = testing::canonicalize_def(bn, {}, types);
  REQUIRE(defaults.reason.empty());
  CHECK(defaults.attrs == epsilon_attrs(1e-5f));

  ir::Attributes old_style;
  old_style.set("epsilon", 1e-3f);
  old_style.set("momentum", 0.8f);
  old_style.set("spatial", int64_t{1});
  old_style.set("is_test", int64_t{1});
  auto opset7 = testing::canonicalize_def(bn, old_style, types, 1, 7);
  REQUIRE(opset7.reason.empty());
  CHECK(opset7.attrs == epsilon_attrs(1e-3f));
}

TEST_CASE("BatchNormalization canonicalize rejects training forms", "[batch_normalization]") {
  const ops::OpDef bn = ops::batch_normalization_op();
  const auto types = bn_types(float_type({2, 3, 4, 4}), 3);
  ir::Attributes training;
  training.set("training_mode", int64_t{1});
  ir::Attributes per_activation;
  per_activation.set("spatial", int64_t{0});
  std::vector<ir::TensorType> doubles = types;
  doubles[0].dtype = ir::DataType::kDouble;

  CHECK_FALSE(testing::canonicalize_def(bn, training, types, 1, 15).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(bn, {}, types, 3, 15).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(bn, per_activation, types, 1, 7).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(bn, {}, doubles).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(bn, {}, {types.begin(), types.begin() + 4}).reason.empty());
}

TEST_CASE("BatchNormalization infers the input type", "[batch_normalization]") {
  const ops::OpDef bn = ops::batch_normalization_op();
  const ir::Attributes attrs = epsilon_attrs(1e-5f);
  const ir::TensorType symbolic{
      ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::named("L")}}};
  auto result = testing::infer_def(bn, attrs, bn_types(symbolic, 3));
  REQUIRE(result.ok());
  CHECK(result.outputs[0] == symbolic);
  CHECK(testing::infer_def(bn, attrs, bn_types(float_type({2, 3}), 3)).ok());

  CHECK_FALSE(testing::infer_def(bn, attrs, bn_types(float_type({2, 3, 4, 4}), 4)).ok());
  CHECK_FALSE(testing::infer_def(bn, attrs, bn_types(float_type({3}), 3)).ok());
  std::vector<ir::TensorType> matrix_scale = bn_types(float_type({2, 3, 4}), 3);
  matrix_scale[1] = float_type({3, 1});
  CHECK_FALSE(testing::infer_def(bn, attrs, matrix_scale).ok());
}

TEST_CASE("BatchNormalization kernel matches its formula", "[batch_normalization]") {
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{2, 3, 4, 5}, std::vector<int64_t>{4, 3}}) {
    const ir::Tensor x = testing::random_tensor(dims, 1);
    const ir::Tensor scale = testing::random_tensor({3}, 2);
    const ir::Tensor bias = testing::random_tensor({3}, 3);
    const ir::Tensor mean = testing::random_tensor({3}, 4);
    const ir::Tensor var = testing::random_tensor({3}, 5, 0.5f, 2.0f);
    const ir::Tensor y = testing::run_def(ops::batch_normalization_op(), epsilon_attrs(1e-2f),
                                          {&x, &scale, &bias, &mean, &var})[0];
    const std::vector<float> expected = direct_bn(x, {&scale, &bias, &mean, &var}, 1e-2f);
    CHECK(y.dims() == dims);
    CHECK_THAT(std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements()),
               Catch::Matchers::Approx(expected).margin(1e-5));
  }
}

TEST_CASE("BatchNormalization features: a multiply-add per element", "[batch_normalization]") {
  const ops::OpDef bn = ops::batch_normalization_op();
  const auto inputs = bn_types(float_type({2, 3, 4, 4}), 3);
  const ops::CostFeatures cost = bn.features(testing::node_of(bn, epsilon_attrs(1e-5f)), inputs, {inputs[0]});
  CHECK(cost.flops == 2.0 * 2 * 3 * 4 * 4);
  CHECK(cost.bytes_read == 4.0 * (2 * 3 * 4 * 4 + 4 * 3));
  CHECK(cost.bytes_written == 4.0 * 2 * 3 * 4 * 4);
}
