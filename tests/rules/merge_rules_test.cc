// Every rule of rules/merge.rules, applied to a graph it matches, computes what the graph did; the
// merge and enlarge rules survive a print/parse round trip and compose (enlarge, then merge).
#include <catch2/catch.hpp>

#include <optional>
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

std::vector<rules::Rule> read_rules(const std::string& file) {
  return rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/" + file);
}

const rules::Rule& rule_named(const std::vector<rules::Rule>& rules, const std::string& name) {
  for (const rules::Rule& rule : rules) {
    if (rule.name == name) return rule;
  }
  throw std::runtime_error("no rule " + name);
}

/// The parameters shared by two convolutions of x [1,3,9,9] (filters 2 and 5).
struct ConvParams {
  std::vector<int64_t> kernel;
  bool bias = false;
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {0, 0, 0, 0};
  std::vector<int64_t> dilations = {1, 1};
  std::string activation = "none";
};

/// Adds one canonical convolution of x with `filters` filters; its output is named `name`.
ir::ValueId add_conv(ir::Graph& graph, ir::ValueId x, const ConvParams& params, int64_t filters,
                     uint32_t seed, const std::string& name) {
  const ir::Attributes attrs = testing::conv_attributes(params.kernel, params.strides, params.pads, params.dilations,
                                                       int64_t{1}, params.activation);
  const std::vector<int64_t> dims = {filters, 3, params.kernel[0], params.kernel[1]};
  std::vector<ir::ValueId> inputs = {x, graph.add_weight({}, ir::share(testing::random_tensor(dims, seed)))};
  if (params.bias) {
    inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({filters}, seed + 1))));
  }
  const ir::ValueId y = graph.node(add_inferred(graph, ir::OpKind::kConv, inputs, attrs)).outputs[0];
  graph.set_name(y, name);
  return y;
}

/// Two convolutions of one input, both graph outputs ("y1", "y2").
ir::Graph two_convs(const ConvParams& first, const ConvParams& second, int64_t filters2 = 5) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 9, 9}));
  const ir::ValueId y1 = add_conv(graph, x, first, 2, 11, "y1");
  const ir::ValueId y2 = add_conv(graph, x, second, filters2, 21, "y2");
  graph.set_outputs({y1, y2});
  return graph;
}

/// Two canonical products of x by weights [k, 3] and [k, 6] with the given fused activations, both
/// graph outputs ("y1", "y2").
ir::Graph two_matmuls(const std::vector<int64_t>& x_dims, const std::string& first = "none",
                      const std::string& second = "none") {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type(x_dims));
  std::vector<ir::ValueId> outputs;
  uint32_t seed = 31;
  for (const auto& [columns, activation] : {std::pair<int64_t, std::string>{3, first}, {6, second}}) {
    const ir::ValueId w =
        graph.add_weight({}, ir::share(testing::random_tensor({x_dims.back(), columns}, seed++)));
    ir::Attributes attrs;
    attrs.set("activation", activation);
    outputs.push_back(graph.node(add_inferred(graph, ir::OpKind::kMatMul, {x, w}, attrs)).outputs[0]);
    graph.set_name(outputs.back(), "y" + std::to_string(outputs.size()));
  }
  graph.set_outputs(outputs);
  return graph;
}

/// Applies `rule` at every match (each once, to `graph`) and checks each result against `graph`.
void check_every_match(const ir::Graph& graph, const rules::Rule& rule, std::size_t expected_matches) {
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule);
  REQUIRE(matches.size() == expected_matches);
  for (const rewrite::Match& match : matches) {
    std::string why;
    const std::optional<ir::Graph> after = rewrite::apply(graph, match, &why);
    INFO(why);
    REQUIRE(after);
    CHECK(after->output_names() == graph.output_names());
    CHECK(after->node_ids().size() == rule.target.size());
    CHECK(runtime::check_equivalent(graph, *after).passed());
  }
}


