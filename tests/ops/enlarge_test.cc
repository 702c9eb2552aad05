// Enlarge: shape inference, the zero-padded kernel, and a conv with it equal to the original conv.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::float_type;

namespace {

ir::Attributes kernel_shape(std::vector<int64_t> sizes) {
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::move(sizes));
  return attrs;
}

ir::Attributes conv_attrs(int64_t kernel, int64_t pad, int64_t stride, int64_t group) {
  ir::Attributes attrs = kernel_shape({kernel, kernel});
  attrs.set("strides", std::vector<int64_t>{stride, stride});
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.set("group", group);
  attrs.set("activation", std::string("none"));
  return attrs;
}

}  // namespace

TEST_CASE("Enlarge is not imported from ONNX", "[enlarge]") {
  CHECK_FALSE(testing::canonicalize_def(ops::enlarge_op(), kernel_shape({3, 3}), {float_type({4, 3, 1, 1})})
                  .reason.empty());
  CHECK_FALSE(ops::enlarge_op().is_onnx);
}

TEST_CASE("Enlarge infers the grown kernel shape", "[enlarge]") {
  const ops::OpDef enlarge = ops::enlarge_op();
  CHECK(testing::infer_def(enlarge, kernel_shape({3, 5}), {float_type({4, 3, 1, 3})}).outputs[0] ==
        float_type({4, 3, 3, 5}));
  const ir::TensorType symbolic{
      ir::DataType::kFloat,
      ir::Shape{true, {ir::Dim::named("M"), ir::Dim::known(3), ir::Dim::known(1), ir::Dim::known(1)}}};
  CHECK(testing::infer_def(enlarge, kernel_shape({3, 3}), {symbolic}).outputs[0] ==
        ir::TensorType{
            ir::DataType::kFloat,
            ir::Shape{true, {ir::Dim::named("M"), ir::Dim::known(3), ir::Dim::known(3), ir::Dim::known(3)}}});
  CHECK_FALSE(testing::infer_def(enlarge, kernel_shape({2, 3}), {float_type({4, 3, 1, 1})}).ok());
  CHECK_FALSE(testing::infer_def(enlarge, kernel_shape({1, 3}), {float_type({4, 3, 3, 3})}).ok());
  CHECK_FALSE(testing::infer_def(enlarge, kernel_shape({3, 3}), {float_type({4, 3, 1})}).ok());
  CHECK_FALSE(testing::infer_def(enlarge, {}, {float_type({4, 3, 1, 1})}).ok());
}

TEST_CASE("Enlarge centres the kernel in zeros", "[enlarge]") {
  const ir::Tensor w = ir::Tensor::from_floats({1, 1, 3, 1}, {1, 2, 3});
  const ir::Tensor y = testing::run_def(ops::enlarge_op(), kernel_shape({5, 3}), {&w})[0];
  REQUIRE(y.dims() == std::vector<int64_t>{1, 1, 5, 3});
  const std::vector<float> expected = {0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 0, 0};
  CHECK(std::vector<float>(y.data<float>(), y.data<float>() + y.num_elements()) == expected);
}

TEST_CASE("Conv with an enlarged kernel and wider pads computes the same", "[enlarge]") {
  const ir::Tensor x = testing::random_tensor({2, 4, 7, 7}, 21);
  const ir::Tensor w = testing::random_tensor({6, 2, 3, 3}, 22);
  const ir::Tensor b = testing::random_tensor({6}, 23);
  const ir::Tensor wide = testing::run_def(ops::enlarge_op(), kernel_shape({7, 7}), {&w})[0];
  for (int64_t stride : {1, 2}) {
    const ir::Tensor small = testing::run_def(ops::conv_op(), conv_attrs(3, 1, stride, 2), {&x, &w, &b})[0];
    const ir::Tensor large =
        testing::run_def(ops::conv_op(), conv_attrs(7, 3, stride, 2), {&x, &wide, &b})[0];
    INFO("stride " << stride);
    CHECK(testing::max_abs_diff(small, large) < 1e-5);
  }
}

TEST_CASE("Enlarge features: no arithmetic", "[enlarge]") {
  const ops::OpDef enlarge = ops::enlarge_op();
  const ops::CostFeatures cost = enlarge.features(testing::node_of(enlarge, kernel_shape({3, 3})),
                                                  {float_type({4, 3, 1, 1})}, {float_type({4, 3, 3, 3})});
  CHECK(cost.flops == 0);
  CHECK(cost.bytes_read == 4.0 * 12);
  CHECK(cost.bytes_written == 4.0 * 108);
}
