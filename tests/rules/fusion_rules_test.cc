// Every rule of rules/fusion.rules, applied to a graph it matches, computes what the graph did; the
// rules refuse what they must not fuse, and deliberately wrong variants fail the numeric check.
#include <catch2/catch.hpp>

#include <iterator>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "runtime/equivalence.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::add_inferred;
using testing::float_type;

std::vector<rules::Rule> fusion_rules() {
  return rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/fusion.rules");
}

/// A canonical 3x3 convolution of x [1,3,8,8] to 4 channels, with or without bias, and with the
/// residual `residual` [1,4,8,8] when one is given (which needs the bias).
ir::NodeId add_conv(ir::Graph& graph, ir::ValueId x, bool bias, uint32_t seed,
                    ir::ValueId residual = ir::kNoValue) {
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attrs.set("group", int64_t{1});
  attrs.set("activation", std::string("none"));
  std::vector<ir::ValueId> inputs = {
      x, graph.add_weight("w", ir::share(testing::random_tensor({4, 3, 3, 3}, seed)))};
  if (bias) inputs.push_back(graph.add_weight("b", ir::share(testing::random_tensor({4}, seed + 1))));
  if (residual != ir::kNoValue) inputs.push_back(residual);
  return add_inferred(graph, ir::OpKind::kConv, inputs, attrs);
}

/// Names `last`'s output "z" and makes it the only graph output.
ir::Graph ending_at(ir::Graph graph, ir::NodeId last) {
  graph.set_name(graph.node(last).outputs[0], "z");
  graph.set_outputs({graph.node(last).outputs[0]});
  return graph;
}

/// Add(a, b), or Add(b, a) when `swapped`: exporters write a bias or a residual on either side.
ir::NodeId add_sum(ir::Graph& graph, ir::ValueId a, ir::ValueId b, bool swapped) {
  std::vector<ir::ValueId> inputs = {a, b};
  if (swapped) std::swap(inputs[0], inputs[1]);
  return add_inferred(graph, ir::OpKind::kAdd, inputs);
}

/// conv(x, w[, b1]) + b (b on the left when `swapped`), b the weight `b2` of `dims`.
ir::Graph conv_plus_weight(bool conv_bias, const std::vector<int64_t>& dims, bool swapped) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
  const ir::ValueId y = graph.node(add_conv(graph, x, conv_bias, 11)).outputs[0];
  const ir::ValueId b = graph.add_weight("b2", ir::share(testing::random_tensor(dims, 31)));
  return ending_at(graph, add_sum(graph, y, b, swapped));
}

/// conv(x, w, b) + r (r on the left when `swapped`), r the graph input "r" of `dims`.
ir::Graph conv_plus_input(const std::vector<int64_t>& dims, bool swapped) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
  const ir::ValueId r = graph.add_input("r", float_type(dims));
  const ir::ValueId y = graph.node(add_conv(graph, x, true, 11)).outputs[0];
  return ending_at(graph, add_sum(graph, y, r, swapped));
}

/// op(conv(x, w, b, r)) with the residual r a graph input.
ir::Graph residual_conv_then(ir::OpKind op) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
  const ir::ValueId r = graph.add_input("r", float_type({1, 4, 8, 8}));
  const ir::ValueId y = graph.node(add_conv(graph, x, true, 11, r)).outputs[0];
  return ending_at(graph, add_inferred(graph, op, {y}));
}

ir::Attributes no_activation() {
  ir::Attributes attrs;
  attrs.set("activation", std::string("none"));
  return attrs;
}

/// A canonical product of x [2,5,4] and a weight [4,6], with the weight bias [6] when `bias`.
ir::NodeId add_mat_mul(ir::Graph& graph, bool bias) {
  const ir::ValueId x = graph.add_input("x", float_type({2, 5, 4}));
  std::vector<ir::ValueId> inputs = {x, graph.add_weight("w", ir::share(testing::random_tensor({4, 6}, 41)))};
  if (bias) inputs.push_back(graph.add_weight("b", ir::share(testing::random_tensor({6}, 42))));
  return add_inferred(graph, ir::OpKind::kMatMul, inputs, no_activation());
}