/// How a larger and a smaller convolution of one input are summed: by an Add, or after the
/// residual fusion with the smaller (or the larger) as the other's residual input.
enum class SumForm { kAdd, kSmallInside, kLargeInside };

/// x [1, 4, 7, 7] -> a `large` x `large` convolution and a smaller one of x (1x1 beside a 3x3,
/// 3x3 beside a 7x7; pads keeping the size) with 4 filters, `stride` and `group`, summed in
/// `form` as the graph output "z"; where fused, the inner convolution has a residual input "r" of
/// its own if `inner_residual`, and the outer one `activation`. Bias on both where `bias`
/// (always, fused).
ir::Graph sum_of_two_kernels(SumForm form, bool bias, int64_t stride, int64_t group, bool inner_residual = false,
                             const std::string& activation = "none", int64_t large = 3) {
  const int64_t small = large == 7 ? 3 : 1;
  ir::Graph graph;
  const int64_t channels = 4;
  const int64_t size = 6 / stride + 1;
  const ir::ValueId x = graph.add_input("x", float_type({1, channels, 7, 7}));
  const auto conv = [&](int64_t k, const std::vector<ir::ValueId>& residual, const std::string& act, uint32_t seed) {
    const ir::Attributes attrs = testing::conv_attributes({k, k}, {stride, stride}, std::vector<int64_t>(4, k / 2),
                                                          {1, 1}, group, act);
    std::vector<ir::ValueId> inputs = {
        x, graph.add_weight({}, ir::share(testing::random_tensor({channels, channels / group, k, k}, seed)))};
    if (bias || form != SumForm::kAdd) {
      inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({channels}, seed + 1))));
    }
    inputs.insert(inputs.end(), residual.begin(), residual.end());
    return graph.node(add_inferred(graph, ir::OpKind::kConv, inputs, attrs)).outputs[0];
  };
  ir::ValueId z = ir::kNoValue;
  if (form == SumForm::kAdd) {
    z = graph.node(add_inferred(graph, ir::OpKind::kAdd, {conv(large, {}, "none", 11), conv(small, {}, "none", 21)}))
            .outputs[0];
  } else {
    const int64_t inner = form == SumForm::kSmallInside ? small : large;
    std::vector<ir::ValueId> residual;
    if (inner_residual) residual.push_back(graph.add_input("r", float_type({1, channels, size, size})));
    z = conv(inner == small ? large : small, {conv(inner, residual, "none", 11)}, activation, 21);
  }
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

/// x [1, 4, 6, 6] -> a 1x1 convolution (`depthwise` off) or a depthwise 3x3 one (pads 1) of x
/// with bias and 4 filters, and x added to it: by an Add (`fused` off), or as its residual
/// input, with `activation`; the graph output "z".
ir::Graph conv_plus_input(bool depthwise, bool fused, const std::string& activation = "none") {
  ir::Graph graph;
  const int64_t channels = 4;
  const ir::ValueId x = graph.add_input("x", float_type({1, channels, 6, 6}));
  const int64_t k = depthwise ? 3 : 1;
  const int64_t group = depthwise ? channels : 1;
  const ir::Attributes attrs = testing::conv_attributes({k, k}, {1, 1}, std::vector<int64_t>(4, k / 2), {1, 1}, group,
                                                        fused ? activation : "none");
  std::vector<ir::ValueId> inputs = {
      x, graph.add_weight({}, ir::share(testing::random_tensor({channels, channels / group, k, k}, 61))),
      graph.add_weight({}, ir::share(testing::random_tensor({channels}, 62)))};
  if (fused) inputs.push_back(x);
  ir::ValueId z = graph.node(add_inferred(graph, ir::OpKind::kConv, inputs, attrs)).outputs[0];
  if (!fused) z = graph.node(add_inferred(graph, ir::OpKind::kAdd, {z, x})).outputs[0];
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}
}  // namespace

