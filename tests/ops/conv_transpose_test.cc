// ConvTranspose: canonical attributes (auto_pad and output_shape resolved into pads), shape
// inference with symbols, the kernel against a direct scatter loop, cost features.
#include <array>
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::float_type;
using testing::floats;

namespace {

ir::Attributes transposed_attrs(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads,
                                const std::vector<int64_t>& output_padding, int64_t group = 1) {
  return testing::attributes({{"kernel_shape", kernel},
                              {"strides", strides},
                              {"dilations", dilations},
                              {"pads", pads},
                              {"output_padding", output_padding},
                              {"group", group}});
}

testing::Canonicalized canonical(const ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs,
                                 int64_t opset = 13) {
  return testing::canonicalize_def(ops::conv_transpose_op(), attrs, inputs, 1, opset);
}

/// The pads canonicalize gives a node with these extra attributes on X [1, 1, 3, 3], W [1, 2, 3, 3].
std::vector<int64_t> pads_for(const ir::Attributes& attrs, int64_t opset = 13) {
  const testing::Canonicalized result =
      canonical(attrs, {float_type({1, 1, 3, 3}), float_type({1, 2, 3, 3})}, opset);
  INFO(result.reason);
  REQUIRE(result.reason.empty());
  CHECK_FALSE(result.attrs.has("auto_pad"));
  CHECK_FALSE(result.attrs.has("output_shape"));
  return result.attrs.get_ints("pads", {});
}

/// One transposed convolution to check: sizes and attributes (pads: begins, then ends).
struct Case {
  std::vector<int64_t> x;
  std::vector<int64_t> w;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;
  std::vector<int64_t> output_padding;
  int64_t group;
};

/// Per-axis values padded in front to three axes with `fill` (a 1-d or 2-d case is a 3-d one with
/// unit axes; the row-major data is unchanged).
std::array<int64_t, 3> spatial_3d(const std::vector<int64_t>& values, int64_t fill) {
  std::array<int64_t, 3> out{fill, fill, fill};
  std::copy(values.begin(), values.end(), out.begin() + 3 - static_cast<long>(values.size()));
  return out;
}

/// The textbook scatter: every x[n, c, i] adds x * w[c, m, k] to y[n, group(c) + m, i*s - pad + k*d]
/// where that lies inside y, written with no code shared with the kernel.
std::vector<double> direct(const Case& t, const ir::Tensor& x, const ir::Tensor& w, const ir::Tensor& b,
                           std::vector<int64_t>& y_dims) {
  const std::size_t rank = t.strides.size();
  const auto xs = spatial_3d({t.x.begin() + 2, t.x.end()}, 1),
             ks = spatial_3d({t.w.begin() + 2, t.w.end()}, 1);
  const auto s = spatial_3d(t.strides, 1), d = spatial_3d(t.dilations, 1);
  const auto op = spatial_3d(t.output_padding, 0);
  const auto pb = spatial_3d({t.pads.begin(), t.pads.begin() + rank}, 0);
  const auto pe = spatial_3d({t.pads.begin() + rank, t.pads.end()}, 0);
  const int64_t per_group = t.w[1], channels = t.x[1], filters = per_group * t.group;
  std::array<int64_t, 3> ys{};
  for (int a = 0; a < 3; ++a) ys[a] = s[a] * (xs[a] - 1) + op[a] + (ks[a] - 1) * d[a] + 1 - pb[a] - pe[a];
  y_dims = {t.x[0], filters};
  for (std::size_t a = 3 - rank; a < 3; ++a) y_dims.push_back(ys[a]);
  const int64_t y_block = ys[0] * ys[1] * ys[2];
  std::vector<double> y(static_cast<std::size_t>(t.x[0] * filters * y_block));
  for (int64_t n = 0; n < t.x[0]; ++n)
    for (int64_t m = 0; m < filters; ++m)
      for (int64_t o = 0; o < y_block; ++o) y[(n * filters + m) * y_block + o] = b.data<float>()[m];
  for (int64_t n = 0; n < t.x[0]; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i0 = 0; i0 < xs[0]; ++i0)
        for (int64_t i1 = 0; i1 < xs[1]; ++i1)
          for (int64_t i2 = 0; i2 < xs[2]; ++i2)
            for (int64_t m = 0; m < per_group; ++m)
              for (int64_t k0 = 0; k0 < ks[0]; ++k0)
                for (int64_t k1 = 0; k1 < ks[1]; ++k1)
                  for (int64_t k2 = 0; k2 < ks[2]; ++k2) {
                    const int64_t o0 = i0 * s[0] - pb[0] + k0 * d[0];
                    const int64_t o1 = i1 * s[1] - pb[1] + k1 * d[1];
                    const int64_t o2 = i2 * s[2] - pb[2] + k2 * d[2];
                    if (o0 < 0 || o0 >= ys[0] || o1 < 0 || o1 >= ys[1] || o2 < 0 || o2 >= ys[2]) continue;
                    const int64_t filter = c / (channels / t.group) * per_group + m;
                    const float xv =
                        x.data<float>()[(((n * channels + c) * xs[0] + i0) * xs[1] + i1) * xs[2] + i2];
                    const float wv =
                        w.data<float>()[(((c * per_group + m) * ks[0] + k0) * ks[1] + k1) * ks[2] + k2];
                    y[(n * filters + filter) * y_block + (o0 * ys[1] + o1) * ys[2] + o2] += double{xv} * wv;
                  }
  return y;
}

}  // namespace

