// ReduceMean, ReduceSum, ReduceMax, ReduceMin: canonical axes per opset, inference with keepdims
// and symbols, the kernels against hand-computed and naive-loop results, cost.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::elements;
using testing::float_type;
using testing::int32_tensor;
using testing::typed;

namespace {

ir::Attributes reduce_attrs(const std::vector<int64_t>& axes, int64_t keepdims) {
  ir::Attributes attrs;
  attrs.set("axes", axes);
  attrs.set("keepdims", keepdims);
  return attrs;
}

/// The canonical form of an identity ReduceSum: no axes, marked with noop_with_empty_axes.
ir::Attributes identity_attrs() {
  ir::Attributes attrs = reduce_attrs({}, 1);
  attrs.set("noop_with_empty_axes", int64_t{1});
  return attrs;
}

/// A float32 type of [N, 3, L] with symbols N and L.
ir::TensorType symbolic_type() {
  return {ir::DataType::kFloat,
          ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::named("L")}}};
}

std::string inferred(const ops::OpDef& def, const ir::Attributes& attrs, const ir::TensorType& in) {
  return testing::infer_text(def, attrs, {in});
}

ir::Tensor run(const ops::OpDef& def, const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(def, attrs, {&input})[0];
}

}  // namespace

TEST_CASE("reductions canonicalize absent axes to every axis and fill keepdims", "[ops][reduce]") {
  for (const ops::OpDef& def :
       {ops::reduce_mean_op(), ops::reduce_max_op(), ops::reduce_min_op()}) {
    auto defaults = testing::canonicalize_def(def, {}, {float_type({3, 2, 2})}, 1, 13);
    REQUIRE(defaults.reason.empty());
    CHECK(defaults.attrs == reduce_attrs({0, 1, 2}, 1));
  }
  auto opset11_sum = testing::canonicalize_def(ops::reduce_sum_op(), reduce_attrs({}, 0),
                                               {float_type({4, 5})}, 1, 11);
  REQUIRE(opset11_sum.reason.empty());
  CHECK(opset11_sum.attrs == reduce_attrs({0, 1}, 0));
}

TEST_CASE("reductions normalize and sort given axes, keeping symbols", "[ops][reduce]") {
  ir::Attributes given = reduce_attrs({-1, 0}, 7);
  auto mean = testing::canonicalize_def(ops::reduce_mean_op(), given, {symbolic_type()}, 1, 13);
  REQUIRE(mean.reason.empty());
  CHECK(mean.attrs == reduce_attrs({0, 2}, 1));

  ir::Attributes non_negative;
  non_negative.set("axes", std::vector<int64_t>{2, 1});
  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  auto max = testing::canonicalize_def(ops::reduce_max_op(), non_negative, {unknown_rank}, 1, 1);
  REQUIRE(max.reason.empty());
  CHECK(max.attrs == reduce_attrs({1, 2}, 1));
}

TEST_CASE("ReduceSum from opset 13: empty axes reduce all, or nothing with noop_with_empty_axes",
          "[ops][reduce]") {
  const ops::OpDef sum = ops::reduce_sum_op();
  REQUIRE(sum.attr_inputs.size() == 1);
  CHECK(sum.attr_inputs[0].input_index == 1);
  CHECK(sum.attr_inputs[0].since_opset == 13);
  CHECK(ops::reduce_mean_op().attr_inputs[0].since_opset == 18);

  ir::Attributes noop_zero;
  noop_zero.set("noop_with_empty_axes", int64_t{0});
  auto all = testing::canonicalize_def(sum, noop_zero, {float_type({3, 2})}, 1, 13);
  REQUIRE(all.reason.empty());
  CHECK(all.attrs == reduce_attrs({0, 1}, 1));

  ir::Attributes noop = reduce_attrs({}, 1);
  noop.set("noop_with_empty_axes", int64_t{1});
  auto identity = testing::canonicalize_def(sum, noop, {float_type({3, 2})}, 1, 13);
  REQUIRE(identity.reason.empty());
  CHECK(identity.attrs == identity_attrs());

  ir::Attributes noop_with_axes = reduce_attrs({-1}, 0);
  noop_with_axes.set("noop_with_empty_axes", int64_t{1});
  auto explicit_axes = testing::canonicalize_def(sum, noop_with_axes, {float_type({3, 2})}, 1, 13);
  REQUIRE(explicit_axes.reason.empty());
  CHECK(explicit_axes.attrs == reduce_attrs({1}, 0));

  auto scalar = testing::canonicalize_def(sum, {}, {float_type({})}, 1, 13);
  REQUIRE(scalar.reason.empty());
  CHECK(scalar.attrs == identity_attrs());
}

