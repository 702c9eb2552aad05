// Unit tests of Pad: canonical mode/pads/value in both opset forms, inference with cropping and
// symbols, the constant, edge and reflect kernels against numpy's np.pad, and its cost.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;

namespace {

using Ints = std::vector<int64_t>;

ir::Attributes pad(const std::string& mode, const Ints& pads, float value = 0) {
  ir::Attributes attrs;
  attrs.set("mode", mode);
  attrs.set("pads", pads);
  attrs.set("value", value);
  return attrs;
}

/// The canonical attributes of a Pad of `input`, or the reason it stays opaque.
testing::Canonicalized canonical(ir::Attributes attrs, const ir::TensorType& input,
                                 int64_t opset = 13) {
  return testing::canonicalize_def(ops::pad_op(), std::move(attrs), {input}, 1, opset);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::pad_op(), attrs, {input});
}

/// Pads the int64 vector `values` by `begin` and `end`.
Ints pad_vector(const Ints& values, const std::string& mode, int64_t begin, int64_t end,
                float value = 0) {
  const ir::Tensor input = ir::Tensor::from_int64s({static_cast<int64_t>(values.size())}, values);
  return testing::run_def(ops::pad_op(), pad(mode, {begin, end}, value), {&input})[0].to_int64s();
}

}  // namespace

TEST_CASE("pad canonicalize fills mode and value", "[ops][pad]") {
  ir::Attributes legacy;
  legacy.set("pads", Ints{0, 1, 0, 2});
  CHECK(canonical(legacy, floats({"N", "3"}), 2).attrs == pad("constant", {0, 1, 0, 2}));
  ir::Attributes from_inputs;
  from_inputs.set("pads", Ints{1, 1});
  from_inputs.set("value", std::vector<float>{1.5f});
  CHECK(canonical(from_inputs, floats({"3"})).attrs == pad("constant", {1, 1}, 1.5f));
  CHECK(canonical(pad("edge", {1, 1}, 4.0f), floats({"3"})).attrs == pad("edge", {1, 1}));
  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  const ir::TensorType bfloat16s{ir::DataType::kBfloat16, ir::Shape::of({3})};
  const ir::TensorType strings{ir::DataType::kString, ir::Shape::of({3})};
  CHECK(canonical(pad("reflect", {1, 1, 1, 1}), unknown_rank).reason.empty());
  CHECK(canonical(pad("edge", {1, 1}), bfloat16s).reason.empty());

  CHECK_FALSE(canonical(pad("wrap", {1, 1}), floats({"3"})).reason.empty());
  CHECK_FALSE(canonical(pad("constant", {1, 1, 1}), floats({"3"})).reason.empty());
  CHECK_FALSE(canonical(pad("constant", {1, 1}), floats({"3", "3"})).reason.empty());
  CHECK_FALSE(canonical(pad("constant", {1, 1}), bfloat16s).reason.empty());
  CHECK_FALSE(canonical(pad("constant", {1, 1}), strings).reason.empty());
  ir::Attributes no_pads;
  no_pads.set("mode", std::string("constant"));
  CHECK_FALSE(canonical(no_pads, floats({"3"})).reason.empty());
  ir::Attributes two_values;
  two_values.set("pads", Ints{1, 1});
  two_values.set("value", std::vector<float>{1, 2});
  CHECK_FALSE(canonical(two_values, floats({"3"})).reason.empty());
  ir::Attributes paddings = pad("constant", {1, 1});
  paddings.set("paddings", Ints{1, 1});
  CHECK_FALSE(canonical(paddings, floats({"3"})).reason.empty());
}

TEST_CASE("pad infers grown and cropped sizes", "[ops][pad]") {
  CHECK(infer(pad("constant", {0, 0, 1, 2, 0, 0, 3, 4}), floats({"1", "3", "4", "5"})) ==
        "float32[1,3,8,11]");
  CHECK(infer(pad("constant", {-1, -2}), floats({"4"})) == "float32[1]");
  CHECK(infer(pad("reflect", {0, 1, 0, -1}), floats({"N", "M"})) == "float32[N,M]");
  CHECK(infer(pad("edge", {1, 0, 0, 0}), floats({"N", "M"})) == "float32[?,M]");
  CHECK(infer(pad("edge", {1, 0, 0, 0}), {ir::DataType::kFloat, ir::Shape::unknown()}) ==
        "float32[?,?]");
  CHECK(infer(pad("constant", {2, 0}), floats({"0"})) == "float32[2]");
  CHECK(infer(pad("constant", {-3, -2}), floats({"4"})).rfind("error", 0) == 0);
  CHECK(infer(pad("edge", {1, 0}), floats({"0"})).rfind("error", 0) == 0);
  CHECK(infer(pad("edge", {1, 0}), floats({"2", "2"})).rfind("error", 0) == 0);
}

