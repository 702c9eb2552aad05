// Tests of Einsum: equation checks, shapes with symbols and ellipses, implicit output order, the
// kernel on products, diagonals and broadcasts, and the FLOP count.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "ops/einsum.h"
#include "ops/op_def_testing.h"
#include "ops/op_list.h"

namespace graphsub {
namespace {

using ir::DataType;
using testing::floats;

ir::Attributes equation(const std::string& text) {
  ir::Attributes attrs;
  attrs.set("equation", text);
  return attrs;
}

std::string type_for(const std::string& text, const std::vector<ir::TensorType>& inputs) {
  return testing::infer_text(ops::einsum_op(), equation(text), inputs);
}

std::vector<float> values_of(const ir::Tensor& tensor) {
  return {tensor.data<float>(), tensor.data<float>() + tensor.num_elements()};
}

ir::Tensor counting(std::vector<int64_t> dims) {
  ir::Tensor tensor(DataType::kFloat, std::move(dims));
  for (int64_t i = 0; i < tensor.num_elements(); ++i) tensor.mutable_data<float>()[i] = static_cast<float>(i + 1);
  return tensor;
}

}  // namespace

TEST_CASE("Einsum checks its equation against the operands", "[ops][einsum]") {
  CHECK(ops::check_einsum_equation("ij,jk->ik", 2).empty());
  CHECK(ops::check_einsum_equation(" b i j , b j k -> b i k ", 2).empty());
  CHECK(ops::check_einsum_equation("...ii->...i", 1).empty());
  CHECK(ops::check_einsum_equation("ij,jk", 2).empty());
  CHECK_FALSE(ops::check_einsum_equation("ij,jk->ik", 3).empty());
  CHECK_FALSE(ops::check_einsum_equation("ij->ix", 1).empty());
  CHECK_FALSE(ops::check_einsum_equation("ij->ii", 1).empty());
  CHECK_FALSE(ops::check_einsum_equation("i1->i", 1).empty());
  CHECK_FALSE(ops::check_einsum_equation("......i->i", 1).empty());
  const testing::Canonicalized missing = testing::canonicalize_def(ops::einsum_op(), {}, {floats({"2", "3"})});
  CHECK(missing.reason == "Einsum without an equation");
  const testing::Canonicalized ints = testing::canonicalize_def(
      ops::einsum_op(), equation("ij->ji"), {testing::int64s({"2", "3"})});
  CHECK_FALSE(ints.reason.empty());
  CHECK(testing::canonicalize_def(ops::einsum_op(), equation("ij,jk->ik"), {floats({"2", "3"}), floats({"3", "4"})})
            .reason.empty());
}

TEST_CASE("Einsum infers the output from the labels, symbols and ellipses", "[ops][einsum]") {
  // MaxViT's attention scores: the batch and window counts are symbols of the export.
  CHECK(type_for("bghid,bghjd->bghij", {floats({"B", "G", "16", "49", "32"}), floats({"B", "G", "16", "49", "32"})}) ==
        "float32[B,G,16,49,49]");
  CHECK(type_for("bghij,bghjd->bghid", {floats({"B", "G", "16", "49", "49"}), floats({"x", "y", "16", "49", "D"})}) ==
        "float32[B,G,16,49,D]");
  // A known size wins over a symbol for the same label.
  CHECK(type_for("ij,jk->ik", {floats({"M", "K"}), floats({"K", "8"})}) == "float32[M,8]");
  // Implicit output: the labels seen once, in ASCII order (upper case first), after the ellipsis.
  CHECK(type_for("ba", {floats({"2", "3"})}) == "float32[3,2]");
  CHECK(type_for("ij,jk", {floats({"2", "3"}), floats({"3", "4"})}) == "float32[2,4]");
  CHECK(type_for("aB", {floats({"2", "3"})}) == "float32[3,2]");
  CHECK(type_for("...ij,...jk->...ik", {floats({"5", "1", "2", "3"}), floats({"4", "3", "6"})}) ==
        "float32[5,4,2,6]");
  CHECK(type_for("...ii->...i", {floats({"7", "3", "3"})}) == "float32[7,3]");
  CHECK(type_for("i,i->", {floats({"5"}), floats({"5"})}) == "float32[]");
  CHECK(type_for("ij,jk->ik", {floats({"2", "3"}), floats({"4", "5"})}).rfind("error:", 0) == 0);
  CHECK(type_for("ijk->i", {floats({"2", "3"})}).rfind("error:", 0) == 0);
  CHECK(type_for("ij->i", {testing::kUnknownRank}) == "float32[*]");
}

TEST_CASE("Einsum's kernel computes products, sums, diagonals and broadcasts", "[ops][einsum]") {
  const ir::Tensor a = counting({2, 3});
  const ir::Tensor b = counting({3, 2});
  // [[1,2,3],[4,5,6]] x [[1,2],[3,4],[5,6]]
  CHECK(values_of(testing::run_def(ops::einsum_op(), equation("ij,jk->ik"), {&a, &b})[0]) ==
        std::vector<float>{22, 28, 49, 64});
  CHECK(values_of(testing::run_def(ops::einsum_op(), equation("ij->ji"), {&a})[0]) ==
        std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(values_of(testing::run_def(ops::einsum_op(), equation("ij->j"), {&a})[0]) == std::vector<float>{5, 7, 9});
  CHECK(values_of(testing::run_def(ops::einsum_op(), equation("ij->"), {&a})[0]) == std::vector<float>{21});
  const ir::Tensor square = counting({2, 2, 2});
  CHECK(values_of(testing::run_def(ops::einsum_op(), equation("...ii->...i"), {&square})[0]) ==
        std::vector<float>{1, 4, 5, 8});
  // The ellipsis of x [1, 2] broadcasts against y's [3].
  const ir::Tensor x = counting({1, 2});
  const ir::Tensor y = counting({3, 2});
  CHECK(values_of(testing::run_def(ops::einsum_op(), equation("...i,...i->..."), {&x, &y})[0]) ==
        std::vector<float>{5, 11, 17});
  // Batched product with a transposed right operand, as attention scores are written.
  const ir::Tensor q = counting({2, 1, 2});
  const ir::Tensor k = counting({2, 3, 2});
  CHECK(values_of(testing::run_def(ops::einsum_op(), equation("bid,bjd->bij"), {&q, &k})[0]) ==
        std::vector<float>{5, 11, 17, 53, 67, 81});
}

TEST_CASE("Einsum counts a multiply-add per combination of its labels", "[ops][einsum]") {
  const ops::OpDef def = ops::einsum_op();
  const std::vector<ir::TensorType> inputs{floats({"4", "2", "3"}), floats({"4", "3", "5"})};
  const std::vector<ir::TensorType> outputs{floats({"4", "2", "5"})};
  const ops::CostFeatures features =
      def.features(testing::node_of(def, equation("bij,bjk->bik")), inputs, outputs);
  CHECK(features.flops == 2.0 * 4 * 2 * 3 * 5);
  CHECK(features.bytes_read == 4.0 * (24 + 60));
  CHECK(features.bytes_written == 4.0 * 40);
}

}  // namespace graphsub
