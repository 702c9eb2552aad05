// Unit tests of Range: operand checks, inference of an unknown length, the kernel allocating its
// output on every modelled type (exact counts at int64's limits), and its cost.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using ir::DataType;

namespace {

ir::TensorType scalar_type(DataType dtype) { return {dtype, ir::Shape::of({})}; }

/// Scalar types for start, limit and delta.
std::vector<ir::TensorType> scalars(DataType start, DataType limit, DataType delta) {
  return {scalar_type(start), scalar_type(limit), scalar_type(delta)};
}

std::string reason(const std::vector<ir::TensorType>& inputs, ir::Attributes attrs = {}) {
  return testing::canonicalize_def(ops::range_op(), std::move(attrs), inputs).reason;
}

template <class T>
ir::Tensor scalar(DataType dtype, T value) {
  return testing::tensor_of<T>(dtype, {}, {value});
}

/// Runs Range through the executor, which leaves the output for the kernel to allocate; returns
/// its elements.
template <class T>
std::vector<T> range(DataType dtype, T start, T limit, T delta) {
  const ir::Tensor a = scalar(dtype, start), b = scalar(dtype, limit), c = scalar(dtype, delta);
  const ir::Tensor out = testing::run_op(ir::OpKind::kRange, {}, {&a, &b, &c})[0];
  REQUIRE(out.dtype() == dtype);
  REQUIRE(out.rank() == 1);
  return testing::values_of<T>(out);
}

}  // namespace

TEST_CASE("range canonicalize wants three scalars of one modelled type", "[ops][range]") {
  const DataType f = DataType::kFloat;
  CHECK(reason(scalars(f, f, f)).empty());
  CHECK(reason(scalars(DataType::kInt64, DataType::kInt64, DataType::kInt64)).empty());
  CHECK_FALSE(reason(scalars(DataType::kInt64, DataType::kInt32, DataType::kInt64)).empty());
  CHECK_FALSE(reason(scalars(DataType::kInt16, DataType::kInt16, DataType::kInt16)).empty());
  std::vector<ir::TensorType> vector_start = scalars(f, f, f);
  vector_start[0].shape = ir::Shape::of({1});
  CHECK_FALSE(reason(vector_start).empty());
  CHECK_FALSE(reason({scalar_type(f), scalar_type(f)}).empty());
  ir::Attributes attrs;
  attrs.set("step", int64_t{1});
  CHECK_FALSE(reason(scalars(f, f, f), attrs).empty());
}

TEST_CASE("range infers a vector of unknown length", "[ops][range]") {
  const ir::TensorType d = scalar_type(DataType::kDouble);
  ops::InferResult result = testing::infer_def(ops::range_op(), {}, {d, d, d});
  REQUIRE(result.ok());
  CHECK(ir::to_string(result.outputs.at(0)) == "float64[?]");
  CHECK_FALSE(testing::infer_def(ops::range_op(), {}, {d, d, scalar_type(DataType::kFloat)}).ok());
}

TEST_CASE("range kernel counts ceil((limit - start) / delta) elements", "[ops][range]") {
  CHECK(range<float>(DataType::kFloat, 1, 5, 2) == std::vector<float>{1, 3});
  const float third = 0.3f;
  CHECK(range<float>(DataType::kFloat, 0, 1, third) ==
        std::vector<float>{0, third, 2 * third, 3 * third});
  CHECK(range<double>(DataType::kDouble, 1, 0, -0.25) == std::vector<double>{1, 0.75, 0.5, 0.25});
  CHECK(range<int32_t>(DataType::kInt32, 10, 4, -3) == std::vector<int32_t>{10, 7});
  CHECK(range<int32_t>(DataType::kInt32, 5, 1, 1).empty());
  CHECK(range<int64_t>(DataType::kInt64, 0, 4, 1) == std::vector<int64_t>{0, 1, 2, 3});
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  using Ints = std::vector<int64_t>;
  CHECK(range<int64_t>(DataType::kInt64, kMin, kMax, kMax) == Ints{kMin, -1, kMax - 1});
  CHECK(range<int64_t>(DataType::kInt64, kMax, kMin, kMin) == Ints{kMax, -1});

  CHECK_THROWS_AS(range<int64_t>(DataType::kInt64, 0, 4, 0), Error);
  CHECK_THROWS_AS(range<float>(DataType::kFloat, 0, NAN, 1), Error);
  CHECK_THROWS_AS(range<float>(DataType::kFloat, 0, INFINITY, 1), Error);
}

TEST_CASE("range does one multiply-add per element", "[ops][range]") {
  ir::Node node;
  const ir::TensorType f = scalar_type(DataType::kFloat);
  const ir::TensorType out{DataType::kFloat, ir::Shape::of({4})};
  ops::CostFeatures features = ops::range_op().features(node, {f, f, f}, {out});
  CHECK(features.flops == 4);
  CHECK(features.bytes_read == 12);
  CHECK(features.bytes_written == 16);
}
