// Tests of the element-wise unary ops: defaults, legacy forms, inference, kernels against formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

namespace graphsub {
namespace {

using ir::DataType;
using testing::float_type;

std::string canonicalize(const ops::OpDef& def, ir::Attributes& attrs, const ir::TensorType& input,
                         int64_t opset) {
  return testing::canonicalize_in_place(def, attrs, {input}, 1, opset);
}

std::string canonicalize(const ops::OpDef& def, const ir::TensorType& input, int64_t opset) {
  ir::Attributes attrs;
  return canonicalize(def, attrs, input, opset);
}

/// Canonical attributes of `def` at `opset` for a float input, starting from `given`.
ir::Attributes canonical(const ops::OpDef& def, ir::Attributes given = {}, int64_t opset = 13) {
  REQUIRE(canonicalize(def, given, float_type({2}), opset).empty());
  return given;
}

/// Runs the kernel the way the executor does: infer, allocate the output, fill it.
ir::Tensor run(const ops::OpDef& def, const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(def, attrs, {&input})[0];
}

/// An op, its canonical attributes, and an independent formula for one element.
struct Case {
  const char* name;
  ops::OpDef def;
  ir::Attributes attrs;
  std::function<double(double)> formula;
  float low = -3.0f;  ///< Range of the random inputs.
};

ir::Attributes floats(const std::vector<std::pair<std::string, float>>& values) {
  ir::Attributes attrs;
  for (const auto& [name, value] : values) attrs.set(name, value);
  return attrs;
}

ir::Attributes strings(const std::vector<std::pair<std::string, std::string>>& values) {
  ir::Attributes attrs;
  for (const auto& [name, value] : values) attrs.set(name, value);
  return attrs;
}

std::vector<Case> float_cases() {
  return {
      {"Relu", ops::relu_op(), {}, [](double x) { return x > 0 ? x : 0; }},
      {"Sigmoid", ops::sigmoid_op(), {}, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Tanh", ops::tanh_op(), {}, [](double x) { return std::sinh(x) / std::cosh(x); }},
      {"Exp", ops::exp_op(), {}, [](double x) { return std::exp(x); }},
      {"Log", ops::log_op(), {}, [](double x) { return std::log(x); }, 0.1f},
      {"Neg", ops::neg_op(), {}, [](double x) { return -x; }},
      {"Abs", ops::abs_op(), {}, [](double x) { return std::fabs(x); }},
      {"Sqrt", ops::sqrt_op(), {}, [](double x) { return std::sqrt(x); }, 0.0f},
      {"Reciprocal", ops::reciprocal_op(), {}, [](double x) { return 1 / x; }, 0.1f},
      {"Erf", ops::erf_op(), {}, [](double x) { return std::erf(x); }},
      {"Floor", ops::floor_op(), {}, [](double x) { return std::floor(x); }},
      {"Ceil", ops::ceil_op(), {}, [](double x) { return std::ceil(x); }},
      {"Sin", ops::sin_op(), {}, [](double x) { return std::sin(x); }},
      {"Cos", ops::cos_op(), {}, [](double x) { return std::cos(x); }},
      {"Sign", ops::sign_op(), {}, [](double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }},
      {"Identity", ops::identity_op(), {}, [](double x) { return x; }},
      {"LeakyRelu", ops::leaky_relu_op(), floats({{"alpha", 0.1f}}),
       [](double x) { return x < 0 ? 0.1f * x : x; }},
      {"Elu", ops::elu_op(), floats({{"alpha", 2.0f}}),
       [](double x) { return x < 0 ? 2 * (std::exp(x) - 1) : x; }},
      {"Softplus", ops::softplus_op(), {}, [](double x) { return std::log(std::exp(x) + 1); }},
      {"HardSigmoid", ops::hard_sigmoid_op(), floats({{"alpha", 0.5f}, {"beta", 0.6f}}),
       [](double x) { return std::fmax(0, std::fmin(1, 0.5f * x + 0.6f)); }},
      {"HardSwish", ops::hard_swish_op(), {}, [](double x) { return x * std::fmax(0, std::fmin(1, x / 6 + 0.5)); }},
      {"Clip", ops::clip_op(), floats({{"min", -1.0f}, {"max", 0.5f}}),
       [](double x) { return std::fmin(std::fmax(x, -1), 0.5); }},
      {"Gelu", ops::gelu_op(), strings({{"approximate", "none"}}),
       [](double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }},
      {"Gelu tanh", ops::gelu_op(), strings({{"approximate", "tanh"}}),
       [](double x) {
         const double pi = std::acos(-1.0);
         return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * std::pow(x, 3))));
       }},
  };
}

