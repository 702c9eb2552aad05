// Unit tests of Unsqueeze: axes normalized against the output rank and sorted, shape inference
// with symbols, invalid axes, the byte-copy kernel, and its zero cost.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::kUnknownRank;

namespace {

ir::Attributes axes(const std::vector<int64_t>& values) {
  ir::Attributes attrs;
  attrs.set("axes", values);
  return attrs;
}

/// Canonicalizes an Unsqueeze of `input` at `opset`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input, int64_t opset = 13) {
  return testing::canonicalize_in_place(ops::unsqueeze_op(), attrs, {input}, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::unsqueeze_op(), attrs, {input});
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(ops::unsqueeze_op(), attrs, {&input})[0];
}

}  // namespace

TEST_CASE("unsqueeze canonicalize normalizes axes against the output rank", "[ops][unsqueeze]") {
  ir::Attributes negative = axes({-1});
  CHECK(canonicalize(negative, floats({"N", "3", "4"})).empty());
  CHECK(negative == axes({3}));
  ir::Attributes unsorted = axes({5, 4, 2});
  CHECK(canonicalize(unsorted, floats({"3", "4", "5"})).empty());
  CHECK(unsorted == axes({2, 4, 5}));
  ir::Attributes legacy = axes({3});
  CHECK(canonicalize(legacy, floats({"3", "4", "5"}), 1).empty());
  ir::Attributes unknown_rank = axes({1, 0});
  CHECK(canonicalize(unknown_rank, kUnknownRank).empty());
  CHECK(unknown_rank == axes({0, 1}));

  ir::Attributes missing;
  CHECK_FALSE(canonicalize(missing, floats({"3"})).empty());
  ir::Attributes out_of_range = axes({3});
  CHECK_FALSE(canonicalize(out_of_range, floats({"3", "4"})).empty());
  ir::Attributes repeated = axes({0, -3});
  CHECK_FALSE(canonicalize(repeated, floats({"3"})).empty());
  ir::Attributes negative_unknown_rank = axes({-1});
  CHECK_FALSE(canonicalize(negative_unknown_rank, kUnknownRank).empty());
  ir::Attributes negative_before_11 = axes({-1});
  CHECK_FALSE(canonicalize(negative_before_11, floats({"3"}), 10).empty());
}

TEST_CASE("unsqueeze inserts unit dims at output positions", "[ops][unsqueeze]") {
  CHECK(infer(axes({2, 4, 5}), floats({"3", "4", "5"})) == "float32[3,4,1,5,1,1]");
  CHECK(infer(axes({0}), floats({"N", "4"})) == "float32[1,N,4]");
  CHECK(infer(axes({-1}), floats({"N", "?"})) == "float32[N,?,1]");
  CHECK(infer(axes({0}), floats({})) == "float32[1]");
  CHECK(infer(axes({0}), kUnknownRank) == "float32[*]");
  CHECK(infer(axes({3}), floats({"3", "4"})).rfind("error", 0) == 0);
  CHECK(infer(axes({1, 1}), floats({"3", "4"})).rfind("error", 0) == 0);
}

TEST_CASE("unsqueeze kernel keeps the elements in order", "[ops][unsqueeze]") {
  const ir::Tensor floats_in = testing::random_tensor({3, 4}, 51);
  ir::Tensor floats_out = run(axes({0, 2}), floats_in);
  CHECK(floats_out.dims() == std::vector<int64_t>{1, 3, 1, 4});
  CHECK(testing::max_abs_diff(floats_out, testing::random_tensor({1, 3, 1, 4}, 51)) == 0);

  const ir::Tensor ints_in = ir::Tensor::from_int64s({3}, {7, -8, 9});
  ir::Tensor ints_out = run(axes({1}), ints_in);
  CHECK(ints_out.dims() == std::vector<int64_t>{3, 1});
  CHECK(ints_out.to_int64s() == std::vector<int64_t>{7, -8, 9});
}

TEST_CASE("unsqueeze moves no data", "[ops][unsqueeze]") {
  ir::Node node;
  ops::CostFeatures features = ops::unsqueeze_op().features(node, {floats({"3"})},
                                                            {floats({"1", "3"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 0);
  CHECK(features.bytes_written == 0);
}
