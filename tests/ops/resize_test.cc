// Resize: canonical attributes (scales or sizes, every interpolation default), what stays opaque,
// inference of both forms with symbols, nearest and linear kernels by hand (ONNX's examples) and
// against a direct bilinear formula, cost.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using ir::DataType;
using testing::float_type;
using testing::floats;

namespace {

ir::Attributes with_scales(const std::vector<float>& scales, const std::string& mode = "nearest",
                           const std::string& transform = "half_pixel") {
  ir::Attributes attrs;
  attrs.set("scales", scales);
  attrs.set("mode", mode);
  attrs.set("coordinate_transformation_mode", transform);
  return attrs;
}

ir::Attributes with_sizes(const std::vector<int64_t>& sizes, const std::string& mode = "nearest",
                          const std::string& transform = "half_pixel") {
  ir::Attributes attrs;
  attrs.set("sizes", sizes);
  attrs.set("mode", mode);
  attrs.set("coordinate_transformation_mode", transform);
  return attrs;
}

/// The canonical form of a node with `target` (scales or sizes) and these interpolation attributes.
ir::Attributes canonical_form(ir::Attributes target, const std::string& mode, const std::string& transform,
                              const std::string& rounding) {
  target.set("mode", mode);
  target.set("coordinate_transformation_mode", transform);
  target.set("nearest_mode", rounding);
  target.set("cubic_coeff_a", -0.75f);
  target.set("exclude_outside", int64_t{0});
  target.set("extrapolation_value", 0.0f);
  return target;
}

testing::Canonicalized canonical(const ir::Attributes& attrs, const ir::TensorType& x, int64_t opset = 13) {
  return testing::canonicalize_def(ops::resize_op(), attrs, {x}, 1, opset);
}

std::string reason(const ir::Attributes& attrs, const ir::TensorType& x = float_type({1, 1, 4, 4}),
                   int64_t opset = 13) {
  return canonical(attrs, x, opset).reason;
}

std::string infer(const ir::Attributes& attrs, const ir::TensorType& x) {
  return testing::infer_text(ops::resize_op(), attrs, {x});
}

std::vector<double> run(const ir::Attributes& attrs, const ir::Tensor& x) {
  return testing::elements(testing::run_def(ops::resize_op(), attrs, {&x})[0]);
}

/// A nearest resize of 1-d [0, 1, 2, 3] to 8 with this rounding and transform.
std::vector<double> nearest_1d(const std::string& rounding, const std::string& transform) {
  ir::Attributes attrs = with_sizes({8}, "nearest", transform);
  attrs.set("nearest_mode", rounding);
  return run(attrs, ir::Tensor::from_floats({4}, {0, 1, 2, 3}));
}

/// The bilinear value at output (y, x) of an image [h, w] resized to [out_h, out_w] with
/// pytorch_half_pixel, from the four neighbours, written with no code shared with the kernel.
double bilinear(const float* image, int64_t h, int64_t w, int64_t out_h, int64_t out_w, int64_t y,
                int64_t x) {
  auto source = [](int64_t at, int64_t in, int64_t out) {
    const double position = out > 1 ? (at + 0.5) * in / out - 0.5 : 0.0;
    return std::clamp(position, 0.0, static_cast<double>(in - 1));
  };
  const double sy = source(y, h, out_h), sx = source(x, w, out_w);
  const auto y0 = static_cast<int64_t>(sy), x0 = static_cast<int64_t>(sx);
  const int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
  const double fy = sy - y0, fx = sx - x0;
  return (1 - fy) * ((1 - fx) * image[y0 * w + x0] + fx * image[y0 * w + x1]) +
         fy * ((1 - fx) * image[y1 * w + x0] + fx * image[y1 * w + x1]);
}

}  // namespace

TEST_CASE("Resize declares roi, scales and sizes as attribute operands", "[ops][resize]") {
  const ops::OpDef def = ops::resize_op();
  REQUIRE(def.attr_inputs.size() == 3);
  CHECK(std::string(def.attr_inputs[1].attr) == "scales");
  CHECK(def.attr_inputs[1].as_floats);
  CHECK(def.attr_inputs[2].input_index == 3);
  CHECK_FALSE(def.attr_inputs[2].as_floats);
  CHECK(def.since_opset == 11);
  CHECK(def.infer_runtime != nullptr);
}