TEST_CASE("merge-convs keeps what two convolutions compute", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const rules::Rule& rule = rule_named(rules, "merge-convs");
  const ConvParams cases[] = {
      {{3, 3}, false, {1, 1}, {1, 1, 1, 1}},
      {{1, 1}, false, {2, 2}, {0, 0, 0, 0}, {1, 1}, "relu"},
      {{3, 1}, false, {2, 1}, {1, 0, 0, 0}, {2, 1}, "sigmoid"},
  };
  for (const ConvParams& params : cases) {
    DYNAMIC_SECTION("kernel " << params.kernel[0] << "x" << params.kernel[1] << ", " << params.activation) {
      check_every_match(two_convs(params, params), rule, 2);
    }
  }
}

TEST_CASE("merge-convs-bias keeps what two convolutions with bias compute", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const rules::Rule& rule = rule_named(rules, "merge-convs-bias");
  const ConvParams cases[] = {
      {{3, 3}, true, {1, 1}, {1, 1, 1, 1}},
      {{1, 1}, true, {2, 2}, {0, 0, 0, 0}, {1, 1}, "tanh"},
      {{1, 3}, true, {1, 2}, {0, 2, 1, 1}, {1, 2}, "relu"},
  };
  for (const ConvParams& params : cases) {
    DYNAMIC_SECTION("kernel " << params.kernel[0] << "x" << params.kernel[1] << ", " << params.activation) {
      check_every_match(two_convs(params, params), rule, 2);
    }
  }
}

TEST_CASE("the conv merges need equal parameters and bias on both or neither", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  ConvParams a{{3, 3}, false, {1, 1}, {1, 1, 1, 1}};
  ConvParams strided = a;
  strided.strides = {2, 2};
  ConvParams relu = a;
  relu.activation = "relu";
  ConvParams biased = a;
  biased.bias = true;
  for (const ir::Graph& graph : {two_convs(a, strided), two_convs(a, relu), two_convs(a, biased)}) {
    CHECK(rewrite::Matcher::find(graph, rule_named(rules, "merge-convs")).empty());
    CHECK(rewrite::Matcher::find(graph, rule_named(rules, "merge-convs-bias")).empty());
  }
}

TEST_CASE("a conv with a fused relu merges with a plain one, the relu kept on its own part", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  for (const bool bias : {false, true}) {
    DYNAMIC_SECTION((bias ? "with" : "without") << " bias") {
      const rules::Rule& rule =
          rule_named(rules, bias ? "merge-convs-bias-relu-and-plain" : "merge-convs-relu-and-plain");
      ConvParams plain{{3, 3}, bias, {1, 1}, {1, 1, 1, 1}};
      ConvParams relu = plain;
      relu.activation = "relu";
      // One match, whichever of the two comes first in the graph.
      check_every_match(two_convs(relu, plain), rule, 1);
      check_every_match(two_convs(plain, relu), rule, 1);
      CHECK(rewrite::Matcher::find(two_convs(plain, plain), rule).empty());
      ConvParams sigmoid = plain;
      sigmoid.activation = "sigmoid";
      CHECK(rewrite::Matcher::find(two_convs(sigmoid, plain), rule).empty());
    }
  }
}

TEST_CASE("a 1x1 convolution is enlarged and merged into a 3x3 one in one step", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const bool bias = GENERATE(false, true);
  const bool relu = GENERATE(false, true);
  const bool first = GENERATE(false, true);  // the 1x1's channels first in the merged output
  const int64_t stride = GENERATE(1, 2);
  std::string name = bias ? "merge-conv-bias-1x1-into-3x3" : "merge-conv-1x1-into-3x3";
  if (relu) name += "-relu";
  if (first) name += "-first";
  INFO(name << ", stride " << stride);
  const rules::Rule& rule = rule_named(rules, name);
  ConvParams three{{3, 3}, bias, {stride, stride}, {1, 1, 1, 1}};
  ConvParams one{{1, 1}, bias, {stride, stride}, {0, 0, 0, 0}};
  if (relu) three.activation = "relu";
  check_every_match(two_convs(three, one), rule, 1);
  check_every_match(two_convs(one, three), rule, 1);
  // The 1x1's pads must be the 3x3's less one: otherwise the two read different windows.
  ConvParams shifted = one;
  shifted.pads = {1, 1, 1, 1};
  CHECK(rewrite::Matcher::find(two_convs(three, shifted), rule).empty());
  ConvParams other_stride = one;
  other_stride.strides = {stride + 1, stride + 1};
  CHECK(rewrite::Matcher::find(two_convs(three, other_stride), rule).empty());
}

