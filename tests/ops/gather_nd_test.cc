// Unit tests of GatherND: batch_dims defaults and rejections, inference with batch dims, symbols
// and invalid shapes, the kernel on ONNX's examples (int32 and float, batch_dims 0 and 1, negative
// and out-of-range indices), and the bytes it moves.
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

ir::Attributes batch_dims(int64_t value) {
  ir::Attributes attrs;
  attrs.set("batch_dims", value);
  return attrs;
}

testing::Canonicalized canonical(ir::Attributes attrs, const std::vector<ir::TensorType>& inputs,
                                 int64_t opset = 13) {
  return testing::canonicalize_def(ops::gather_nd_op(), std::move(attrs), inputs, 1, opset);
}

std::string infer(int64_t batch, const ir::TensorType& data, const ir::TensorType& indices) {
  return testing::infer_text(ops::gather_nd_op(), batch_dims(batch), {data, indices});
}

bool fails(const std::string& inferred) { return inferred.rfind("error", 0) == 0; }

ir::Tensor gather(int64_t batch, const ir::Tensor& data, const ir::Tensor& indices) {
  return testing::run_def(ops::gather_nd_op(), batch_dims(batch), {&data, &indices})[0];
}

}  // namespace

TEST_CASE("gather_nd canonicalize fills batch_dims and checks it", "[ops][gather_nd]") {
  CHECK(canonical({}, {floats({"2", "2"}), int64s({"2", "2"})}, 11).attrs == batch_dims(0));
  CHECK(canonical(batch_dims(1), {floats({"N", "2", "2"}), int64s({"N", "1"})}).attrs == batch_dims(1));
  CHECK(canonical(batch_dims(1), {testing::kUnknownRank, int64s({"N", "1"})}).reason.empty());

  CHECK_FALSE(canonical(batch_dims(1), {floats({"2", "2"}), int64s({"2", "2"})}, 11).reason.empty());
  CHECK_FALSE(canonical(batch_dims(-1), {floats({"2", "2"}), int64s({"2", "1"})}).reason.empty());
  CHECK_FALSE(canonical(batch_dims(2), {floats({"2", "2", "2"}), int64s({"2", "1"})}).reason.empty());
  CHECK_FALSE(canonical(batch_dims(2), {floats({"2", "2"}), int64s({"2", "2", "1"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"2"}), type_of(ir::DataType::kInt32, {"1"})}).reason.empty());
  CHECK_FALSE(canonical({}, {type_of(ir::DataType::kString, {"2"}), int64s({"1"})}).reason.empty());
  CHECK_FALSE(canonical({}, {floats({"2"})}).reason.empty());
  ir::Attributes unknown = batch_dims(0);
  unknown.set("axis", int64_t{0});
  CHECK_FALSE(canonical(unknown, {floats({"2"}), int64s({"1"})}).reason.empty());
  CHECK_FALSE(testing::canonicalize_def(ops::gather_nd_op(), {}, {floats({"2"}), int64s({"1"})}, 2, 13)
                  .reason.empty());
}

TEST_CASE("gather_nd infers indices[:-1] + data[batch_dims + depth:]", "[ops][gather_nd]") {
  CHECK(infer(0, floats({"2", "2"}), int64s({"2", "2"})) == "float32[2]");
  CHECK(infer(0, floats({"2", "2", "2"}), int64s({"2", "1", "2"})) == "float32[2,1,2]");
  CHECK(infer(0, floats({"3", "4", "5"}), int64s({"K", "1"})) == "float32[K,4,5]");
  CHECK(infer(1, type_of(ir::DataType::kInt32, {"2", "2", "2"}), int64s({"2", "1"})) == "int32[2,2]");
  CHECK(infer(1, floats({"N", "S", "8"}), int64s({"N", "T", "1"})) == "float32[N,T,8]");
  CHECK(infer(1, floats({"4", "S", "8"}), int64s({"?", "1"})) == "float32[4,8]");
  CHECK(infer(2, floats({"B", "H", "S", "D"}), int64s({"B", "H", "2"})) == "float32[B,H]");

  CHECK(infer(0, floats({"3", "4"}), int64s({"2", "?"})) == "float32[*]");
  CHECK(infer(0, floats({"3", "4"}), int64s({"2", "K"})) == "float32[*]");
  CHECK(infer(0, testing::kUnknownRank, int64s({"2", "1"})) == "float32[*]");
  CHECK(infer(0, floats({"3", "4"}), {ir::DataType::kInt64, ir::Shape::unknown()}) == "float32[*]");

  CHECK(fails(infer(0, floats({"3", "4"}), int64s({"2", "3"}))));
  CHECK(fails(infer(1, floats({"3", "4"}), int64s({"3", "2"}))));
  CHECK(fails(infer(0, floats({"3", "4"}), int64s({"2", "0"}))));
  CHECK(fails(infer(1, floats({"3", "4"}), int64s({"2", "1"}))));
  CHECK(fails(infer(1, floats({"3"}), int64s({"3", "1"}))));
  CHECK(fails(infer(0, floats({}), int64s({"1"}))));
  CHECK(fails(infer(0, floats({"3"}), int64s({}))));
  CHECK(fails(infer(0, floats({"3"}), type_of(ir::DataType::kInt32, {"1"}))));
}