TEST_CASE("Resize canonicalize fills every interpolation default", "[ops][resize]") {
  ir::Attributes given;
  given.set("scales", std::vector<float>{1, 1, 2, 2});
  given.set("roi", std::vector<float>{});
  auto result = canonical(given, float_type({1, 3, 4, 4}));
  REQUIRE(result.reason.empty());
  ir::Attributes scales;
  scales.set("scales", std::vector<float>{1, 1, 2, 2});
  CHECK(result.attrs == canonical_form(scales, "nearest", "half_pixel", "round_prefer_floor"));

  // Opset 11 requires roi and scales, empty when sizes are given.
  ir::Attributes opset11 = with_sizes({1, 3, 8, 8}, "linear", "align_corners");
  opset11.set("roi", std::vector<float>{});
  opset11.set("scales", std::vector<float>{});
  opset11.set("nearest_mode", std::string("ceil"));
  opset11.set("cubic_coeff_a", -0.5f);
  result = canonical(opset11, floats({"N", "3", "H", "W"}), 11);
  REQUIRE(result.reason.empty());
  ir::Attributes sizes;
  sizes.set("sizes", std::vector<int64_t>{1, 3, 8, 8});
  CHECK(result.attrs == canonical_form(sizes, "linear", "align_corners", "round_prefer_floor"));

  ir::Attributes tf = with_sizes({1, 1, 3, 2}, "nearest", "tf_half_pixel_for_nn");
  tf.set("nearest_mode", std::string("round_prefer_ceil"));
  CHECK(canonical(tf, float_type({1, 1, 4, 4}), 11).attrs.get_string("nearest_mode", "") ==
        "round_prefer_ceil");
}

TEST_CASE("Resize canonicalize of the run-time form fills the attributes only", "[ops][resize]") {
  ir::Attributes attrs;
  attrs.set("mode", std::string("linear"));
  const std::vector<ir::TensorType> inputs = {floats({"N", "3", "H", "W"})};
  ops::ImportContext context{attrs, inputs, 1, 13, true};
  REQUIRE(ops::resize_op().canonicalize(context).empty());
  CHECK(attrs == canonical_form({}, "linear", "half_pixel", "round_prefer_floor"));
}