TEST_CASE("a 1x1 convolution added to a 3x3 one of the same input is summed into it", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const int64_t stride = GENERATE(1, 2);
  const int64_t group = GENERATE(1, 2, 4);  // 4: depthwise
  for (const bool bias : {false, true}) {
    const rules::Rule& rule = rule_named(rules, bias ? "add-conv-bias-1x1-into-3x3" : "add-conv-1x1-into-3x3");
    DYNAMIC_SECTION(rule.name << ", stride " << stride << ", group " << group) {
      check_every_match(sum_of_two_kernels(SumForm::kAdd, bias, stride, group), rule, 1);
    }
  }
  // With the residual fusion taken first (either convolution inside the other), with and without
  // a residual input of the inner one, and the outer one's activation kept.
  for (const SumForm form : {SumForm::kSmallInside, SumForm::kLargeInside}) {
    for (const bool inner_residual : {false, true}) {
      std::string name = form == SumForm::kSmallInside ? "add-residual-conv-bias-1x1-into-3x3"
                                                          : "add-residual-conv-bias-3x3-into-1x1";
      if (inner_residual) name += "-with-residual";
      const rules::Rule& rule = rule_named(rules, name);
      for (const std::string activation : {"none", "relu"}) {
        DYNAMIC_SECTION(name << ", " << activation << ", stride " << stride << ", group " << group) {
          check_every_match(sum_of_two_kernels(form, true, stride, group, inner_residual, activation), rule, 1);
          // The rule for the other case does not match: a residual input is there or it is not.
          const rules::Rule& other = rule_named(rules, inner_residual ? name.substr(0, name.size() - 14) : name + "-with-residual");
          CHECK(rewrite::Matcher::find(sum_of_two_kernels(form, true, stride, group, inner_residual, activation), other).empty());
        }
      }
    }
  }
}

TEST_CASE("a 3x3 convolution added to a 7x7 one of the same input is summed into it", "[rules]") {
  // FastViT's downsampling (a large kernel beside a small one, depthwise, stride 2).
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const int64_t stride = GENERATE(1, 2);
  const int64_t group = GENERATE(1, 4);
  DYNAMIC_SECTION("stride " << stride << ", group " << group) {
    check_every_match(sum_of_two_kernels(SumForm::kAdd, true, stride, group, false, "none", 7),
                      rule_named(rules, "add-conv-bias-3x3-into-7x7"), 1);
    CHECK(rewrite::Matcher::find(sum_of_two_kernels(SumForm::kAdd, true, stride, group),
                                 rule_named(rules, "add-conv-bias-3x3-into-7x7"))
              .empty());
    for (const std::string activation : {"none", "relu"}) {
      INFO(activation);
      check_every_match(sum_of_two_kernels(SumForm::kSmallInside, true, stride, group, false, activation, 7),
                        rule_named(rules, "add-residual-conv-bias-3x3-into-7x7"), 1);
      check_every_match(sum_of_two_kernels(SumForm::kLargeInside, true, stride, group, false, activation, 7),
                        rule_named(rules, "add-residual-conv-bias-7x7-into-3x3"), 1);
    }
  }
}

