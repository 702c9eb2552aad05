// Rewriter: rules before ⇒ after, numerically equivalent, and the rewrites it must reject.
#include "rewrite/rewriter.h"

#include <catch2/catch.hpp>

#include "onnx_io/onnx_io.h"
#include "rewrite/matcher.h"
#include "rewrite/rewrite_testing.h"
#include "runtime/equivalence.h"

namespace graphsub::rewrite {
namespace {

using testing::add_canonical;
using testing::out;
using testing::parse_rule;

/// The ops of the live nodes in topological order.
std::vector<ir::OpKind> ops_of(const ir::Graph& graph) {
  std::vector<ir::OpKind> kinds;
  const std::vector<ir::NodeId> order = graph.topological_order().value();
  for (ir::NodeId id : order) kinds.push_back(graph.node(id).op);
  return kinds;
}

/// The rewritten graph; fails the test when the rewrite is rejected.
ir::Graph applied(const ir::Graph& graph, const Match& match) {
  std::string why_not;
  std::optional<ir::Graph> result = apply(graph, match, &why_not);
  INFO(why_not);
  REQUIRE(result);
  return std::move(*result);
}

TEST_CASE("conv+relu fuses into one conv that computes the same") {
  const rules::Rule rule = parse_rule(testing::kFuseConvRelu);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, 3, 8, 8}));
  const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({4, 3, 3, 3}, 1)));
  ir::Attributes attrs;
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ir::NodeId conv = add_canonical(graph, ir::OpKind::kConv, {x, w}, attrs);
  const ir::NodeId relu = add_canonical(graph, ir::OpKind::kRelu, {out(graph, conv)});
  graph.set_name(out(graph, relu), "z");
  graph.set_outputs({out(graph, relu)});
  const uint64_t before = graph.structural_hash();

  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  const ir::Graph result = applied(graph, matches[0]);

  CHECK(graph.structural_hash() == before);  // the original is untouched
  CHECK(graph.node_count() == 2);
  REQUIRE(ops_of(result) == std::vector<ir::OpKind>{ir::OpKind::kConv});
  const ir::Node& fused = result.node(result.node_ids()[0]);
  CHECK(fused.attrs.get_string("activation", "") == "relu");
  CHECK(fused.attrs.get_ints("pads", {}) == std::vector<int64_t>{1, 1, 1, 1});
  CHECK(result.output_names() == std::vector<std::string>{"z"});
  CHECK(result.outputs()[0] == fused.outputs[0]);
  CHECK(runtime::check_equivalent(graph, result).passed());
}

/// x [2,4] times w1 [4,3] and w2 [4,5], both products graph outputs "y1" and "y2".
ir::Graph two_products() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 4}));
  const ir::ValueId w1 = graph.add_weight("w1", ir::share(testing::random_tensor({4, 3}, 5)));
  const ir::ValueId w2 = graph.add_weight("w2", ir::share(testing::random_tensor({4, 5}, 6)));
  const ir::NodeId a = add_canonical(graph, ir::OpKind::kMatMul, {x, w1});
  const ir::NodeId b = add_canonical(graph, ir::OpKind::kMatMul, {x, w2});
  graph.set_name(out(graph, a), "y1");
  graph.set_name(out(graph, b), "y2");
  graph.set_outputs({out(graph, a), out(graph, b)});
  return graph;
}

TEST_CASE("two matmuls sharing an input merge into one matmul and a split with two outputs") {
  const rules::Rule rule = parse_rule(testing::kMergeMatMuls);
  const ir::Graph graph = two_products();
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 2);
  for (const Match& match : matches) {
    const ir::Graph result = applied(graph, match);
    CHECK(ops_of(result) ==
          std::vector<ir::OpKind>{ir::OpKind::kConcat, ir::OpKind::kMatMul, ir::OpKind::kSplit});
    CHECK(result.output_names() == std::vector<std::string>{"y1", "y2"});
    const ir::Node& split = result.node(result.value(result.outputs()[0]).producer);
    CHECK(split.op == ir::OpKind::kSplit);
    CHECK(result.value(result.outputs()[0]).type == graph.value(graph.outputs()[0]).type);
    CHECK(result.value(result.outputs()[1]).type == graph.value(graph.outputs()[1]).type);
    CHECK(runtime::check_equivalent(graph, result).passed());
  }
}

