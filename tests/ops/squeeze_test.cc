// Unit tests of Squeeze: explicit sorted axes (also for "all unit dims"), shape inference with
// symbols, invalid axes, the byte-copy kernel, and its zero cost.
#include <catch2/catch.hpp>

#include <cctype>

#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;

namespace {

/// A float32 type from dim texts: a number is a size, "?" unknown, anything else a symbol.
ir::TensorType floats(const std::vector<std::string>& dims) {
  ir::Shape shape{true, {}};
  for (const std::string& dim : dims) {
    if (dim == "?") {
      shape.dims.push_back(ir::Dim{});
    } else if (std::isdigit(static_cast<unsigned char>(dim[0]))) {
      shape.dims.push_back(ir::Dim::known(std::stoll(dim)));
    } else {
      shape.dims.push_back(ir::Dim::named(dim));
    }
  }
  return {ir::DataType::kFloat, shape};
}

const ir::TensorType kUnknownRank{ir::DataType::kFloat, ir::Shape::unknown()};

ir::Attributes axes(const std::vector<int64_t>& values) {
  ir::Attributes attrs;
  attrs.set("axes", values);
  return attrs;
}

/// Canonicalizes a Squeeze of `input` at `opset`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input, int64_t opset = 13) {
  std::vector<ir::TensorType> types{input};
  ops::ImportContext context{attrs, types, 1, opset};
  return ops::squeeze_op().canonicalize(context);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  ir::Node node;
  node.attrs = attrs;
  ops::InferResult result = ops::squeeze_op().infer(node, {input});
  return result.ok() ? ir::to_string(result.outputs.at(0)) : "error: " + result.error;
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const ir::Tensor& input) {
  const ops::OpDef def = ops::squeeze_op();
  ir::Node node;
  node.op = def.kind;
  node.attrs = attrs;
  ops::InferResult inferred = def.infer(node, {{input.dtype(), ir::Shape::of(input.dims())}});
  REQUIRE(inferred.ok());
  std::vector<ir::Tensor> outputs;
  outputs.emplace_back(inferred.outputs[0].dtype, *inferred.outputs[0].shape.sizes());
  def.kernel(node, {&input}, outputs);
  return std::move(outputs[0]);
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
