// Unit tests of Split: explicit sizes from equal parts, axis normalization, shape inference with
// symbols, the kernel on float and int64 tensors against an index formula, and cost features.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::random_int64s;

namespace {

ir::Attributes split_attrs(int64_t axis, const std::vector<int64_t>& sizes) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  attrs.set("split", sizes);
  return attrs;
}

/// Canonicalizes a Split of `input` into `outputs` parts; returns the reason (empty if modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input, int outputs,
                         int64_t opset = 13) {
  return testing::canonicalize_in_place(ops::split_op(), attrs, {input}, outputs, opset);
}

/// The inferred output types as text, separated by spaces, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::split_op(), attrs, {input});
}

/// Runs the kernel on outputs allocated from the op's own shape inference.
std::vector<ir::Tensor> run(const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(ops::split_op(), attrs, {&input});
}

/// Checks outputs[k][a, j, b] == in[a, offset_k + j, b] for a split of a rank-3 tensor on axis 1.
template <class T>
void check_split(const ir::Tensor& in, const std::vector<ir::Tensor>& outputs) {
  const int64_t rows = in.dims()[0], width = in.dims()[1], depth = in.dims()[2];
  int64_t offset = 0;
  for (const ir::Tensor& out : outputs) {
    const int64_t span = out.dims()[1];
    for (int64_t a = 0; a < rows; ++a) {
      for (int64_t j = 0; j < span; ++j) {
        for (int64_t b = 0; b < depth; ++b) {
          const T want = in.data<T>()[(a * width + offset + j) * depth + b];
          REQUIRE(out.data<T>()[(a * span + j) * depth + b] == want);
        }
      }
    }
    offset += span;
  }
  CHECK(offset == width);
}

}  // namespace

TEST_CASE("split canonicalize stores the axis and explicit sizes", "[ops][split]") {
  ir::Attributes equal;
  CHECK(canonicalize(equal, floats({"6", "N"}), 3).empty());
  CHECK(equal == split_attrs(0, {2, 2, 2}));

  ir::Attributes negative_axis;
  negative_axis.set("axis", int64_t{-1});
  CHECK(canonicalize(negative_axis, floats({"N", "8"}), 2).empty());
  CHECK(negative_axis == split_attrs(1, {4, 4}));

  ir::Attributes given = split_attrs(1, {1, 5});
  CHECK(canonicalize(given, floats({"N", "?"}), 2).empty());
  CHECK(given == split_attrs(1, {1, 5}));

  ir::Attributes legacy = split_attrs(0, {2, 4});
  CHECK(canonicalize(legacy, floats({"6"}), 2, 2).empty());

  ir::Attributes symbolic_axis;
  CHECK_FALSE(canonicalize(symbolic_axis, floats({"N", "3"}), 2).empty());
  ir::Attributes uneven;
  CHECK_FALSE(canonicalize(uneven, floats({"7"}), 2).empty());
  ir::Attributes too_few = split_attrs(0, {3, 3});
  CHECK_FALSE(canonicalize(too_few, floats({"6"}), 3).empty());
  ir::Attributes negative_size = split_attrs(0, {-1, 7});
  CHECK_FALSE(canonicalize(negative_size, floats({"6"}), 2).empty());
  ir::Attributes negative_before_11 = split_attrs(-1, {3, 3});
  CHECK_FALSE(canonicalize(negative_before_11, floats({"6"}), 2, 10).empty());
  ir::Attributes unknown_rank = split_attrs(-1, {3, 3});
  CHECK_FALSE(canonicalize(unknown_rank, {ir::DataType::kFloat, ir::Shape::unknown()}, 2).empty());
}

TEST_CASE("split infers one part per size and keeps the other dims", "[ops][split]") {
  CHECK(infer(split_attrs(1, {2, 4}), floats({"2", "6"})) == "float32[2,2] float32[2,4]");
  CHECK(infer(split_attrs(1, {2, 4}), floats({"N", "6"})) == "float32[N,2] float32[N,4]");
  CHECK(infer(split_attrs(0, {1, 2}), floats({"N", "6"})) == "float32[1,6] float32[2,6]");
  CHECK(infer(split_attrs(0, {0, 0, 0}), floats({"0"})) == "float32[0] float32[0] float32[0]");
  CHECK(infer(split_attrs(0, {1, 2}), {ir::DataType::kFloat, ir::Shape::unknown()}) ==
        "float32[*] float32[*]");

  CHECK(infer(split_attrs(1, {2, 3}), floats({"2", "6"})).rfind("error", 0) == 0);
  CHECK(infer(split_attrs(2, {2, 4}), floats({"2", "6"})).rfind("error", 0) == 0);
  CHECK(infer(split_attrs(0, {}), floats({"2", "6"})).rfind("error", 0) == 0);
}