ir::Tensor int64_tensor(const std::vector<int64_t>& values) {
  return ir::Tensor::from_int64s({static_cast<int64_t>(values.size())}, values);
}

}  // namespace

TEST_CASE("unary kernels match their formulas on random inputs", "[ops][unary]") {
  for (const Case& test : float_cases()) {
    INFO(test.name);
    const ir::Tensor input = testing::random_tensor({3, 4, 5}, 7, test.low, 3.0f);
    const ir::Tensor output = run(test.def, test.attrs, input);
    REQUIRE(output.dims() == input.dims());
    for (int64_t i = 0; i < input.num_elements(); ++i) {
      const double expected = test.formula(input.data<float>()[i]);
      CHECK(output.data<float>()[i] == Approx(expected).epsilon(1e-5).margin(1e-6));
    }
  }
}

TEST_CASE("unary canonicalization fills ONNX defaults", "[ops][unary]") {
  CHECK(canonical(ops::leaky_relu_op()).get_float("alpha", 0) == 0.01f);
  CHECK(canonical(ops::elu_op()).get_float("alpha", 0) == 1.0f);
  CHECK(canonical(ops::elu_op(), floats({{"alpha", 2.0f}})).get_float("alpha", 0) == 2.0f);
  const ir::Attributes hard = canonical(ops::hard_sigmoid_op(), {}, 6);
  CHECK(hard.get_float("alpha", 0) == 0.2f);
  CHECK(hard.get_float("beta", 0) == 0.5f);
  CHECK(canonical(ops::relu_op()).empty());
  CHECK(canonical(ops::softplus_op(), {}, 1).empty());
}

TEST_CASE("Gelu is modelled from opset 20 with approximate none or tanh", "[ops][unary]") {
  CHECK(canonical(ops::gelu_op(), {}, 20).get_string("approximate", "") == "none");
  CHECK(canonical(ops::gelu_op(), strings({{"approximate", "tanh"}}), 20)
            .get_string("approximate", "") == "tanh");
  ir::Attributes unknown = strings({{"approximate", "sigmoid"}});
  CHECK(canonicalize(ops::gelu_op(), unknown, float_type({2}), 20) == "approximate = sigmoid");
  CHECK_FALSE(canonicalize(ops::gelu_op(), float_type({2}), 19).empty());
}

TEST_CASE("unary canonicalization rejects legacy opsets and element types", "[ops][unary]") {
  CHECK_FALSE(canonicalize(ops::relu_op(), float_type({2}), 5).empty());
  CHECK_FALSE(canonicalize(ops::sigmoid_op(), float_type({2}), 1).empty());
  CHECK_FALSE(canonicalize(ops::erf_op(), float_type({2}), 8).empty());
  CHECK_FALSE(canonicalize(ops::sigmoid_op(), ir::TensorType{DataType::kInt32, {}}, 13).empty());
  CHECK_FALSE(canonicalize(ops::relu_op(), ir::TensorType{DataType::kFloat16, {}}, 14).empty());
  CHECK(canonicalize(ops::neg_op(), ir::TensorType{DataType::kInt64, {}}, 13).empty());
  CHECK(canonicalize(ops::identity_op(), ir::TensorType{DataType::kString, {}}, 16).empty());
  CHECK_FALSE(canonicalize(ops::identity_op(), ir::TensorType{}, 16).empty());
}

TEST_CASE("Clip reads bounds from opset-11 inputs or older attributes", "[ops][unary]") {
  using Limits = std::numeric_limits<float>;
  const ops::OpDef clip = ops::clip_op();
  REQUIRE(clip.attr_inputs.size() == 2);
  CHECK(std::string(clip.attr_inputs[1].attr) == "max");
  CHECK(clip.attr_inputs[1].as_floats);

  ir::Attributes from_inputs;
  from_inputs.set("min", std::vector<float>{-0.5f});
  from_inputs = canonical(clip, from_inputs, 13);
  CHECK(from_inputs.get_float("min", 0) == -0.5f);
  CHECK(from_inputs.get_float("max", 0) == Limits::infinity());

  const ir::Attributes legacy = canonical(clip, {}, 6);
  CHECK(legacy.get_float("min", 0) == Limits::lowest());
  CHECK(legacy.get_float("max", 0) == Limits::max());

  ir::Attributes two;
  two.set("max", std::vector<float>{1, 2});
  CHECK_FALSE(canonicalize(clip, two, float_type({2}), 13).empty());
}

