// Unit tests of Slice: defaults and axis normalization in both opset forms, ONNX's clamping
// (negative steps, out-of-range and INT64 bounds), symbolic dims, the kernel, and its cost.
#include <catch2/catch.hpp>
#include <limits>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

using Ints = std::vector<int64_t>;

ir::Attributes slices(const Ints& starts, const Ints& ends, const Ints& axes, const Ints& steps) {
  ir::Attributes attrs;
  attrs.set("starts", starts);
  attrs.set("ends", ends);
  attrs.set("axes", axes);
  attrs.set("steps", steps);
  return attrs;
}

ir::Attributes bounds(const Ints& starts, const Ints& ends) {
  ir::Attributes attrs;
  attrs.set("starts", starts);
  attrs.set("ends", ends);
  return attrs;
}

/// The canonical attributes of a Slice of `input`, or the reason it stays opaque.
testing::Canonicalized canonical(ir::Attributes attrs, const ir::TensorType& input,
                                 int64_t opset = 13) {
  return testing::canonicalize_def(ops::slice_op(), std::move(attrs), {input}, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::slice_op(), attrs, {input});
}

/// Slices the vector 0, 1, ..., 9 along its one axis.
Ints slice_digits(int64_t start, int64_t end, int64_t step) {
  Ints digits(10);
  for (int64_t i = 0; i < 10; ++i) digits[i] = i;
  const ir::Tensor input = ir::Tensor::from_int64s({10}, digits);
  return testing::run_def(ops::slice_op(), slices({start}, {end}, {0}, {step}), {&input})[0]
      .to_int64s();
}

}  // namespace

TEST_CASE("slice canonicalize fills axes and steps and sorts by axis", "[ops][slice]") {
  CHECK(canonical(bounds({1, 2}, {3, 4}), floats({"N", "5"})).attrs ==
        slices({1, 2}, {3, 4}, {0, 1}, {1, 1}));
  CHECK(canonical(slices({1, 2}, {3, 4}, {-1, 0}, {2, -1}), floats({"6", "5"})).attrs ==
        slices({2, 1}, {4, 3}, {0, 1}, {-1, 2}));
  CHECK(canonical(bounds({1}, {3}), {ir::DataType::kFloat, ir::Shape::unknown()}).reason.empty());
  ir::Attributes legacy = bounds({0, 1}, {2, 3});
  legacy.set("axes", Ints{2, 0});
  CHECK(canonical(legacy, floats({"4", "4", "4"}), 1).attrs ==
        slices({1, 0}, {3, 2}, {0, 2}, {1, 1}));

  CHECK_FALSE(
      canonical(slices({0, 0}, {1, 1}, {1, -1}, {1, 1}), floats({"2", "3"})).reason.empty());
  CHECK_FALSE(canonical(slices({0}, {1}, {0}, {0}), floats({"2"})).reason.empty());
  CHECK_FALSE(canonical(slices({0}, {1, 2}, {0}, {1}), floats({"2"})).reason.empty());
  CHECK_FALSE(canonical(slices({0}, {1}, {2}, {1}), floats({"2"})).reason.empty());
  CHECK_FALSE(canonical(slices({0}, {1}, {-1}, {1}), floats({"2"}), 10).reason.empty());
  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  CHECK_FALSE(canonical(slices({0}, {1}, {-1}, {1}), unknown_rank).reason.empty());
  ir::Attributes no_ends;
  no_ends.set("starts", Ints{0});
  CHECK_FALSE(canonical(no_ends, floats({"2"})).reason.empty());
  CHECK_FALSE(
      canonical(bounds({0}, {1}), {ir::DataType::kString, ir::Shape::of({2})}).reason.empty());
}