TEST_CASE("split kernel copies consecutive blocks into each part", "[ops][split]") {
  const ir::Tensor floats_in = testing::random_tensor({3, 7, 2}, 11);
  std::vector<ir::Tensor> parts = run(split_attrs(1, {2, 0, 5}), floats_in);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].dims() == std::vector<int64_t>{3, 5, 2});
  check_split<float>(floats_in, parts);

  const ir::Tensor ints_in = random_int64s({4, 6, 3}, 12);
  check_split<int64_t>(ints_in, run(split_attrs(1, {1, 2, 3}), ints_in));

  const ir::Tensor rows = ir::Tensor::from_int64s({3, 2}, {1, 2, 3, 4, 5, 6});
  std::vector<ir::Tensor> halves = run(split_attrs(0, {1, 2}), rows);
  CHECK(halves[0].to_int64s() == std::vector<int64_t>{1, 2});
  CHECK(halves[1].to_int64s() == std::vector<int64_t>{3, 4, 5, 6});
}

TEST_CASE("a strided split reads and writes every byte once", "[ops][split]") {
  ir::Node node;
  node.attrs.set("axis", int64_t{1});
  ops::CostFeatures features = ops::split_op().features(node, {floats({"2", "6"})},
                                                        {floats({"2", "2"}), floats({"2", "4"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 48);
  CHECK(features.bytes_written == 48);
}

TEST_CASE("a split into contiguous blocks is a view and costs nothing", "[ops][split]") {
  ir::Node node;
  node.attrs.set("axis", int64_t{1});
  for (const char* batch : {"1", "N"}) {
    ops::CostFeatures features = ops::split_op().features(node, {floats({batch, "6"})},
                                                          {floats({batch, "2"}), floats({batch, "4"})});
    CHECK(features.bytes_read == 0);
    CHECK(features.bytes_written == 0);
  }
  node.attrs.set("axis", int64_t{0});
  CHECK(ops::split_op().features(node, {floats({"6", "2"})}, {floats({"2", "2"}), floats({"4", "2"})}).bytes_read == 0);
}

TEST_CASE("split reads opset 18's num_outputs as the sizes it implies", "[ops][split]") {
  auto with_parts = [](int64_t parts) {
    ir::Attributes attrs;
    attrs.set("num_outputs", parts);
    return attrs;
  };
  ir::Attributes even = with_parts(3);
  CHECK(canonicalize(even, floats({"6"}), 3, 18).empty());
  CHECK(even == split_attrs(0, {2, 2, 2}));
  // ceil(7 / 4) = 2 per part, the last one smaller: ONNX's test_split_1d_uneven_split_opset18.
  ir::Attributes uneven = with_parts(4);
  CHECK(canonicalize(uneven, floats({"7"}), 4, 18).empty());
  CHECK(uneven == split_attrs(0, {2, 2, 2, 1}));
  const std::vector<ir::Tensor> parts = run(uneven, testing::tensor_of<float>(ir::DataType::kFloat, {7}, {1, 2, 3, 4, 5, 6, 7}));
  REQUIRE(parts.size() == 4);
  CHECK(testing::values_of<float>(parts[3]) == std::vector<float>{7});

  ir::Attributes symbolic = with_parts(2);
  CHECK_FALSE(canonicalize(symbolic, floats({"N"}), 2, 18).empty());
  ir::Attributes wrong_count = with_parts(3);
  CHECK_FALSE(canonicalize(wrong_count, floats({"6"}), 2, 18).empty());
  ir::Attributes both = split_attrs(0, {3, 3});
  both.set("num_outputs", int64_t{2});
  CHECK_FALSE(canonicalize(both, floats({"6"}), 2, 18).empty());
  ir::Attributes too_many = with_parts(4);
  CHECK_FALSE(canonicalize(too_many, floats({"5"}), 4, 18).empty());  // 2, 2, 2, -1
}
