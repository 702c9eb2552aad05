// Unit tests of Dropout in inference: the opset forms it models (and training mode it does not),
// inference with and without the mask, the identity kernel, and its cost.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;

namespace {

const ir::TensorType kInput{ir::DataType::kFloat,
                            ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(4)}}};

ir::Attributes mask(int64_t flag) {
  ir::Attributes attrs;
  attrs.set("mask", flag);
  return attrs;
}

/// The canonical attributes of a Dropout, or the reason it stays opaque.
testing::Canonicalized canonical(ir::Attributes attrs, int outputs, int64_t opset,
                                 const ir::TensorType& input = kInput) {
  return testing::canonicalize_def(ops::dropout_op(), std::move(attrs), {input}, outputs, opset);
}

}  // namespace

TEST_CASE("dropout canonicalize drops ratio and seed and rejects training", "[ops][dropout]") {
  ir::Attributes old_form;
  old_form.set("ratio", 0.2f);
  CHECK(canonical(old_form, 1, 7).attrs == mask(0));
  CHECK(canonical({}, 2, 10).attrs == mask(1));
  ir::Attributes inputs_form;
  inputs_form.set("seed", int64_t{3});
  inputs_form.set("ratio", std::vector<float>{0.5f});
  inputs_form.set("training_mode", std::vector<int64_t>{0});
  CHECK(canonical(inputs_form, 2, 13).attrs == mask(1));

  ir::Attributes training;
  training.set("training_mode", std::vector<int64_t>{1});
  CHECK_FALSE(canonical(training, 1, 13).reason.empty());
  CHECK_FALSE(canonical({}, 2, 7).reason.empty());
  CHECK_FALSE(canonical({}, 3, 13).reason.empty());
  ir::Attributes is_test;
  is_test.set("is_test", int64_t{1});
  CHECK_FALSE(canonical(is_test, 1, 7).reason.empty());
  CHECK_FALSE(canonical({}, 1, 13, {ir::DataType::kString, ir::Shape::of({2})}).reason.empty());
}

TEST_CASE("dropout infers the input's type and a bool mask", "[ops][dropout]") {
  ops::InferResult plain = testing::infer_def(ops::dropout_op(), mask(0), {kInput});
  REQUIRE(plain.outputs.size() == 1);
  CHECK(plain.outputs[0] == kInput);
  ops::InferResult with_mask = testing::infer_def(ops::dropout_op(), mask(1), {kInput});
  REQUIRE(with_mask.outputs.size() == 2);
  CHECK(ir::to_string(with_mask.outputs[1]) == "bool[N,4]");
  CHECK_FALSE(testing::infer_def(ops::dropout_op(), mask(0), {kInput, kInput}).ok());
}

TEST_CASE("dropout kernel is the identity with an all-true mask", "[ops][dropout]") {
  const ir::Tensor x = testing::random_tensor({3, 4}, 8);
  const std::vector<ir::Tensor> plain = testing::run_def(ops::dropout_op(), mask(0), {&x});
  REQUIRE(plain.size() == 1);
  CHECK(testing::max_abs_diff(plain[0], x) == 0);
  const std::vector<ir::Tensor> with_mask = testing::run_def(ops::dropout_op(), mask(1), {&x});
  REQUIRE(with_mask.size() == 2);
  CHECK(testing::max_abs_diff(with_mask[0], x) == 0);
  CHECK(with_mask[1].dtype() == ir::DataType::kBool);
  CHECK(with_mask[1].to_int64s() == std::vector<int64_t>(12, 1));
  const ir::Tensor ints = ir::Tensor::from_int64s({2}, {5, -6});
  CHECK(testing::run_def(ops::dropout_op(), mask(0), {&ints})[0].to_int64s() ==
        std::vector<int64_t>{5, -6});
}

TEST_CASE("dropout costs only the mask it writes", "[ops][dropout]") {
  ir::Node node;
  const ir::TensorType x{ir::DataType::kFloat, ir::Shape::of({3, 4})};
  ops::CostFeatures plain = ops::dropout_op().features(node, {x}, {x});
  CHECK(plain.flops == 0);
  CHECK(plain.bytes_read == 0);
  CHECK(plain.bytes_written == 0);
  ops::CostFeatures with_mask =
      ops::dropout_op().features(node, {x}, {x, {ir::DataType::kBool, ir::Shape::of({3, 4})}});
  CHECK(with_mask.bytes_written == 12);
}
