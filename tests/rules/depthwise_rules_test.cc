// Every rule of rules/depthwise.rules computes what the graph did, and is refused where it would not
// be exact; TASO's Fig. 8b and 8c sequences compose and the search finds them.
#include <catch2/catch.hpp>

#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "ops/folding.h"
#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "runtime/equivalence.h"
#include "search/backtracking.h"
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

/// Canonical AveragePool attributes.
struct PoolParams {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  int64_t count_include_pad = 1;
  int64_t ceil_mode = 0;

  ir::Attributes attributes() const {
    return testing::pool_attributes(kernel, strides, pads, ceil_mode, count_include_pad);
  }
};

/// An average pool of x (sizes `dims`) as the graph output "y".
ir::Graph average_pool(const std::vector<int64_t>& dims, const PoolParams& params) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type(dims));
  const ir::ValueId y =
      graph.node(add_inferred(graph, ir::OpKind::kAveragePool, {x}, params.attributes())).outputs[0];
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return graph;
}

/// Canonical Conv attributes (2-D).
struct ConvParams {
  std::vector<int64_t> kernel = {3, 3};
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {1, 1, 1, 1};
  std::vector<int64_t> dilations = {1, 1};
  int64_t group = 1;
  std::string activation = "none";

  ir::Attributes attributes() const {
    return testing::conv_attributes(kernel, strides, pads, dilations, group, activation);
  }
};

/// A convolution with random weights [filters, C/group, k...] (and bias) of the value x.
ir::ValueId add_conv(ir::Graph& graph, ir::ValueId x, int64_t filters, const ConvParams& params, bool bias,
                     uint32_t seed) {
  std::vector<int64_t> dims = {filters, graph.value(x).type.shape.dims[1].value / params.group};
  dims.insert(dims.end(), params.kernel.begin(), params.kernel.end());
  std::vector<ir::ValueId> inputs = {x, graph.add_weight({}, ir::share(testing::random_tensor(dims, seed)))};
  if (bias) inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({filters}, seed + 1))));
  return graph.node(add_inferred(graph, ir::OpKind::kConv, inputs, params.attributes())).outputs[0];
}

/// One of two joined convolutions: its input's sizes, filter count and parameters.
struct Branch {
  std::vector<int64_t> input;
  int64_t filters;
  ConvParams params;
};

/// Two convolutions joined by `join` (Add, or Concat on channels) as the graph output "z". With
/// `shared` both read the first branch's input.
ir::Graph joined_convs(ir::OpKind join, const Branch& first, const Branch& second, bool bias, bool shared) {
  ir::Graph graph;
  const ir::ValueId x1 = graph.add_input("x1", float_type(first.input));
  const ir::ValueId x2 = shared ? x1 : graph.add_input("x2", float_type(second.input));
  const ir::ValueId y1 = add_conv(graph, x1, first.filters, first.params, bias, 11);
  const ir::ValueId y2 = add_conv(graph, x2, second.filters, second.params, bias, 21);
  ir::Attributes attrs;
  if (join == ir::OpKind::kConcat) attrs.set("axis", int64_t{1});
  const ir::ValueId z = graph.node(add_inferred(graph, join, {y1, y2}, attrs)).outputs[0];
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

/// ConvParams of a depthwise convolution of `channels` channels, otherwise the defaults.
ConvParams depthwise(int64_t channels) {
  ConvParams params;
  params.group = channels;
  return params;
}

/// How many matches `rule` has in `graph`.
std::size_t count_matches(const ir::Graph& graph, const rules::Rule& rule) {
  return rewrite::Matcher::find(graph, rule).size();
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

/// The graph after applying `rule` at its only match.
ir::Graph applied_once(const ir::Graph& graph, const rules::Rule& rule) {
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule);
  REQUIRE(matches.size() == 1);
  std::string why;
  std::optional<ir::Graph> after = rewrite::apply(graph, matches[0], &why);
  INFO(rule.name << ": " << why);
  REQUIRE(after);
  return *after;
}

/// The ids of the nodes that run: those export does not fold into weights.
std::vector<ir::NodeId> running_nodes(const ir::Graph& graph) {
  const std::vector<bool> folded = ops::folded_nodes(graph);
  std::vector<ir::NodeId> running;
  for (ir::NodeId id : graph.node_ids()) {
    if (!folded[id]) running.push_back(id);
  }
  return running;
}

/// The ops of the nodes that run, as a multiset.
std::multiset<ir::OpKind> running_ops(const ir::Graph& graph) {
  std::multiset<ir::OpKind> ops;
  for (ir::NodeId id : running_nodes(graph)) ops.insert(graph.node(id).op);
  return ops;
}

/// TASO's Fig. 8b (NasNet-A): two 3x3 average pools of x [1, 64, 14, 14] counting their pads,
/// added, as the graph output "z".
ir::Graph taso_fig8b() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 64, 14, 14}));
  const PoolParams pool{{3, 3}, {1, 1}, {1, 1, 1, 1}};
  std::vector<ir::ValueId> pools;
  for (int i = 0; i < 2; ++i) {
    pools.push_back(
        graph.node(add_inferred(graph, ir::OpKind::kAveragePool, {x}, pool.attributes())).outputs[0]);
  }
  const ir::ValueId z = graph.node(add_inferred(graph, ir::OpKind::kAdd, pools)).outputs[0];
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

