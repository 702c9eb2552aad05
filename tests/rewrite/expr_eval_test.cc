// Expression evaluation: literals, shape arithmetic, comparisons, and the failures that mean "no match".
#include "rewrite/expr_eval.h"

#include <catch2/catch.hpp>

#include "rules/expr_parser.h"
#include "test_util.h"

namespace graphsub::rewrite {
namespace {

/// x: float32[2,3,4] input, n: float32[N,3] input, w: a [3,4] weight.
struct Bound {
  ir::Graph graph;
  std::map<std::string, ir::ValueId> values;
  std::map<std::string, std::vector<ir::ValueId>> lists;
  std::map<std::string, ir::AttrValue> variables{{"s", std::vector<int64_t>{2, 2}},
                                                 {"a", std::string("relu")},
                                                 {"k", int64_t{3}},
                                                 {"alpha", 0.5f}};
  Bound() {
    values["x"] = graph.add_input("x", testing::float_type({2, 3, 4}));
    values["n"] = graph.add_input("n", ir::TensorType{ir::DataType::kFloat,
                                                      ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(3)}}});
    values["w"] = graph.add_weight("w", ir::share(testing::random_tensor({3, 4}, 1)));
    values["ones"] = graph.add_weight("ones", ir::share(ir::Tensor::from_floats({2, 2}, {1, 1, 1, 1})));
    values["k"] = graph.add_weight("k", ir::share(ir::Tensor::from_int64s({}, {7})));
    values["n2"] = graph.add_input("n2", ir::TensorType{ir::DataType::kFloat,
                                                        ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(5)}}});
    values["m"] = graph.add_input("m", ir::TensorType{ir::DataType::kFloat,
                                                      ir::Shape{true, {ir::Dim::named("M"), ir::Dim::known(3)}}});
    lists["xs..."] = {values["x"], values["w"]};
  }

  EvalResult eval(const std::string& text) const {
    rules::TokenStream tokens(rules::tokenize(text, "test"), "test");
    const rules::Expr expr = tokens.expression();
    const EvalContext context{graph, values, variables,
                              [this](ir::ValueId id) { return graph.value(id).kind == ir::ValueKind::kWeight; },
                              &lists};
    return evaluate(expr, context);
  }

  /// The value as text, or "error: ..." when it has none.
  std::string text(const std::string& expr) const {
    const EvalResult result = eval(expr);
    return result.ok() ? to_string(result.value) : "error: " + result.error;
  }
};

TEST_CASE("literals and arithmetic") {
  const Bound b;
  CHECK(b.text("3") == "3");
  CHECK(b.text("-1") == "-1");
  CHECK(b.text("0.5") == "0.5");
  CHECK(b.text("\"relu\"") == "\"relu\"");
  CHECK(b.text("[1, 2]") == "[1, 2]");
  CHECK(b.text("[1, 2.5]") == "[1.0, 2.5]");
  CHECK(b.text("[]") == "[]");
  CHECK(b.text("7 / 2") == "3");
  CHECK(b.text("-7 / 2") == "-3");
  CHECK(b.text("7 / 2.0") == "3.5");
  CHECK(b.text("2 * 1.5") == "3.0");
  CHECK(b.text("1 + 2 * 3") == "7");
  CHECK(b.text("[1, 2] * 2") == "[2, 4]");
  CHECK(b.text("[1, 2] + [10, 20]") == "[11, 22]");
  CHECK(b.text("-[1, 2]") == "[-1, -2]");
  CHECK(b.text("[1, 2] ++ [3]") == "[1, 2, 3]");
  CHECK(b.text("[1] ++ [0.5]") == "[1.0, 0.5]");
}

TEST_CASE("values and variables of the match") {
  const Bound b;
  CHECK(b.text("shape(x)") == "[2, 3, 4]");
  CHECK(b.text("shape(x)[0]") == "2");
  CHECK(b.text("shape(x)[-1]") == "4");
  CHECK(b.text("rank(x)") == "3");
  CHECK(b.text("rank(n)") == "2");
  CHECK(b.text("dtype(x)") == "1");  // ONNX's number for float32, as Cast's `to` says it.
  CHECK(b.text("dtype(k)") == "7");
  CHECK(b.text("dtype(n) == 1") == "1");
  CHECK(b.text("weight(w)") == "1");
  CHECK(b.text("weight(x)") == "0");
  CHECK(b.text("?s") == "[2, 2]");
  CHECK(b.text("?s * ?k") == "[6, 6]");
  CHECK(b.text("?a") == "\"relu\"");
  CHECK(b.text("?alpha * 2") == "1.0");
}

TEST_CASE("comparisons give 0 or 1") {
  const Bound b;
  CHECK(b.text("shape(x)[1] == shape(w)[0]") == "1");
  CHECK(b.text("shape(x)[0] != 2") == "0");
  CHECK(b.text("rank(x) < 4") == "1");
  CHECK(b.text("rank(x) <= 2") == "0");
  CHECK(b.text("1 > 0.5") == "1");
  CHECK(b.text("2 >= 2") == "1");
  CHECK(b.text("?s == [2, 2]") == "1");
  CHECK(b.text("?s == [2, 2, 2]") == "0");
  CHECK(b.text("?a == \"relu\"") == "1");
  CHECK(b.text("?a != \"relu\"") == "0");
}