TEST_CASE("a convolution's own input added to it is folded into its kernel", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  for (const bool depthwise : {false, true}) {
    const std::string kind = depthwise ? "depthwise" : "pointwise";
    const rules::Rule& added = rule_named(rules, "add-input-to-" + kind + "-conv");
    const rules::Rule& fused = rule_named(rules, "residual-input-into-" + kind + "-conv");
    DYNAMIC_SECTION(kind) {
      check_every_match(conv_plus_input(depthwise, false), added, 1);
      for (const std::string activation : {"none", "relu", "sigmoid"}) {
        INFO(activation);
        check_every_match(conv_plus_input(depthwise, true, activation), fused, 1);
      }
      // The other kind's rule does not match.
      const std::string other = depthwise ? "pointwise" : "depthwise";
      CHECK(rewrite::Matcher::find(conv_plus_input(depthwise, false), rule_named(rules, "add-input-to-" + other + "-conv")).empty());
    }
  }
}

TEST_CASE("a 1x3 and a 3x1 convolution are enlarged and merged in one step", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const bool bias = GENERATE(false, true);
  const bool wide_first = GENERATE(false, true);  // the 1x3's channels first in the merged output
  const std::string activation = GENERATE(std::string("none"), std::string("relu"));
  const int64_t stride = GENERATE(1, 2);
  const std::string name = std::string(bias ? "merge-conv-bias-" : "merge-conv-") +
                           (wide_first ? "1x3-and-3x1" : "3x1-and-1x3");
  INFO(name << ", " << activation << ", stride " << stride);
  const rules::Rule& rule = rule_named(rules, name);
  ConvParams wide{{1, 3}, bias, {stride, stride}, {0, 1, 0, 1}, {1, 1}, activation};
  ConvParams tall{{3, 1}, bias, {stride, stride}, {1, 0, 1, 0}, {1, 1}, activation};
  check_every_match(two_convs(wide, tall), rule, 1);
  check_every_match(two_convs(tall, wide), rule, 1);
  // Pads that do not grow to the same 3x3 window, another stride, another activation: no match.
  ConvParams unpadded = wide;
  unpadded.pads = {0, 0, 0, 0};
  CHECK(rewrite::Matcher::find(two_convs(unpadded, tall), rule).empty());
  ConvParams other_stride = tall;
  other_stride.strides = {stride + 1, stride + 1};
  CHECK(rewrite::Matcher::find(two_convs(wide, other_stride), rule).empty());
  ConvParams other_activation = tall;
  other_activation.activation = activation == "relu" ? "none" : "relu";
  CHECK(rewrite::Matcher::find(two_convs(wide, other_activation), rule).empty());
}

TEST_CASE("a merge that puts the relu on the wrong part fails the numeric check", "[rules]") {
  const rules::Rule wrong = rules::parse_rules(R"(
rule relu-on-wrong-part
  source
    y1 = Conv(x, w1) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = "relu"]
    y2 = Conv(x, w2) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = "none"]
  target
    w = Concat(w1, w2) [axis = 0]
    y = Conv(x, w) [@y2]
    z1, z2 = Split(y) [axis = 1, split = [shape(w1)[0], shape(w2)[0]]]
    r2 = Relu(z2)
  map y1 -> z1, y2 -> r2
end
)", "wrong.rules")[0];
  ConvParams plain{{3, 3}, false, {1, 1}, {1, 1, 1, 1}};
  ConvParams relu = plain;
  relu.activation = "relu";
  const ir::Graph graph = two_convs(relu, plain);
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, wrong);
  REQUIRE(matches.size() == 1);
  const std::optional<ir::Graph> after = rewrite::apply(graph, matches[0], nullptr);
  REQUIRE(after);
  CHECK_FALSE(runtime::check_equivalent(graph, *after).passed());
}

TEST_CASE("merge-matmuls keeps what two products compute", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const rules::Rule& rule = rule_named(rules, "merge-matmuls");
  SECTION("matrix left operand") { check_every_match(two_matmuls({5, 4}), rule, 2); }
  SECTION("batched left operand") { check_every_match(two_matmuls({2, 5, 4}), rule, 2); }
  SECTION("both with a fused relu") { check_every_match(two_matmuls({5, 4}, "relu", "relu"), rule, 2); }
}

