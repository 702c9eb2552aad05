// run_symbolic: inputs and free weights become variables, fixed weights numbers; whole graphs of a
// rule's source and target come out provably equal; ops without meaning and unknown dims refuse.
#include <catch2/catch.hpp>

#include "ir/error.h"
#include "test_util.h"
#include "verify/symbolic_executor.h"

using namespace graphsub;
using verify::NoSemantics;
using verify::Semantics;
using verify::SymTensor;

namespace {

using Ints = std::vector<int64_t>;

/// Makes `id` a graph value named `name` and returns it.
ir::ValueId named(ir::Graph& graph, ir::ValueId id, const std::string& name) {
  graph.set_name(id, name);
  return id;
}

/// The one output of node `id`.
ir::ValueId output_of(const ir::Graph& graph, ir::NodeId id) { return graph.node(id).outputs.at(0); }

ir::ValueId add(ir::Graph& graph, ir::OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}) {
  return output_of(graph, testing::add_inferred(graph, op, std::move(inputs), std::move(attrs)));
}

/// True when Z3 shows every element of `a` equal to `b`'s.
bool provably_equal(Semantics& semantics, const SymTensor& a, const SymTensor& b) {
  if (a.dims != b.dims) return false;
  z3::expr_vector differences(semantics.context());
  for (std::size_t i = 0; i < a.elements.size(); ++i) differences.push_back(a.elements[i] != b.elements[i]);
  z3::solver solver(semantics.context());
  solver.add(z3::mk_or(differences));
  return solver.check() == z3::unsat;
}

/// The graph input x and the weights of a convolution with bias and a batch normalization.
std::map<std::string, ir::ValueId> add_operands(ir::Graph& graph) {
  std::map<std::string, ir::ValueId> ids{
      {"x", graph.add_input("x", testing::float_type({1, 2, 3, 3}))},
      {"w", graph.add_weight("w", ir::share(testing::random_tensor({2, 2, 3, 3}, 1)))}};
  uint32_t seed = 2;
  for (const char* name : {"b", "scale", "beta", "mean", "var"}) {
    ids[name] = graph.add_weight(name, ir::share(testing::random_tensor({2}, seed++, 0.5f, 1.5f)));
  }
  return ids;
}

ir::Attributes conv_attributes() {
  return testing::conv_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "none");
}

/// z = BatchNormalization(Conv(x, w, b), scale, beta, mean, var).
ir::Graph conv_batchnorm() {
  ir::Graph graph;
  std::map<std::string, ir::ValueId> in = add_operands(graph);
  ir::Attributes epsilon;
  epsilon.set("epsilon", 1e-5f);
  const ir::ValueId y = add(graph, ir::OpKind::kConv, {in["x"], in["w"], in["b"]}, conv_attributes());
  const ir::ValueId z = add(graph, ir::OpKind::kBatchNormalization,
                            {y, in["scale"], in["beta"], in["mean"], in["var"]}, epsilon);
  graph.set_outputs({named(graph, z, "z")});
  return graph;
}

/// What rule fold-conv-bias-batchnorm makes of conv_batchnorm(): z = Conv(x, w * f, (b - mean) * f
/// + beta), f = scale / sqrt(var + eps).
ir::Graph folded_conv_batchnorm() {
  ir::Graph graph;
  std::map<std::string, ir::ValueId> in = add_operands(graph);
  const ir::ValueId eps = graph.add_weight("eps", ir::share(ir::Tensor::from_floats({1}, {1e-5f})));
  const ir::ValueId root = add(graph, ir::OpKind::kSqrt, {add(graph, ir::OpKind::kAdd, {in["var"], eps})});
  const ir::ValueId f = add(graph, ir::OpKind::kDiv, {in["scale"], root});
  ir::Attributes column;
  column.set("shape", Ints{-1, 1, 1, 1});
  column.set("allowzero", int64_t{0});
  const ir::ValueId w2 =
      add(graph, ir::OpKind::kMul, {in["w"], add(graph, ir::OpKind::kReshape, {f}, column)});
  const ir::ValueId e =
      add(graph, ir::OpKind::kMul, {add(graph, ir::OpKind::kSub, {in["b"], in["mean"]}), f});
  const ir::ValueId b2 = add(graph, ir::OpKind::kAdd, {e, in["beta"]});
  graph.set_outputs({named(graph, add(graph, ir::OpKind::kConv, {in["x"], w2, b2}, conv_attributes()), "z")});
  return graph;
}

}  // namespace

TEST_CASE("inputs and free weights are variables, other weights their numbers", "[verify]") {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 3}));
  const ir::ValueId a = graph.add_weight("a", ir::share(testing::random_tensor({3}, 1)));
  const ir::TensorPtr b_data = ir::share(testing::random_tensor({3}, 2));
  const ir::ValueId b = graph.add_weight("b", b_data);
  const ir::ValueId y =
      named(graph, add(graph, ir::OpKind::kAdd, {add(graph, ir::OpKind::kMul, {x, a}), b}), "y");
  graph.set_outputs({y, b});
  Semantics semantics;
  const std::map<std::string, SymTensor> outputs = verify::run_symbolic(semantics, graph, {"a"});
  REQUIRE(outputs.size() == 2);
  const SymTensor xs = semantics.variables("x", {2, 3});
  const SymTensor as = semantics.variables("a", {3});
  const SymTensor bs = semantics.constant(*b_data);
  const SymTensor& result = outputs.at("y");
  REQUIRE(result.dims == Ints{2, 3});
  for (int64_t i = 0; i < result.size(); ++i) {
    CHECK(z3::eq(result.elements[i], xs.elements[i] * as.elements[i % 3] + bs.elements[i % 3]));
  }
  CHECK(outputs.at("b").elements[1].is_numeral());
}

TEST_CASE("a rule's source and target run to provably equal outputs", "[verify]") {
  const ir::Graph source = conv_batchnorm();
  const ir::Graph target = folded_conv_batchnorm();
  Semantics semantics;
  const std::set<std::string> free{"w", "b", "scale", "beta", "mean", "var"};
  const SymTensor before = verify::run_symbolic(semantics, source, free).at("z");
  const SymTensor after = verify::run_symbolic(semantics, target, free).at("z");
  CHECK(provably_equal(semantics, before, after));
  const SymTensor fixed =
      verify::run_symbolic(semantics, target, {"w", "b", "scale", "beta", "mean"}).at("z");
  CHECK_FALSE(provably_equal(semantics, before, fixed));
}

TEST_CASE("a node without semantics or a dim that is not known refuses the graph", "[verify]") {
  ir::Graph reduce_min;
  const ir::ValueId x = reduce_min.add_input("x", testing::float_type({2, 3}));
  ir::Attributes axes;
  axes.set("axes", std::vector<int64_t>{1});
  axes.set("keepdims", int64_t{1});
  reduce_min.set_outputs({named(reduce_min, add(reduce_min, ir::OpKind::kReduceMin, {x}, axes), "y")});
  Semantics semantics;
  CHECK_THROWS_AS(verify::run_symbolic(semantics, reduce_min, {}), NoSemantics);

  ir::Graph symbolic;
  const ir::TensorType batch{ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(3)}}};
  const ir::ValueId input = symbolic.add_input("x", batch);
  symbolic.set_outputs({named(symbolic, add(symbolic, ir::OpKind::kRelu, {input}), "y")});
  CHECK_THROWS_AS(verify::run_symbolic(semantics, symbolic, {}), Error);
}
