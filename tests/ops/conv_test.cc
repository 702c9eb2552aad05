// Conv: canonical attributes, shape inference, the kernel against a direct summation and by hand
// (with graphsub's residual Z), cost features.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::float_type;

namespace {

ir::TensorType symbolic_type(std::vector<ir::Dim> dims) {
  return ir::TensorType{ir::DataType::kFloat, ir::Shape{true, std::move(dims)}};
}

ir::Attributes conv_attrs(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads,
                          int64_t group = 1, const std::string& activation = "none") {
  return testing::conv_attributes(kernel, strides, pads, dilations, group, activation);
}

/// One convolution to check: sizes and window attributes (pads: begins, then ends).
struct ConvCase {
  std::vector<int64_t> x;
  std::vector<int64_t> w;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  int64_t group;
};

/// Sizes with the spatial axes padded in front to three (a 1-d or 2-d conv is a 3-d one with
/// unit axes; the row-major data is unchanged).
std::array<int64_t, 5> as_3d(const std::vector<int64_t>& dims) {
  std::array<int64_t, 5> out{dims[0], dims[1], 1, 1, 1};
  std::copy(dims.begin() + 2, dims.end(), out.begin() + 5 - static_cast<long>(dims.size() - 2));
  return out;
}

/// Per-axis values padded in front to three axes with `fill`.
std::array<int64_t, 3> spatial_3d(const std::vector<int64_t>& values, int64_t fill) {
  std::array<int64_t, 3> out{fill, fill, fill};
  std::copy(values.begin(), values.end(), out.begin() + 3 - static_cast<long>(values.size()));
  return out;
}

/// The textbook sum y[n,m,o] = b[m] + sum over c, k of x[n, group(m) + c, o*s - pad + k*d] * w[m,c,k],
/// out-of-range input positions skipped, written with no code shared with the kernel.
std::vector<float> direct_conv(const ConvCase& conv, const ir::Tensor& x, const ir::Tensor& w,
                               const ir::Tensor& b, std::array<int64_t, 5>& y_dims) {
  const auto xd = as_3d(conv.x), wd = as_3d(conv.w);
  const auto s = spatial_3d(conv.strides, 1), d = spatial_3d(conv.dilations, 1);
  const std::size_t rank = conv.strides.size();
  const auto pb = spatial_3d({conv.pads.begin(), conv.pads.begin() + rank}, 0);
  const auto pe = spatial_3d({conv.pads.begin() + rank, conv.pads.end()}, 0);
  y_dims = {xd[0], wd[0], 0, 0, 0};
  for (int a = 0; a < 3; ++a)
    y_dims[2 + a] = (xd[2 + a] + pb[a] + pe[a] - ((wd[2 + a] - 1) * d[a] + 1)) / s[a] + 1;
  std::vector<float> y;
  const int64_t per_group = wd[0] / conv.group;
  for (int64_t n = 0; n < y_dims[0]; ++n)
    for (int64_t m = 0; m < y_dims[1]; ++m)
      for (int64_t o0 = 0; o0 < y_dims[2]; ++o0)
        for (int64_t o1 = 0; o1 < y_dims[3]; ++o1)
          for (int64_t o2 = 0; o2 < y_dims[4]; ++o2) {
            double sum = b.data<float>()[m];
            for (int64_t c = 0; c < wd[1]; ++c)
              for (int64_t k0 = 0; k0 < wd[2]; ++k0)
                for (int64_t k1 = 0; k1 < wd[3]; ++k1)
                  for (int64_t k2 = 0; k2 < wd[4]; ++k2) {
                    const int64_t i0 = o0 * s[0] - pb[0] + k0 * d[0];
                    const int64_t i1 = o1 * s[1] - pb[1] + k1 * d[1];
                    const int64_t i2 = o2 * s[2] - pb[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= xd[2] || i1 < 0 || i1 >= xd[3] || i2 < 0 || i2 >= xd[4]) continue;
                    const int64_t channel = m / per_group * wd[1] + c;
                    const int64_t xi = (((n * xd[1] + channel) * xd[2] + i0) * xd[3] + i1) * xd[4] + i2;
                    const int64_t wi = (((m * wd[1] + c) * wd[2] + k0) * wd[3] + k1) * wd[4] + k2;
                    sum += static_cast<double>(x.data<float>()[xi]) * w.data<float>()[wi];
                  }
            y.push_back(static_cast<float>(sum));
          }
  return y;
}

std::vector<float> values_of(const ir::Tensor& tensor) {
  return {tensor.data<float>(), tensor.data<float>() + tensor.num_elements()};
}

}  // namespace