TEST_CASE("a rewrite that would create a cycle is rejected (TASO Fig. 6)") {
  // z = A × relu(A × B): merging the two products makes the concat read relu, which reads the split.
  const rules::Rule rule = parse_rule(testing::kMergeMatMuls);
  ir::Graph graph;
  const ir::ValueId a = graph.add_input("A", testing::float_type({4, 4}));
  const ir::ValueId b = graph.add_weight("B", ir::share(testing::random_tensor({4, 4}, 2)));
  const ir::NodeId inner = add_canonical(graph, ir::OpKind::kMatMul, {a, b});
  const ir::NodeId relu = add_canonical(graph, ir::OpKind::kRelu, {out(graph, inner)});
  const ir::NodeId outer = add_canonical(graph, ir::OpKind::kMatMul, {a, out(graph, relu)});
  graph.set_outputs({out(graph, outer)});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 2);
  for (const Match& match : matches) {
    std::string why_not;
    CHECK_FALSE(apply(graph, match, &why_not));
    CHECK(why_not == "merge-matmuls: the rewrite would create a cycle");
  }
}

TEST_CASE("two convs with equal parameters merge, the variables and @y1 carry their parameters") {
  const rules::Rule rule = parse_rule(testing::kMergeConvs);
  const ir::Graph graph = testing::two_convs({2, 2}, {2, 2});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 2);
  const ir::Graph result = applied(graph, matches[0]);
  CHECK(ops_of(result) == std::vector<ir::OpKind>{ir::OpKind::kConcat, ir::OpKind::kConv, ir::OpKind::kSplit});
  const ir::Node& split = result.node(result.value(result.outputs()[0]).producer);
  const ir::Node& conv = result.node(result.value(split.inputs[0]).producer);
  CHECK(conv.attrs.get_ints("strides", {}) == std::vector<int64_t>{2, 2});
  CHECK(result.output_names() == std::vector<std::string>{"y1", "y2"});
  CHECK(runtime::check_equivalent(graph, result).passed());
}

TEST_CASE("symbolic dims pass through a rewrite and compare by name") {
  const rules::Rule rule = parse_rule(testing::kFuseConvRelu);
  ir::Graph graph;
  const ir::Shape shape{true, {ir::Dim::named("N"), ir::Dim::known(3), ir::Dim::known(6), ir::Dim::known(6)}};
  const ir::ValueId x = graph.add_input("x", ir::TensorType{ir::DataType::kFloat, shape});
  const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({4, 3, 3, 3}, 1)));
  const ir::NodeId conv = add_canonical(graph, ir::OpKind::kConv, {x, w});
  const ir::NodeId relu = add_canonical(graph, ir::OpKind::kRelu, {out(graph, conv)});
  graph.set_outputs({out(graph, relu)});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  const ir::Graph result = applied(graph, matches[0]);
  CHECK(result.value(result.outputs()[0]).type.shape.dims[0] == ir::Dim::named("N"));
  runtime::CheckOptions options;
  options.dims["N"] = 2;
  CHECK(runtime::check_equivalent(graph, result, options).passed());
}

const char* const kReluToTranspose = R"(
rule relu-to-transpose
  source
    y = Relu(x)
  target
    t = Transpose(x) [perm = [1, 0]]
  map y -> t
end
)";

TEST_CASE("a mapped pair whose types differ rejects the rewrite") {
  const rules::Rule rule = parse_rule(kReluToTranspose);
  auto graph_of = [](const std::vector<int64_t>& dims) {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("x", testing::float_type(dims));
    graph.set_outputs({out(graph, add_canonical(graph, ir::OpKind::kRelu, {x}))});
    return graph;
  };
  const ir::Graph oblong = graph_of({2, 3});
  const std::vector<Match> matches = Matcher::find(oblong, rule);
  REQUIRE(matches.size() == 1);
  std::string why_not;
  CHECK_FALSE(apply(oblong, matches[0], &why_not));
  CHECK(why_not == "relu-to-transpose: map y -> t: types differ, float32[2,3] vs float32[3,2]");
  const ir::Graph square = graph_of({3, 3});
  CHECK(apply(square, Matcher::find(square, rule).at(0)));
}

const char* const kAddAsSum = R"(
rule add-as-sum
  source
    s = Add(x, y)
  target
    s2 = Sum(x, y)
  map s -> s2
end
)";

