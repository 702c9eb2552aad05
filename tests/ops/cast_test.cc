// Unit tests of Cast: the modelled forms and rejections, inference, conversions between every
// numeric type (float16 rounding against known bit patterns, integer wrap and saturation), cost.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "ir/float16.h"
#include "ops/indexing.h"
#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using ir::DataType;

namespace {

ir::Attributes to(DataType dtype) {
  ir::Attributes attrs;
  attrs.set("to", static_cast<int64_t>(dtype));
  return attrs;
}

/// The reason a Cast from `from` with these attributes stays opaque (empty when modelled).
std::string reason(const ir::Attributes& attrs, DataType from) {
  return testing::canonicalize_def(ops::cast_op(), attrs, {{from, ir::Shape::of({2})}}).reason;
}

/// A 1-D tensor of C++ type T holding `values`, typed `dtype`.
template <class T>
ir::Tensor tensor_of(DataType dtype, const std::vector<T>& values) {
  return testing::tensor_of<T>(dtype, {static_cast<int64_t>(values.size())}, values);
}

/// The elements of a Cast of `input` to `dtype`, read as C++ type T.
template <class T>
std::vector<T> cast(const ir::Tensor& input, DataType dtype) {
  const ir::Tensor out = testing::run_def(ops::cast_op(), to(dtype), {&input})[0];
  REQUIRE(out.dtype() == dtype);
  return testing::values_of<T>(out);
}

}  // namespace

TEST_CASE("cast canonicalize keeps 'to' and rejects what has no kernel", "[ops][cast]") {
  const ir::TensorType int64s{DataType::kInt64, ir::Shape::of({2})};
  CHECK(testing::canonicalize_def(ops::cast_op(), to(DataType::kFloat), {int64s}).attrs ==
        to(DataType::kFloat));
  CHECK(reason(to(DataType::kFloat16), DataType::kBool).empty());
  CHECK(reason(to(DataType::kUint64), DataType::kInt8).empty());

  CHECK_FALSE(reason(to(DataType::kString), DataType::kFloat).empty());
  CHECK_FALSE(reason(to(DataType::kFloat), DataType::kString).empty());
  CHECK_FALSE(reason(to(DataType::kBfloat16), DataType::kFloat).empty());
  CHECK_FALSE(reason(to(DataType::kFloat), DataType::kComplex64).empty());
  CHECK_FALSE(reason({}, DataType::kFloat).empty());
  ir::Attributes legacy;
  legacy.set("to", std::string("FLOAT"));
  CHECK_FALSE(reason(legacy, DataType::kDouble).empty());
  ir::Attributes invalid;
  invalid.set("to", int64_t{99});
  CHECK_FALSE(reason(invalid, DataType::kDouble).empty());
}

TEST_CASE("cast infers the target type on the input's shape", "[ops][cast]") {
  const ir::TensorType symbolic{DataType::kInt64,
                                ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(3)}}};
  CHECK(ir::to_string(
            testing::infer_def(ops::cast_op(), to(DataType::kFloat16), {symbolic}).outputs.at(0)) ==
        "float16[N,3]");
  const ir::TensorType unknown{DataType::kFloat, ir::Shape::unknown()};
  CHECK(ir::to_string(
            testing::infer_def(ops::cast_op(), to(DataType::kBool), {unknown}).outputs.at(0)) ==
        "bool[*]");
  CHECK_FALSE(testing::infer_def(ops::cast_op(), to(DataType::kString), {unknown}).ok());
  CHECK_FALSE(testing::infer_def(ops::cast_op(), {}, {unknown}).ok());
}

TEST_CASE("float16 conversion rounds to nearest even and decodes exactly", "[ops][cast]") {
  CHECK(ir::float16_from_double(1.0) == 0x3c00);
  CHECK(ir::float16_from_double(0.1) == 0x2e66);
  CHECK(ir::float16_from_double(-0.0) == 0x8000);
  CHECK(ir::float16_from_double(65504.0) == 0x7bff);
  CHECK(ir::float16_from_double(65519.99) == 0x7bff);
  CHECK(ir::float16_from_double(65520.0) == 0x7c00);
  CHECK(ir::float16_from_double(-INFINITY) == 0xfc00);
  CHECK(ir::float16_from_double(NAN) == 0x7e00);
  CHECK(ir::float16_from_double(1.0 + 0x1p-11) == 0x3c00);            // tie to even, down
  CHECK(ir::float16_from_double(1.0 + 3 * 0x1p-11) == 0x3c02);        // tie to even, up
  CHECK(ir::float16_from_double(1.0 + 0x1p-11 + 0x1p-40) == 0x3c01);  // no double rounding
  CHECK(ir::float16_from_double(2047.5 * 0x1p-10) == 0x4000);         // carries into the exponent
  CHECK(ir::float16_from_double(0x1p-24) == 0x0001);
  CHECK(ir::float16_from_double(0x1p-25) == 0x0000);  // tie to even, subnormal
  CHECK(ir::float16_from_double(3 * 0x1p-25) == 0x0002);
  CHECK(ir::float16_from_double(1023.5 * 0x1p-24) == 0x0400);  // rounds up to a normal
  CHECK(ir::float16_from_double(0x1p-14) == 0x0400);

  CHECK(ir::float16_to_double(0x0001) == 0x1p-24);
  CHECK(ir::float16_to_double(0x03ff) == 1023 * 0x1p-24);
  CHECK(ir::float16_to_double(0x7bff) == 65504.0);
  CHECK(ir::float16_to_double(0x3555) == 0.333251953125);
  CHECK(ir::float16_to_double(0xc000) == -2.0);
  CHECK(ir::float16_to_double(0xfc00) == -INFINITY);
  CHECK(std::isnan(ir::float16_to_double(0x7e00)));
  int round_trip_failures = 0;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const double value = ir::float16_to_double(static_cast<uint16_t>(bits));
    round_trip_failures += !std::isnan(value) && ir::float16_from_double(value) != bits;
  }
  CHECK(round_trip_failures == 0);
}