TEST_CASE("Conv canonicalize fills every default", "[conv]") {
  auto result =
      testing::canonicalize_def(ops::conv_op(), {}, {float_type({1, 3, 8, 8}), float_type({4, 3, 3, 3})});
  REQUIRE(result.reason.empty());
  CHECK(result.attrs == conv_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}));

  ir::Attributes explicit_attrs;
  explicit_attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  explicit_attrs.set("auto_pad", std::string("NOTSET"));
  explicit_attrs.set("group", int64_t{1});
  auto same = testing::canonicalize_def(
      ops::conv_op(), explicit_attrs, {float_type({1, 3, 8, 8}), float_type({4, 3, 3, 3}), ir::TensorType{}});
  REQUIRE(same.reason.empty());
  CHECK(same.attrs == result.attrs);
}

TEST_CASE("Conv canonicalize resolves auto_pad to explicit pads", "[conv]") {
  auto with_auto_pad = [](const std::string& mode, std::vector<int64_t> strides, ir::TensorType x) {
    ir::Attributes attrs;
    attrs.set("auto_pad", mode);
    attrs.set("strides", std::move(strides));
    return testing::canonicalize_def(ops::conv_op(), attrs, {std::move(x), float_type({2, 1, 3, 3})});
  };
  SECTION("SAME_UPPER puts the odd pad at the end, SAME_LOWER at the start") {
    // 6 wide, stride 2, kernel 3: 3 outputs need 2*2 + 3 = 7 columns, one pad.
    auto upper = with_auto_pad("SAME_UPPER", {2, 2}, float_type({1, 1, 6, 6}));
    REQUIRE(upper.reason.empty());
    CHECK(upper.attrs.get_ints("pads", {}) == std::vector<int64_t>{0, 0, 1, 1});
    CHECK_FALSE(upper.attrs.has("auto_pad"));
    auto lower = with_auto_pad("SAME_LOWER", {2, 2}, float_type({1, 1, 6, 6}));
    CHECK(lower.attrs.get_ints("pads", {}) == std::vector<int64_t>{1, 1, 0, 0});
  }
  SECTION("SAME with stride 1 needs no input size") {
    auto same = with_auto_pad(
        "SAME_UPPER", {1, 1},
        symbolic_type({ir::Dim::named("N"), ir::Dim::known(1), ir::Dim::named("H"), ir::Dim::named("W")}));
    REQUIRE(same.reason.empty());
    CHECK(same.attrs.get_ints("pads", {}) == std::vector<int64_t>{1, 1, 1, 1});
  }
  SECTION("SAME with a larger stride on an unknown size stays opaque") {
    auto same = with_auto_pad(
        "SAME_LOWER", {2, 2},
        symbolic_type({ir::Dim::named("N"), ir::Dim::known(1), ir::Dim::named("H"), ir::Dim::known(5)}));
    CHECK_FALSE(same.reason.empty());
  }
  SECTION("VALID means no pads") {
    auto valid = with_auto_pad("VALID", {1, 1}, float_type({1, 1, 5, 5}));
    REQUIRE(valid.reason.empty());
    CHECK(valid.attrs.get_ints("pads", {}) == std::vector<int64_t>{0, 0, 0, 0});
    CHECK_FALSE(valid.attrs.has("auto_pad"));
  }
}