TEST_CASE("slice infers clamped sizes and keeps symbols over whole axes", "[ops][slice]") {
  CHECK(infer(slices({0, 1}, {3, 10}, {0, 1}, {1, 1}), floats({"20", "10", "5"})) ==
        "float32[3,9,5]");
  CHECK(infer(slices({1}, {1000}, {1}, {1}), floats({"20", "10", "5"})) == "float32[20,9,5]");
  CHECK(infer(slices({1000}, {1000}, {1}, {1}), floats({"20", "10", "5"})) == "float32[20,0,5]");
  CHECK(infer(slices({20, 10, 4}, {0, 0, 1}, {0, 1, 2}, {-1, -3, -2}), floats({"20", "10", "5"})) ==
        "float32[19,3,2]");
  CHECK(infer(slices({-1}, {kMin}, {0}, {kMin}), floats({"10"})) == "float32[1]");
  CHECK(infer(slices({0}, {kMax}, {0}, {kMax}), floats({"10"})) == "float32[1]");
  CHECK(infer(slices({-1}, {kMin}, {0}, {-1}), floats({"0"})) == "float32[0]");

  CHECK(infer(slices({0}, {kMax}, {0}, {1}), floats({"N", "3"})) == "float32[N,3]");
  CHECK(infer(slices({kMin}, {kMax}, {0}, {1}), floats({"N", "3"})) == "float32[N,3]");
  CHECK(infer(slices({-1}, {kMin}, {0}, {-1}), floats({"N", "3"})) == "float32[N,3]");
  CHECK(infer(slices({1}, {kMax}, {0}, {1}), floats({"N", "3"})) == "float32[?,3]");
  CHECK(infer(slices({0}, {kMax}, {0}, {2}), floats({"N", "3"})) == "float32[?,3]");
  CHECK(infer(slices({0}, {2}, {1}, {1}), floats({"N", "3"})) == "float32[N,2]");
  CHECK(infer(slices({0}, {2}, {1}, {1}), {ir::DataType::kFloat, ir::Shape::unknown()}) ==
        "float32[*]");
  CHECK(infer(slices({0}, {2}, {2}, {1}), floats({"N", "3"})).rfind("error", 0) == 0);
  CHECK(infer(slices({0}, {2}, {0}, {0}), floats({"N", "3"})).rfind("error", 0) == 0);
}

TEST_CASE("slice kernel takes start, start + step, ... like Python", "[ops][slice]") {
  CHECK(slice_digits(2, 8, 3) == Ints{2, 5});
  CHECK(slice_digits(-3, kMax, 1) == Ints{7, 8, 9});
  CHECK(slice_digits(8, 1, -3) == Ints{8, 5, 2});
  CHECK(slice_digits(kMax, kMin, -1) == Ints{9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(slice_digits(-1, -11, -4) == Ints{9, 5, 1});
  CHECK(slice_digits(100, kMax, 1).empty());
  CHECK(slice_digits(3, 3, 1).empty());
  CHECK(slice_digits(-100, 2, 1) == Ints{0, 1});

  const ir::Tensor grid = testing::random_tensor({4, 5, 6}, 9);
  const ir::Tensor out =
      testing::run_def(ops::slice_op(), slices({-1, 1}, {0, 6}, {0, 2}, {-2, 2}), {&grid})[0];
  REQUIRE(out.dims() == Ints{2, 5, 3});
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      for (int64_t k = 0; k < 3; ++k) {
        CHECK(out.data<float>()[(i * 5 + j) * 3 + k] ==
              grid.data<float>()[((3 - 2 * i) * 5 + j) * 6 + 1 + 2 * k]);
      }
    }
  }

  ir::Tensor bytes(ir::DataType::kUint8, {2, 3});
  for (int64_t i = 0; i < 6; ++i) bytes.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i + 1);
  const ir::Tensor column =
      testing::run_def(ops::slice_op(), slices({-1}, {kMax}, {1}, {1}), {&bytes})[0];
  CHECK(column.dims() == Ints{2, 1});
  CHECK(column.to_int64s() == Ints{3, 6});
}

TEST_CASE("slice reads and writes the elements it takes", "[ops][slice]") {
  ir::Node node;
  ops::CostFeatures features =
      ops::slice_op().features(node, {floats({"20", "10"})}, {floats({"5", "10"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 200);
  CHECK(features.bytes_written == 200);
}