TEST_CASE("cast kernel converts between numeric types", "[ops][cast]") {
  const ir::Tensor floats =
      tensor_of<float>(DataType::kFloat, {-1.7f, 2.5f, NAN, 1e10f, -1e10f, 0.5f});
  CHECK(cast<int32_t>(floats, DataType::kInt32) ==
        std::vector<int32_t>{-1, 2, 0, std::numeric_limits<int32_t>::max(),
                             std::numeric_limits<int32_t>::min(), 0});
  CHECK(cast<uint8_t>(floats, DataType::kUint8) == std::vector<uint8_t>{0, 2, 0, 255, 0, 0});
  CHECK(cast<uint8_t>(floats, DataType::kBool) == std::vector<uint8_t>{1, 1, 1, 1, 1, 1});
  CHECK(cast<uint16_t>(floats, DataType::kFloat16) ==
        std::vector<uint16_t>{0xbecd, 0x4100, 0x7e00, 0x7c00, 0xfc00, 0x3800});
  CHECK(cast<double>(tensor_of<uint16_t>(DataType::kFloat16, {0x3555, 0x0001}),
                     DataType::kDouble) == std::vector<double>{0.333251953125, 0x1p-24});

  const ir::Tensor ints = ir::Tensor::from_int64s({5}, {300, -129, 0, (int64_t{1} << 24) + 1, -1});
  CHECK(cast<int8_t>(ints, DataType::kInt8) == std::vector<int8_t>{44, 127, 0, 1, -1});
  CHECK(cast<uint8_t>(ints, DataType::kBool) == std::vector<uint8_t>{1, 1, 0, 1, 1});
  CHECK(cast<float>(ints, DataType::kFloat) == std::vector<float>{300, -129, 0, 16777216.0f, -1});
  CHECK(cast<uint64_t>(ints, DataType::kUint64).back() == std::numeric_limits<uint64_t>::max());
  const ir::Tensor exact = ir::Tensor::from_int64s({1}, {(int64_t{1} << 53) - 1});
  CHECK(cast<double>(exact, DataType::kDouble)[0] == 9007199254740991.0);

  const ir::Tensor bools = tensor_of<uint8_t>(DataType::kBool, {0, 1});
  CHECK(cast<float>(bools, DataType::kFloat) == std::vector<float>{0, 1});
  CHECK(cast<int64_t>(bools, DataType::kInt64) == std::vector<int64_t>{0, 1});
  const ir::Tensor big =
      tensor_of<uint64_t>(DataType::kUint64, {std::numeric_limits<uint64_t>::max()});
  CHECK(cast<double>(big, DataType::kDouble)[0] == 18446744073709551616.0);
  CHECK(cast<int16_t>(big, DataType::kInt16)[0] == -1);
}

TEST_CASE("cast does one conversion per element", "[ops][cast]") {
  ir::Node node;
  ops::CostFeatures features =
      ops::cast_op().features(node, {{DataType::kInt64, ir::Shape::of({2, 3})}},
                              {{DataType::kFloat, ir::Shape::of({2, 3})}});
  CHECK(features.flops == 6);
  CHECK(features.bytes_read == 48);
  CHECK(features.bytes_written == 24);
}

TEST_CASE("cast reads saturate and round_mode as the cast without them", "[ops][cast]") {
  // They only change casts to float8 and float4 types, which have no kernel here.
  ir::Attributes saturate = to(DataType::kFloat);
  saturate.set("saturate", int64_t{0});
  saturate.set("round_mode", std::string("up"));
  const ir::TensorType int64s{DataType::kInt64, ir::Shape::of({2})};
  const testing::Canonicalized read = testing::canonicalize_def(ops::cast_op(), saturate, {int64s});
  CHECK(read.reason.empty());
  CHECK(read.attrs == to(DataType::kFloat));
  ir::Attributes other = to(DataType::kFloat);
  other.set("mode", int64_t{1});
  CHECK_FALSE(reason(other, DataType::kInt64).empty());
}