TEST_CASE("gather_nd kernel copies the slices the index tuples name", "[ops][gather_nd]") {
  // ONNX's examples, batch_dims 0: whole tuples pick elements, shorter ones pick rows.
  const ir::Tensor square = testing::int32_tensor({2, 2}, {0, 1, 2, 3});
  CHECK(testing::values_of<int32_t>(gather(0, square, ir::Tensor::from_int64s({2, 2}, {0, 0, 1, 1}))) ==
        std::vector<int32_t>{0, 3});
  CHECK(testing::values_of<int32_t>(gather(0, square, ir::Tensor::from_int64s({2, 1}, {1, 0}))) ==
        std::vector<int32_t>{2, 3, 0, 1});
  const ir::Tensor cube = ir::Tensor::from_floats({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const ir::Tensor picked = gather(0, cube, ir::Tensor::from_int64s({2, 1, 2}, {0, 1, 1, 0}));
  CHECK(picked.dims() == std::vector<int64_t>{2, 1, 2});
  CHECK(testing::values_of(picked) == std::vector<float>{2, 3, 4, 5});

  // batch_dims 1: each batch indexes its own data.
  const ir::Tensor cube32 = testing::int32_tensor({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const ir::Tensor batched = gather(1, cube32, ir::Tensor::from_int64s({2, 1}, {1, 0}));
  CHECK(batched.dims() == std::vector<int64_t>{2, 2});
  CHECK(testing::values_of<int32_t>(batched) == std::vector<int32_t>{2, 3, 4, 5});
  const ir::Tensor pairs = ir::Tensor::from_int64s({2, 2, 2}, {0, 1, 1, 0, 1, 1, 0, 0});
  CHECK(testing::values_of<int32_t>(gather(1, cube32, pairs)) == std::vector<int32_t>{1, 2, 7, 4});

  // Negative indices count from the back.
  CHECK(testing::values_of<int32_t>(gather(0, square, ir::Tensor::from_int64s({2, 2}, {-2, -1, -1, 0}))) ==
        std::vector<int32_t>{1, 2});
  CHECK(testing::values_of(gather(1, cube, ir::Tensor::from_int64s({2, 1}, {-1, -2}))) ==
        std::vector<float>{2, 3, 4, 5});

  const ir::Tensor none = ir::Tensor::from_int64s({0, 1}, {});
  CHECK(gather(0, cube, none).dims() == std::vector<int64_t>{0, 2, 2});
}

TEST_CASE("gather_nd kernel rejects an out-of-range index", "[ops][gather_nd]") {
  const ir::Tensor square = testing::int32_tensor({2, 2}, {0, 1, 2, 3});
  CHECK_THROWS_AS(gather(0, square, ir::Tensor::from_int64s({1, 2}, {0, 2})), Error);
  CHECK_THROWS_AS(gather(0, square, ir::Tensor::from_int64s({1, 1}, {-3})), Error);
  CHECK_THROWS_AS(gather(1, square, ir::Tensor::from_int64s({2, 1}, {0, 2})), Error);
}

TEST_CASE("gather_nd reads the picked slices and the indices", "[ops][gather_nd]") {
  const ops::CostFeatures features = ops::gather_nd_op().features(
      ir::Node{}, {floats({"5", "4"}), int64s({"3", "1"})}, {floats({"3", "4"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 48 + 24);
  CHECK(features.bytes_written == 48);
}