TEST_CASE("ConvTranspose canonicalize fills every default", "[conv_transpose]") {
  const auto result = canonical({}, {float_type({1, 3, 5, 5}), float_type({3, 4, 3, 3})});
  REQUIRE(result.reason.empty());
  CHECK(result.attrs == transposed_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}));
  ir::Attributes explicit_attrs = transposed_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0});
  explicit_attrs.set("auto_pad", std::string("NOTSET"));
  const auto same =
      canonical(explicit_attrs, {float_type({1, 3, 5, 5}), float_type({3, 4, 3, 3}), float_type({4})});
  REQUIRE(same.reason.empty());
  CHECK(same.attrs == result.attrs);
}

TEST_CASE("ConvTranspose canonicalize resolves auto_pad and output_shape into pads", "[conv_transpose]") {
  ir::Attributes upper;
  upper.set("auto_pad", std::string("SAME_UPPER"));
  upper.set("strides", std::vector<int64_t>{2, 2});
  // Full output 2 * 2 + 3 = 7 wide, SAME wants 6: one pad, at the end for SAME_UPPER.
  CHECK(pads_for(upper) == std::vector<int64_t>{0, 0, 1, 1});
  ir::Attributes lower = upper;
  lower.set("auto_pad", std::string("SAME_LOWER"));
  CHECK(pads_for(lower) == std::vector<int64_t>{1, 1, 0, 0});
  ir::Attributes valid;
  valid.set("auto_pad", std::string("VALID"));
  CHECK(pads_for(valid) == std::vector<int64_t>{0, 0, 0, 0});

  // output_shape [10, 8] with strides [3, 2]: full outputs 9 and 7 plus output_padding 1 each.
  ir::Attributes shaped;
  shaped.set("strides", std::vector<int64_t>{3, 2});
  shaped.set("output_shape", std::vector<int64_t>{10, 8});
  shaped.set("output_padding", std::vector<int64_t>{1, 1});
  CHECK(pads_for(shaped) == std::vector<int64_t>{0, 0, 0, 0});
  // An odd total padding goes to the start, except with SAME_UPPER.
  shaped.set("output_shape", std::vector<int64_t>{9, 6});
  CHECK(pads_for(shaped) == std::vector<int64_t>{1, 1, 0, 1});
  shaped.set("auto_pad", std::string("SAME_UPPER"));
  CHECK(pads_for(shaped) == std::vector<int64_t>{0, 1, 1, 1});
  shaped.erase("auto_pad");
  shaped.set("output_shape", std::vector<int64_t>{8, 8});
  CHECK(pads_for(shaped, 8) == std::vector<int64_t>{1, 0, 1, 0});

  // Beyond the full output (9 and 7 without output_padding), output_shape extends the end.
  ir::Attributes beyond;
  beyond.set("strides", std::vector<int64_t>{3, 2});
  beyond.set("output_shape", std::vector<int64_t>{10, 8});
  const auto extended = canonical(beyond, {float_type({1, 1, 3, 3}), float_type({1, 2, 3, 3})});
  REQUIRE(extended.reason.empty());
  CHECK(extended.attrs == transposed_attrs({3, 3}, {3, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}));

  SECTION("SAME needs no input size") {
    const auto result = canonical(upper, {floats({"N", "1", "H", "W"}), float_type({1, 2, 3, 3})});
    REQUIRE(result.reason.empty());
    CHECK(result.attrs.get_ints("pads", {}) == std::vector<int64_t>{0, 0, 1, 1});
  }
}