TEST_CASE("Resize stays opaque for what it does not model", "[ops][resize]") {
  CHECK_FALSE(reason(with_scales({1, 1, 2, 2}, "cubic")).empty());
  CHECK_FALSE(reason(with_scales({1, 1, 2, 2}, "area")).empty());
  CHECK_FALSE(reason(with_scales({1, 1, 2, 2}, "linear", "tf_crop_and_resize")).empty());
  CHECK_FALSE(reason(with_scales({1, 1, 2, 2}, "nearest", "tf_half_pixel_for_nn")).empty());
  CHECK(reason(with_scales({1, 1, 2, 2}, "nearest", "tf_half_pixel_for_nn"), float_type({1, 1, 4, 4}), 12)
            .empty());
  CHECK_FALSE(reason(with_scales({1, 1, 2, 2}, "nearest", "half_pixel_symmetric")).empty());
  ir::Attributes rounding = with_scales({1, 1, 2, 2});
  rounding.set("nearest_mode", std::string("round_half_even"));
  CHECK_FALSE(reason(rounding).empty());
  ir::Attributes exclude = with_scales({1, 1, 2, 2}, "linear");
  exclude.set("exclude_outside", int64_t{1});
  CHECK_FALSE(reason(exclude).empty());
  ir::Attributes antialias = with_scales({1, 1, 2, 2}, "linear");
  antialias.set("antialias", int64_t{1});
  CHECK_FALSE(reason(antialias).empty());
  ir::Attributes policy = with_sizes({1, 1, 8, 8});
  policy.set("keep_aspect_ratio_policy", std::string("not_larger"));
  CHECK_FALSE(reason(policy).empty());

  ir::Attributes both = with_scales({1, 1, 2, 2});
  both.set("sizes", std::vector<int64_t>{1, 1, 8, 8});
  CHECK_FALSE(reason(both).empty());
  CHECK_FALSE(reason(with_scales({})).empty());
  CHECK_FALSE(reason(with_scales({1, 2, 2})).empty());
  CHECK_FALSE(reason(with_scales({1, 1, 0, 2})).empty());
  CHECK_FALSE(reason(with_sizes({1, 1, -1, 2})).empty());
  CHECK_FALSE(
      reason(with_scales({1, 1, 2, 2}, "linear"), testing::typed(DataType::kInt32, {1, 1, 4, 4})).empty());
  CHECK_FALSE(reason(with_scales({2}), testing::typed(DataType::kString, {2})).empty());
  CHECK(reason(with_scales({1, 2}), testing::typed(DataType::kInt64, {1, 4})).empty());
  CHECK_FALSE(
      testing::canonicalize_def(ops::resize_op(), with_scales({2}), {float_type({2})}, 2).reason.empty());

  SECTION("align_corners and pytorch_half_pixel need a whole resized length from a scale") {
    // 4 * 0.6 = 2.4: ONNX's reference divides by 2.4 - 1, onnxruntime by 2 - 1.
    CHECK_FALSE(reason(with_scales({1, 1, 0.6f, 0.6f}, "linear", "align_corners")).empty());
    CHECK_FALSE(reason(with_scales({1, 1, 0.6f, 0.6f}, "nearest", "pytorch_half_pixel")).empty());
    CHECK(reason(with_scales({1, 1, 0.5f, 0.5f}, "linear", "align_corners")).empty());
    CHECK(reason(with_scales({1, 1, 0.6f, 0.6f}, "linear", "half_pixel")).empty());
    CHECK(reason(with_sizes({1, 1, 3, 3}, "linear", "align_corners")).empty());
    CHECK(reason(with_scales({1, 1, 2, 2}, "linear", "align_corners"), floats({"N", "C", "H", "W"})).empty());
    CHECK_FALSE(
        reason(with_scales({1, 1, 0.5f, 0.5f}, "linear", "align_corners"), floats({"N", "C", "H", "W"}))
            .empty());
  }
}

TEST_CASE("Resize infers output sizes from scales or sizes, keeping symbols", "[ops][resize]") {
  CHECK(infer(with_scales({1, 1, 2, 2}), floats({"N", "3", "4", "5"})) == "float32[N,3,8,10]");
  CHECK(infer(with_scales({1, 1, 2, 2}), floats({"N", "3", "H", "W"})) == "float32[N,3,?,?]");
  CHECK(infer(with_scales({1, 1, 0.6f, 0.6f}, "linear"), float_type({1, 1, 2, 4})) == "float32[1,1,1,2]");
  CHECK(infer(with_sizes({1, 3, 7, 8}), floats({"N", "3", "H", "W"})) == "float32[1,3,7,8]");
  CHECK(infer(with_sizes({2, 9}), testing::kUnknownRank) == "float32[2,9]");
  CHECK(infer(with_sizes({2, 3}), testing::typed(DataType::kInt64, {2, 6})) == "int64[2,3]");
  ir::Attributes bound = with_sizes({2, 9});
  bound.set("roi", std::vector<float>{});
  bound.set("scales", std::vector<float>{});
  CHECK(infer(bound, float_type({1, 3})) == "float32[2,9]");

  CHECK(infer(with_scales({1, 2}), floats({"N", "3", "H"})).rfind("error", 0) == 0);
  CHECK(infer(with_scales({2, 2}, "linear"), testing::typed(DataType::kInt32, {2, 2})).rfind("error", 0) ==
        0);
  CHECK(infer(with_sizes({3}), float_type({0})).rfind("error", 0) == 0);
  CHECK(infer(with_scales({2, 2}, "cubic"), float_type({2, 2})).rfind("error", 0) == 0);
  CHECK(testing::infer_text(ops::resize_op(), with_scales({2}), {float_type({2}), float_type({1})})
            .rfind("error", 0) == 0);
}