/// matmul(x, w) + b (b on the left when `swapped`), b the weight `b` of `dims`.
ir::Graph mat_mul_plus_weight(const std::vector<int64_t>& dims, bool swapped) {
  ir::Graph graph;
  const ir::ValueId y = graph.node(add_mat_mul(graph, false)).outputs[0];
  const ir::ValueId b = graph.add_weight("b", ir::share(testing::random_tensor(dims, 43)));
  return ending_at(graph, add_sum(graph, y, b, swapped));
}

/// op(matmul(x, w[, b])).
ir::Graph mat_mul_then(ir::OpKind op, bool bias) {
  ir::Graph graph;
  const ir::ValueId y = graph.node(add_mat_mul(graph, bias)).outputs[0];
  return ending_at(graph, add_inferred(graph, op, {y}));
}

/// conv (with or without bias) followed by `op` on its output, as the graph output.
ir::Graph conv_then(ir::OpKind op, bool bias) {
  ir::Graph graph;
  ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
  ir::NodeId conv = add_conv(graph, x, bias, 11);
  ir::ValueId y = graph.node(conv).outputs[0];
  ir::NodeId last;
  if (op == ir::OpKind::kBatchNormalization) {
    std::vector<ir::ValueId> inputs = {y};
    const char* names[] = {"scale", "beta", "mean", "var"};
    for (int i = 0; i < 4; ++i) {
      const float low = i == 3 ? 0.5f : -1.0f;  // variances stay positive
      inputs.push_back(graph.add_weight(names[i], ir::share(testing::random_tensor({4}, 20 + i, low, 1.5f))));
    }
    ir::Attributes attrs;
    attrs.set("epsilon", 1e-5f);
    last = add_inferred(graph, op, inputs, attrs);
  } else {
    last = add_inferred(graph, op, {y});
  }
  graph.set_name(graph.node(last).outputs[0], "z");
  graph.set_outputs({graph.node(last).outputs[0]});
  return graph;
}

/// The graph after applying the named rule at its only match.
ir::Graph rewritten(const ir::Graph& graph, const std::vector<rules::Rule>& rules, const std::string& name) {
  for (const rules::Rule& rule : rules) {
    if (rule.name != name) continue;
    std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule);
    REQUIRE(matches.size() == 1);
    std::string why;
    std::optional<ir::Graph> result = rewrite::apply(graph, matches[0], &why);
    INFO(why);
    REQUIRE(result);
    return *result;
  }
  FAIL("no rule " << name);
  return graph;
}

const rules::Rule& rule_named(const std::vector<rules::Rule>& rules, const std::string& name) {
  for (const rules::Rule& rule : rules) {
    if (rule.name == name) return rule;
  }
  throw std::runtime_error("no rule " + name);
}

/// The reason the rewriter refuses the named rule's only match in `graph`.
std::string refusal(const ir::Graph& graph, const std::vector<rules::Rule>& rules, const std::string& name) {
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule_named(rules, name));
  REQUIRE(matches.size() == 1);
  std::string why;
  CHECK_FALSE(rewrite::apply(graph, matches[0], &why));
  return why;
}

/// A rule with its source graph: the rule must rewrite it without changing what it computes.
struct RuleCase {
  std::string rule;
  std::string variant;
  ir::Graph graph;
};