TEST_CASE("ConvTranspose canonicalize rejects what it does not model", "[conv_transpose]") {
  const ir::TensorType x = float_type({1, 1, 3, 3});
  const ir::TensorType w = float_type({1, 2, 3, 3});
  auto reason = [&](const ir::Attributes& attrs, std::vector<ir::TensorType> inputs, int64_t opset = 13) {
    return canonical(attrs, inputs, opset).reason;
  };
  ir::Attributes shaped;
  shaped.set("output_shape", std::vector<int64_t>{6, 6});
  ir::Attributes upper;
  upper.set("auto_pad", std::string("SAME_UPPER"));
  ir::Attributes both = upper;
  both.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  ir::Attributes too_large;
  too_large.set("output_shape", std::vector<int64_t>{9, 9});
  ir::Attributes odd_legacy;
  odd_legacy.set("output_shape", std::vector<int64_t>{4, 4});
  ir::Attributes below_stride = upper;
  below_stride.set("strides", std::vector<int64_t>{4, 4});
  ir::Attributes negative;
  negative.set("output_padding", std::vector<int64_t>{-1, 0});
  ir::Attributes unknown;
  unknown.set("auto_pad", std::string("FULL"));
  ir::Attributes beyond_upper;
  beyond_upper.set("auto_pad", std::string("SAME_UPPER"));
  beyond_upper.set("output_shape", std::vector<int64_t>{6, 6});
  ir::Attributes wide_padding;
  wide_padding.set("strides", std::vector<int64_t>{2, 2});
  wide_padding.set("output_padding", std::vector<int64_t>{2, 0});

  CHECK_FALSE(reason({}, {testing::typed(ir::DataType::kInt64, {1, 1, 3, 3}), w}).empty());
  CHECK_FALSE(reason({}, {x, testing::typed(ir::DataType::kDouble, {1, 2, 3, 3})}).empty());
  CHECK_FALSE(reason({}, {x}).empty());
  CHECK_FALSE(reason({}, {x, testing::kUnknownRank}).empty());
  CHECK_FALSE(reason(shaped, {floats({"1", "1", "H", "3"}), w}).empty());
  CHECK_FALSE(reason(both, {x, w}).empty());
  CHECK_FALSE(reason(too_large, {x, w}).empty());
  CHECK_FALSE(reason(odd_legacy, {x, w}, 10).empty());
  CHECK_FALSE(reason(upper, {x, w}, 10).empty());
  CHECK_FALSE(reason(below_stride, {x, w}).empty());
  CHECK_FALSE(reason(negative, {x, w}).empty());
  CHECK_FALSE(reason(unknown, {x, w}).empty());
  CHECK_FALSE(reason(beyond_upper, {x, w}).empty());
  CHECK_FALSE(reason(wide_padding, {x, w}).empty());
  CHECK_FALSE(reason({}, {float_type({1, 1, 3}), w}).empty());
  CHECK_FALSE(testing::canonicalize_def(ops::conv_transpose_op(), {}, {x, w}, 2).reason.empty());
}