TEST_CASE("reductions reject what they do not model", "[ops][reduce]") {
  const auto f = float_type({3, 4});
  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  auto reason = [](const ops::OpDef& def, const ir::Attributes& attrs,
                   const std::vector<ir::TensorType>& inputs, int outputs = 1, int64_t opset = 13) {
    return testing::canonicalize_def(def, attrs, inputs, outputs, opset).reason;
  };
  CHECK_FALSE(reason(ops::reduce_mean_op(), {}, {unknown_rank}).empty());
  CHECK_FALSE(reason(ops::reduce_sum_op(), reduce_attrs({-1}, 1), {unknown_rank}).empty());
  CHECK_FALSE(reason(ops::reduce_max_op(), reduce_attrs({2}, 1), {f}).empty());
  CHECK_FALSE(reason(ops::reduce_max_op(), reduce_attrs({1, -1}, 1), {f}).empty());
  CHECK_FALSE(reason(ops::reduce_min_op(), reduce_attrs({-1}, 1), {f}, 1, 1).empty());
  CHECK_FALSE(reason(ops::reduce_mean_op(), {}, {typed(ir::DataType::kInt64, {3})}).empty());
  CHECK_FALSE(reason(ops::reduce_sum_op(), {}, {typed(ir::DataType::kUint8, {3})}).empty());
  CHECK_FALSE(reason(ops::reduce_sum_op(), {}, {f, typed(ir::DataType::kInt64, {1})}).empty());
  CHECK_FALSE(reason(ops::reduce_sum_op(), {}, {f}, 2).empty());
  ir::Attributes float_axes;
  float_axes.set("axes", std::vector<float>{1});
  CHECK_FALSE(reason(ops::reduce_mean_op(), float_axes, {f}).empty());
  CHECK(reason(ops::reduce_sum_op(), {}, {typed(ir::DataType::kInt32, {3})}).empty());
}

TEST_CASE("reduction inference keeps or drops the reduced dims and keeps symbols",
          "[ops][reduce]") {
  const ops::OpDef mean = ops::reduce_mean_op();
  CHECK(inferred(mean, reduce_attrs({1}, 1), symbolic_type()) == "float32[N,1,L]");
  CHECK(inferred(mean, reduce_attrs({1}, 0), symbolic_type()) == "float32[N,L]");
  CHECK(inferred(mean, reduce_attrs({0, 2}, 0), symbolic_type()) == "float32[3]");
  CHECK(inferred(mean, reduce_attrs({0, 1, 2}, 0), symbolic_type()) == "float32[]");
  CHECK(inferred(ops::reduce_sum_op(), identity_attrs(), symbolic_type()) == "float32[N,3,L]");
  CHECK(inferred(ops::reduce_max_op(), reduce_attrs({0}, 0), typed(ir::DataType::kInt64, {2, 5})) ==
        "int64[5]");
  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  CHECK(inferred(mean, reduce_attrs({1}, 1), unknown_rank) == "float32[*]");

  CHECK(inferred(mean, reduce_attrs({3}, 1), symbolic_type()).rfind("error", 0) == 0);
  CHECK(inferred(mean, reduce_attrs({0}, 1), typed(ir::DataType::kInt32, {2})).rfind("error", 0) ==
        0);
  CHECK_FALSE(testing::infer_def(mean, reduce_attrs({0}, 1), {}).ok());
}