/// A float32 type of the given sizes, except that the first dim is the symbolic batch "N".
ir::TensorType batched_type(const std::vector<int64_t>& dims) {
  ir::TensorType type = float_type(dims);
  type.shape.dims[0] = ir::Dim::named("N");
  return type;
}

/// TASO's Fig. 8c (NasNet-A): two separable convolutions of x [N, C, H, W], a 3x3 and a 5x5
/// depthwise convolution each followed by a 1x1 convolution to C channels, added, as "z".
ir::Graph taso_fig8c(const ir::TensorType& input) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", input);
  const int64_t channels = input.shape.dims[1].value;
  const ConvParams pointwise{{1, 1}, {1, 1}, {0, 0, 0, 0}};
  ConvParams wide = depthwise(channels);
  wide.kernel = {5, 5};
  wide.pads = {2, 2, 2, 2};
  const ir::ValueId narrow_branch = add_conv(graph, x, channels, depthwise(channels), false, 41);
  const ir::ValueId wide_branch = add_conv(graph, x, channels, wide, false, 45);
  const ir::ValueId c1 = add_conv(graph, narrow_branch, channels, pointwise, false, 43);
  const ir::ValueId c2 = add_conv(graph, wide_branch, channels, pointwise, false, 47);
  const ir::ValueId z = graph.node(add_inferred(graph, ir::OpKind::kAdd, {c1, c2})).outputs[0];
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