TEST_CASE("Conv canonicalize rejects what it does not model", "[conv]") {
  const ir::TensorType x = float_type({1, 3, 8, 8});
  const ir::TensorType w = float_type({4, 3, 3, 3});
  ir::Attributes kernel_5x5;
  kernel_5x5.set("kernel_shape", std::vector<int64_t>{5, 5});
  ir::Attributes pads_and_auto_pad;
  pads_and_auto_pad.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  pads_and_auto_pad.set("auto_pad", std::string("SAME_UPPER"));
  ir::Attributes bad_activation;
  bad_activation.set("activation", std::string("gelu"));
  const ir::TensorType int_x{ir::DataType::kInt64, ir::Shape::of({1, 3, 8, 8})};
  const ir::TensorType unknown_w{ir::DataType::kFloat, ir::Shape::unknown()};

  CHECK_FALSE(testing::canonicalize_def(ops::conv_op(), {}, {int_x, w}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::conv_op(), {}, {x, w}, 2).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::conv_op(), kernel_5x5, {x, w}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::conv_op(), {}, {x, unknown_w}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::conv_op(), pads_and_auto_pad, {x, w}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::conv_op(), bad_activation, {x, w}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::conv_op(), {}, {x}).reason.empty());
}

TEST_CASE("Conv infers output shapes", "[conv]") {
  const ops::OpDef conv = ops::conv_op();
  SECTION("strides, pads and dilations") {
    auto result = testing::infer_def(conv, conv_attrs({3, 3}, {2, 1}, {1, 2}, {1, 0, 1, 0}),
                                     {float_type({2, 3, 7, 9}), float_type({8, 3, 3, 3}), float_type({8})});
    REQUIRE(result.ok());
    CHECK(result.outputs[0] == float_type({2, 8, 4, 5}));
  }
  SECTION("a symbolic batch is kept, and so is a stride-1 same-padded spatial dim") {
    auto result = testing::infer_def(
        conv, conv_attrs({3, 3}, {1, 2}, {1, 1}, {1, 1, 1, 1}),
        {symbolic_type({ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::named("H"), ir::Dim::named("W")}),
         float_type({8, 3, 3, 3})});
    REQUIRE(result.ok());
    CHECK(result.outputs[0] ==
          symbolic_type({ir::Dim::named("N"), ir::Dim::known(8), ir::Dim::named("H"), ir::Dim{}}));
  }
  SECTION("1-d and 3-d") {
    auto one = testing::infer_def(conv, conv_attrs({3}, {2}, {1}, {1, 1}),
                                  {float_type({1, 2, 9}), float_type({4, 2, 3})});
    REQUIRE(one.ok());
    CHECK(one.outputs[0] == float_type({1, 4, 5}));
    auto three = testing::infer_def(conv, conv_attrs({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}),
                                    {float_type({1, 2, 5, 6, 7}), float_type({4, 2, 3, 3, 3})});
    REQUIRE(three.ok());
    CHECK(three.outputs[0] == float_type({1, 4, 3, 4, 5}));
  }
  SECTION("groups divide the channels") {
    auto grouped = testing::infer_def(conv, conv_attrs({3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2),
                                      {float_type({1, 4, 5, 5}), float_type({6, 2, 3, 3})});
    REQUIRE(grouped.ok());
    CHECK(grouped.outputs[0] == float_type({1, 6, 5, 5}));
  }
  SECTION("an unknown input rank still gives the output rank") {
    auto result = testing::infer_def(
        conv, conv_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}),
        {ir::TensorType{ir::DataType::kFloat, ir::Shape::unknown()}, float_type({8, 3, 3, 3})});
    REQUIRE(result.ok());
    CHECK(result.outputs[0] == symbolic_type({ir::Dim{}, ir::Dim::known(8), ir::Dim{}, ir::Dim{}}));
  }
  SECTION("invalid shapes fail") {
    const ir::Attributes attrs = conv_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0});
    CHECK_FALSE(testing::infer_def(conv, attrs, {float_type({1, 4, 7, 7}), float_type({8, 3, 3, 3})}).ok());
    CHECK_FALSE(
        testing::infer_def(conv, attrs, {float_type({1, 3, 7, 7}), float_type({8, 3, 3, 3}), float_type({7})})
            .ok());
    CHECK_FALSE(testing::infer_def(conv, attrs, {float_type({1, 3, 2, 7}), float_type({8, 3, 3, 3})}).ok());
    CHECK_FALSE(testing::infer_def(conv, attrs, {float_type({1, 3, 7, 7}), float_type({8, 3, 5, 5})}).ok());
    CHECK_FALSE(testing::infer_def(conv, attrs, {float_type({1, 3, 7}), float_type({8, 3, 3, 3})}).ok());
    const ir::Attributes grouped = conv_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 2);
    CHECK_FALSE(testing::infer_def(conv, grouped, {float_type({1, 4, 7, 7}), float_type({5, 2, 3, 3})}).ok());
  }
}

