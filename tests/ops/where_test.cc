// Unit tests of Where: operand checks, three-way broadcast inference, the kernel on broadcast
// operands of several dtypes against an index formula, and its cost.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using ir::DataType;
using testing::floats;
using testing::type_of;

namespace {

using Ints = std::vector<int64_t>;

/// A bool type from dim texts, as in type_of.
ir::TensorType bools(const std::vector<std::string>& dims) {
  return type_of(DataType::kBool, dims);
}

std::string reason(const std::vector<ir::TensorType>& inputs) {
  return testing::canonicalize_def(ops::where_op(), {}, inputs).reason;
}

/// The inferred output type as text, or the error.
std::string infer(const std::vector<ir::TensorType>& inputs) {
  return testing::infer_text(ops::where_op(), {}, inputs);
}

/// The condition operand: a bool tensor from 0/1 flags.
ir::Tensor condition(std::vector<int64_t> dims, const std::vector<uint8_t>& flags) {
  return testing::bool_tensor(std::move(dims), flags);
}

}  // namespace

TEST_CASE("where canonicalize wants a bool condition and one value type", "[ops][where]") {
  CHECK(reason({bools({"2"}), floats({"2"}), floats({"1"})}).empty());
  const ir::TensorType uint16s = type_of(DataType::kUint16, {"2"});
  CHECK(reason({bools({"2"}), uint16s, uint16s}).empty());
  CHECK_FALSE(reason({floats({"2"}), floats({"2"}), floats({"2"})}).empty());
  CHECK_FALSE(reason({bools({"2"}), floats({"2"}), type_of(DataType::kInt64, {"2"})}).empty());
  const ir::TensorType strings = type_of(DataType::kString, {"2"});
  CHECK_FALSE(reason({bools({"2"}), strings, strings}).empty());
  CHECK_FALSE(reason({bools({"2"}), floats({"2"})}).empty());
}

TEST_CASE("where infers the broadcast of all three shapes", "[ops][where]") {
  CHECK(infer({bools({"2", "1"}), floats({"3"}), floats({"1", "1", "3"})}) == "float32[1,2,3]");
  CHECK(infer({bools({"N", "1"}), floats({"N", "4"}), floats({})}) == "float32[N,4]");
  CHECK(infer({bools({"2"}),
               {DataType::kUndefined, ir::Shape::of({2})},
               type_of(DataType::kInt64, {"2"})}) == "int64[2]");
  CHECK(infer({bools({"2"}), floats({"3"}), floats({"1"})}).rfind("error", 0) == 0);
  CHECK(infer({bools({"2"}), floats({"2"}), floats({"3"})}).rfind("error", 0) == 0);
}

TEST_CASE("where kernel picks X where the condition holds, else Y", "[ops][where]") {
  const ir::Tensor flags = condition({2, 2}, {1, 0, 0, 1});
  const ir::Tensor x = ir::Tensor::from_int64s({2, 2}, {1, 2, 3, 4});
  const ir::Tensor y = ir::Tensor::from_int64s({}, {-9});
  CHECK(testing::run_def(ops::where_op(), {}, {&flags, &x, &y})[0].to_int64s() ==
        Ints{1, -9, -9, 4});

  const ir::Tensor rows = condition({3, 1}, {1, 0, 1});
  const ir::Tensor a = testing::random_tensor({1, 4}, 1);
  const ir::Tensor b = testing::random_tensor({3, 4}, 2);
  const ir::Tensor out = testing::run_def(ops::where_op(), {}, {&rows, &a, &b})[0];
  REQUIRE(out.dims() == Ints{3, 4});
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      const float want = rows.data<uint8_t>()[i] ? a.data<float>()[j] : b.data<float>()[i * 4 + j];
      CHECK(out.data<float>()[i * 4 + j] == want);
    }
  }
  const ir::Tensor none = condition({0, 4}, {});
  CHECK(testing::run_def(ops::where_op(), {}, {&none, &a, &a})[0].dims() == Ints{0, 4});
}

TEST_CASE("where does one selection per element", "[ops][where]") {
  ir::Node node;
  ops::CostFeatures features = ops::where_op().features(
      node, {bools({"2", "3"}), floats({"2", "3"}), floats({})}, {floats({"2", "3"})});
  CHECK(features.flops == 6);
  CHECK(features.bytes_read == 6 + 24 + 4);
  CHECK(features.bytes_written == 24);
}