/// The rules of depthwise.rules, fusion.rules and merge.rules, in that order.
std::vector<rules::Rule> depthwise_fusion_merge_rules() {
  std::vector<rules::Rule> rules;
  for (const char* file : {"depthwise.rules", "fusion.rules", "merge.rules"}) {
    for (rules::Rule& rule : read_rules(file)) rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace

TEST_CASE("average-pool-to-depthwise-conv keeps what an average pool counting its pads computes", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const rules::Rule& rule = rule_named(rules, "average-pool-to-depthwise-conv");
  struct Case {
    const char* name;
    std::vector<int64_t> input;
    PoolParams pool;
  };
  const Case cases[] = {
      {"3x3, stride 1, pads 1 (NasNet-A)", {1, 4, 9, 9}, {{3, 3}, {1, 1}, {1, 1, 1, 1}}},
      {"3x3, stride 2, pads 1", {2, 3, 9, 8}, {{3, 3}, {2, 2}, {1, 1, 1, 1}}},
      {"2x3, strides 2x1, uneven pads", {1, 3, 7, 6}, {{2, 3}, {2, 1}, {0, 1, 1, 0}}},
      {"3x3, stride 2, no pads", {1, 2, 9, 9}, {{3, 3}, {2, 2}, {0, 0, 0, 0}}},
      {"1-d, 3, stride 2, pads 1", {1, 5, 11}, {{3}, {2}, {1, 1}}},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { check_every_match(average_pool(c.input, c.pool), rule, 1); }
  }
}

TEST_CASE("unpadded-average-pool-to-depthwise-conv keeps what an unpadded average pool computes", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const rules::Rule& rule = rule_named(rules, "unpadded-average-pool-to-depthwise-conv");
  SECTION("3x3, stride 1") {
    check_every_match(average_pool({1, 4, 9, 9}, {{3, 3}, {1, 1}, {0, 0, 0, 0}, 0}), rule, 1);
  }
  SECTION("2x2, stride 2") {
    check_every_match(average_pool({2, 3, 8, 8}, {{2, 2}, {2, 2}, {0, 0, 0, 0}, 0}), rule, 1);
  }
}

TEST_CASE("an average pool becomes a depthwise convolution only where that is exact", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const rules::Rule& padded = rule_named(rules, "average-pool-to-depthwise-conv");
  const rules::Rule& unpadded = rule_named(rules, "unpadded-average-pool-to-depthwise-conv");
  SECTION("pads left out of the count: the border windows divide by fewer taps") {
    const ir::Graph graph = average_pool({1, 4, 9, 9}, {{3, 3}, {1, 1}, {1, 1, 1, 1}, 0});
    CHECK(count_matches(graph, padded) == 0);
    CHECK(count_matches(graph, unpadded) == 0);
  }
  SECTION("ceil_mode: a last partial window divides by fewer taps") {
    // 8 wide, 3x3 stride 2: floor gives 3 windows, ceil 4, the last one covering 2 columns.
    for (const int64_t include_pad : {0, 1}) {
      const ir::Graph graph = average_pool({1, 2, 8, 8}, {{3, 3}, {2, 2}, {0, 0, 0, 0}, include_pad, 1});
      CHECK(count_matches(graph, padded) == 0);
      CHECK(count_matches(graph, unpadded) == 0);
    }
  }
  SECTION("an unpadded pool counting its pads is the first rule's alone") {
    const ir::Graph graph = average_pool({1, 4, 9, 9}, {{3, 3}, {1, 1}, {0, 0, 0, 0}, 1});
    CHECK(count_matches(graph, padded) == 1);
    CHECK(count_matches(graph, unpadded) == 0);
  }
}

TEST_CASE("a pool rule that ignores count_include_pad fails the numeric check", "[rules]") {
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-pool
  source
    y = AveragePool(x) [kernel_shape = ?k, strides = ?s, pads = ?p, ceil_mode = 0]
  target
    w = ConstPool() [channels = shape(x)[1], kernel_shape = ?k]
    y2 = Conv(x, w) [kernel_shape = ?k, strides = ?s, pads = ?p, group = shape(x)[1]]
  map y -> y2
end
)",
                                                            "wrong.rules");
  const ir::Graph before = average_pool({1, 4, 9, 9}, {{3, 3}, {1, 1}, {1, 1, 1, 1}, 0});
  const ir::Graph after = applied_once(before, wrong[0]);
  CHECK_FALSE(runtime::check_equivalent(before, after).passed());
}

TEST_CASE("add-convs-of-one-input keeps what a sum of two convolutions computes", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const ConvParams strided{{3, 1}, {2, 1}, {1, 0, 0, 0}, {2, 1}, 2};
  const Branch cases[] = {
      {{1, 3, 8, 8}, 5, ConvParams{}},
      {{1, 4, 8, 8}, 4, depthwise(4)},
      {{1, 4, 8, 8}, 8, depthwise(4)},  // two filters per channel
      {{2, 4, 9, 7}, 6, strided},
  };
  for (const bool bias : {false, true}) {
    const rules::Rule& rule =
        rule_named(rules, bias ? "add-convs-bias-of-one-input" : "add-convs-of-one-input");
    for (const Branch& branch : cases) {
      DYNAMIC_SECTION(rule.name << ", group " << branch.params.group << ", " << branch.filters
                                << " filters") {
        check_every_match(joined_convs(ir::OpKind::kAdd, branch, branch, bias, true), rule, 1);
      }
    }
  }
}

/// x -> conv[activation](x, w1, b1, conv(x, w2, b2[, r])) as the graph output "z": a sum of two
/// convolutions of one input after the residual fusion (with a residual input r of the inner one).
ir::Graph residual_convs_of_one_input(const std::vector<int64_t>& input, int64_t filters, ConvParams params,
                                      const std::string& activation, bool inner_residual) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type(input));
  const ir::ValueId inner = add_conv(graph, x, filters, params, true, 31);
  ir::ValueId y2 = inner;
  if (inner_residual) {
    const ir::Node& conv = graph.node(graph.value(inner).producer);
    std::vector<ir::ValueId> inputs = conv.inputs;
    inputs.push_back(graph.add_input("r", graph.value(inner).type));
    y2 = graph.node(add_inferred(graph, ir::OpKind::kConv, inputs, params.attributes())).outputs[0];
  }
  std::vector<int64_t> dims = {filters, input[1] / params.group};
  dims.insert(dims.end(), params.kernel.begin(), params.kernel.end());
  params.activation = activation;
  const ir::ValueId w1 = graph.add_weight({}, ir::share(testing::random_tensor(dims, 41)));
  const ir::ValueId b1 = graph.add_weight({}, ir::share(testing::random_tensor({filters}, 42)));
  const ir::ValueId z = graph.node(add_inferred(graph, ir::OpKind::kConv, {x, w1, b1, y2}, params.attributes())).outputs[0];
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

