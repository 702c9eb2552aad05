// Pooling: canonical attributes, shape inference (ceil_mode included), kernels by hand and by a
// direct loop, and the global pools.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <limits>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::float_type;

namespace {

ir::TensorType symbolic_type(std::vector<ir::Dim> dims) {
  return ir::TensorType{ir::DataType::kFloat, ir::Shape{true, std::move(dims)}};
}

/// Canonical AveragePool (include_pad set) or MaxPool attributes.
ir::Attributes pool_attrs(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& pads, int64_t ceil_mode) {
  ir::Attributes attrs;
  attrs.set("kernel_shape", kernel);
  attrs.set("strides", strides);
  attrs.set("pads", pads);
  attrs.set("ceil_mode", ceil_mode);
  return attrs;
}

ir::Attributes average_attrs(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                             const std::vector<int64_t>& pads, int64_t ceil_mode, int64_t include_pad) {
  ir::Attributes attrs = pool_attrs(kernel, strides, pads, ceil_mode);
  attrs.set("count_include_pad", include_pad);
  return attrs;
}

ir::Attributes max_attrs(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                         const std::vector<int64_t>& pads, int64_t ceil_mode,
                         const std::vector<int64_t>& dilations) {
  ir::Attributes attrs = pool_attrs(kernel, strides, pads, ceil_mode);
  attrs.set("dilations", dilations);
  return attrs;
}

ir::Tensor iota_tensor(const std::vector<int64_t>& dims) {
  std::vector<float> values(static_cast<std::size_t>(ir::num_elements(dims)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i + 1);
  return ir::Tensor::from_floats(dims, values);
}

std::vector<float> values_of(const ir::Tensor& tensor) {
  return {tensor.data<float>(), tensor.data<float>() + tensor.num_elements()};
}

std::vector<float> run(const ops::OpDef& def, const ir::Attributes& attrs, const ir::Tensor& x) {
  return values_of(testing::run_def(def, attrs, {&x})[0]);
}

/// A 2-d pooling written out directly: window [o*s - pad_begin, + k) per axis; the average divides
/// by the in-bounds elements or, with include_pad, by the elements before the end of the padding.
struct DirectPool {
  std::array<int64_t, 2> kernel;
  std::array<int64_t, 2> strides;
  std::array<int64_t, 4> pads;
  bool max;
  bool include_pad;

  std::vector<float> operator()(const ir::Tensor& x, const std::vector<int64_t>& y_dims) const {
    const int64_t height = x.dims()[2], width = x.dims()[3];
    std::vector<float> y;
    for (int64_t plane = 0; plane < x.dims()[0] * x.dims()[1]; ++plane) {
      const float* image = x.data<float>() + plane * height * width;
      for (int64_t oh = 0; oh < y_dims[2]; ++oh) {
        for (int64_t ow = 0; ow < y_dims[3]; ++ow) {
          const int64_t h0 = oh * strides[0] - pads[0], w0 = ow * strides[1] - pads[1];
          double sum = 0;
          float best = std::numeric_limits<float>::lowest();
          int64_t inside = 0;
          for (int64_t h = h0; h < h0 + kernel[0]; ++h) {
            for (int64_t w = w0; w < w0 + kernel[1]; ++w) {
              if (h < 0 || h >= height || w < 0 || w >= width) continue;
              sum += image[h * width + w];
              best = std::max(best, image[h * width + w]);
              ++inside;
            }
          }
          const int64_t padded = (std::min(h0 + kernel[0], height + pads[2]) - h0) *
                                 (std::min(w0 + kernel[1], width + pads[3]) - w0);
          y.push_back(max ? best
                          : static_cast<float>(sum / static_cast<double>(include_pad ? padded : inside)));
        }
      }
    }
    return y;
  }
};

}  // namespace

TEST_CASE("Pool canonicalize fills every default", "[pooling]") {
  ir::Attributes onnx;
  onnx.set("kernel_shape", std::vector<int64_t>{3, 3});
  auto average = testing::canonicalize_def(ops::average_pool_op(), onnx, {float_type({1, 3, 8, 8})});
  REQUIRE(average.reason.empty());
  CHECK(average.attrs == average_attrs({3, 3}, {1, 1}, {0, 0, 0, 0}, 0, 0));

  ir::Attributes with_order = onnx;
  with_order.set("storage_order", int64_t{1});
  auto max = testing::canonicalize_def(ops::max_pool_op(), with_order, {float_type({1, 3, 8, 8})});
  REQUIRE(max.reason.empty());
  CHECK(max.attrs == max_attrs({3, 3}, {1, 1}, {0, 0, 0, 0}, 0, {1, 1}));
}

TEST_CASE("Pool canonicalize resolves auto_pad", "[pooling]") {
  ir::Attributes onnx;
  onnx.set("kernel_shape", std::vector<int64_t>{2, 2});
  onnx.set("auto_pad", std::string("SAME_LOWER"));
  auto lower = testing::canonicalize_def(ops::max_pool_op(), onnx, {float_type({1, 3, 32, 32})});
  REQUIRE(lower.reason.empty());
  CHECK(lower.attrs.get_ints("pads", {}) == std::vector<int64_t>{1, 1, 0, 0});
  CHECK_FALSE(lower.attrs.has("auto_pad"));

  onnx.set("auto_pad", std::string("SAME_UPPER"));
  onnx.set("strides", std::vector<int64_t>{2, 2});
  onnx.set("kernel_shape", std::vector<int64_t>{3, 3});
  auto upper = testing::canonicalize_def(ops::average_pool_op(), onnx, {float_type({1, 1, 5, 5})});
  REQUIRE(upper.reason.empty());
  CHECK(upper.attrs.get_ints("pads", {}) == std::vector<int64_t>{1, 1, 1, 1});
}

TEST_CASE("Pool canonicalize rejects what it does not model", "[pooling]") {
  const ir::TensorType x = float_type({1, 3, 8, 8});
  ir::Attributes onnx;
  onnx.set("kernel_shape", std::vector<int64_t>{2, 2});
  ir::Attributes dilated = onnx;
  dilated.set("dilations", std::vector<int64_t>{2, 2});
  ir::Attributes valid_ceil = onnx;
  valid_ceil.set("auto_pad", std::string("VALID"));
  valid_ceil.set("ceil_mode", int64_t{1});
  const ir::TensorType bytes{ir::DataType::kUint8, ir::Shape::of({1, 3, 8, 8})};

  CHECK_FALSE(testing::canonicalize_def(ops::average_pool_op(), {}, {x}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::average_pool_op(), dilated, {x}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::max_pool_op(), onnx, {x}, 2).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::max_pool_op(), onnx, {bytes}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::max_pool_op(), valid_ceil, {x}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::max_pool_op(), onnx, {float_type({1, 3, 8})}).reason.empty());
  CHECK(testing::canonicalize_def(ops::max_pool_op(), dilated, {x}).reason.empty());
}