/// The bias folds, the residual fusions and the MatMul fusions, each on a graph it matches.
std::vector<RuleCase> epilogue_cases() {
  using K = ir::OpKind;
  return {
      {"fold-conv-add-bias", "b [4,1,1]", conv_plus_weight(false, {4, 1, 1}, false)},
      {"fold-conv-add-bias", "b [1,4,1,1]", conv_plus_weight(false, {1, 4, 1, 1}, false)},
      {"fold-conv-add-bias", "b [4,1,1], operands swapped", conv_plus_weight(false, {4, 1, 1}, true)},
      {"fold-conv-add-bias", "b [1,4,1,1], operands swapped", conv_plus_weight(false, {1, 4, 1, 1}, true)},
      {"fold-conv-bias-add-bias", "b2 [4,1,1]", conv_plus_weight(true, {4, 1, 1}, false)},
      {"fold-conv-bias-add-bias", "b2 [1,4,1,1]", conv_plus_weight(true, {1, 4, 1, 1}, false)},
      {"fold-conv-bias-add-bias", "b2 [4,1,1], operands swapped", conv_plus_weight(true, {4, 1, 1}, true)},
      {"fold-conv-bias-add-bias", "b2 [1,4,1,1], operands swapped", conv_plus_weight(true, {1, 4, 1, 1}, true)},
      {"fuse-conv-bias-add-residual", "", conv_plus_input({1, 4, 8, 8}, false)},
      {"fuse-conv-bias-add-residual", "operands swapped", conv_plus_input({1, 4, 8, 8}, true)},
      {"fuse-conv-residual-relu", "", residual_conv_then(K::kRelu)},
      {"fuse-conv-residual-sigmoid", "", residual_conv_then(K::kSigmoid)},
      {"fuse-conv-residual-tanh", "", residual_conv_then(K::kTanh)},
      {"fuse-matmul-add-bias", "b [6]", mat_mul_plus_weight({6}, false)},
      {"fuse-matmul-add-bias", "b [5,6]", mat_mul_plus_weight({5, 6}, false)},
      {"fuse-matmul-add-bias", "b [6], operands swapped", mat_mul_plus_weight({6}, true)},
      {"fuse-matmul-add-bias", "b [2,1,6], operands swapped", mat_mul_plus_weight({2, 1, 6}, true)},
      {"fuse-matmul-relu", "", mat_mul_then(K::kRelu, false)},
      {"fuse-matmul-bias-relu", "", mat_mul_then(K::kRelu, true)},
      {"fuse-matmul-sigmoid", "", mat_mul_then(K::kSigmoid, false)},
      {"fuse-matmul-bias-sigmoid", "", mat_mul_then(K::kSigmoid, true)},
      {"fuse-matmul-tanh", "", mat_mul_then(K::kTanh, false)},
      {"fuse-matmul-bias-tanh", "", mat_mul_then(K::kTanh, true)},
  };
}

/// The rules the first test case checks on a Conv followed by one op.
const char* const kConvThenRules[] = {
    "fuse-conv-relu",    "fuse-conv-bias-relu",    "fuse-conv-sigmoid",   "fuse-conv-bias-sigmoid",
    "fuse-conv-tanh",    "fuse-conv-bias-tanh",    "fold-conv-batchnorm", "fold-conv-bias-batchnorm",
};

}  // namespace

TEST_CASE("fusion rules keep what the graph computes", "[rules]") {
  const std::vector<rules::Rule> rules = fusion_rules();
  struct Case {
    const char* rule;
    ir::OpKind op;
    bool bias;
  };
  const Case cases[] = {
      {"fuse-conv-relu", ir::OpKind::kRelu, false},
      {"fuse-conv-bias-relu", ir::OpKind::kRelu, true},
      {"fuse-conv-sigmoid", ir::OpKind::kSigmoid, false},
      {"fuse-conv-bias-sigmoid", ir::OpKind::kSigmoid, true},
      {"fuse-conv-tanh", ir::OpKind::kTanh, false},
      {"fuse-conv-bias-tanh", ir::OpKind::kTanh, true},
      {"fold-conv-batchnorm", ir::OpKind::kBatchNormalization, false},
      {"fold-conv-bias-batchnorm", ir::OpKind::kBatchNormalization, true},
  };
  REQUIRE(std::size(cases) == std::size(kConvThenRules));
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.rule) {
      const ir::Graph before = conv_then(c.op, c.bias);
      const ir::Graph after = rewritten(before, rules, c.rule);
      CHECK(after.output_names() == before.output_names());
      CHECK(runtime::check_equivalent(before, after).passed());
    }
  }
}

TEST_CASE("a wrong fusion rule fails the numeric check", "[rules]") {
  // Fusing a Sigmoid as if it were a ReLU is the kind of slip the check must catch.
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-fusion
  source
    y = Conv(x, w, b) [activation = "none"]
    z = Sigmoid(y)
  target
    z2 = Conv(x, w, b) [@y, activation = "relu"]
  map z -> z2
end
)",
                                                            "wrong.rules");
  const ir::Graph before = conv_then(ir::OpKind::kSigmoid, true);
  const ir::Graph after = rewritten(before, wrong, "wrong-fusion");
  CHECK_FALSE(runtime::check_equivalent(before, after).passed());
}