TEST_CASE("a target value whose type knows less than the source's takes the source's type") {
  // x [a, 4] + y [b, 4]: graphsub's broadcast cannot name the first dim, while ONNX's inference
  // named it (an exporter's unk__12): the Sum computes the same tensor, so it keeps [c, 4].
  const rules::Rule rule = parse_rule(kAddAsSum);
  ir::Graph graph;
  const auto typed = [](const std::string& symbol) {
    return ir::TensorType{ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named(symbol), ir::Dim::known(4)}}};
  };
  const ir::ValueId x = graph.add_input("x", typed("a"));
  const ir::ValueId y = graph.add_input("y", typed("b"));
  const ir::NodeId add = add_canonical(graph, ir::OpKind::kAdd, {x, y});
  graph.set_type(out(graph, add), typed("c"));
  const ir::NodeId relu = add_canonical(graph, ir::OpKind::kRelu, {out(graph, add)});
  graph.set_outputs({out(graph, relu)});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  std::string why_not;
  const std::optional<ir::Graph> result = apply(graph, matches[0], &why_not);
  INFO(why_not);
  REQUIRE(result);
  const ir::Node& relu_after = result->node(result->value(result->outputs()[0]).producer);
  const ir::Value& sum = result->value(relu_after.inputs[0]);
  CHECK(result->node(sum.producer).op == ir::OpKind::kSum);
  CHECK(sum.type == typed("c"));
  CHECK_FALSE(ir::generalizes(typed("c"), typed("a")));  // another symbol is no generalization
  CHECK(ir::generalizes(ir::TensorType{ir::DataType::kFloat, ir::Shape{true, {ir::Dim{}, ir::Dim::known(4)}}},
                        typed("a")));
  CHECK_FALSE(ir::generalizes(ir::TensorType{ir::DataType::kFloat, ir::Shape{true, {ir::Dim{}, ir::Dim::known(5)}}},
                              typed("a")));
}

const char* const kIdentityReshape = R"(
rule eliminate-identity-reshape
  source
    y = Reshape(x)
  target
  map y -> x
end
)";

TEST_CASE("a target value of unknown rank does not take the source's type") {
  // Reshape(o, [2, 3]) where o is an opaque node's output whose rank nothing knows (in the
  // rotary embedding node tests, a Concat of two rank-5 tensors): that the Reshape keeps its
  // input is not known, so eliminating it must not take o for a [2, 3] tensor.
  const rules::Rule rule = parse_rule(kIdentityReshape);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 3, 1}));
  const ir::NodeId opaque = graph.add_node(ir::OpKind::kOpaque, {x}, {{ir::TensorType{ir::DataType::kFloat, {}}, "o"}},
                                           {}, "op", std::make_shared<ir::OpaqueInfo>());
  ir::Attributes shape;
  shape.set("shape", std::vector<int64_t>{2, 3});
  const ir::NodeId reshape = add_canonical(graph, ir::OpKind::kReshape, {out(graph, opaque)}, shape);
  graph.set_outputs({out(graph, reshape)});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  std::string why_not;
  CHECK_FALSE(apply(graph, matches[0], &why_not));
  CHECK(why_not == "eliminate-identity-reshape: map y -> x: types differ, float32[2,3] vs float32[*]");
}

const char* const kBadConcat = R"(
rule bad-concat
  source
    y = Relu(x)
  target
    c = Concat(x, x) [axis = 5]
  map y -> c
end
)";

TEST_CASE("a target that shape inference rejects rejects the rewrite") {
  const rules::Rule rule = parse_rule(kBadConcat);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 3}));
  graph.set_outputs({out(graph, add_canonical(graph, ir::OpKind::kRelu, {x}))});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  std::string why_not;
  CHECK_FALSE(apply(graph, matches[0], &why_not));
  CHECK_THAT(why_not, Catch::StartsWith("bad-concat: Concat (target line"));
}

const char* const kScaleByConstant = R"(
rule double-add
  source
    y = Add(x, x)
  target
    const two = 2.0
    y2 = Mul(x, two)
  map y -> y2
end
)";

TEST_CASE("target constants become weights") {
  const rules::Rule rule = parse_rule(kScaleByConstant);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 3}));
  graph.set_outputs({out(graph, add_canonical(graph, ir::OpKind::kAdd, {x, x}))});
  graph.set_name(graph.outputs()[0], "y");
  graph.set_outputs({graph.outputs()[0]});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  const ir::Graph result = applied(graph, matches[0]);
  REQUIRE(ops_of(result) == std::vector<ir::OpKind>{ir::OpKind::kMul});
  const ir::Value& two = result.value(result.node(result.node_ids()[0]).inputs[1]);
  CHECK(two.kind == ir::ValueKind::kWeight);
  CHECK(two.type == ir::TensorType{ir::DataType::kFloat, ir::Shape::of({})});
  CHECK(result.output_names() == std::vector<std::string>{"y"});
  CHECK(runtime::check_equivalent(graph, result).passed());
}

