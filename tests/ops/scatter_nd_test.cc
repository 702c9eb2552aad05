// Unit tests of ScatterND: the reduction's default and the opsets that define each, inference and
// its rejections, the kernel (ONNX's example, reductions, negative and repeated indices, a tuple
// as long as the data's rank) and the bytes it moves.
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

ir::Attributes reduction(const std::string& name) {
  ir::Attributes attrs;
  attrs.set("reduction", name);
  return attrs;
}

testing::Canonicalized canonical(ir::Attributes attrs, const std::vector<ir::TensorType>& inputs,
                                 int64_t opset = 18) {
  return testing::canonicalize_def(ops::scatter_nd_op(), std::move(attrs), inputs, 1, opset);
}

std::string infer(const ir::TensorType& data, const ir::TensorType& indices, const ir::TensorType& updates) {
  return testing::infer_text(ops::scatter_nd_op(), reduction("none"), {data, indices, updates});
}

bool fails(const std::string& inferred) { return inferred.rfind("error", 0) == 0; }

ir::Tensor scatter(const std::string& how, const ir::Tensor& data, const ir::Tensor& indices,
                   const ir::Tensor& updates) {
  return testing::run_def(ops::scatter_nd_op(), reduction(how), {&data, &indices, &updates})[0];
}

}  // namespace

TEST_CASE("scatter_nd canonicalize fills the reduction and checks its opset", "[ops][scatter_nd]") {
  const std::vector<ir::TensorType> operands = {floats({"4", "4"}), int64s({"2", "1"}), floats({"2", "4"})};
  CHECK(canonical({}, operands, 11).attrs == reduction("none"));
  CHECK(canonical(reduction("add"), operands, 16).attrs == reduction("add"));
  CHECK(canonical(reduction("max"), operands, 18).reason.empty());

  CHECK_FALSE(canonical(reduction("add"), operands, 13).reason.empty());
  CHECK_FALSE(canonical(reduction("min"), operands, 16).reason.empty());
  CHECK_FALSE(canonical(reduction("xor"), operands).reason.empty());
  CHECK_FALSE(canonical(reduction("add"), {type_of(ir::DataType::kUint8, {"4"}), int64s({"1", "1"}),
                                           type_of(ir::DataType::kUint8, {"1"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"4"}), type_of(ir::DataType::kInt32, {"1", "1"}), floats({"1"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"4"}), int64s({"1", "1"})}).reason.empty());
  ir::Attributes unknown = reduction("none");
  unknown.set("axis", int64_t{0});
  CHECK_FALSE(canonical(unknown, operands).reason.empty());
}

TEST_CASE("scatter_nd infers the data's type", "[ops][scatter_nd]") {
  CHECK(infer(floats({"4", "4", "4"}), int64s({"2", "1"}), floats({"2", "4", "4"})) == "float32[4,4,4]");
  CHECK(infer(floats({"N", "8"}), int64s({"K", "2"}), floats({"K"})) == "float32[N,8]");
  CHECK(infer(floats({"4", "4"}), int64s({"2", "?"}), floats({"2", "4"})) == "float32[4,4]");

  CHECK(fails(infer(floats({"4", "4"}), int64s({"2", "3"}), floats({"2"}))));
  CHECK(fails(infer(floats({"4", "4"}), int64s({"2", "1"}), floats({"3", "4"}))));
  CHECK(fails(infer(floats({"4", "4"}), int64s({"2", "1"}), floats({"2"}))));
  CHECK(fails(infer(floats({"4"}), int64s({"1", "1"}), type_of(ir::DataType::kInt64, {"1"}))));
}

TEST_CASE("scatter_nd kernel writes the updates where the tuples point", "[ops][scatter_nd]") {
  // ONNX's first example: elements of a vector.
  const ir::Tensor vector = ir::Tensor::from_floats({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const ir::Tensor picks = ir::Tensor::from_int64s({4, 1}, {4, 3, 1, 7});
  const ir::Tensor values = ir::Tensor::from_floats({4}, {9, 10, 11, 12});
  CHECK(testing::values_of(scatter("none", vector, picks, values)) == std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12});

  // Rows of a matrix, a negative index counting from the back.
  const ir::Tensor matrix = ir::Tensor::from_floats({3, 2}, {0, 1, 2, 3, 4, 5});
  const ir::Tensor rows = ir::Tensor::from_int64s({2, 1}, {-1, 0});
  const ir::Tensor new_rows = ir::Tensor::from_floats({2, 2}, {10, 11, 12, 13});
  CHECK(testing::values_of(scatter("none", matrix, rows, new_rows)) == std::vector<float>{12, 13, 2, 3, 10, 11});

  // Reductions combine, a repeated index twice; int64 as the Swin-T mask computes it.
  const ir::Tensor twice = ir::Tensor::from_int64s({2, 1}, {0, 0});
  CHECK(testing::values_of(scatter("add", matrix, twice, new_rows)) == std::vector<float>{22, 25, 2, 3, 4, 5});
  CHECK(testing::values_of(scatter("mul", matrix, twice, new_rows)) == std::vector<float>{0, 143, 2, 3, 4, 5});
  CHECK(testing::values_of(scatter("max", matrix, rows, new_rows)) == std::vector<float>{12, 13, 2, 3, 10, 11});
  CHECK(testing::values_of(scatter("min", matrix, rows, new_rows)) == std::vector<float>{0, 1, 2, 3, 4, 5});
  const ir::Tensor counts = ir::Tensor::from_int64s({2, 2}, {0, 0, 0, 0});
  const ir::Tensor cells = ir::Tensor::from_int64s({2, 2}, {0, 1, 1, 0});
  CHECK(scatter("none", counts, cells, ir::Tensor::from_int64s({2}, {7, 8})).to_int64s() ==
        std::vector<int64_t>{0, 7, 8, 0});

  // No tuple: the data as it was.
  CHECK(testing::values_of(scatter("none", matrix, ir::Tensor::from_int64s({0, 1}, {}),
                                   ir::Tensor::from_floats({0, 2}, {}))) == std::vector<float>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("scatter_nd kernel rejects an out-of-range index", "[ops][scatter_nd]") {
  const ir::Tensor matrix = ir::Tensor::from_floats({3, 2}, {0, 1, 2, 3, 4, 5});
  const ir::Tensor row = ir::Tensor::from_floats({1, 2}, {9, 9});
  CHECK_THROWS_AS(scatter("none", matrix, ir::Tensor::from_int64s({1, 1}, {3}), row), Error);
  CHECK_THROWS_AS(scatter("none", matrix, ir::Tensor::from_int64s({1, 1}, {-4}), row), Error);
}

TEST_CASE("scatter_nd reads data, indices and updates", "[ops][scatter_nd]") {
  const ops::CostFeatures features = ops::scatter_nd_op().features(
      ir::Node{}, {floats({"5", "4"}), int64s({"3", "1"}), floats({"3", "4"})}, {floats({"5", "4"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 80 + 24 + 48);
  CHECK(features.bytes_written == 80);
}