TEST_CASE("add-residual-convs-bias-of-one-input keeps what a fused sum of two convolutions computes", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const ConvParams strided{{3, 1}, {2, 1}, {1, 0, 0, 0}, {2, 1}, 2};
  for (const bool inner_residual : {false, true}) {
    const rules::Rule& rule = rule_named(rules, inner_residual ? "add-residual-convs-bias-of-one-input-with-residual"
                                                               : "add-residual-convs-bias-of-one-input");
    for (const std::string activation : {"none", "relu"}) {
      DYNAMIC_SECTION(rule.name << ", activation " << activation) {
        check_every_match(residual_convs_of_one_input({1, 3, 8, 8}, 5, ConvParams{}, activation, inner_residual), rule, 1);
        check_every_match(residual_convs_of_one_input({1, 4, 8, 8}, 4, depthwise(4), activation, inner_residual), rule, 1);
        check_every_match(residual_convs_of_one_input({2, 4, 9, 7}, 6, strided, activation, inner_residual), rule, 1);
      }
    }
    // The other rule of the pair does not match: a residual input is there or it is not.
    const rules::Rule& other = rule_named(rules, inner_residual ? "add-residual-convs-bias-of-one-input"
                                                                : "add-residual-convs-bias-of-one-input-with-residual");
    CHECK(count_matches(residual_convs_of_one_input({1, 3, 8, 8}, 5, ConvParams{}, "none", inner_residual), other) == 0);
  }
}

/// An inference batch normalization of the image x with random parameters (seeds `seed` on; a
/// positive variance).
ir::ValueId batchnorm_of(ir::Graph& graph, ir::ValueId x, uint32_t seed) {
  const int64_t channels = graph.value(x).type.shape.dims[1].value;
  std::vector<ir::ValueId> inputs = {x};
  for (uint32_t k = 0; k < 4; ++k) {
    // scale, shift, mean, and a positive variance
    inputs.push_back(graph.add_weight({}, ir::share(k == 3 ? testing::random_tensor({channels}, seed + k, 0.5f, 1.5f)
                                                           : testing::random_tensor({channels}, seed + k))));
  }
  ir::Attributes epsilon;
  epsilon.set("epsilon", 1e-5f);
  return graph.node(add_inferred(graph, ir::OpKind::kBatchNormalization, inputs, epsilon)).outputs[0];
}

/// x -> conv(x, w, b) + batchnorm(x) as the graph output "z": a RepVGG block's identity branch;
/// with `fused`, the normalization is the convolution's residual input, with `activation`.
ir::Graph conv_plus_batchnorm_of_input(const std::vector<int64_t>& input, ConvParams params, bool fused = false,
                                       const std::string& activation = "none") {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type(input));
  const ir::ValueId n = batchnorm_of(graph, x, 60);
  ir::ValueId z = ir::kNoValue;
  if (fused) {
    std::vector<int64_t> dims = {input[1], input[1] / params.group};
    dims.insert(dims.end(), params.kernel.begin(), params.kernel.end());
    params.activation = activation;
    const ir::ValueId w = graph.add_weight({}, ir::share(testing::random_tensor(dims, 51)));
    const ir::ValueId b = graph.add_weight({}, ir::share(testing::random_tensor({input[1]}, 52)));
    z = graph.node(add_inferred(graph, ir::OpKind::kConv, {x, w, b, n}, params.attributes())).outputs[0];
  } else {
    const ir::ValueId y = add_conv(graph, x, input[1], params, true, 51);
    z = graph.node(add_inferred(graph, ir::OpKind::kAdd, {y, n})).outputs[0];
  }
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

