// Unit tests of Reshape: canonical attributes, resolution of 0 and -1 with symbolic dims, invalid
// targets, the byte-copy kernel, and its zero cost.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;

namespace {

ir::Attributes target(const std::vector<int64_t>& shape, int64_t allowzero = 0) {
  ir::Attributes attrs;
  attrs.set("shape", shape);
  attrs.set("allowzero", allowzero);
  return attrs;
}

/// Canonicalizes a Reshape of `input` at `opset`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input, int64_t opset = 14) {
  return testing::canonicalize_in_place(ops::reshape_op(), attrs, {input}, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::reshape_op(), attrs, {input});
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(ops::reshape_op(), attrs, {&input})[0];
}

}  // namespace

TEST_CASE("reshape canonicalize fills allowzero and rejects bad targets", "[ops][reshape]") {
  ir::Attributes plain;
  plain.set("shape", std::vector<int64_t>{0, -1});
  CHECK(canonicalize(plain, floats({"N", "3", "4"})).empty());
  CHECK(plain == target({0, -1}));

  ir::Attributes legacy;
  legacy.set("shape", std::vector<int64_t>{4, 6});
  legacy.set("consumed_inputs", std::vector<int64_t>{0});
  CHECK(canonicalize(legacy, floats({"2", "3", "4"}), 1).empty());
  CHECK(legacy == target({4, 6}));

  ir::Attributes missing;
  CHECK_FALSE(canonicalize(missing, floats({"2", "3"})).empty());
  ir::Attributes two_inferred = target({-1, -1});
  CHECK_FALSE(canonicalize(two_inferred, floats({"2", "3"})).empty());
  ir::Attributes below_minus_one = target({-2, 3});
  CHECK_FALSE(canonicalize(below_minus_one, floats({"2", "3"})).empty());
  ir::Attributes zero_and_inferred = target({0, -1}, 1);
  CHECK_FALSE(canonicalize(zero_and_inferred, floats({"2", "3"})).empty());
  ir::Attributes bad_allowzero = target({6}, 2);
  CHECK_FALSE(canonicalize(bad_allowzero, floats({"2", "3"})).empty());
  ir::Attributes strings = target({6});
  CHECK_FALSE(canonicalize(strings, {ir::DataType::kString, ir::Shape::of({2, 3})}).empty());
}

TEST_CASE("reshape resolves 0 and -1, keeping symbols that pass through", "[ops][reshape]") {
  CHECK(infer(target({4, -1}), floats({"2", "3", "4"})) == "float32[4,6]");
  CHECK(infer(target({2, 0, -1}), floats({"2", "3", "4"})) == "float32[2,3,4]");
  CHECK(infer(target({24}), floats({"2", "3", "4"})) == "float32[24]");
  CHECK(infer(target({3, 4, 0}, 1), floats({"0", "3", "4"})) == "float32[3,4,0]");
  CHECK(infer(target({0, -1}), floats({"N", "3", "4"})) == "float32[N,12]");
  CHECK(infer(target({-1, 12}), floats({"N", "3", "4"})) == "float32[N,12]");
  CHECK(infer(target({0, 3, -1}), floats({"N", "M", "3"})) == "float32[N,3,M]");
  CHECK(infer(target({-1, 6}), floats({"N", "3", "4"})) == "float32[?,6]");
  CHECK(infer(target({-1, 5}), floats({"N", "3", "4"})) == "float32[?,5]");
  CHECK(infer(target({0, 2, 6}), floats({"N", "3", "4"})) == "float32[N,2,6]");
  CHECK(infer(target({0, -1}), floats({"N", "?"})) == "float32[N,?]");
  CHECK(infer(target({0, -1, 5}), {ir::DataType::kFloat, ir::Shape::unknown()}) ==
        "float32[?,?,5]");
  CHECK(infer(target({}), floats({"1", "1"})) == "float32[]");
}

TEST_CASE("reshape rejects element counts that cannot match", "[ops][reshape]") {
  CHECK(infer(target({5, -1}), floats({"2", "3", "4"})).rfind("error", 0) == 0);
  CHECK(infer(target({5, 5}), floats({"2", "3", "4"})).rfind("error", 0) == 0);
  CHECK(infer(target({0, 2, 5}), floats({"N", "3", "4"})).rfind("error", 0) == 0);
  CHECK(infer(target({0, 0, 0}), floats({"2", "3"})).rfind("error", 0) == 0);
  CHECK(infer(target({0, -1}), floats({"0", "3"})).rfind("error", 0) == 0);
  CHECK(infer(target({-1, -1}), floats({"2", "3"})).rfind("error", 0) == 0);
}

TEST_CASE("reshape kernel keeps the elements in order", "[ops][reshape]") {
  const ir::Tensor floats_in = testing::random_tensor({2, 3, 4}, 21);
  ir::Tensor floats_out = run(target({4, -1}), floats_in);
  CHECK(floats_out.dims() == std::vector<int64_t>{4, 6});
  CHECK(testing::max_abs_diff(floats_out, testing::random_tensor({4, 6}, 21)) == 0);

  const ir::Tensor ints_in = ir::Tensor::from_int64s({2, 1, 3}, {1, -2, 3, -4, 5, -6});
  ir::Tensor ints_out = run(target({3, 0, 2}), ints_in);
  CHECK(ints_out.dims() == std::vector<int64_t>{3, 1, 2});
  CHECK(ints_out.to_int64s() == std::vector<int64_t>{1, -2, 3, -4, 5, -6});
}

TEST_CASE("reshape moves no data", "[ops][reshape]") {
  ir::Node node;
  ops::CostFeatures features = ops::reshape_op().features(node, {floats({"2", "12"})},
                                                          {floats({"24"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 0);
  CHECK(features.bytes_written == 0);
}