TEST_CASE("Resize infers the run-time form: the input's rank, sizes unknown", "[ops][resize]") {
  const ops::OpDef def = ops::resize_op();
  const ir::Attributes attrs = canonical_form({}, "nearest", "asymmetric", "floor");
  const ir::TensorType omitted{};
  auto infer_runtime = [&](const std::vector<ir::TensorType>& inputs) {
    const ops::InferResult result = def.infer_runtime(testing::node_of(def, attrs), inputs);
    return result.ok() ? ir::to_string(result.outputs[0]) : "error: " + result.error;
  };
  CHECK(infer_runtime({floats({"N", "3", "H", "W"}), omitted, float_type({4})}) == "float32[?,?,?,?]");
  CHECK(infer_runtime({floats({"N", "3", "H", "W"}), float_type({0}), float_type({0}),
                       testing::int64s({"4"})}) == "float32[?,?,?,?]");
  CHECK(infer_runtime({testing::kUnknownRank, omitted, omitted, testing::int64s({"4"})}) == "float32[*]");
  CHECK(infer_runtime({float_type({1, 3}), omitted, omitted, testing::typed(DataType::kInt32, {2})})
            .rfind("error", 0) == 0);
  CHECK(infer_runtime({float_type({1, 3})}).rfind("error", 0) == 0);
}

