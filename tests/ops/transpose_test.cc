// Unit tests of Transpose: canonical perm, shape inference with symbols, the kernel on several
// dtypes against an index formula, and cost features.
#include <catch2/catch.hpp>

#include <cstring>

#include "ops/op_def_testing.h"
#include "ops/op_list.h"
#include "test_util.h"

using namespace graphsub;
using testing::floats;

namespace {

ir::Attributes perm(const std::vector<int64_t>& axes) {
  ir::Attributes attrs;
  attrs.set("perm", axes);
  return attrs;
}

/// Canonicalizes a Transpose of `input`; returns the reason (empty when modelled).
std::string canonicalize(ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::canonicalize_in_place(ops::transpose_op(), attrs, {input}, 1, 13);
}

/// The inferred output type as text, or the error.
std::string infer(const ir::Attributes& attrs, const ir::TensorType& input) {
  return testing::infer_text(ops::transpose_op(), attrs, {input});
}

/// Runs the kernel on an output allocated from the op's own shape inference.
ir::Tensor run(const ir::Attributes& attrs, const ir::Tensor& input) {
  return testing::run_def(ops::transpose_op(), attrs, {&input})[0];
}

/// Checks every element of a transposed tensor: out[i] == in[j] with j[perm[k]] = i[k].
template <class T>
void check_transposed(const ir::Tensor& in, const ir::Tensor& out,
                      const std::vector<int64_t>& axes) {
  const std::vector<int64_t>& in_dims = in.dims();
  for (int64_t flat = 0; flat < out.num_elements(); ++flat) {
    std::vector<int64_t> in_index(in_dims.size());
    int64_t rest = flat;
    for (std::size_t k = axes.size(); k-- > 0;) {
      in_index[axes[k]] = rest % out.dims()[k];
      rest /= out.dims()[k];
    }
    int64_t source = 0;
    for (std::size_t a = 0; a < in_dims.size(); ++a) source = source * in_dims[a] + in_index[a];
    REQUIRE(out.data<T>()[flat] == in.data<T>()[source]);
  }
}

}  // namespace

TEST_CASE("transpose canonicalize fills the reversed perm, rejects bad ones", "[ops][transpose]") {
  ir::Attributes attrs;
  CHECK(canonicalize(attrs, floats({"N", "3", "4"})).empty());
  CHECK(attrs == perm({2, 1, 0}));

  ir::Attributes explicit_perm = perm({0, 2, 1});
  CHECK(canonicalize(explicit_perm, floats({"2", "3", "4"})).empty());
  CHECK(explicit_perm == perm({0, 2, 1}));

  ir::Attributes unknown_rank_perm = perm({1, 0});
  CHECK(canonicalize(unknown_rank_perm, {ir::DataType::kFloat, ir::Shape::unknown()}).empty());

  ir::Attributes none;
  CHECK_FALSE(canonicalize(none, {ir::DataType::kFloat, ir::Shape::unknown()}).empty());
  ir::Attributes repeated = perm({0, 0, 1});
  CHECK_FALSE(canonicalize(repeated, floats({"2", "3", "4"})).empty());
  ir::Attributes negative = perm({-1, 0, 1});
  CHECK_FALSE(canonicalize(negative, floats({"2", "3", "4"})).empty());
  ir::Attributes short_perm = perm({1, 0});
  CHECK_FALSE(canonicalize(short_perm, floats({"2", "3", "4"})).empty());
  ir::Attributes strings = perm({1, 0});
  CHECK_FALSE(canonicalize(strings, {ir::DataType::kString, ir::Shape::of({2, 2})}).empty());
  ir::Attributes unknown_attribute = perm({1, 0});
  unknown_attribute.set("axis", int64_t{0});
  CHECK_FALSE(canonicalize(unknown_attribute, floats({"2", "3"})).empty());
}

TEST_CASE("transpose infers permuted dims and keeps symbols", "[ops][transpose]") {
  CHECK(infer(perm({1, 2, 0}), floats({"2", "3", "4"})) == "float32[3,4,2]");
  CHECK(infer(perm({2, 0, 1}), floats({"N", "3", "?"})) == "float32[?,N,3]");
  CHECK(infer(perm({}), floats({})) == "float32[]");
  CHECK(infer(perm({1, 0}), {ir::DataType::kFloat, ir::Shape::unknown()}) == "float32[?,?]");
  CHECK(infer(perm({1, 0}), floats({"2", "3", "4"})).rfind("error", 0) == 0);
  CHECK(infer(perm({0, 0}), floats({"2", "3"})).rfind("error", 0) == 0);
}

TEST_CASE("transpose kernel moves every element to its permuted index", "[ops][transpose]") {
  const std::vector<int64_t> axes{3, 1, 0, 2};
  const ir::Tensor floats_in = testing::random_tensor({2, 3, 4, 5}, 7);
  ir::Tensor floats_out = run(perm(axes), floats_in);
  CHECK(floats_out.dims() == std::vector<int64_t>{5, 3, 2, 4});
  check_transposed<float>(floats_in, floats_out, axes);

  std::vector<int64_t> values(2 * 3 * 4 * 5);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<int64_t>(i * 7919 % 1000) - 500;
  }
  const ir::Tensor ints_in = ir::Tensor::from_int64s({2, 3, 4, 5}, values);
  check_transposed<int64_t>(ints_in, run(perm(axes), ints_in), axes);

  ir::Tensor bytes_in(ir::DataType::kUint8, {3, 7});
  for (int64_t i = 0; i < bytes_in.num_elements(); ++i) {
    bytes_in.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 5);
  }
  check_transposed<uint8_t>(bytes_in, run(perm({1, 0}), bytes_in), {1, 0});

  const ir::Tensor scalar = ir::Tensor::from_floats({}, {2.5f});
  CHECK(run(perm({}), scalar).data<float>()[0] == 2.5f);
}

TEST_CASE("transpose reads and writes every byte once", "[ops][transpose]") {
  ir::Node node;
  ops::CostFeatures features = ops::transpose_op().features(node, {floats({"2", "3", "4"})},
                                                            {floats({"4", "3", "2"})});
  CHECK(features.flops == 0);
  CHECK(features.bytes_read == 96);
  CHECK(features.bytes_written == 96);
}