TEST_CASE("the bias, residual and MatMul fusions keep what the graph computes", "[rules]") {
  const std::vector<rules::Rule> rules = fusion_rules();
  for (const RuleCase& c : epilogue_cases()) {
    DYNAMIC_SECTION(c.rule << " " << c.variant) {
      const ir::Graph after = rewritten(c.graph, rules, c.rule);
      CHECK(after.output_names() == c.graph.output_names());
      const ir::OpKind fused = after.node(after.value(after.outputs()[0]).producer).op;
      CHECK((fused == ir::OpKind::kConv || fused == ir::OpKind::kMatMul));
      CHECK(runtime::check_equivalent(c.graph, after).passed());
    }
  }
}

TEST_CASE("every fusion rule has a numeric test, and the file survives a print/parse round trip", "[rules]") {
  const std::vector<rules::Rule> rules = fusion_rules();
  std::set<std::string> tested(std::begin(kConvThenRules), std::end(kConvThenRules));
  for (const RuleCase& c : epilogue_cases()) tested.insert(c.rule);
  std::set<std::string> shipped;
  for (const rules::Rule& rule : rules) shipped.insert(rule.name);
  CHECK(tested == shipped);
  CHECK(rules::parse_rules(rules::print_rules(rules), "again.rules") == rules);
}

TEST_CASE("a residual add and a Relu become one Conv node", "[rules]") {
  // ResNet's block end after batch-norm folding: relu(conv(x, w, b) + r).
  const std::vector<rules::Rule> rules = fusion_rules();
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
  const ir::ValueId r = graph.add_input("r", float_type({1, 4, 8, 8}));
  const ir::ValueId y = graph.node(add_conv(graph, x, true, 11)).outputs[0];
  const ir::ValueId sum = graph.node(add_sum(graph, y, r, false)).outputs[0];
  const ir::Graph before = ending_at(graph, add_inferred(graph, ir::OpKind::kRelu, {sum}));
  const ir::Graph middle = rewritten(before, rules, "fuse-conv-bias-add-residual");
  const ir::Graph after = rewritten(middle, rules, "fuse-conv-residual-relu");
  REQUIRE(after.node_count() == 1);
  const ir::Node& conv = after.node(after.value(after.outputs()[0]).producer);
  CHECK(conv.inputs.size() == 4);
  CHECK(conv.attrs.get_string("activation", "") == "relu");
  CHECK(runtime::check_equivalent(before, after).passed());
}

TEST_CASE("the bias folds take only a per-channel weight", "[rules]") {
  const std::vector<rules::Rule> rules = fusion_rules();
  // [8] and [1,1,8] add along the width, [2,4,1,1] broadcasts the batch, [1,4,8,8] is no bias.
  const std::vector<std::vector<int64_t>> shapes = {{8}, {1, 1, 8}, {2, 4, 1, 1}, {1, 4, 8, 8}};
  for (const std::vector<int64_t>& dims : shapes) {
    INFO("b " << ir::to_string(ir::Shape::of(dims)));
    const ir::Graph plain = conv_plus_weight(false, dims, false);
    CHECK(rewrite::Matcher::find(plain, rule_named(rules, "fold-conv-add-bias")).empty());
    const ir::Graph biased = conv_plus_weight(true, dims, true);
    CHECK(rewrite::Matcher::find(biased, rule_named(rules, "fold-conv-bias-add-bias")).empty());
  }
  // A per-channel shape that is not a weight stays an Add.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
  const ir::ValueId b = graph.add_input("b2", float_type({4, 1, 1}));
  const ir::ValueId y = graph.node(add_conv(graph, x, false, 11)).outputs[0];
  const ir::Graph input_bias = ending_at(graph, add_sum(graph, y, b, false));
  CHECK(rewrite::Matcher::find(input_bias, rule_named(rules, "fold-conv-add-bias")).empty());
}