TEST_CASE("Pool infers output shapes", "[pooling]") {
  const ops::OpDef max = ops::max_pool_op();
  auto infer = [&](const ir::Attributes& attrs, const ir::TensorType& x) {
    return testing::infer_def(max, attrs, {x});
  };
  SECTION("floor and ceil") {
    CHECK(infer(max_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 0, {1, 1}), float_type({1, 1, 4, 4})).outputs[0] ==
          float_type({1, 1, 1, 1}));
    CHECK(infer(max_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 1, {1, 1}), float_type({1, 1, 4, 4})).outputs[0] ==
          float_type({1, 1, 2, 2}));
  }
  SECTION("with ceil_mode a window starting in the end padding is dropped") {
    // 5 + 2 pads, kernel 2, stride 2: ceil gives 4 windows, the last would start at 6 >= 5 + 1.
    CHECK(infer(max_attrs({2}, {2}, {1, 1}, 1, {1}), float_type({1, 1, 5})).outputs[0] ==
          float_type({1, 1, 3}));
  }
  SECTION("dilations widen the window") {
    CHECK(infer(max_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, 0, {2, 2}), float_type({1, 1, 4, 4})).outputs[0] ==
          float_type({1, 1, 2, 2}));
  }
  SECTION("symbolic dims") {
    const ir::TensorType x =
        symbolic_type({ir::Dim::named("N"), ir::Dim::named("C"), ir::Dim::named("H"), ir::Dim::known(8)});
    CHECK(infer(max_attrs({3, 3}, {1, 2}, {1, 1, 1, 1}, 0, {1, 1}), x).outputs[0] ==
          symbolic_type({ir::Dim::named("N"), ir::Dim::named("C"), ir::Dim::named("H"), ir::Dim::known(4)}));
    CHECK(infer(max_attrs({3, 3}, {2, 2}, {1, 1, 1, 1}, 0, {1, 1}), x).outputs[0] ==
          symbolic_type({ir::Dim::named("N"), ir::Dim::named("C"), ir::Dim{}, ir::Dim::known(4)}));
  }
  SECTION("invalid shapes fail") {
    CHECK_FALSE(infer(max_attrs({3, 3}, {1, 1}, {0, 0, 0, 0}, 0, {1, 1}), float_type({1, 1, 2, 8})).ok());
    CHECK_FALSE(infer(max_attrs({3, 3}, {1, 1}, {0, 0, 0, 0}, 0, {1, 1}), float_type({1, 8, 8})).ok());
  }
}