TEST_CASE("pad kernels match np.pad", "[ops][pad]") {
  CHECK(pad_vector({1, 2, 3}, "constant", 2, 4, 9) == Ints{9, 9, 1, 2, 3, 9, 9, 9, 9});
  CHECK(pad_vector({1, 2, 3}, "edge", 2, 4) == Ints{1, 1, 1, 2, 3, 3, 3, 3, 3});
  CHECK(pad_vector({1, 2, 3}, "reflect", 2, 4) == Ints{3, 2, 1, 2, 3, 2, 1, 2, 3});
  CHECK(pad_vector({1, 2, 3, 4}, "reflect", 3, 3) == Ints{4, 3, 2, 1, 2, 3, 4, 3, 2, 1});
  CHECK(pad_vector({7}, "reflect", 2, 1) == Ints{7, 7, 7, 7});
  CHECK(pad_vector({1, 2, 3, 4, 5}, "constant", -1, 1) == Ints{2, 3, 4, 5, 0});
  CHECK(pad_vector({1, 2, 3, 4, 5}, "edge", -2, -1) == Ints{3, 4});
  CHECK(pad_vector({1, 2, 3}, "constant", 1, 0, -2.5f) == Ints{-2, 1, 2, 3});

  const ir::Tensor image = testing::random_tensor({2, 3}, 5);
  const ir::Tensor out =
      testing::run_def(ops::pad_op(), pad("constant", {1, 0, 0, 2}, 0.5f), {&image})[0];
  REQUIRE(out.dims() == Ints{3, 5});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      const bool inside = i >= 1 && j < 3;
      CHECK(out.data<float>()[i * 5 + j] == (inside ? image.data<float>()[(i - 1) * 3 + j] : 0.5f));
    }
  }

  ir::Tensor bytes(ir::DataType::kUint8, {2, 2});
  for (int64_t i = 0; i < 4; ++i) bytes.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i + 1);
  const ir::Tensor edged = testing::run_def(ops::pad_op(), pad("edge", {0, 1, 1, 0}), {&bytes})[0];
  CHECK(edged.to_int64s() == Ints{1, 1, 2, 3, 3, 4, 3, 3, 4});
  const ir::Tensor filled =
      testing::run_def(ops::pad_op(), pad("constant", {0, 1, 0, 0}, 300), {&bytes})[0];
  CHECK(filled.to_int64s() == Ints{255, 1, 2, 255, 3, 4});
}

TEST_CASE("pad reads its input and writes its output once", "[ops][pad]") {
  ir::Node node;
  ops::CostFeatures features =
      ops::pad_op().features(node, {floats({"2", "3"})}, {floats({"4", "5"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 24);
  CHECK(features.bytes_written == 80);
}

TEST_CASE("pad reads opset 18's axes into the pads of every axis", "[ops][pad]") {
  ir::Attributes listed = pad("constant", {1, 2, 3, 4});
  listed.set("axes", Ints{-1, 1});  // begins (1 on axis 2, 2 on axis 1), then ends (3, 4)
  const testing::Canonicalized read = canonical(listed, floats({"N", "3", "5"}), 18);
  REQUIRE(read.reason.empty());
  CHECK(read.attrs == canonical(pad("constant", {0, 2, 1, 0, 4, 3}), floats({"N", "3", "5"}), 18).attrs);

  ir::Attributes unknown_rank = pad("constant", {1, 1});
  unknown_rank.set("axes", Ints{0});
  CHECK_FALSE(canonical(unknown_rank, {ir::DataType::kFloat, ir::Shape::unknown()}, 18).reason.empty());
  ir::Attributes mismatch = pad("constant", {1, 1});
  mismatch.set("axes", Ints{0, 1});
  CHECK_FALSE(canonical(mismatch, floats({"3", "5"}), 18).reason.empty());
  ir::Attributes repeated = pad("constant", {1, 1, 1, 1});
  repeated.set("axes", Ints{0, -2});
  CHECK_FALSE(canonical(repeated, floats({"3", "5"}), 18).reason.empty());
}
