// Unit tests of Expand: the shape operand's checks, inference that keeps only certain dims, the
// kernel allocating the broadcast output from run-time shapes, and its cost.
#include <catch2/catch.hpp>

#include "ir/error.h"
#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;
using testing::int64s;
using testing::type_of;

namespace {

using Ints = std::vector<int64_t>;

std::string reason(const std::vector<ir::TensorType>& inputs) {
  return testing::canonicalize_def(ops::expand_op(), {}, inputs).reason;
}

/// The inferred output type as text, or the error.
std::string infer(const ir::TensorType& data, const ir::TensorType& shape) {
  return testing::infer_text(ops::expand_op(), {}, {data, shape});
}

/// Runs Expand through the executor, which leaves the output for the kernel to allocate.
ir::Tensor expand(const ir::Tensor& data, const Ints& shape) {
  const ir::Tensor operand = ir::Tensor::from_int64s({static_cast<int64_t>(shape.size())}, shape);
  return testing::run_op(ir::OpKind::kExpand, {}, {&data, &operand})[0];
}

}  // namespace

TEST_CASE("expand canonicalize wants a 1-D int64 shape operand", "[ops][expand]") {
  CHECK(reason({floats({"3", "1"}), int64s({"3"})}).empty());
  CHECK(reason({floats({"3", "1"}), {ir::DataType::kInt64, ir::Shape::unknown()}}).empty());
  CHECK(reason({type_of(ir::DataType::kBool, {"3"}), int64s({"?"})}).empty());
  CHECK_FALSE(reason({floats({"3"}), type_of(ir::DataType::kInt32, {"1"})}).empty());
  CHECK_FALSE(reason({floats({"3"}), int64s({"1", "1"})}).empty());
  CHECK_FALSE(reason({type_of(ir::DataType::kString, {"3"}), int64s({"1"})}).empty());
  CHECK_FALSE(reason({floats({"3"})}).empty());
}

TEST_CASE("expand infers the rank and the dims the input fixes", "[ops][expand]") {
  CHECK(infer(floats({"3", "1"}), int64s({"3"})) == "float32[?,3,?]");
  CHECK(infer(floats({"N", "4"}), int64s({"2"})) == "float32[?,4]");
  CHECK(infer(floats({"2", "3", "4"}), int64s({"1"})) == "float32[2,3,4]");
  CHECK(infer(floats({"5"}), int64s({"K"})) == "float32[*]");
  CHECK(infer(floats({"5"}), {ir::DataType::kInt64, ir::Shape::unknown()}) == "float32[*]");
  CHECK(infer({ir::DataType::kFloat, ir::Shape::unknown()}, int64s({"2"})) == "float32[*]");
  CHECK(infer(floats({"5"}), floats({"2"})).rfind("error", 0) == 0);
}

TEST_CASE("expand kernel broadcasts to the run-time shape", "[ops][expand]") {
  const ir::Tensor column = ir::Tensor::from_int64s({3, 1}, {1, 2, 3});
  const ir::Tensor wide = expand(column, {2, 1, 4});
  CHECK(wide.dims() == Ints{2, 3, 4});
  CHECK(wide.to_int64s() ==
        Ints{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  const ir::Tensor same = expand(column, {1});
  CHECK(same.dims() == Ints{3, 1});
  CHECK(same.to_int64s() == Ints{1, 2, 3});
  CHECK(expand(column, {3, 0}).dims() == Ints{3, 0});

  const ir::Tensor row = testing::random_tensor({1, 4}, 4);
  const ir::Tensor rows = expand(row, {3, 4});
  REQUIRE(rows.dims() == Ints{3, 4});
  for (int64_t i = 0; i < 12; ++i) CHECK(rows.data<float>()[i] == row.data<float>()[i % 4]);

  ir::Tensor flag(ir::DataType::kBool, {});
  flag.mutable_data<uint8_t>()[0] = 1;
  const ir::Tensor flags = expand(flag, {2, 2});
  CHECK(flags.dtype() == ir::DataType::kBool);
  CHECK(flags.to_int64s() == Ints{1, 1, 1, 1});

  CHECK_THROWS_AS(expand(column, {2, 2}), Error);
  CHECK_THROWS_AS(expand(column, {-1, 1}), Error);
}

TEST_CASE("expand reads its inputs and writes its output once", "[ops][expand]") {
  ir::Node node;
  ops::CostFeatures features =
      ops::expand_op().features(node, {floats({"3", "1"}), int64s({"2"})}, {floats({"3", "4"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 12 + 16);
  CHECK(features.bytes_written == 48);
}