TEST_CASE("the residual fusions take only a non-weight summand of the convolution's type", "[rules]") {
  const std::vector<rules::Rule> rules = fusion_rules();
  // A weight of the output's shape is not a residual.
  CHECK(rewrite::Matcher::find(conv_plus_weight(true, {1, 4, 8, 8}, false),
                               rule_named(rules, "fuse-conv-bias-add-residual"))
            .empty());
  // A summand the Add broadcasts matches, but the fused Conv's inference refuses it.
  CHECK_THAT(refusal(conv_plus_input({1, 4, 1, 1}, false), rules, "fuse-conv-bias-add-residual"),
             Catch::Matchers::Contains("Y's type"));
  CHECK_FALSE(refusal(conv_plus_input({2, 4, 8, 8}, true), rules, "fuse-conv-bias-add-residual").empty());
}

TEST_CASE("a MatMul bias that broadcasts the product to a larger shape is refused", "[rules]") {
  const std::vector<rules::Rule> rules = fusion_rules();
  // x [2,5,4] * w [4,6] is [2,5,6]; adding b [3,1,1,6] gives [3,2,5,6].
  CHECK_FALSE(refusal(mat_mul_plus_weight({3, 1, 1, 6}, false), rules, "fuse-matmul-add-bias").empty());
  CHECK_FALSE(refusal(mat_mul_plus_weight({3, 1, 1, 6}, true), rules, "fuse-matmul-add-bias").empty());
  // A bias that is not a weight is not matched at all.
  ir::Graph graph;
  const ir::ValueId y = graph.node(add_mat_mul(graph, false)).outputs[0];
  const ir::ValueId b = graph.add_input("b", float_type({6}));
  const ir::Graph input_bias = ending_at(graph, add_sum(graph, y, b, false));
  CHECK(rewrite::Matcher::find(input_bias, rule_named(rules, "fuse-matmul-add-bias")).empty());
}

TEST_CASE("wrong epilogue fusions fail the numeric check", "[rules]") {
  // Each rule puts the activation or the sign in the wrong place; every shape still fits.
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule activation-before-residual
  source
    y = Conv(x, w, b) [activation = "none"]
    a = Relu(y)
    z = Add(a, r)
  target
    z2 = Conv(x, w, b, r) [@y, activation = "relu"]
  map z -> z2
end

rule residual-subtracted
  source
    y = Conv(x, w, b) [activation = "none"]
    z = Sub(y, r)
  target
    z2 = Conv(x, w, b, r) [@y]
  map z -> z2
end

rule activation-before-bias
  source
    y = MatMul(x, w) [activation = "none"]
    a = Relu(y)
    z = Add(a, b)
  target
    z2 = MatMul(x, w, b) [@y, activation = "relu"]
  map z -> z2
end
)",
                                                            "wrong.rules");
  SECTION("relu(conv) + r is not relu(conv + r)") {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
    const ir::ValueId r = graph.add_input("r", float_type({1, 4, 8, 8}));
    const ir::ValueId y = graph.node(add_conv(graph, x, true, 11)).outputs[0];
    const ir::ValueId a = graph.node(add_inferred(graph, ir::OpKind::kRelu, {y})).outputs[0];
    const ir::Graph before = ending_at(graph, add_sum(graph, a, r, false));
    const ir::Graph after = rewritten(before, wrong, "activation-before-residual");
    CHECK_FALSE(runtime::check_equivalent(before, after).passed());
  }
  SECTION("conv - r is not conv + r") {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
    const ir::ValueId r = graph.add_input("r", float_type({1, 4, 8, 8}));
    const ir::ValueId y = graph.node(add_conv(graph, x, true, 11)).outputs[0];
    const ir::Graph before = ending_at(graph, add_inferred(graph, ir::OpKind::kSub, {y, r}));
    const ir::Graph after = rewritten(before, wrong, "residual-subtracted");
    CHECK_FALSE(runtime::check_equivalent(before, after).passed());
  }
  SECTION("relu(x w) + b is not relu(x w + b)") {
    ir::Graph graph;
    const ir::ValueId y = graph.node(add_mat_mul(graph, false)).outputs[0];
    const ir::ValueId a = graph.node(add_inferred(graph, ir::OpKind::kRelu, {y})).outputs[0];
    const ir::ValueId b = graph.add_weight("b", ir::share(testing::random_tensor({6}, 43)));
    const ir::Graph before = ending_at(graph, add_sum(graph, a, b, false));
    const ir::Graph after = rewritten(before, wrong, "activation-before-bias");
    CHECK_FALSE(runtime::check_equivalent(before, after).passed());
  }
}

}  // namespace graphsub