TEST_CASE("Clip keeps NaN and gives max where min > max", "[ops][unary]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor out = run(ops::clip_op(), floats({{"min", 2.0f}, {"max", 1.0f}}),
                             ir::Tensor::from_floats({3}, {nan, 0, 5}));
  CHECK(std::isnan(out.data<float>()[0]));
  CHECK(out.data<float>()[1] == 1.0f);
  CHECK(out.data<float>()[2] == 1.0f);
}

TEST_CASE("Softplus does not overflow far from zero", "[ops][unary]") {
  const ir::Tensor out = run(ops::softplus_op(), {}, ir::Tensor::from_floats({2}, {100, -50}));
  CHECK(out.data<float>()[0] == 100.0f);
  CHECK(out.data<float>()[1] == Approx(std::exp(-50.0)).epsilon(1e-5));
}

TEST_CASE("Neg, Abs and Relu run on integers, wrapping at the lowest value", "[ops][unary]") {
  const int64_t lowest = std::numeric_limits<int64_t>::lowest();
  const ir::Tensor input = int64_tensor({-3, 0, 4, lowest});
  CHECK(run(ops::neg_op(), {}, input).to_int64s() == std::vector<int64_t>{3, 0, -4, lowest});
  CHECK(run(ops::abs_op(), {}, input).to_int64s() == std::vector<int64_t>{3, 0, 4, lowest});
  CHECK(run(ops::relu_op(), {}, input).to_int64s() == std::vector<int64_t>{0, 0, 4, 0});
}

TEST_CASE("Sign from opset 9 on floats and integers, NaN kept", "[ops][unary]") {
  CHECK(canonicalize(ops::sign_op(), ir::TensorType{DataType::kInt32, {}}, 9).empty());
  CHECK(canonical(ops::sign_op(), {}, 13).empty());
  CHECK_FALSE(canonicalize(ops::sign_op(), float_type({2}), 8).empty());
  CHECK_FALSE(canonicalize(ops::sign_op(), ir::TensorType{DataType::kUint8, {}}, 13).empty());
  const int64_t lowest = std::numeric_limits<int64_t>::lowest();
  CHECK(run(ops::sign_op(), {}, int64_tensor({-3, 0, 4, lowest})).to_int64s() ==
        std::vector<int64_t>{-1, 0, 1, -1});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor out = run(ops::sign_op(), {}, ir::Tensor::from_floats({4}, {nan, -0.0f, 1e-30f, -2}));
  CHECK(std::isnan(out.data<float>()[0]));
  CHECK(testing::elements(out)[1] == 0.0);
  CHECK_FALSE(std::signbit(out.data<float>()[1]));
  CHECK(testing::elements(out)[2] == 1.0);
  CHECK(testing::elements(out)[3] == -1.0);
}

TEST_CASE("Identity copies strings", "[ops][unary]") {
  const ir::Tensor input({2}, std::vector<std::string>{"a", "bc"});
  CHECK(run(ops::identity_op(), {}, input).strings() == input.strings());
}

TEST_CASE("unary inference keeps the type and rejects types without a kernel", "[ops][unary]") {
  const ir::Shape shape{true, {ir::Dim::named("N"), ir::Dim{}}};
  const ir::TensorType symbolic{DataType::kFloat, shape};
  ops::InferResult result = ops::tanh_op().infer(ir::Node{}, {symbolic});
  REQUIRE(result.ok());
  CHECK(result.outputs[0] == symbolic);
  CHECK_FALSE(ops::exp_op().infer(ir::Node{}, {ir::TensorType{DataType::kInt64, {}}}).ok());
  CHECK_FALSE(ops::exp_op().infer(ir::Node{}, {symbolic, symbolic}).ok());
  CHECK(ops::identity_op().infer(ir::Node{}, {ir::TensorType{DataType::kBool, {}}}).ok());
}

TEST_CASE("unary features count one FLOP per element, Identity none", "[ops][unary]") {
  const std::vector<ir::TensorType> types = {float_type({2, 8})};
  CHECK(ops::sigmoid_op().features(ir::Node{}, types, types).flops == 16);
  const ops::CostFeatures copy = ops::identity_op().features(ir::Node{}, types, types);
  CHECK(copy.flops == 0);
  CHECK(copy.bytes_written == 64);
}

}  // namespace graphsub