TEST_CASE("merge-matmuls leaves products with different fused activations apart", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const rules::Rule& rule = rule_named(rules, "merge-matmuls");
  CHECK(rewrite::Matcher::find(two_matmuls({5, 4}, "relu", "none"), rule).empty());
  CHECK(rewrite::Matcher::find(two_matmuls({5, 4}, "none", "tanh"), rule).empty());
}

TEST_CASE("split-conv-of-concats keeps what a convolution of concatenations computes", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const rules::Rule& rule = rule_named(rules, "split-conv-of-concats");
  for (const bool strided : {false, true}) {
    DYNAMIC_SECTION((strided ? "strides 2, pads 1" : "unit strides, no pads")) {
      ir::Graph graph;
      const ir::ValueId x = graph.add_input("x", float_type({1, 2, 7, 7}));
      const ir::ValueId z = graph.add_input("z", float_type({1, 3, 7, 7}));
      const ir::ValueId y = graph.add_weight({}, ir::share(testing::random_tensor({4, 2, 3, 3}, 41)));
      const ir::ValueId w = graph.add_weight({}, ir::share(testing::random_tensor({4, 3, 3, 3}, 42)));
      ir::Attributes axis1;
      axis1.set("axis", int64_t{1});
      const ir::ValueId a = graph.node(add_inferred(graph, ir::OpKind::kConcat, {x, z}, axis1)).outputs[0];
      const ir::ValueId v = graph.node(add_inferred(graph, ir::OpKind::kConcat, {y, w}, axis1)).outputs[0];
      ir::Attributes attrs;
      attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
      attrs.set("strides", std::vector<int64_t>(2, strided ? 2 : 1));
      attrs.set("dilations", std::vector<int64_t>{1, 1});
      attrs.set("pads", std::vector<int64_t>(4, strided ? 1 : 0));
      attrs.set("group", int64_t{1});
      attrs.set("activation", std::string("none"));
      const ir::ValueId c = graph.node(add_inferred(graph, ir::OpKind::kConv, {a, v}, attrs)).outputs[0];
      graph.set_name(c, "c");
      graph.set_outputs({c});
      check_every_match(graph, rule, 1);
    }
  }
}

/// x [1,5,4,4] split on `axis` into [2,3] (or [2,2] on axis 2), each part batch-normalized with its
/// own seeded parameters and epsilon; the two normalizations are the outputs "n1" and "n2".
ir::Graph batchnorms_of_split(int64_t axis, float epsilon2 = 1e-5f) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 5, 4, 4}));
  ir::Attributes split;
  split.set("axis", axis);
  split.set("split", axis == 1 ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{2, 2});
  const ir::NodeId parts = add_inferred(graph, ir::OpKind::kSplit, {x}, split);
  std::vector<ir::ValueId> outputs;
  for (int k = 0; k < 2; ++k) {
    const int64_t channels = axis == 1 ? 2 + k : 5;
    std::vector<ir::ValueId> inputs = {graph.node(parts).outputs[static_cast<std::size_t>(k)]};
    for (int i = 0; i < 4; ++i) {
      const float low = i == 3 ? 0.5f : -1.0f;  // variances stay positive
      inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({channels}, 60 + 10 * k + i, low, 1.5f))));
    }
    ir::Attributes attrs;
    attrs.set("epsilon", k == 0 ? 1e-5f : epsilon2);
    outputs.push_back(graph.node(add_inferred(graph, ir::OpKind::kBatchNormalization, inputs, attrs)).outputs[0]);
    graph.set_name(outputs.back(), "n" + std::to_string(k + 1));
  }
  graph.set_outputs(outputs);
  return graph;
}