TEST_CASE("Conv kernel matches a direct summation", "[conv]") {
  const std::vector<ConvCase> cases = {
      {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{1, 2, 7, 5}, {3, 2, 3, 2}, {2, 3}, {1, 1}, {1, 0, 2, 1}, 1},
      {{1, 2, 9, 8}, {2, 2, 3, 3}, {1, 1}, {2, 3}, {2, 1, 2, 1}, 1},
      {{2, 4, 6, 6}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2},
      {{1, 3, 5, 5}, {3, 1, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 3},
      {{2, 3, 10}, {4, 3, 3}, {2}, {2}, {1, 2}, 1},
      {{1, 2, 5, 4, 6}, {3, 2, 3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 1, 1, 0}, 1},
  };
  uint32_t seed = 1;
  for (const ConvCase& conv : cases) {
    const ir::Tensor x = testing::random_tensor(conv.x, seed++);
    const ir::Tensor w = testing::random_tensor(conv.w, seed++);
    const ir::Tensor b = testing::random_tensor({conv.w[0]}, seed++);
    const ir::Attributes attrs =
        conv_attrs({conv.w.begin() + 2, conv.w.end()}, conv.strides, conv.dilations, conv.pads, conv.group);
    std::array<int64_t, 5> expected_dims{};
    const std::vector<float> expected = direct_conv(conv, x, w, b, expected_dims);
    const std::vector<ir::Tensor> y = testing::run_def(ops::conv_op(), attrs, {&x, &w, &b});
    INFO("case with x " << ir::to_string(ir::Shape::of(conv.x)) << " and w "
                        << ir::to_string(ir::Shape::of(conv.w)));
    CHECK(as_3d(y[0].dims()) == expected_dims);
    CHECK_THAT(values_of(y[0]), Catch::Matchers::Approx(expected).margin(1e-5));
  }
}

TEST_CASE("Conv kernel matches a direct summation on shapes across matrix-kernel blocks", "[conv]") {
  // The matrix kernel blocks 128 filters, 256 of depth (C/group * prod(kernel)) and 1024 output
  // positions, in register tiles of 4 filters x 8 positions; these cases cross every edge.
  const std::vector<ConvCase> cases = {
      {{1, 30, 35, 33}, {13, 30, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},
      {{1, 300, 5, 7}, {6, 300, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{2, 260, 9, 7}, {5, 260, 1, 1}, {2, 1}, {1, 1}, {0, 0, 0, 0}, 1},
      {{2, 12, 9, 40}, {10, 6, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2},
      {{1, 4, 6, 6}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 4},
      {{1, 133, 11}, {131, 133, 2}, {1}, {3}, {2, 0}, 1},
      {{1, 3, 6, 7, 5}, {9, 3, 3, 3, 3}, {2, 1, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}, 1},
  };
  uint32_t seed = 101;
  for (const ConvCase& conv : cases) {
    const ir::Tensor x = testing::random_tensor(conv.x, seed++);
    const ir::Tensor w = testing::random_tensor(conv.w, seed++);
    const ir::Tensor b = testing::random_tensor({conv.w[0]}, seed++);
    const ir::Attributes attrs =
        conv_attrs({conv.w.begin() + 2, conv.w.end()}, conv.strides, conv.dilations, conv.pads, conv.group);
    std::array<int64_t, 5> expected_dims{};
    const std::vector<float> expected = direct_conv(conv, x, w, b, expected_dims);
    const std::vector<ir::Tensor> y = testing::run_def(ops::conv_op(), attrs, {&x, &w, &b});
    INFO("case with x " << ir::to_string(ir::Shape::of(conv.x)) << " and w "
                        << ir::to_string(ir::Shape::of(conv.w)));
    CHECK(as_3d(y[0].dims()) == expected_dims);
    // Float sums of up to 300 products of values in [-1, 1]: a few ulps of sums of magnitude ~10.
    CHECK_THAT(values_of(y[0]), Catch::Matchers::Approx(expected).margin(1e-4));
  }
}

TEST_CASE("Conv without bias and with each activation", "[conv]") {
  const ir::Tensor x = testing::random_tensor({1, 2, 5, 5}, 11);
  const ir::Tensor w = testing::random_tensor({3, 2, 3, 3}, 12);
  const ir::Tensor zero_bias(ir::DataType::kFloat, {3});
  const ConvCase conv{{1, 2, 5, 5}, {3, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1};
  std::array<int64_t, 5> dims{};
  const std::vector<float> linear = direct_conv(conv, x, w, zero_bias, dims);
  const std::vector<std::pair<std::string, float (*)(float)>> activations = {
      {"none", [](float v) { return v; }},
      {"relu", [](float v) { return v > 0 ? v : 0.0f; }},
      {"sigmoid", [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {"tanh", [](float v) { return std::tanh(v); }},
  };
  for (const auto& [name, apply] : activations) {
    const ir::Attributes attrs = conv_attrs({3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, name);
    std::vector<float> expected;
    for (float v : linear) expected.push_back(apply(v));
    INFO("activation " << name);
    CHECK_THAT(values_of(testing::run_def(ops::conv_op(), attrs, {&x, &w, nullptr})[0]),
               Catch::Matchers::Approx(expected).margin(1e-5));
  }
}

TEST_CASE("Conv features count a multiply-add as two FLOPs", "[conv]") {
  const ops::OpDef conv = ops::conv_op();
  const ir::Attributes attrs = conv_attrs({3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2);
  const std::vector<ir::TensorType> inputs = {float_type({2, 4, 8, 8}), float_type({6, 2, 3, 3}),
                                              float_type({6})};
  const std::vector<ir::TensorType> outputs = testing::infer_def(conv, attrs, inputs).outputs;
  const ops::CostFeatures cost = conv.features(testing::node_of(conv, attrs), inputs, outputs);
  CHECK(cost.flops == 2.0 * 2 * 6 * 8 * 8 * 2 * 3 * 3);
  CHECK(cost.bytes_read == 4.0 * (2 * 4 * 8 * 8 + 6 * 2 * 3 * 3 + 6));
  CHECK(cost.bytes_written == 4.0 * 2 * 6 * 8 * 8);
}

TEST_CASE("Conv with a residual Z adds it after the bias and before the activation", "[conv]") {
  // A 1x1 convolution of one channel into two (weights 1 and -1), worked out by hand:
  // channel 0: x + 0.5 + z, channel 1: -x + 0 + 1.
  const ir::Tensor x = ir::Tensor::from_floats({1, 1, 2, 2}, {1, 2, 3, 4});
  const ir::Tensor w = ir::Tensor::from_floats({2, 1, 1, 1}, {1, -1});
  const ir::Tensor b = ir::Tensor::from_floats({2}, {0.5f, 0});
  const ir::Tensor z = ir::Tensor::from_floats({1, 2, 2, 2}, {0, 0, 0, -10, 1, 1, 1, 1});
  const ir::Attributes none = conv_attrs({1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0});
  const ir::Attributes relu = conv_attrs({1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, "relu");
  CHECK(values_of(testing::run_def(ops::conv_op(), none, {&x, &w, &b, &z})[0]) ==
        std::vector<float>{1.5f, 2.5f, 3.5f, -5.5f, 0, -1, -2, -3});
  CHECK(values_of(testing::run_def(ops::conv_op(), relu, {&x, &w, &b, &z})[0]) ==
        std::vector<float>{1.5f, 2.5f, 3.5f, 0, 0, 0, 0, 0});
}

TEST_CASE("Conv with a residual Z matches a direct summation plus Z, per activation", "[conv]") {
  const ConvCase conv{{2, 4, 6, 6}, {6, 2, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2};
  const ir::Tensor x = testing::random_tensor(conv.x, 21);
  const ir::Tensor w = testing::random_tensor(conv.w, 22);
  const ir::Tensor b = testing::random_tensor({6}, 23);
  const ir::Tensor z = testing::random_tensor({2, 6, 6, 6}, 24);
  std::array<int64_t, 5> dims{};
  const std::vector<float> linear = direct_conv(conv, x, w, b, dims);
  const std::vector<std::pair<std::string, double (*)(double)>> activations = {
      {"none", [](double v) { return v; }},
      {"relu", [](double v) { return v > 0 ? v : 0.0; }},
      {"sigmoid", [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {"tanh", [](double v) { return std::tanh(v); }},
  };
  for (const auto& [name, apply] : activations) {
    std::vector<float> expected;
    for (std::size_t i = 0; i < linear.size(); ++i) {
      expected.push_back(static_cast<float>(apply(double{linear[i]} + z.data<float>()[i])));
    }
    const ir::Attributes attrs = conv_attrs({3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 2, name);
    INFO("activation " << name);
    CHECK_THAT(values_of(testing::run_def(ops::conv_op(), attrs, {&x, &w, &b, &z})[0]),
               Catch::Matchers::Approx(expected).margin(1e-5));
  }
}

TEST_CASE("Conv takes Z only after a bias and only of Y's type", "[conv]") {
  const ops::OpDef conv = ops::conv_op();
  const ir::Attributes attrs = conv_attrs({3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1});
  const ir::TensorType x = float_type({2, 3, 8, 8});
  const ir::TensorType w = float_type({4, 3, 3, 3});
  const ir::TensorType b = float_type({4});
  SECTION("Z of Y's type is accepted, at canonicalize and infer") {
    CHECK(testing::canonicalize_def(conv, {}, {x, w, b, float_type({2, 4, 8, 8})}).reason.empty());
    CHECK(testing::infer_text(conv, attrs, {x, w, b, float_type({2, 4, 8, 8})}) == "float32[2,4,8,8]");
    const ir::TensorType symbolic = symbolic_type(
        {ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::known(8), ir::Dim::known(8)});
    const ir::TensorType symbolic_z = symbolic_type(
        {ir::Dim::named("N"), ir::Dim::known(4), ir::Dim::known(8), ir::Dim::known(8)});
    CHECK(testing::infer_def(conv, attrs, {symbolic, w, b, symbolic_z}).ok());
  }
  SECTION("Z of another shape, a broadcast shape or another element type is rejected") {
    CHECK_FALSE(testing::infer_def(conv, attrs, {x, w, b, float_type({2, 4, 6, 6})}).ok());
    CHECK_FALSE(testing::infer_def(conv, attrs, {x, w, b, float_type({1, 4, 8, 8})}).ok());
    CHECK_FALSE(testing::infer_def(conv, attrs, {x, w, b, float_type({4, 1, 1})}).ok());
    const ir::TensorType doubles = testing::typed(ir::DataType::kDouble, {2, 4, 8, 8});
    CHECK_FALSE(testing::infer_def(conv, attrs, {x, w, b, doubles}).ok());
  }
  SECTION("Z without B, or a fifth input, is rejected") {
    const ir::TensorType z = float_type({2, 4, 8, 8});
    CHECK_FALSE(testing::canonicalize_def(conv, {}, {x, w, ir::TensorType{}, z}).reason.empty());
    CHECK_FALSE(testing::infer_def(conv, attrs, {x, w, ir::TensorType{}, z}).ok());
    CHECK_FALSE(testing::canonicalize_def(conv, {}, {x, w, b, z, z}).reason.empty());
    CHECK_FALSE(testing::infer_def(conv, attrs, {x, w, b, z, z}).ok());
  }
}

TEST_CASE("Conv features read Z in the same launch", "[conv]") {
  const ops::OpDef conv = ops::conv_op();
  const ir::Attributes attrs = conv_attrs({3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, "relu");
  const std::vector<ir::TensorType> plain = {float_type({2, 3, 8, 8}), float_type({4, 3, 3, 3}),
                                             float_type({4})};
  std::vector<ir::TensorType> fused = plain;
  fused.push_back(float_type({2, 4, 8, 8}));
  const std::vector<ir::TensorType> outputs = testing::infer_def(conv, attrs, fused).outputs;
  const ops::CostFeatures without = conv.features(testing::node_of(conv, attrs), plain, outputs);
  const ops::CostFeatures with = conv.features(testing::node_of(conv, attrs), fused, outputs);
  CHECK(with.flops == without.flops);
  CHECK(with.bytes_read == without.bytes_read + 4.0 * 2 * 4 * 8 * 8);
  CHECK(with.bytes_written == without.bytes_written);
}