TEST_CASE("Pool kernels on hand-computed cases", "[pooling]") {
  const ir::Tensor square = iota_tensor({1, 1, 4, 4});
  CHECK(run(ops::max_pool_op(), max_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 1, {1, 1}), square) ==
        std::vector<float>{11, 12, 15, 16});
  CHECK(run(ops::average_pool_op(), average_attrs({3, 3}, {2, 2}, {0, 0, 0, 0}, 1, 0), square) ==
        std::vector<float>{6, 7.5, 12, 13.5});
  CHECK(run(ops::max_pool_op(), max_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, 0, {2, 2}), square) ==
        std::vector<float>{11, 12, 15, 16});
  CHECK(run(ops::average_pool_op(), average_attrs({2}, {1}, {0, 0}, 0, 0), iota_tensor({1, 1, 4})) ==
        std::vector<float>{1.5, 2.5, 3.5});
  CHECK(run(ops::max_pool_op(), max_attrs({2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, 0, {1, 1, 1}),
            iota_tensor({1, 1, 2, 2, 2})) == std::vector<float>{8});
  // count_include_pad counts the padding, but not a ceil_mode window's part beyond it: windows
  // {pad,1,2}, {2,3,4}, {4,pad} of [1,2,3,4] with one pad each side.
  CHECK(run(ops::average_pool_op(), average_attrs({3}, {2}, {1, 1}, 1, 1), iota_tensor({1, 1, 4})) ==
        std::vector<float>{1, 3, 2});
  CHECK(run(ops::average_pool_op(), average_attrs({3}, {2}, {1, 1}, 1, 0), iota_tensor({1, 1, 4})) ==
        std::vector<float>{1.5, 3, 4});
}

TEST_CASE("Pool kernels match a direct loop", "[pooling]") {
  const ir::Tensor x = testing::random_tensor({2, 3, 7, 6}, 5);
  const std::vector<int64_t> pads = {1, 0, 1, 1};
  for (int64_t ceil_mode : {0, 1}) {
    for (int64_t include_pad : {0, 1}) {
      const ir::Attributes attrs = average_attrs({3, 2}, {2, 2}, pads, ceil_mode, include_pad);
      const ir::Tensor y = testing::run_def(ops::average_pool_op(), attrs, {&x})[0];
      const DirectPool direct{{3, 2}, {2, 2}, {1, 0, 1, 1}, false, include_pad != 0};
      INFO("ceil_mode " << ceil_mode << ", count_include_pad " << include_pad);
      CHECK_THAT(values_of(y), Catch::Matchers::Approx(direct(x, y.dims())).margin(1e-6));
    }
    const ir::Tensor y =
        testing::run_def(ops::max_pool_op(), max_attrs({3, 2}, {2, 2}, pads, ceil_mode, {1, 1}), {&x})[0];
    CHECK(values_of(y) == DirectPool{{3, 2}, {2, 2}, {1, 0, 1, 1}, true, false}(x, y.dims()));
  }
}

TEST_CASE("Global pools reduce every spatial axis", "[pooling]") {
  const ir::Tensor x = iota_tensor({1, 2, 2, 2});
  CHECK(run(ops::global_average_pool_op(), {}, x) == std::vector<float>{2.5, 6.5});
  CHECK(run(ops::global_max_pool_op(), {}, x) == std::vector<float>{4, 8});
  CHECK(testing::run_def(ops::global_max_pool_op(), {}, {&x})[0].dims() == std::vector<int64_t>{1, 2, 1, 1});

  const ops::OpDef global = ops::global_average_pool_op();
  const ir::TensorType symbolic =
      symbolic_type({ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::named("H"), ir::Dim::named("W")});
  CHECK(testing::infer_def(global, {}, {symbolic}).outputs[0] ==
        symbolic_type({ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::known(1), ir::Dim::known(1)}));
  const ir::TensorType unknown{ir::DataType::kFloat, ir::Shape::unknown()};
  CHECK(testing::infer_def(global, {}, {unknown}).outputs[0] == unknown);
  CHECK_FALSE(testing::infer_def(global, {}, {float_type({4})}).ok());
  CHECK(testing::canonicalize_def(global, {}, {float_type({1, 3, 4, 4})}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(global, {}, {float_type({1, 3, 4, 4})}, 2).reason.empty());
}

TEST_CASE("Pool features count one operation per tap", "[pooling]") {
  const ops::OpDef max = ops::max_pool_op();
  const ir::Attributes attrs = max_attrs({3, 3}, {2, 2}, {1, 1, 1, 1}, 0, {1, 1});
  const std::vector<ir::TensorType> inputs = {float_type({1, 2, 8, 8})};
  const std::vector<ir::TensorType> outputs = testing::infer_def(max, attrs, inputs).outputs;
  const ops::CostFeatures cost = max.features(testing::node_of(max, attrs), inputs, outputs);
  CHECK(cost.flops == 9.0 * 2 * 4 * 4);
  CHECK(cost.bytes_read == 4.0 * 2 * 8 * 8);
  CHECK(cost.bytes_written == 4.0 * 2 * 4 * 4);
}
