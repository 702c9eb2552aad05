// Unit tests of Concat: axis defaults and normalization, shape inference with symbols, the kernel
// on float and int64 tensors against an index formula, and cost features.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::kUnknownRank;
using testing::random_int64s;

namespace {

ir::Attributes axis(int64_t value) {
  ir::Attributes attrs;
  attrs.set("axis", value);
  return attrs;
}

/// Canonicalizes a Concat of `inputs` at `opset`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs,
                         int64_t opset = 13) {
  return testing::canonicalize_in_place(ops::concat_op(), attrs, inputs, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const std::vector<ir::TensorType>& inputs) {
  return testing::infer_text(ops::concat_op(), attrs, inputs);
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const std::vector<const ir::Tensor*>& inputs) {
  return testing::run_def(ops::concat_op(), attrs, inputs)[0];
}

/// Checks out[a, j, b] == inputs[k][a, j - offset_k, b] for a concat of rank-3 tensors on axis 1.
template <class T>
void check_concatenated(const std::vector<const ir::Tensor*>& inputs, const ir::Tensor& out) {
  const int64_t rows = out.dims()[0], width = out.dims()[1], depth = out.dims()[2];
  for (int64_t a = 0; a < rows; ++a) {
    int64_t offset = 0;
    for (const ir::Tensor* input : inputs) {
      const int64_t span = input->dims()[1];
      for (int64_t j = 0; j < span; ++j) {
        for (int64_t b = 0; b < depth; ++b) {
          const T want = input->data<T>()[(a * span + j) * depth + b];
          REQUIRE(out.data<T>()[(a * width + offset + j) * depth + b] == want);
        }
      }
      offset += span;
    }
  }
}

}  // namespace

TEST_CASE("concat canonicalize requires and normalizes the axis", "[ops][concat]") {
  ir::Attributes negative = axis(-1);
  CHECK(canonicalize(negative, {floats({"2", "3"}), floats({"2", "5"})}).empty());
  CHECK(negative == axis(1));

  ir::Attributes known_from_second = axis(-2);
  CHECK(canonicalize(known_from_second, {kUnknownRank, floats({"N", "3"})}).empty());
  CHECK(known_from_second == axis(0));

  ir::Attributes legacy_default;
  CHECK(canonicalize(legacy_default, {floats({"2", "3"})}, 1).empty());
  CHECK(legacy_default == axis(1));

  ir::Attributes missing;
  CHECK_FALSE(canonicalize(missing, {floats({"2", "3"})}).empty());
  ir::Attributes unknown_rank = axis(-1);
  CHECK_FALSE(canonicalize(unknown_rank, {kUnknownRank, kUnknownRank}).empty());
  ir::Attributes out_of_range = axis(2);
  CHECK_FALSE(canonicalize(out_of_range, {floats({"2", "3"})}).empty());
  ir::Attributes negative_before_11 = axis(-1);
  CHECK_FALSE(canonicalize(negative_before_11, {floats({"2", "3"})}, 10).empty());
  ir::Attributes no_inputs = axis(0);
  CHECK_FALSE(canonicalize(no_inputs, {}).empty());
}

TEST_CASE("concat infers the joined axis and merges the others", "[ops][concat]") {
  CHECK(infer(axis(1), {floats({"2", "3"}), floats({"2", "5"}), floats({"2", "1"})}) ==
        "float32[2,9]");
  CHECK(infer(axis(1), {floats({"N", "3"}), floats({"N", "5"})}) == "float32[N,8]");
  CHECK(infer(axis(0), {floats({"N", "3"}), floats({"2", "3"})}) == "float32[?,3]");
  CHECK(infer(axis(0), {floats({"N", "3"})}) == "float32[N,3]");
  CHECK(infer(axis(1), {floats({"?", "3"}), floats({"N", "5"})}) == "float32[N,8]");
  CHECK(infer(axis(1), {floats({"N", "3"}), floats({"4", "5"})}) == "float32[4,8]");
  CHECK(infer(axis(1), {floats({"N", "3"}), floats({"M", "5"})}) == "float32[?,8]");
  CHECK(infer(axis(1), {kUnknownRank, floats({"N", "5"})}) == "float32[N,?]");
  CHECK(infer(axis(1), {kUnknownRank, kUnknownRank}) == "float32[*]");

  CHECK(infer(axis(1), {floats({"2", "3"}), floats({"3", "3"})}).rfind("error", 0) == 0);
  CHECK(infer(axis(1), {floats({"2", "3"}), floats({"2", "3", "1"})}).rfind("error", 0) == 0);
  CHECK(infer(axis(2), {floats({"2", "3"})}).rfind("error", 0) == 0);
  const ir::TensorType ints{ir::DataType::kInt64, ir::Shape::of({2, 3})};
  CHECK(infer(axis(1), {floats({"2", "3"}), ints}).rfind("error", 0) == 0);
}

TEST_CASE("concat kernel places each input's block after the previous ones", "[ops][concat]") {
  const ir::Tensor a = testing::random_tensor({2, 3, 4}, 1);
  const ir::Tensor b = testing::random_tensor({2, 1, 4}, 2);
  const ir::Tensor c = testing::random_tensor({2, 5, 4}, 3);
  const ir::Tensor empty = testing::random_tensor({2, 0, 4}, 4);
  ir::Tensor out = run(axis(1), {&a, &empty, &b, &c});
  CHECK(out.dims() == std::vector<int64_t>{2, 9, 4});
  check_concatenated<float>({&a, &empty, &b, &c}, out);

  const ir::Tensor x = random_int64s({3, 2, 2}, 5);
  const ir::Tensor y = random_int64s({3, 4, 2}, 6);
  check_concatenated<int64_t>({&x, &y}, run(axis(1), {&x, &y}));

  const ir::Tensor first = ir::Tensor::from_int64s({2}, {1, 2});
  const ir::Tensor second = ir::Tensor::from_int64s({3}, {3, 4, 5});
  CHECK(run(axis(0), {&first, &second}).to_int64s() == std::vector<int64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("concat reads and writes every byte once", "[ops][concat]") {
  ir::Node node;
  ops::CostFeatures features = ops::concat_op().features(
      node, {floats({"2", "3"}), floats({"2", "5"})}, {floats({"2", "8"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 64);
  CHECK(features.bytes_written == 64);
}