TEST_CASE("Resize nearest by hand: ONNX's examples and every rounding", "[ops][resize]") {
  const ir::Tensor image = ir::Tensor::from_floats({1, 1, 2, 2}, {1, 2, 3, 4});
  CHECK(run(with_scales({1, 1, 2, 3}), image) ==
        std::vector<double>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  const ir::Tensor wide = ir::Tensor::from_floats({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(run(with_scales({1, 1, 0.6f, 0.6f}), wide) == std::vector<double>{1, 3});
  CHECK(run(with_sizes({1, 1, 1, 3}), wide) == std::vector<double>{1, 2, 4});

  // Asymmetric x / 2 reads 0, 0.5, 1, 1.5, ...: the roundings differ on the halves; 4 clamps to 3.
  CHECK(nearest_1d("round_prefer_floor", "asymmetric") == std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(nearest_1d("round_prefer_ceil", "asymmetric") == std::vector<double>{0, 1, 1, 2, 2, 3, 3, 3});
  CHECK(nearest_1d("floor", "asymmetric") == std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(nearest_1d("ceil", "asymmetric") == std::vector<double>{0, 1, 1, 2, 2, 3, 3, 3});
  // half_pixel: (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, ...
  CHECK(nearest_1d("round_prefer_floor", "half_pixel") == std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(nearest_1d("ceil", "half_pixel") == std::vector<double>{0, 1, 1, 2, 2, 3, 3, 3});
  // align_corners: x * 3 / 7.
  CHECK(nearest_1d("floor", "align_corners") == std::vector<double>{0, 0, 0, 1, 1, 2, 2, 3});
  // tf_half_pixel_for_nn: (x + 0.5) / 2.
  CHECK(nearest_1d("floor", "tf_half_pixel_for_nn") == std::vector<double>{0, 0, 1, 1, 2, 2, 3, 3});

  const ir::Tensor ints = ir::Tensor::from_int64s({2, 2}, {10, 20, 30, 40});
  const ir::Tensor out =
      testing::run_def(ops::resize_op(), with_sizes({1, 4}, "nearest", "asymmetric"), {&ints})[0];
  CHECK(out.dtype() == DataType::kInt64);
  CHECK(out.to_int64s() == std::vector<int64_t>{10, 10, 20, 20});
}

TEST_CASE("Resize linear by hand: ONNX's examples", "[ops][resize]") {
  const ir::Tensor image = ir::Tensor::from_floats({1, 1, 2, 2}, {1, 2, 3, 4});
  CHECK_THAT(run(with_scales({1, 1, 2, 2}, "linear"), image),
             Catch::Matchers::Approx(std::vector<double>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75,
                                                         3.25, 3.5, 3, 3.25, 3.75, 4}));
  CHECK_THAT(
      run(with_scales({1, 1, 2, 2}, "linear", "align_corners"), image),
      Catch::Matchers::Approx(std::vector<double>{1, 4 / 3.0, 5 / 3.0, 2, 5 / 3.0, 2, 7 / 3.0, 8 / 3.0,
                                                  7 / 3.0, 8 / 3.0, 3, 10 / 3.0, 3, 10 / 3.0, 11 / 3.0, 4})
          .epsilon(1e-6));
  const ir::Tensor wide = ir::Tensor::from_floats({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK_THAT(run(with_scales({1, 1, 0.6f, 0.6f}, "linear"), wide),
             Catch::Matchers::Approx(std::vector<double>{2.6666665, 4.3333331}).epsilon(1e-6));

  const ir::Tensor doubles = testing::tensor_of<double>(DataType::kDouble, {2}, {1, 3});
  const ir::Tensor out =
      testing::run_def(ops::resize_op(), with_sizes({3}, "linear", "align_corners"), {&doubles})[0];
  CHECK(out.dtype() == DataType::kDouble);
  CHECK(testing::elements(out) == std::vector<double>{1, 2, 3});
}

TEST_CASE("Resize bilinear matches the direct formula on NCHW", "[ops][resize]") {
  const ir::Tensor x = testing::random_tensor({2, 3, 5, 7}, 17);
  for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{{2, 3, 9, 4}, {2, 3, 1, 13}}) {
    const ir::Tensor y =
        testing::run_def(ops::resize_op(), with_sizes(sizes, "linear", "pytorch_half_pixel"), {&x})[0];
    REQUIRE(y.dims() == sizes);
    const int64_t out_h = sizes[2], out_w = sizes[3];
    for (int64_t plane = 0; plane < 6; ++plane) {
      for (int64_t i = 0; i < out_h; ++i) {
        for (int64_t j = 0; j < out_w; ++j) {
          const double expected = bilinear(x.data<float>() + plane * 35, 5, 7, out_h, out_w, i, j);
          CHECK(y.data<float>()[(plane * out_h + i) * out_w + j] ==
                Approx(expected).epsilon(1e-6).margin(1e-7));
        }
      }
    }
  }
}

TEST_CASE("Resize kernel refuses a fractional resized length that ONNX leaves ambiguous", "[ops][resize]") {
  const ir::Tensor x = ir::Tensor::from_floats({4}, {1, 2, 3, 4});
  CHECK_THROWS_AS(run(with_scales({0.6f}, "linear", "align_corners"), x), Error);
  CHECK(run(with_scales({0.6f}, "linear", "asymmetric"), x).size() == 2);
}

TEST_CASE("Resize features: nearest moves, linear multiply-adds 2^k neighbours", "[ops][resize]") {
  const ops::OpDef def = ops::resize_op();
  const std::vector<ir::TensorType> inputs = {float_type({1, 3, 4, 4})};
  const std::vector<ir::TensorType> outputs = {float_type({1, 3, 8, 8})};
  const ops::CostFeatures nearest =
      def.features(testing::node_of(def, with_scales({1, 1, 2, 2})), inputs, outputs);
  CHECK(nearest.flops == 0);
  CHECK(nearest.bytes_read == 4 * 48);
  CHECK(nearest.bytes_written == 4 * 192);
  const ir::Attributes linear =
      canonical_form(with_scales({1, 1, 2, 2}), "linear", "half_pixel", "round_prefer_floor");
  CHECK(def.features(testing::node_of(def, linear), inputs, outputs).flops == 2 * 4 * 192);
  const ir::Attributes sized =
      canonical_form(with_sizes({1, 3, 4, 8}), "linear", "half_pixel", "round_prefer_floor");
  CHECK(def.features(testing::node_of(def, sized), inputs, {float_type({1, 3, 4, 8})}).flops == 2 * 2 * 96);
}

TEST_CASE("Resize reads opset 18's attributes at their defaults as opset 13's Resize", "[ops][resize]") {
  ir::Attributes defaults = with_scales({1, 1, 2, 2}, "linear");
  defaults.set("antialias", int64_t{0});
  defaults.set("keep_aspect_ratio_policy", std::string("stretch"));
  defaults.set("axes", std::vector<int64_t>{0, 1, -2, -1});
  const testing::Canonicalized read = canonical(defaults, float_type({1, 1, 4, 4}), 19);
  REQUIRE(read.reason.empty());
  CHECK(read.attrs == canonical(with_scales({1, 1, 2, 2}, "linear"), float_type({1, 1, 4, 4}), 19).attrs);

  ir::Attributes partial = with_scales({2, 2}, "linear");
  partial.set("axes", std::vector<int64_t>{2, 3});
  CHECK_FALSE(reason(partial, float_type({1, 1, 4, 4}), 18).empty());
}