TEST_CASE("merge-batchnorms-of-split keeps what two normalizations of a split compute", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("merge.rules");
  const rules::Rule& rule = rule_named(rules, "merge-batchnorms-of-split");
  check_every_match(batchnorms_of_split(1), rule, 1);
  SECTION("not across a spatial split, nor with two epsilons") {
    CHECK(rewrite::Matcher::find(batchnorms_of_split(2), rule).empty());
    CHECK(rewrite::Matcher::find(batchnorms_of_split(1, 1e-3f), rule).empty());
  }
  SECTION("the parameters concatenated the wrong way round fail the numeric check") {
    const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-merge-batchnorms
  source
    z1, z2 = Split(y) [axis = 1]
    n1 = BatchNormalization(z1, s1, b1, m1, v1) [epsilon = ?eps]
    n2 = BatchNormalization(z2, s2, b2, m2, v2) [epsilon = ?eps]
  target
    s = Concat(s2, s1) [axis = 0]
    b = Concat(b2, b1) [axis = 0]
    m = Concat(m2, m1) [axis = 0]
    v = Concat(v2, v1) [axis = 0]
    n = BatchNormalization(y, s, b, m, v) [@n1]
    o1, o2 = Split(n) [@z1]
  map n1 -> o1, n2 -> o2
end
)",
                                                              "wrong.rules");
    const ir::Graph before = batchnorms_of_split(1);
    const std::vector<rewrite::Match> matches = rewrite::Matcher::find(before, wrong[0]);
    REQUIRE(matches.size() == 1);
    const std::optional<ir::Graph> after = rewrite::apply(before, matches[0]);
    REQUIRE(after);
    CHECK_FALSE(runtime::check_equivalent(before, *after).passed());
  }
}

TEST_CASE("a merge that splits its output the wrong way round fails the numeric check", "[rules]") {
  // Equal filter counts keep every shape; the outputs come back swapped.
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-merge
  source
    y1 = Conv(x, w1) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = ?a]
    y2 = Conv(x, w2) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = ?a]
  target
    w = Concat(w2, w1) [axis = 0]
    y = Conv(x, w) [@y1]
    z1, z2 = Split(y) [axis = 1, split = [shape(w1)[0], shape(w2)[0]]]
  map y1 -> z1, y2 -> z2
end
)",
                                                            "wrong.rules");
  const ConvParams params{{3, 3}, false, {1, 1}, {1, 1, 1, 1}};
  const ir::Graph before = two_convs(params, params, 2);
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(before, wrong[0]);
  REQUIRE(matches.size() == 2);
  const std::optional<ir::Graph> after = rewrite::apply(before, matches[0]);
  REQUIRE(after);
  CHECK_FALSE(runtime::check_equivalent(before, *after).passed());
}

TEST_CASE("an enlarged 1x1 convolution merges with a 3x3 one", "[rules]") {
  // MetaFlow's Fig. 1: enlarge (slower alone), then merge.
  const std::vector<rules::Rule> enlarge = read_rules("enlarge.rules");
  const std::vector<rules::Rule> merge = read_rules("merge.rules");
  const ir::Graph before = two_convs({{1, 1}, true}, {{3, 3}, true, {1, 1}, {1, 1, 1, 1}});
  CHECK(rewrite::Matcher::find(before, rule_named(merge, "merge-convs-bias")).empty());
  const std::vector<rewrite::Match> enlarged =
      rewrite::Matcher::find(before, rule_named(enlarge, "enlarge-conv-bias-1x1-to-3x3"));
  REQUIRE(enlarged.size() == 1);
  const std::optional<ir::Graph> middle = rewrite::apply(before, enlarged[0]);
  REQUIRE(middle);
  const std::vector<rewrite::Match> merged =
      rewrite::Matcher::find(*middle, rule_named(merge, "merge-convs-bias"));
  REQUIRE(merged.size() == 2);
  const std::optional<ir::Graph> after = rewrite::apply(*middle, merged[0]);
  REQUIRE(after);
  CHECK(after->output_names() == before.output_names());
  CHECK(runtime::check_equivalent(before, *after).passed());
}

TEST_CASE("the merge and enlarge rules survive a print/parse round trip", "[rules]") {
  for (const char* file : {"merge.rules", "enlarge.rules"}) {
    INFO(file);
    const std::vector<rules::Rule> rules = read_rules(file);
    CHECK_FALSE(rules.empty());
    CHECK(rules::parse_rules(rules::print_rules(rules), "again.rules") == rules);
  }
}

}  // namespace graphsub