TEST_CASE("the batch-norm identity-branch rules keep what a RepVGG block computes", "[rules]") {
  // In merge.rules with the other identity branches; proved since 2026-12-07.
  const std::vector<rules::Rule> all = read_rules("merge.rules");
  const std::vector<rules::Rule> rules = {rule_named(all, "add-batchnorm-of-input-to-pointwise-conv"),
                                          rule_named(all, "add-batchnorm-of-input-to-depthwise-conv")};
  ConvParams pointwise{{1, 1}, {1, 1}, {0, 0, 0, 0}};
  check_every_match(conv_plus_batchnorm_of_input({1, 6, 5, 5}, pointwise),
                    rule_named(rules, "add-batchnorm-of-input-to-pointwise-conv"), 1);
  check_every_match(conv_plus_batchnorm_of_input({2, 4, 6, 7}, depthwise(4)),
                    rule_named(rules, "add-batchnorm-of-input-to-depthwise-conv"), 1);
  // A dense 3x3 convolution is neither, but the third.
  CHECK(count_matches(conv_plus_batchnorm_of_input({1, 4, 5, 5}, ConvParams{}), rules[0]) == 0);
  CHECK(count_matches(conv_plus_batchnorm_of_input({1, 4, 5, 5}, ConvParams{}), rules[1]) == 0);
  const rules::Rule& dense = rule_named(all, "add-batchnorm-of-input-to-conv-3x3");
  check_every_match(conv_plus_batchnorm_of_input({2, 4, 6, 5}, ConvParams{}), dense, 1);
  CHECK(count_matches(conv_plus_batchnorm_of_input({2, 4, 6, 5}, depthwise(4)), dense) == 0);
  // The residual forms (1x1 and dense 3x3), the activation kept; not the Add forms' rules.
  for (const std::string activation : {"none", "relu"}) {
    INFO(activation);
    check_every_match(conv_plus_batchnorm_of_input({1, 6, 5, 5}, pointwise, true, activation),
                      rule_named(all, "residual-batchnorm-of-input-into-pointwise-conv"), 1);
    check_every_match(conv_plus_batchnorm_of_input({2, 4, 6, 5}, ConvParams{}, true, activation),
                      rule_named(all, "residual-batchnorm-of-input-into-conv-3x3"), 1);
    CHECK(count_matches(conv_plus_batchnorm_of_input({2, 4, 6, 5}, ConvParams{}, true, activation), dense) == 0);
  }
  CHECK(rules::parse_rules(rules::print_rules(rules), "again.rules") == rules);
}

/// FastViT's RepMixer once its mixer's branches are one convolution, as the graph output "z":
/// x + s * (conv(x, w, b) - batchnorm(x)), s a layer scale of `scale_dims` (one factor per
/// channel).
ir::Graph rep_mixer(const std::vector<int64_t>& input, const ConvParams& params,
                    const std::vector<int64_t>& scale_dims) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type(input));
  const ir::ValueId y = add_conv(graph, x, input[1], params, true, 71);
  const ir::ValueId n = batchnorm_of(graph, x, 80);
  const ir::ValueId d = graph.node(add_inferred(graph, ir::OpKind::kSub, {y, n})).outputs[0];
  const ir::ValueId s = graph.add_weight({}, ir::share(testing::random_tensor(scale_dims, 90)));
  const ir::ValueId m = graph.node(add_inferred(graph, ir::OpKind::kMul, {d, s})).outputs[0];
  const ir::ValueId z = graph.node(add_inferred(graph, ir::OpKind::kAdd, {x, m})).outputs[0];
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

TEST_CASE("FastViT's RepMixer becomes one depthwise convolution", "[rules]") {
  const std::vector<rules::Rule> merge = read_rules("merge.rules");
  const std::vector<rules::Rule> algebra = read_rules("algebra.rules");
  const rules::Rule& sub = rule_named(merge, "sub-batchnorm-of-input-from-depthwise-conv");
  const rules::Rule& scale = rule_named(algebra, "fold-output-channel-scale-into-conv-bias-weight");
  const rules::Rule& residual = rule_named(merge, "add-input-to-depthwise-conv");
  const ir::Graph before = rep_mixer({2, 4, 6, 7}, depthwise(4), {4, 1, 1});
  ir::Graph after = before;
  for (const rules::Rule* rule : {&sub, &scale, &residual}) {
    INFO(rule->name);
    after = applied_once(after, *rule);
    CHECK(runtime::check_equivalent(before, after).passed());
  }
  CHECK(running_ops(after) == std::multiset<ir::OpKind>{ir::OpKind::kConv});
  // The normalization's subtraction needs a depthwise 3x3 convolution: not a dense one, not a
  // 5x5 one.
  CHECK(count_matches(rep_mixer({1, 4, 5, 5}, ConvParams{}, {4, 1, 1}), sub) == 0);
  ConvParams large = depthwise(4);
  large.kernel = {5, 5};
  large.pads = {2, 2, 2, 2};
  CHECK(count_matches(rep_mixer({1, 4, 6, 6}, large, {4, 1, 1}), sub) == 0);
}

