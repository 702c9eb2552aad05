// Unit tests of Unsqueeze: axes normalized against the output rank and sorted, shape inference
// with symbols, invalid axes, the byte-copy kernel, and its zero cost.
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

/// Canonicalizes an Unsqueeze of `input` at `opset`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input, int64_t opset = 13) {
  std::vector<ir::TensorType> types{input};
  ops::ImportContext context{attrs, types, 1, opset};
  return ops::unsqueeze_op().canonicalize(context);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  ir::Node node;
  node.attrs = attrs;
  ops::InferResult result = ops::unsqueeze_op().infer(node, {input});
  return result.ok() ? ir::to_string(result.outputs.at(0)) : "error: " + result.error;
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const ir::Tensor& input) {
  const ops::OpDef def = ops::unsqueeze_op();
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
