// Unit tests of Shape: start/end normalization (opset 15), inference with symbols and unknown
// ranks, the kernel on several dtypes, and its cost (the output only).
#include <catch2/catch.hpp>
#include <limits>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::type_of;

namespace {

ir::Attributes range(int64_t start, int64_t end) {
  ir::Attributes attrs;
  attrs.set("start", start);
  attrs.set("end", end);
  return attrs;
}

/// The canonical attributes of a Shape of `input`, or the reason it stays opaque.
testing::Canonicalized canonical(ir::Attributes attrs, const ir::TensorType& input,
                                 int outputs = 1) {
  return testing::canonicalize_def(ops::shape_op(), std::move(attrs), {input}, outputs, 15);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::shape_op(), attrs, {input});
}

std::vector<int64_t> run(const ir::Attributes& attrs, const ir::Tensor& input) {
  const ir::Tensor out = testing::run_op(ir::OpKind::kShape, attrs, {&input})[0];
  CHECK(out.dtype() == ir::DataType::kInt64);
  CHECK(out.rank() == 1);
  return out.to_int64s();
}

}  // namespace

TEST_CASE("shape canonicalize fills and normalizes start and end", "[ops][shape]") {
  CHECK(canonical({}, floats({"N", "3", "?"})).attrs == range(0, 3));
  CHECK(canonical(range(-1, 10), floats({"2", "3", "4"})).attrs == range(2, 3));
  CHECK(canonical(range(-10, -1), floats({"2", "3", "4"})).attrs == range(0, 2));
  CHECK(canonical(range(2, 1), floats({"2", "3", "4"})).attrs == range(2, 2));

  const ir::TensorType unknown_rank{ir::DataType::kFloat, ir::Shape::unknown()};
  CHECK(canonical({}, unknown_rank).attrs == range(0, std::numeric_limits<int64_t>::max()));
  ir::Attributes from_back;
  from_back.set("start", int64_t{-1});
  CHECK(canonical(from_back, unknown_rank).attrs == range(-1, std::numeric_limits<int64_t>::max()));
  CHECK(canonical({}, type_of(ir::DataType::kString, {"2"})).reason.empty());

  ir::Attributes unknown_attribute;
  unknown_attribute.set("axis", int64_t{0});
  CHECK_FALSE(canonical(unknown_attribute, floats({"2"})).reason.empty());
  CHECK_FALSE(canonical({}, floats({"2"}), 2).reason.empty());
}

TEST_CASE("shape infers an int64 vector as long as the rank", "[ops][shape]") {
  CHECK(infer(range(0, 3), floats({"N", "3", "?"})) == "int64[3]");
  CHECK(infer(range(1, 3), floats({"N", "3", "?"})) == "int64[2]");
  CHECK(infer(range(0, -1), floats({"2", "3", "4"})) == "int64[2]");
  CHECK(infer(range(0, 0), floats({})) == "int64[0]");
  CHECK(infer(range(0, 5), {ir::DataType::kFloat, ir::Shape::unknown()}) == "int64[?]");
}

TEST_CASE("shape kernel writes the input's dims", "[ops][shape]") {
  const ir::Tensor floats_in = testing::random_tensor({2, 3, 4}, 1);
  CHECK(run(range(0, 3), floats_in) == std::vector<int64_t>{2, 3, 4});
  CHECK(run(range(1, 2), floats_in) == std::vector<int64_t>{3});
  CHECK(run(range(-2, std::numeric_limits<int64_t>::max()), floats_in) ==
        std::vector<int64_t>{3, 4});
  const ir::Tensor bytes_in(ir::DataType::kUint8, {5, 0});
  CHECK(run(range(0, 2), bytes_in) == std::vector<int64_t>{5, 0});
  const ir::Tensor scalar = ir::Tensor::from_int64s({}, {7});
  CHECK(run(range(0, 0), scalar).empty());
}

TEST_CASE("shape writes its output and reads no element", "[ops][shape]") {
  ir::Node node;
  ops::CostFeatures features = ops::shape_op().features(node, {floats({"2", "3", "4"})},
                                                        {type_of(ir::DataType::kInt64, {"3"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 0);
  CHECK(features.bytes_written == 24);
}
