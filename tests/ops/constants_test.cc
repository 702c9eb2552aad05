// TASO's constants: shapes, values, and the identities they exist for (I_conv, C_pool).
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::float_type;
using testing::values_of;

namespace {

ir::Attributes kernel_attrs(int64_t channels, std::vector<int64_t> kernel) {
  ir::Attributes attrs;
  attrs.set("channels", channels);
  attrs.set("kernel_shape", std::move(kernel));
  return attrs;
}

ir::Attributes conv_attrs(std::vector<int64_t> kernel, std::vector<int64_t> strides,
                          std::vector<int64_t> pads, int64_t group) {
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::move(kernel));
  attrs.set("strides", strides);
  attrs.set("dilations", std::vector<int64_t>(strides.size(), 1));
  attrs.set("pads", std::move(pads));
  attrs.set("group", group);
  attrs.set("activation", std::string("none"));
  return attrs;
}

ir::Tensor make(const ops::OpDef& def, const ir::Attributes& attrs) {
  return testing::run_def(def, attrs, {})[0];
}

}  // namespace

TEST_CASE("Constants are graphsub's own operators", "[constants]") {
  for (const ops::OpDef& def : {ops::const_identity_conv_op(), ops::const_identity_matrix_op(),
                                ops::const_ones_op(), ops::const_pool_op()}) {
    INFO(def.name);
    CHECK_FALSE(def.is_onnx);
    CHECK_FALSE(testing::canonicalize_def(def, {}, {}).reason.empty());
  }
}

TEST_CASE("Constants infer their shapes from attributes", "[constants]") {
  CHECK(testing::infer_def(ops::const_identity_conv_op(), kernel_attrs(4, {3, 5}), {}).outputs[0] ==
        float_type({4, 4, 3, 5}));
  CHECK(testing::infer_def(ops::const_pool_op(), kernel_attrs(4, {2, 2}), {}).outputs[0] ==
        float_type({4, 1, 2, 2}));
  ir::Attributes size;
  size.set("size", int64_t{5});
  CHECK(testing::infer_def(ops::const_identity_matrix_op(), size, {}).outputs[0] == float_type({5, 5}));
  ir::Attributes shape;
  shape.set("shape", std::vector<int64_t>{2, 3, 4});
  CHECK(testing::infer_def(ops::const_ones_op(), shape, {}).outputs[0] == float_type({2, 3, 4}));

  CHECK_FALSE(testing::infer_def(ops::const_identity_conv_op(), kernel_attrs(4, {2, 3}), {}).ok());
  CHECK_FALSE(testing::infer_def(ops::const_identity_conv_op(), kernel_attrs(0, {3, 3}), {}).ok());
  CHECK_FALSE(testing::infer_def(ops::const_pool_op(), kernel_attrs(4, {}), {}).ok());
  CHECK_FALSE(testing::infer_def(ops::const_identity_matrix_op(), {}, {}).ok());
  CHECK_FALSE(testing::infer_def(ops::const_ones_op(), shape, {float_type({2, 3, 4})}).ok());
}

TEST_CASE("Constants hold the documented values", "[constants]") {
  ir::Attributes size;
  size.set("size", int64_t{3});
  CHECK(values_of(make(ops::const_identity_matrix_op(), size)) ==
        std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1});
  ir::Attributes shape;
  shape.set("shape", std::vector<int64_t>{2, 2});
  CHECK(values_of(make(ops::const_ones_op(), shape)) == std::vector<float>{1, 1, 1, 1});
  CHECK(values_of(make(ops::const_pool_op(), kernel_attrs(2, {1, 2}))) ==
        std::vector<float>{0.5, 0.5, 0.5, 0.5});
  const std::vector<float> identity_1x3 = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0};
  CHECK(values_of(make(ops::const_identity_conv_op(), kernel_attrs(2, {1, 3}))) == identity_1x3);
}

TEST_CASE("Conv with ConstIdentityConv is the identity", "[constants]") {
  const ir::Tensor x = testing::random_tensor({2, 3, 6, 5}, 31);
  const ir::Tensor identity = make(ops::const_identity_conv_op(), kernel_attrs(3, {3, 5}));
  const ir::Tensor y = testing::run_def(ops::conv_op(), conv_attrs({3, 5}, {1, 1}, {1, 2, 1, 2}, 1),
                                        {&x, &identity, nullptr})[0];
  CHECK(testing::max_abs_diff(x, y) == 0);
}

TEST_CASE("Depthwise conv with ConstPool is AveragePool counting the pads", "[constants]") {
  const ir::Tensor x = testing::random_tensor({2, 3, 7, 6}, 32);
  const ir::Tensor kernel = make(ops::const_pool_op(), kernel_attrs(3, {3, 3}));
  for (int64_t stride : {1, 2}) {
    const ir::Tensor conv = testing::run_def(
        ops::conv_op(), conv_attrs({3, 3}, {stride, stride}, {1, 1, 1, 1}, 3), {&x, &kernel})[0];
    ir::Attributes pool;
    pool.set("kernel_shape", std::vector<int64_t>{3, 3});
    pool.set("strides", std::vector<int64_t>{stride, stride});
    pool.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    pool.set("ceil_mode", int64_t{0});
    pool.set("count_include_pad", int64_t{1});
    const ir::Tensor average = testing::run_def(ops::average_pool_op(), pool, {&x})[0];
    INFO("stride " << stride);
    CHECK(testing::max_abs_diff(conv, average) < 1e-6);
  }
}

TEST_CASE("Constants cost no arithmetic", "[constants]") {
  const ops::OpDef ones = ops::const_ones_op();
  ir::Attributes shape;
  shape.set("shape", std::vector<int64_t>{2, 3});
  const ops::CostFeatures cost = ones.features(testing::node_of(ones, shape), {}, {float_type({2, 3})});
  CHECK(cost.flops == 0);
  CHECK(cost.bytes_read == 0);
  CHECK(cost.bytes_written == 4.0 * 6);
}
