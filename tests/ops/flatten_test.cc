// Unit tests of Flatten: axis default and normalization, the 2-D shape with symbols, the byte-copy
// kernel, and its zero cost.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::kUnknownRank;

namespace {

ir::Attributes axis(int64_t value) {
  ir::Attributes attrs;
  attrs.set("axis", value);
  return attrs;
}

/// Canonicalizes a Flatten of `input` at `opset`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input, int64_t opset = 13) {
  return testing::canonicalize_in_place(ops::flatten_op(), attrs, {input}, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::flatten_op(), attrs, {input});
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(ops::flatten_op(), attrs, {&input})[0];
}

}  // namespace

TEST_CASE("flatten canonicalize defaults and normalizes the axis", "[ops][flatten]") {
  ir::Attributes none;
  CHECK(canonicalize(none, floats({"N", "3", "4", "4"})).empty());
  CHECK(none == axis(1));
  ir::Attributes negative = axis(-1);
  CHECK(canonicalize(negative, floats({"2", "3", "4", "5"})).empty());
  CHECK(negative == axis(3));
  ir::Attributes most_negative = axis(-4);
  CHECK(canonicalize(most_negative, floats({"2", "3", "4", "5"})).empty());
  CHECK(most_negative == axis(0));
  ir::Attributes rank = axis(4);
  CHECK(canonicalize(rank, floats({"2", "3", "4", "5"})).empty());
  ir::Attributes unknown_rank = axis(2);
  CHECK(canonicalize(unknown_rank, kUnknownRank).empty());

  ir::Attributes past_rank = axis(5);
  CHECK_FALSE(canonicalize(past_rank, floats({"2", "3", "4", "5"})).empty());
  ir::Attributes below = axis(-5);
  CHECK_FALSE(canonicalize(below, floats({"2", "3", "4", "5"})).empty());
  ir::Attributes negative_unknown_rank = axis(-1);
  CHECK_FALSE(canonicalize(negative_unknown_rank, kUnknownRank).empty());
  ir::Attributes negative_before_11 = axis(-1);
  CHECK_FALSE(canonicalize(negative_before_11, floats({"2", "3"}), 9).empty());
}

TEST_CASE("flatten infers the two products and keeps a lone symbol", "[ops][flatten]") {
  CHECK(infer(axis(2), floats({"2", "3", "4", "5"})) == "float32[6,20]");
  CHECK(infer(axis(0), floats({"2", "3", "4", "5"})) == "float32[1,120]");
  CHECK(infer(axis(4), floats({"2", "3", "4", "5"})) == "float32[120,1]");
  CHECK(infer(axis(1), floats({"N", "3", "4", "4"})) == "float32[N,48]");
  CHECK(infer(axis(1), floats({"3", "N", "1"})) == "float32[3,N]");
  CHECK(infer(axis(2), floats({"N", "3", "4"})) == "float32[?,4]");
  CHECK(infer(axis(1), floats({"N", "?"})) == "float32[N,?]");
  CHECK(infer(axis(1), kUnknownRank) == "float32[?,?]");
  CHECK(infer(axis(5), floats({"2", "3", "4", "5"})).rfind("error", 0) == 0);
}

TEST_CASE("flatten kernel keeps the elements in order", "[ops][flatten]") {
  const ir::Tensor floats_in = testing::random_tensor({2, 3, 4}, 31);
  ir::Tensor floats_out = run(axis(2), floats_in);
  CHECK(floats_out.dims() == std::vector<int64_t>{6, 4});
  CHECK(testing::max_abs_diff(floats_out, testing::random_tensor({6, 4}, 31)) == 0);

  const ir::Tensor ints_in = ir::Tensor::from_int64s({3, 2}, {6, 5, 4, 3, 2, 1});
  ir::Tensor ints_out = run(axis(0), ints_in);
  CHECK(ints_out.dims() == std::vector<int64_t>{1, 6});
  CHECK(ints_out.to_int64s() == std::vector<int64_t>{6, 5, 4, 3, 2, 1});
}

TEST_CASE("flatten moves no data", "[ops][flatten]") {
  ir::Node node;
  ops::CostFeatures features = ops::flatten_op().features(node, {floats({"2", "3", "4"})},
                                                          {floats({"2", "12"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 0);
  CHECK(features.bytes_written == 0);
}