TEST_CASE("ConvTranspose infers output shapes", "[conv_transpose]") {
  const ops::OpDef def = ops::conv_transpose_op();
  const ir::Attributes attrs = transposed_attrs({3, 3}, {3, 2}, {1, 1}, {1, 2, 1, 2}, {1, 0}, 2);
  CHECK(testing::infer_text(def, attrs,
                            {float_type({2, 4, 3, 3}), float_type({4, 3, 3, 3}), float_type({6})}) ==
        "float32[2,6,8,3]");
  SECTION("symbols: the batch, a same-sized stride-1 axis, one group's filters") {
    const ir::Attributes same = transposed_attrs({3, 3}, {1, 2}, {1, 1}, {1, 0, 1, 0}, {0, 0});
    CHECK(testing::infer_text(def, same, {floats({"N", "4", "H", "W"}), floats({"4", "M", "3", "3"})}) ==
          "float32[N,M,H,?]");
    CHECK(testing::infer_text(def, transposed_attrs({2}, {1}, {1}, {0, 0}, {0}, 2),
                              {floats({"1", "4", "5"}), floats({"4", "M", "2"})}) == "float32[1,?,6]");
    CHECK(testing::infer_text(def, same, {testing::kUnknownRank, float_type({4, 5, 3, 3})}) ==
          "float32[?,5,?,?]");
  }
  SECTION("1-d and 3-d with dilations") {
    CHECK(testing::infer_text(def, transposed_attrs({3}, {2}, {2}, {0, 1}, {1}),
                              {float_type({1, 2, 4}), float_type({2, 3, 3})}) == "float32[1,3,11]");
    CHECK(testing::infer_text(
              def, transposed_attrs({3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, {0, 0, 0}),
              {float_type({1, 1, 3, 4, 5}), float_type({1, 2, 3, 3, 3})}) == "float32[1,2,5,6,7]");
  }
  SECTION("invalid shapes fail") {
    const ir::Attributes plain = transposed_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0});
    auto fails = [&](const ir::Attributes& a, const std::vector<ir::TensorType>& inputs) {
      return testing::infer_text(def, a, inputs).rfind("error", 0) == 0;
    };
    CHECK(fails(plain, {float_type({1, 3, 5, 5}), float_type({2, 4, 3, 3})}));
    CHECK(fails(plain, {float_type({1, 3, 5, 5}), float_type({3, 4, 2, 2})}));
    CHECK(fails(plain, {float_type({1, 3, 5}), float_type({3, 4, 3, 3})}));
    CHECK(fails(plain, {float_type({1, 3, 5, 5}), float_type({3, 4, 3, 3}), float_type({5})}));
    CHECK(fails(transposed_attrs({3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 2),
                {float_type({1, 3, 5, 5}), float_type({3, 4, 3, 3})}));
    CHECK(
        fails(transposed_attrs({3}, {1}, {1}, {2, 2}, {0}), {float_type({1, 3, 1}), float_type({3, 4, 3})}));
    CHECK(fails(plain, {float_type({1, 3, 5, 5}), testing::typed(ir::DataType::kDouble, {3, 4, 3, 3})}));
  }
}