TEST_CASE("failures are errors, never exceptions") {
  const Bound b;
  CHECK(b.text("shape(n)") == "error: the shape of 'n' is not static: [N,3]");
  CHECK(b.text("shape(n)[1]") == "3");
  CHECK(b.text("shape(n)[-2]") == "error: dim -2 of 'n' is not static: [N,3]");
  CHECK(b.text("shape(missing)") == "error: 'missing' is not a bound value");
  CHECK(b.text("?missing") == "error: ?missing is not bound");
  CHECK(b.text("1 / 0") == "error: integer division by zero");
  CHECK(b.text("shape(x)[3]") == "error: index 3 is out of range for shape(x)");
  CHECK(b.text("[1, 2] + [1, 2, 3]") == "error: '+' on lists of different lengths");
  CHECK(b.text("\"a\" + 1") == "error: '+' needs numbers or lists of numbers");
  CHECK(b.text("[1] < [2, 3]") == "error: '<' needs lists of one length");
  CHECK(b.text("1 ++ [2]") == "error: '++' needs two lists");
}

TEST_CASE("two dims of one symbol are equal, other symbolic dims compare as unknown") {
  const Bound b;
  CHECK(b.text("shape(n)[0] == shape(n2)[0]") == "1");
  CHECK(b.text("shape(n)[-2] == shape(n2)[0]") == "1");
  CHECK(b.text("shape(n)[1] == shape(m)[1]") == "1");  // both known
  CHECK(b.text("shape(n)[1] == shape(n2)[1]") == "0");
  CHECK(b.text("shape(n)[0] == shape(m)[0]") == "error: dim 0 of 'n' is not static: [N,3]");
  CHECK(b.text("shape(n)[0] == shape(x)[0]") == "error: dim 0 of 'n' is not static: [N,3]");
  CHECK(b.text("shape(n)[0] != shape(n2)[0]") == "error: dim 0 of 'n' is not static: [N,3]");
}

TEST_CASE("an order between lists holds when it holds for every element") {
  const Bound b;
  CHECK(b.text("[1, 2] < [2, 3]") == "1");
  CHECK(b.text("[1, 3] < [2, 3]") == "0");
  CHECK(b.text("[1, 2, 3] >= 1") == "1");
  CHECK(b.text("[1, 0, 3] >= 1") == "0");
  CHECK(b.text("0 <= [0, 4]") == "1");
  CHECK(b.text("[-1, 2] * [-1, 2] >= 1") == "1");
}

TEST_CASE("conditions hold when non-zero") {
  const Bound b;
  const EvalContext context{b.graph, b.values, b.variables, nullptr};
  std::string error;
  CHECK(holds(rules::Expr::integer(1), context, &error));
  CHECK_FALSE(holds(rules::Expr::integer(0), context, &error));
  CHECK_FALSE(holds(rules::Expr::call(rules::Expr::Kind::kWeight, "w"), context, &error));  // no oracle
  CHECK_FALSE(holds(rules::Expr::call(rules::Expr::Kind::kShape, "n"), context, &error));
  CHECK(error == "the shape of 'n' is not static: [N,3]");
  CHECK_FALSE(holds(rules::Expr::string("yes"), context, &error));
  CHECK(error == "condition \"yes\" is not an int");
}

TEST_CASE("conversion to attributes and constant tensors") {
  const ir::AttrValue float_attr = 1.0f;
  CHECK(to_attr(EvalValue(int64_t{2})) == ir::AttrValue(int64_t{2}));
  CHECK(to_attr(EvalValue(int64_t{2}), &float_attr) == ir::AttrValue(2.0f));
  CHECK(to_attr(EvalValue(0.5)) == ir::AttrValue(0.5f));
  CHECK(to_attr(EvalValue(std::vector<int64_t>{1, 2})) == ir::AttrValue(std::vector<int64_t>{1, 2}));
  CHECK(to_attr(EvalValue(std::vector<double>{0.5})) == ir::AttrValue(std::vector<float>{0.5f}));
  CHECK(from_attr(ir::AttrValue(std::vector<std::string>{"a"})) == std::nullopt);

  const ir::Tensor scalar = *to_tensor(EvalValue(int64_t{4}));
  CHECK(scalar.dtype() == ir::DataType::kInt64);
  CHECK(scalar.dims().empty());
  const ir::Tensor list = *to_tensor(EvalValue(std::vector<double>{1.5, 2}));
  CHECK(list.dtype() == ir::DataType::kFloat);
  CHECK(list.dims() == std::vector<int64_t>{2});
  CHECK(testing::values_of(list) == std::vector<float>{1.5f, 2.0f});
  CHECK_FALSE(to_tensor(EvalValue(std::string("x"))));
}

}  // namespace
}  // namespace graphsub::rewrite

namespace graphsub::rewrite {

TEST_CASE("value, size and sizes read constants, element counts and list dims") {
  const Bound bound;
  CHECK(bound.text("value(ones)") == "1.0");
  CHECK(bound.text("value(k)") == "7");
  CHECK(bound.text("value(w)") == "error: the elements of 'w' differ");
  CHECK(bound.text("value(x)") == "error: 'x' has no constant data");
  CHECK(bound.text("size(x)") == "24");
  CHECK(bound.text("size(k)") == "1");
  CHECK(bound.text("size(n)").rfind("error: the shape of 'n' is not static", 0) == 0);
  CHECK(bound.text("sizes(xs..., 1)") == "[3, 4]");
  CHECK(bound.text("sizes(xs..., -1)") == "[4, 4]");
  CHECK(bound.text("sizes(xs..., 2)") == "error: a value of 'xs...' has no known dim at axis 2");
  CHECK(bound.text("sizes(ys..., 0)") == "error: 'ys...' is not a bound value list");
}

}  // namespace graphsub::rewrite