TEST_CASE("add-convs-of-two-inputs keeps what a sum of convolutions of two inputs computes", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const ConvParams strided{{3, 3}, {2, 2}, {1, 0, 0, 1}};
  const Branch equal = {{1, 3, 8, 8}, 4, ConvParams{}};
  const Branch wider = {{1, 5, 8, 8}, 4, ConvParams{}};
  for (const bool bias : {false, true}) {
    const rules::Rule& rule =
        rule_named(rules, bias ? "add-convs-bias-of-two-inputs" : "add-convs-of-two-inputs");
    DYNAMIC_SECTION(rule.name << ", equal inputs") {
      check_every_match(joined_convs(ir::OpKind::kAdd, equal, equal, bias, false), rule, 1);
    }
    DYNAMIC_SECTION(rule.name << ", inputs of 3 and 5 channels") {
      check_every_match(joined_convs(ir::OpKind::kAdd, equal, wider, bias, false), rule, 1);
    }
    DYNAMIC_SECTION(rule.name << ", strided") {
      check_every_match(
          joined_convs(ir::OpKind::kAdd, {{2, 2, 9, 9}, 3, strided}, {{2, 4, 9, 9}, 3, strided}, bias, false),
          rule, 1);
    }
  }
}

TEST_CASE("the sums of convolutions need equal parameters, no activation and the right inputs", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const rules::Rule& one_input = rule_named(rules, "add-convs-of-one-input");
  const rules::Rule& two_inputs = rule_named(rules, "add-convs-of-two-inputs");
  const Branch plain = {{1, 4, 8, 8}, 4, ConvParams{}};
  Branch relu = plain;
  relu.params.activation = "relu";
  Branch dilated = plain;  // same output sizes
  dilated.params.dilations = {2, 2};
  dilated.params.pads = {2, 2, 2, 2};
  Branch grouped = plain;
  grouped.params.group = 2;
  SECTION("unequal parameters or an activation") {
    for (const Branch& other : {relu, dilated}) {
      CHECK(count_matches(joined_convs(ir::OpKind::kAdd, plain, other, false, true), one_input) == 0);
      CHECK(count_matches(joined_convs(ir::OpKind::kAdd, plain, other, false, false), two_inputs) == 0);
    }
  }
  SECTION("one input for the first rule; the second takes one input as two equal ones") {
    CHECK(count_matches(joined_convs(ir::OpKind::kAdd, plain, plain, false, false), one_input) == 0);
    // Pattern inputs may share a value (the rule holds for equal inputs): correct, and the search
    // weighs it against the one-input rule.
    const ir::Graph shared = joined_convs(ir::OpKind::kAdd, plain, plain, false, true);
    CHECK(count_matches(shared, two_inputs) == 1);
    check_every_match(shared, two_inputs, 1);
  }
  SECTION("grouped convolutions of two inputs do not concatenate") {
    CHECK(count_matches(joined_convs(ir::OpKind::kAdd, grouped, grouped, false, false), two_inputs) == 0);
  }
  SECTION("inputs of different sizes whose outputs agree are rejected on apply") {
    // 3x3 stride 2 pads 1 maps both 8 and 7 to 4.
    Branch big{{1, 2, 8, 8}, 3, ConvParams{}};
    big.params.strides = {2, 2};
    Branch small = big;
    small.input = {1, 2, 7, 7};
    const ir::Graph graph = joined_convs(ir::OpKind::kAdd, big, small, false, false);
    const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, two_inputs);
    REQUIRE(matches.size() == 1);
    CHECK_FALSE(rewrite::apply(graph, matches[0]));
  }
}