TEST_CASE("reduction kernels compute by hand", "[ops][reduce]") {
  const ir::Tensor x = ir::Tensor::from_floats({2, 3}, {1, -2, 3, 4, 5, -6});
  CHECK(elements(run(ops::reduce_sum_op(), reduce_attrs({1}, 1), x)) == std::vector<double>{2, 3});
  CHECK(elements(run(ops::reduce_mean_op(), reduce_attrs({0}, 0), x)) ==
        std::vector<double>{2.5, 1.5, -1.5});
  CHECK(elements(run(ops::reduce_max_op(), reduce_attrs({1}, 0), x)) == std::vector<double>{3, 5});
  CHECK(elements(run(ops::reduce_min_op(), reduce_attrs({0, 1}, 1), x)) == std::vector<double>{-6});
  CHECK(elements(run(ops::reduce_sum_op(), identity_attrs(), x)) == elements(x));

  const ir::Tensor ints = int32_tensor({2, 2}, {7, -3, 2, 9});
  const ir::Tensor int_sum = run(ops::reduce_sum_op(), reduce_attrs({0}, 0), ints);
  CHECK(int_sum.dtype() == ir::DataType::kInt32);
  CHECK(elements(int_sum) == std::vector<double>{9, 6});
  const ir::Tensor longs = ir::Tensor::from_int64s({3}, {4, -8, 1});
  CHECK(run(ops::reduce_min_op(), reduce_attrs({0}, 0), longs).to_int64s() ==
        std::vector<int64_t>{-8});
}

TEST_CASE("reduction kernels: NaN wins Max and Min, empty reductions", "[ops][reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ir::Tensor x = ir::Tensor::from_floats({2, 2}, {nan, 1, 2, nan});
  for (const ops::OpDef& def : {ops::reduce_max_op(), ops::reduce_min_op()}) {
    const ir::Tensor out = run(def, reduce_attrs({1}, 0), x);
    CHECK(std::isnan(out.data<float>()[0]));
    CHECK(std::isnan(out.data<float>()[1]));
  }
  const ir::Tensor empty(ir::DataType::kFloat, {2, 0});
  CHECK(elements(run(ops::reduce_sum_op(), reduce_attrs({1}, 0), empty)) ==
        std::vector<double>{0, 0});
  CHECK(std::isnan(run(ops::reduce_mean_op(), reduce_attrs({1}, 0), empty).data<float>()[0]));
  CHECK(run(ops::reduce_max_op(), reduce_attrs({1}, 0), empty).data<float>()[0] == -INFINITY);
  CHECK(run(ops::reduce_min_op(), reduce_attrs({1}, 0), empty).data<float>()[1] == INFINITY);
}

TEST_CASE("ReduceMean over two axes matches a naive loop", "[ops][reduce]") {
  const ir::Tensor x = testing::random_tensor({3, 4, 5}, 17);
  const ir::Tensor out = run(ops::reduce_mean_op(), reduce_attrs({0, 2}, 1), x);
  REQUIRE(out.dims() == std::vector<int64_t>{1, 4, 1});
  for (int64_t j = 0; j < 4; ++j) {
    double sum = 0;
    for (int64_t i = 0; i < 3; ++i) {
      for (int64_t k = 0; k < 5; ++k) sum += x.data<float>()[(i * 4 + j) * 5 + k];
    }
    CHECK(out.data<float>()[j] == Approx(sum / 15).margin(1e-6));
  }
}

TEST_CASE("ReduceSum accumulates float32 in double", "[ops][reduce]") {
  // 2^24 + 1 rounds back to 2^24 in float32, so a float accumulator would return 2^24.
  const ir::Tensor x = ir::Tensor::from_floats({3}, {16777216, 1, 1});
  CHECK(run(ops::reduce_sum_op(), reduce_attrs({0}, 0), x).data<float>()[0] == 16777218.0f);
}

TEST_CASE("reductions cost one FLOP per input element", "[ops][reduce]") {
  const ops::OpDef sum = ops::reduce_sum_op();
  const ops::CostFeatures cost = sum.features(testing::node_of(sum, reduce_attrs({1}, 0)),
                                              {float_type({4, 5})}, {float_type({4})});
  CHECK(cost.flops == 20);
  CHECK(cost.bytes_read == 20 * 4);
  CHECK(cost.bytes_written == 4 * 4);
}