TEST_CASE("ConvTranspose kernel matches a direct scatter", "[conv_transpose]") {
  const std::vector<Case> cases = {
      {{1, 1, 3, 3}, {1, 2, 3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 1},
      {{2, 3, 4, 5}, {3, 2, 3, 2}, {2, 3}, {1, 1}, {1, 0, 0, 1}, {1, 2}, 1},
      {{1, 2, 4, 4}, {2, 3, 2, 3}, {2, 1}, {2, 2}, {0, 1, 2, 0}, {1, 0}, 1},
      {{2, 4, 3, 3}, {4, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2},
      {{1, 6, 5}, {6, 1, 4}, {3}, {1}, {2, 1}, {2}, 3},
      {{1, 2, 3, 4, 2}, {2, 2, 2, 3, 2}, {2, 1, 2}, {1, 2, 1}, {0, 1, 0, 1, 0, 1}, {1, 0, 0}, 1},
      {{1, 40, 9, 11}, {40, 7, 3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 300, 7}, {300, 5, 3}, {1}, {1}, {1, 1}, {0}, 1},
  };
  uint32_t seed = 31;
  for (const Case& t : cases) {
    const ir::Tensor x = testing::random_tensor(t.x, seed++);
    const ir::Tensor w = testing::random_tensor(t.w, seed++);
    const ir::Tensor b = testing::random_tensor({t.w[1] * t.group}, seed++);
    const ir::Attributes attrs = transposed_attrs({t.w.begin() + 2, t.w.end()}, t.strides, t.dilations,
                                                  t.pads, t.output_padding, t.group);
    std::vector<int64_t> dims;
    const std::vector<double> expected = direct(t, x, w, b, dims);
    INFO("case with x " << ir::to_string(ir::Shape::of(t.x)) << " and w "
                        << ir::to_string(ir::Shape::of(t.w)));
    const ir::Tensor y = testing::run_def(ops::conv_transpose_op(), attrs, {&x, &w, &b})[0];
    CHECK(y.dims() == dims);
    CHECK_THAT(testing::elements(y), Catch::Matchers::Approx(expected).margin(1e-4));
    const ir::Tensor no_bias = testing::run_def(ops::conv_transpose_op(), attrs, {&x, &w})[0];
    CHECK(no_bias.element_as_double(0) ==
          Approx(y.element_as_double(0) - b.element_as_double(0)).margin(1e-5));
  }
}

TEST_CASE("ConvTranspose kernel runs float64", "[conv_transpose]") {
  // x [1, 1, 2] = [1, 2], w [1, 1, 2] = [3, 4], stride 2: y = [3, 4, 6, 8], bias 0.5 added.
  const ir::Tensor x = testing::tensor_of<double>(ir::DataType::kDouble, {1, 1, 2}, {1, 2});
  const ir::Tensor w = testing::tensor_of<double>(ir::DataType::kDouble, {1, 1, 2}, {3, 4});
  const ir::Tensor b = testing::tensor_of<double>(ir::DataType::kDouble, {1}, {0.5});
  const ir::Tensor y = testing::run_def(ops::conv_transpose_op(),
                                        transposed_attrs({2}, {2}, {1}, {0, 0}, {0}), {&x, &w, &b})[0];
  CHECK(y.dtype() == ir::DataType::kDouble);
  CHECK(testing::elements(y) == std::vector<double>{3.5, 4.5, 6.5, 8.5});
}

TEST_CASE("ConvTranspose features count a multiply-add per input element, filter and tap",
          "[conv_transpose]") {
  const ops::OpDef def = ops::conv_transpose_op();
  const ir::Attributes attrs = transposed_attrs({3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2);
  const std::vector<ir::TensorType> inputs = {float_type({2, 4, 5, 5}), float_type({4, 3, 3, 3}),
                                              float_type({6})};
  const std::vector<ir::TensorType> outputs = testing::infer_def(def, attrs, inputs).outputs;
  REQUIRE(outputs.size() == 1);
  CHECK(outputs[0] == float_type({2, 6, 10, 10}));
  const ops::CostFeatures cost = def.features(testing::node_of(def, attrs), inputs, outputs);
  CHECK(cost.flops == 2.0 * 2 * 4 * 5 * 5 * 3 * 3 * 3);
  CHECK(cost.bytes_read == 4.0 * (2 * 4 * 5 * 5 + 4 * 3 * 3 * 3 + 6));
  CHECK(cost.bytes_written == 4.0 * 2 * 6 * 10 * 10);
}
