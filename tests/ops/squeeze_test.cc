// Unit tests of Squeeze: explicit sorted axes (also for "all unit dims"), shape inference with
// symbols, invalid axes, the byte-copy kernel, and its zero cost.
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

/// Canonicalizes a Squeeze of `input` at `opset`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input, int64_t opset = 13) {
  return testing::canonicalize_in_place(ops::squeeze_op(), attrs, {input}, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::squeeze_op(), attrs, {input});
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(ops::squeeze_op(), attrs, {&input})[0];
}

}  // namespace

TEST_CASE("squeeze canonicalize stores normalized, sorted axes", "[ops][squeeze]") {
  ir::Attributes given = axes({-1, 0});
  CHECK(canonicalize(given, floats({"1", "N", "1"})).empty());
  CHECK(given == axes({0, 2}));
  ir::Attributes all;
  CHECK(canonicalize(all, floats({"1", "3", "1", "5"})).empty());
  CHECK(all == axes({0, 2}));
  ir::Attributes empty = axes({});
  CHECK(canonicalize(empty, floats({"2", "1"})).empty());
  CHECK(empty == axes({1}));
  ir::Attributes none_to_squeeze;
  CHECK(canonicalize(none_to_squeeze, floats({"2", "3"})).empty());
  CHECK(none_to_squeeze == axes({}));
  ir::Attributes unknown_rank = axes({2, 0});
  CHECK(canonicalize(unknown_rank, kUnknownRank).empty());
  CHECK(unknown_rank == axes({0, 2}));

  ir::Attributes all_symbolic;
  CHECK_FALSE(canonicalize(all_symbolic, floats({"N", "1"})).empty());
  ir::Attributes all_unknown_rank;
  CHECK_FALSE(canonicalize(all_unknown_rank, kUnknownRank).empty());
  ir::Attributes repeated = axes({0, -3});
  CHECK_FALSE(canonicalize(repeated, floats({"1", "3", "4"})).empty());
  ir::Attributes out_of_range = axes({3});
  CHECK_FALSE(canonicalize(out_of_range, floats({"1", "3", "4"})).empty());
  ir::Attributes negative_unknown_rank = axes({-1});
  CHECK_FALSE(canonicalize(negative_unknown_rank, kUnknownRank).empty());
  ir::Attributes negative_before_11 = axes({-1});
  CHECK_FALSE(canonicalize(negative_before_11, floats({"3", "1"}), 1).empty());
}

TEST_CASE("squeeze drops the given dims and keeps the rest", "[ops][squeeze]") {
  CHECK(infer(axes({0, 2}), floats({"1", "3", "1", "5"})) == "float32[3,5]");
  CHECK(infer(axes({1}), floats({"N", "1", "4"})) == "float32[N,4]");
  CHECK(infer(axes({0}), floats({"N", "3"})) == "float32[3]");
  CHECK(infer(axes({-1}), floats({"2", "?"})) == "float32[2]");
  CHECK(infer(axes({}), floats({"2", "3"})) == "float32[2,3]");
  CHECK(infer(axes({0}), kUnknownRank) == "float32[*]");
  CHECK(infer(axes({0}), floats({"3", "1"})).rfind("error", 0) == 0);
  CHECK(infer(axes({2}), floats({"1", "1"})).rfind("error", 0) == 0);
  CHECK(infer(axes({0, 0}), floats({"1", "1"})).rfind("error", 0) == 0);
}

TEST_CASE("squeeze kernel keeps the elements in order", "[ops][squeeze]") {
  const ir::Tensor floats_in = testing::random_tensor({1, 3, 1, 4}, 41);
  ir::Tensor floats_out = run(axes({0, 2}), floats_in);
  CHECK(floats_out.dims() == std::vector<int64_t>{3, 4});
  CHECK(testing::max_abs_diff(floats_out, testing::random_tensor({3, 4}, 41)) == 0);

  const ir::Tensor ints_in = ir::Tensor::from_int64s({3, 1}, {7, -8, 9});
  ir::Tensor ints_out = run(axes({1}), ints_in);
  CHECK(ints_out.dims() == std::vector<int64_t>{3});
  CHECK(ints_out.to_int64s() == std::vector<int64_t>{7, -8, 9});
}

TEST_CASE("squeeze moves no data", "[ops][squeeze]") {
  ir::Node node;
  ops::CostFeatures features = ops::squeeze_op().features(node, {floats({"1", "3"})},
                                                          {floats({"3"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 0);
  CHECK(features.bytes_written == 0);
}
