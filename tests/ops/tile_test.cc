// Unit tests of Tile: constant repeats, inference with symbols and zero counts, the kernel against
// np.tile, and its cost.
#include <catch2/catch.hpp>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;

namespace {

using Ints = std::vector<int64_t>;

ir::Attributes repeats(const Ints& counts) {
  ir::Attributes attrs;
  attrs.set("repeats", counts);
  return attrs;
}

std::string reason(ir::Attributes attrs, const ir::TensorType& input) {
  return testing::canonicalize_def(ops::tile_op(), std::move(attrs), {input}).reason;
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::tile_op(), attrs, {input});
}

}  // namespace

TEST_CASE("tile canonicalize wants one non-negative count per axis", "[ops][tile]") {
  CHECK(reason(repeats({2, 1}), floats({"N", "3"})).empty());
  CHECK(reason(repeats({2, 1}), {ir::DataType::kFloat, ir::Shape::unknown()}).empty());
  CHECK_FALSE(reason({}, floats({"2"})).empty());
  CHECK_FALSE(reason(repeats({2}), floats({"2", "3"})).empty());
  CHECK_FALSE(reason(repeats({-1}), floats({"2"})).empty());
  CHECK_FALSE(reason(repeats({2}), {ir::DataType::kString, ir::Shape::of({2})}).empty());
}

TEST_CASE("tile infers multiplied sizes", "[ops][tile]") {
  CHECK(infer(repeats({7, 6, 4, 2}), floats({"2", "3", "4", "5"})) == "float32[14,18,16,10]");
  CHECK(infer(repeats({1, 2, 0}), floats({"N", "M", "K"})) == "float32[N,?,0]");
  CHECK(infer(repeats({3, 1}), {ir::DataType::kFloat, ir::Shape::unknown()}) == "float32[?,?]");
  CHECK(infer(repeats({3}), floats({"2", "3"})).rfind("error", 0) == 0);
}

TEST_CASE("tile kernel matches np.tile", "[ops][tile]") {
  const ir::Tensor grid = ir::Tensor::from_int64s({2, 2}, {1, 2, 3, 4});
  const ir::Tensor out = testing::run_def(ops::tile_op(), repeats({2, 3}), {&grid})[0];
  CHECK(out.dims() == Ints{4, 6});
  CHECK(out.to_int64s() ==
        Ints{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  CHECK(testing::run_def(ops::tile_op(), repeats({0, 1}), {&grid})[0].dims() == Ints{0, 2});

  const ir::Tensor cube = testing::random_tensor({2, 3, 4}, 6);
  const ir::Tensor tiled = testing::run_def(ops::tile_op(), repeats({2, 1, 3}), {&cube})[0];
  REQUIRE(tiled.dims() == Ints{4, 3, 12});
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 12; ++k) {
        CHECK(tiled.data<float>()[(i * 3 + j) * 12 + k] ==
              cube.data<float>()[((i % 2) * 3 + j) * 4 + k % 4]);
      }
    }
  }
}

TEST_CASE("tile reads its input and writes its output once", "[ops][tile]") {
  ir::Node node;
  ops::CostFeatures features =
      ops::tile_op().features(node, {floats({"2", "2"})}, {floats({"4", "6"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 16);
  CHECK(features.bytes_written == 96);
}