TEST_CASE("concat-grouped-convs keeps what two grouped convolutions side by side compute", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  ConvParams relu_group1;
  relu_group1.activation = "relu";
  ConvParams relu_group2 = relu_group1;
  relu_group2.group = 2;
  struct Case {
    const char* name;
    Branch first;
    Branch second;
  };
  const Case cases[] = {
      {"two depthwise", {{1, 4, 8, 8}, 4, depthwise(4)}, {{1, 6, 8, 8}, 6, depthwise(6)}},
      {"two filters per channel", {{1, 2, 8, 8}, 4, depthwise(2)}, {{1, 3, 8, 8}, 6, depthwise(3)}},
      {"group 1", {{1, 3, 8, 8}, 4, ConvParams{}}, {{1, 3, 8, 8}, 4, ConvParams{}}},
      {"groups 2 and 1, relu", {{2, 4, 7, 7}, 6, relu_group2}, {{2, 2, 7, 7}, 3, relu_group1}},
  };
  for (const bool bias : {false, true}) {
    const rules::Rule& rule = rule_named(rules, bias ? "concat-grouped-convs-bias" : "concat-grouped-convs");
    for (const Case& c : cases) {
      DYNAMIC_SECTION(rule.name << ", " << c.name) {
        check_every_match(joined_convs(ir::OpKind::kConcat, c.first, c.second, bias, false), rule, 1);
      }
    }
  }
}

TEST_CASE("concat-grouped-convs needs groups of equal channel and filter counts", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const rules::Rule& rule = rule_named(rules, "concat-grouped-convs");
  const Branch depthwise4 = {{1, 4, 8, 8}, 4, depthwise(4)};
  SECTION("one filter per group and two") {
    const Branch doubled = {{1, 4, 8, 8}, 8, depthwise(4)};
    CHECK(count_matches(joined_convs(ir::OpKind::kConcat, depthwise4, doubled, false, false), rule) == 0);
  }
  SECTION("one channel per group and two") {
    ConvParams group2;
    group2.group = 2;
    const Branch halves = {{1, 4, 8, 8}, 2, group2};
    CHECK(count_matches(joined_convs(ir::OpKind::kConcat, depthwise4, halves, false, false), rule) == 0);
  }
}

TEST_CASE("a group merge that ignores the filters per group fails the numeric check", "[rules]") {
  // Group 1 with 4 filters beside group 2 with 1 filter each: every shape still fits.
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-group-merge
  source
    y1 = Conv(x1, w1) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = ?g1, activation = ?a]
    y2 = Conv(x2, w2) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = ?g2, activation = ?a]
    z = Concat(y1, y2) [axis = 1]
  where shape(w1)[1] == shape(w2)[1]
  target
    x = Concat(x1, x2) [axis = 1]
    w = Concat(w1, w2) [axis = 0]
    z2 = Conv(x, w) [@y1, group = ?g1 + ?g2]
  map z -> z2
end
)",
                                                            "wrong.rules");
  ConvParams group2;
  group2.group = 2;
  const ir::Graph before = joined_convs(ir::OpKind::kConcat, {{1, 2, 8, 8}, 4, ConvParams{}},
                                        {{1, 4, 8, 8}, 2, group2}, false, false);
  const ir::Graph after = applied_once(before, wrong[0]);
  CHECK_FALSE(runtime::check_equivalent(before, after).passed());
}

TEST_CASE("concat-grouped-convs-of-one-input keeps what two grouped convolutions of one input compute",
          "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const rules::Rule& rule = rule_named(rules, "concat-grouped-convs-of-one-input");
  ConvParams relu = depthwise(4);
  relu.activation = "relu";
  const Branch cases[] = {
      {{1, 4, 8, 8}, 4, depthwise(4)},
      {{1, 4, 8, 8}, 8, depthwise(4)},
      {{2, 4, 7, 9}, 4, relu},
      {{1, 3, 8, 8}, 5, ConvParams{}},
  };
  for (const Branch& branch : cases) {
    DYNAMIC_SECTION("group " << branch.params.group << ", " << branch.filters << " filters, "
                             << branch.params.activation) {
      check_every_match(joined_convs(ir::OpKind::kConcat, branch, branch, false, true), rule, 1);
    }
  }
  SECTION("unequal filter counts do not match") {
    const Branch doubled = {{1, 4, 8, 8}, 8, depthwise(4)};
    CHECK(count_matches(joined_convs(ir::OpKind::kConcat, cases[0], doubled, false, true), rule) == 0);
  }
}