const char* const kModelRules = R"(
# Fold an inference-mode batch normalization into the convolution before it.
#   bn(conv(x, w, b)) -> conv(x, w * s / sqrt(v + eps), (b - m) * s / sqrt(v + eps) + bb)
rule fold-bn-into-conv
  source
    y = Conv(x, w, b) [activation = "none"]
    z = BatchNormalization(y, s, bb, m, v) [epsilon = ?eps]
  where weight(w)
  where weight(s)
  where rank(w) == 4
  target
    const eps = ?eps
    t = Add(v, eps)
    r = Sqrt(t)
    f = Div(s, r)
    fr = Reshape(f) [shape = [-1, 1, 1, 1]]
    w2 = Mul(w, fr)
    d = Sub(b, m)
    e = Mul(d, f)
    b2 = Add(e, bb)
    z2 = Conv(x, w2, b2) [@y]
  map z -> z2
end

# Fuse a ReLU into the convolution (with bias) that feeds it.
#   relu(conv(x, w, b)) -> conv[activation=relu](x, w, b)
rule fuse-conv-bias-relu
  source
    y = Conv(x, w, b) [activation = "none"]
    z = Relu(y)
  target
    z2 = Conv(x, w, b) [@y, activation = "relu"]
  map z -> z2
end
)";

/// How many live nodes of `graph` have op `kind`.
std::size_t count_of(const ir::Graph& graph, ir::OpKind kind) {
  std::size_t count = 0;
  for (ir::NodeId id : graph.node_ids()) count += graph.node(id).op == kind;
  return count;
}

TEST_CASE("rewriting an imported model to a fixpoint, one match at a time, keeps what it computes") {
  const std::vector<rules::Rule> rules = rules::parse_rules(kModelRules, "test.rules");
  const Matcher matcher(rules);
  const ir::Graph model = onnx_io::import_model(GRAPHSUB_SOURCE_DIR "/models/small_cnn.onnx");
  ir::Graph graph = model;
  std::vector<std::string> applied_rules;
  for (std::vector<Match> matches = matcher.find_all(graph); !matches.empty(); matches = matcher.find_all(graph)) {
    applied_rules.push_back(matches[0].rule->name);
    graph = applied(graph, matches[0]);
  }
  CHECK(applied_rules == std::vector<std::string>{"fold-bn-into-conv", "fold-bn-into-conv", "fold-bn-into-conv",
                                                  "fuse-conv-bias-relu", "fuse-conv-bias-relu"});
  CHECK(count_of(graph, ir::OpKind::kBatchNormalization) == 0);
  CHECK(count_of(graph, ir::OpKind::kRelu) == 1);  // the one after the residual Add stays
  CHECK(graph.output_names() == model.output_names());
  CHECK(runtime::check_equivalent(model, graph).passed());
}

/// a*b + a*c -> a*(b + c), written with the operands in one order.
const char* const kFactor = R"(
rule factor
  source
    p = Mul(a, b)
    q = Mul(a, c)
    z = Add(p, q)
  target
    s = Add(b, c)
    z2 = Mul(a, s)
  map z -> z2
end
)";

TEST_CASE("a commutative operator's operands match either way round, and the rewrite computes the same") {
  const rules::Rule rule = parse_rule(kFactor);
  // z = (x * r) + (y * x): the shared factor x is the left operand of one product only.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 3}));
  const ir::ValueId y = graph.add_input("y", testing::float_type({2, 3}));
  const ir::ValueId r = graph.add_input("r", testing::float_type({1, 3}));
  const ir::NodeId xr = add_canonical(graph, ir::OpKind::kMul, {x, r});
  const ir::NodeId yx = add_canonical(graph, ir::OpKind::kMul, {y, x});
  const ir::NodeId sum = add_canonical(graph, ir::OpKind::kAdd, {out(graph, yx), out(graph, xr)});
  graph.set_outputs({out(graph, sum)});

  CHECK(Matcher::find(graph, rule, Matcher::OperandOrder::kAsWritten).empty());
  // Two bindings reach these three nodes (Add's operands either way); the first is kept.
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  CHECK(matches[0].values.at("a") == x);
  const ir::Graph result = applied(graph, matches[0]);
  CHECK(ops_of(result) == std::vector<ir::OpKind>{ir::OpKind::kAdd, ir::OpKind::kMul});
  CHECK(runtime::check_equivalent(graph, result).passed());

  // A Matcher over a rule set swaps too; one value read twice binds once.
  const std::vector<rules::Rule> rules{rule};
  CHECK(Matcher(rules).find_all(graph).size() == 1);
  ir::Graph square;
  const ir::ValueId v = square.add_input("v", testing::float_type({4}));
  const ir::NodeId vv = add_canonical(square, ir::OpKind::kMul, {v, v});
  square.set_outputs({out(square, add_canonical(square, ir::OpKind::kAdd, {out(square, vv), out(square, vv)}))});
  CHECK(Matcher(rules).find_all(square).empty());  // the products are one node, not two
}

}  // namespace
}  // namespace graphsub::rewrite