TEST_CASE("enlarge-depthwise-conv-3x3-to-5x5 keeps what a depthwise convolution computes", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const rules::Rule& rule = rule_named(rules, "enlarge-depthwise-conv-3x3-to-5x5");
  ConvParams strided = depthwise(4);
  strided.strides = {2, 2};
  strided.pads = {0, 1, 1, 0};
  const Branch cases[] = {
      {{1, 4, 8, 8}, 4, depthwise(4)},
      {{1, 4, 8, 8}, 8, depthwise(4)},
      {{2, 4, 9, 7}, 4, strided},
  };
  for (const Branch& branch : cases) {
    DYNAMIC_SECTION("strides " << branch.params.strides[0] << ", " << branch.filters << " filters") {
      ir::Graph graph;
      const ir::ValueId x = graph.add_input("x", float_type(branch.input));
      const ir::ValueId y = add_conv(graph, x, branch.filters, branch.params, false, 31);
      graph.set_name(y, "y");
      graph.set_outputs({y});
      check_every_match(graph, rule, 1);
    }
  }
  SECTION("a convolution that is not depthwise, or dilated, does not match") {
    ConvParams dilated = depthwise(4);
    dilated.dilations = {2, 2};
    dilated.pads = {2, 2, 2, 2};
    for (const ConvParams& params : {ConvParams{}, dilated}) {
      ir::Graph graph;
      const ir::ValueId x = graph.add_input("x", float_type({1, 4, 8, 8}));
      graph.set_outputs({add_conv(graph, x, 4, params, false, 31)});
      CHECK(count_matches(graph, rule) == 0);
    }
  }
}

TEST_CASE("TASO's Fig. 8c: two separable convolutions added become one depthwise and one convolution",
          "[rules]") {
  // Enlarge the 3x3, join the 1x1 convolutions on concatenated channels, then the depthwise
  // convolutions side by side; none of the rules needs a static batch.
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  const ir::Graph before = taso_fig8c(batched_type({1, 8, 10, 10}));
  ir::Graph after = applied_once(before, rule_named(rules, "enlarge-depthwise-conv-3x3-to-5x5"));
  after = applied_once(after, rule_named(rules, "add-convs-of-two-inputs"));
  after = applied_once(after, rule_named(rules, "concat-grouped-convs-of-one-input"));
  CHECK(running_ops(after) ==
        std::multiset<ir::OpKind>{ir::OpKind::kConcat, ir::OpKind::kConv, ir::OpKind::kConv});
  runtime::CheckOptions check;
  check.dims["N"] = 2;
  CHECK(runtime::check_equivalent(before, after, check).passed());
}

TEST_CASE("the search turns TASO's Fig. 8b, two average pools added, into one depthwise convolution",
          "[rules]") {
  const std::vector<rules::Rule> rules = depthwise_fusion_merge_rules();
  const rewrite::Matcher matcher(rules);
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  const ir::Graph input = taso_fig8b();
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  CHECK(result.stop == search::StopReason::kExhausted);
  const std::vector<ir::NodeId> running = running_nodes(result.best);
  REQUIRE(running.size() == 1);
  const ir::Node& conv = result.best.node(running[0]);
  CHECK(conv.op == ir::OpKind::kConv);
  CHECK(conv.attrs.get_int("group", 0) == 64);
  // The ConstPool weights and their sum are folded: the graph costs what its one convolution does.
  CHECK(result.best_cost.time_ms == Approx(model.node_cost(result.best, running[0]).time_ms));
  CHECK(result.best_cost.launches == 1);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(result.steps.size() == 3);  // two pools to convolutions, then their sum
  CHECK(runtime::check_equivalent(input, result.best).passed());
}

TEST_CASE("the search finds TASO's Fig. 8c sequence", "[rules]") {
  const std::vector<rules::Rule> rules = depthwise_fusion_merge_rules();
  const rewrite::Matcher matcher(rules);
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  const ir::Graph input = taso_fig8c(float_type({1, 64, 14, 14}));
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(running_ops(result.best) ==
        std::multiset<ir::OpKind>{ir::OpKind::kConcat, ir::OpKind::kConv, ir::OpKind::kConv});
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(runtime::check_equivalent(input, result.best).passed());
}

TEST_CASE("the depthwise rules survive a print/parse round trip", "[rules]") {
  const std::vector<rules::Rule> rules = read_rules("depthwise.rules");
  CHECK(rules.size() == 12);
  CHECK(rules::parse_rules(rules::print_rules(rules), "again.rules") == rules);
}

}  // namespace graphsub
