// Every rule of rules/group.rules, applied at each of its matches, computes what the graph did; a
// variant that concatenates the weights in the wrong order does not, nor a regrouping with its
// block-diagonal mask the wrong way round. The regroupings fold into one grouped convolution of
// half the groups, and a search whose costs price a grouped convolution of 8 channels per group
// above one of 16 (as onnxruntime runs them) regroups ResNeXt's and RegNet's convolutions; a
// depthwise convolution of channels not filling blocks of 16 is padded to them, and sliced back.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "onnx_io/onnx_io.h"
#include "rewrite/matcher.h"
#include "rewrite/rewrite_testing.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "runtime/equivalence.h"
#include "search/backtracking.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::add_canonical;
using testing::out;

std::vector<rules::Rule> group_rules() { return rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/group.rules"); }

const rules::Rule& rule_named(const std::vector<rules::Rule>& rules, const std::string& name) {
  for (const rules::Rule& rule : rules) {
    if (rule.name == name) return rule;
  }
  throw std::runtime_error("no rule " + name);
}

/// `graph` with the channel concatenation of `parts` as its one output, "y".
ir::Graph with_concat_output(ir::Graph graph, const std::vector<ir::ValueId>& parts) {
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  const ir::ValueId y = out(graph, add_canonical(graph, ir::OpKind::kConcat, parts, axis));
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return graph;
}

/// x [1, 6, 7, 7] split into three slices of 2 channels; a 3x3 convolution (group `group`, 2 * group
/// filters) on each; concatenated with another input z between the second and the third.
ir::Graph sliced_convs(bool bias, int64_t group) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, 6, 7, 7}));
  ir::Attributes split;
  split.set("axis", int64_t{1});
  split.set("split", std::vector<int64_t>{2, 2, 2});
  const ir::NodeId slices = add_canonical(graph, ir::OpKind::kSplit, {x}, split, 3);
  std::vector<ir::ValueId> parts;
  for (int i = 0; i < 3; ++i) {
    ir::Attributes attrs;
    attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
    attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    attrs.set("group", group);
    const int64_t filters = 2 * group;
    std::vector<ir::ValueId> inputs = {
        graph.node(slices).outputs[i],
        graph.add_weight({}, ir::share(testing::random_tensor({filters, 2 / group, 3, 3}, 10 + i)))};
    if (bias) inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({filters}, 20 + i))));
    parts.push_back(out(graph, add_canonical(graph, ir::OpKind::kConv, inputs, attrs)));
  }
  parts.insert(parts.begin() + 2, graph.add_input("z", testing::float_type({1, 5, 7, 7})));
  return with_concat_output(std::move(graph), parts);
}

/// One sliced convolution of mixed_group_convs: its slice's channels, group and filters.
struct Slice {
  int64_t channels;
  int64_t group;
  int64_t filters;
};

/// x [1, c1 + c2, 7, 7] split into two slices; a 3x3 convolution of each (with its own group and
/// filter count, bias when `bias`); the two concatenated, the output "y".
ir::Graph mixed_group_convs(bool bias, Slice first, Slice second) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, first.channels + second.channels, 7, 7}));
  ir::Attributes split;
  split.set("axis", int64_t{1});
  split.set("split", std::vector<int64_t>{first.channels, second.channels});
  const ir::NodeId slices = add_canonical(graph, ir::OpKind::kSplit, {x}, split, 2);
  std::vector<ir::ValueId> parts;
  uint32_t seed = 30;
  for (const Slice& slice : {first, second}) {
    ir::Attributes attrs;
    attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
    attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    attrs.set("group", slice.group);
    std::vector<ir::ValueId> inputs = {
        graph.node(slices).outputs[parts.size()],
        graph.add_weight({}, ir::share(testing::random_tensor({slice.filters, slice.channels / slice.group, 3, 3},
                                                              seed++)))};
    if (bias) inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({slice.filters}, seed++))));
    parts.push_back(out(graph, add_canonical(graph, ir::OpKind::kConv, inputs, attrs)));
  }
  return with_concat_output(std::move(graph), parts);
}

/// The group of the graph's only convolution (0 when there is not exactly one).
int64_t only_conv_group(const ir::Graph& graph) {
  int64_t group = 0;
  int convs = 0;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    if (node.op != ir::OpKind::kConv) continue;
    ++convs;
    group = node.attrs.get_int("group", 0);
  }
  return convs == 1 ? group : 0;
}

/// The graph after the rule at each of its matches, one at a time, each checked against `graph`.
std::vector<ir::Graph> each_rewrite(const ir::Graph& graph, const rules::Rule& rule) {
  std::vector<ir::Graph> results;
  for (const rewrite::Match& match : rewrite::Matcher::find(graph, rule)) {
    std::string why;
    std::optional<ir::Graph> result = rewrite::apply(graph, match, &why);
    INFO(why);
    REQUIRE(result);
    results.push_back(std::move(*result));
  }
  return results;
}

/// x [1, groups * channels, 6, 6] through one 3x3 convolution (pads 1) of `groups` groups of
/// `channels` input channels and `filters` filters each, with a bias when `bias`, the fused
/// `activation`; a weight computed at run time (a graph input) unless `constant`.
ir::Graph grouped_conv(int64_t groups, int64_t channels, int64_t filters, bool bias,
                       const std::string& activation = "none", bool constant = true) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, groups * channels, 6, 6}));
  const std::vector<int64_t> kernel = {groups * filters, channels, 3, 3};
  std::vector<ir::ValueId> inputs = {
      x, constant ? graph.add_weight({}, ir::share(testing::random_tensor(kernel, 41)))
                  : graph.add_input("w", testing::float_type(kernel))};
  if (bias) inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({groups * filters}, 42))));
  const ir::Attributes attrs = testing::conv_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, groups, activation);
  const ir::ValueId y = out(graph, add_canonical(graph, ir::OpKind::kConv, inputs, attrs));
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return graph;
}

/// The name of the regrouping rule for `groups` (the odd one for an odd count), with or without bias.
std::string regroup_rule(int64_t groups, bool bias) {
  const std::string odd = groups % 2 == 1 ? "odd-" : "";
  return std::string("regroup-conv-") + (bias ? "bias-" : "") + odd + "pairs";
}

/// x [1, channels, 6, 6] through one depthwise 3x3 convolution (pads 1) of `multiplier` filters
/// per channel, with a bias when `bias`.
ir::Graph depthwise_conv(int64_t channels, bool bias, int64_t multiplier = 1) {
  return grouped_conv(channels, 1, multiplier, bias);
}

/// Prices a graph as the analytical CPU estimate does, but a grouped convolution whose groups are
/// not 16 channels wide (in and out), or a depthwise one whose channels are not a multiple of 16,
/// at 4x: onnxruntime 1.32 runs those outside its blocked kernels (ResNeXt-50's 8-channel groups:
/// 1.4-2.1x slower than 16-channel groups of twice the multiply-adds; ShuffleNet-v2's 58-channel
/// depthwise convolutions at 4-9 GFLOP/s against 30-50 for 128 channels).
class NarrowGroupsDear : public cost::CostModel {
 public:
  cost::Cost node_cost(const ir::Graph& graph, ir::NodeId id) const override {
    cost::Cost cost = cpu_.node_cost(graph, id);
    const ir::Node& node = graph.node(id);
    if (node.op != ir::OpKind::kConv || node.attrs.get_int("group", 1) == 1) return cost;
    const std::vector<int64_t> kernel = graph.value(node.inputs[1]).type.shape.sizes().value();
    const int64_t groups = node.attrs.get_int("group", 1);
    const bool depthwise = kernel[1] == 1 && kernel[0] == groups;
    if (depthwise ? groups % 16 != 0 : kernel[1] % 16 != 0 || (kernel[0] / groups) % 16 != 0) cost.time_ms *= 4;
    return cost;
  }

 private:
  cost::AnalyticalModel cpu_{cost::device_by_name("cpu")};
};

/// group.rules printed with every `from` replaced by `to` and parsed back (a wrong variant);
/// `replaced` counts the places.
std::vector<rules::Rule> group_rules_with(const std::string& from, const std::string& to, int& replaced) {
  std::string text = rules::print_rules(group_rules());
  replaced = 0;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++replaced;
  }
  return rules::parse_rules(text, "wrong.rules");
}

/// The backtracking search with group.rules, priced by NarrowGroupsDear, turns `input`'s one
/// convolution into one of `group` groups once export folds the weights, at a lower cost and
/// computing the same.
void check_search_writes_group(const ir::Graph& input, int64_t group) {
  const std::vector<rules::Rule> rules = group_rules();
  const rewrite::Matcher matcher(rules);
  const NarrowGroupsDear model;
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  const ir::Graph folded = onnx_io::fold_weight_nodes(result.best);
  CHECK(only_conv_group(folded) == group);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(runtime::check_equivalent(input, folded).passed());
}

}  // namespace

TEST_CASE("merge-sliced-convs-to-group merges adjacent sliced convolutions into a grouped one", "[rules]") {
  const std::vector<rules::Rule> rules = group_rules();
  for (int64_t group : {1, 2}) {
    const ir::Graph graph = sliced_convs(false, group);
    // Only the first two convolutions are adjacent both in the split and in the concat.
    const std::vector<ir::Graph> results = each_rewrite(graph, rule_named(rules, "merge-sliced-convs-to-group"));
    REQUIRE(results.size() == 1);
    CHECK(runtime::check_equivalent(graph, results[0]).passed());
    bool doubled = false;
    for (ir::NodeId id : results[0].node_ids()) {
      const ir::Node& node = results[0].node(id);
      doubled |= node.op == ir::OpKind::kConv && node.attrs.get_int("group", 0) == 2 * group;
    }
    CHECK(doubled);
  }
}

TEST_CASE("merge-sliced-convs-bias-to-group keeps each slice's bias", "[rules]") {
  const ir::Graph graph = sliced_convs(true, 1);
  const std::vector<ir::Graph> results = each_rewrite(graph, rule_named(group_rules(), "merge-sliced-convs-bias-to-group"));
  REQUIRE(results.size() == 1);
  CHECK(runtime::check_equivalent(graph, results[0]).passed());
}

TEST_CASE("the sliced merges join convolutions of different groups whose groups are alike", "[rules]") {
  // Equal input channels and filters per group: group 2 on 4 channels (6 filters, 3 per group) and
  // group 1 on 2 channels (3 filters) are group 3 on 6 channels; likewise depthwise ones, and the
  // other way round.
  const std::vector<rules::Rule> rules = group_rules();
  struct Case {
    Slice first, second;
  };
  const Case cases[] = {
      {{4, 2, 6}, {2, 1, 3}},
      {{2, 1, 3}, {4, 2, 6}},
      {{4, 4, 8}, {2, 2, 4}},
      {{3, 1, 2}, {6, 2, 4}},
  };
  for (const bool bias : {false, true}) {
    const rules::Rule& rule = rule_named(rules, bias ? "merge-sliced-convs-bias-to-group" : "merge-sliced-convs-to-group");
    for (const Case& c : cases) {
      DYNAMIC_SECTION(rule.name << ": group " << c.first.group << " on " << c.first.channels << " channels, group "
                                << c.second.group << " on " << c.second.channels) {
        const ir::Graph graph = mixed_group_convs(bias, c.first, c.second);
        const std::vector<ir::Graph> results = each_rewrite(graph, rule);
        REQUIRE(results.size() == 1);
        CHECK(only_conv_group(results[0]) == c.first.group + c.second.group);
        CHECK(runtime::check_equivalent(graph, results[0]).passed());
      }
    }
  }
}

TEST_CASE("the sliced merges refuse convolutions whose groups differ", "[rules]") {
  const std::vector<rules::Rule> rules = group_rules();
  for (const bool bias : {false, true}) {
    const rules::Rule& rule = rule_named(rules, bias ? "merge-sliced-convs-bias-to-group" : "merge-sliced-convs-to-group");
    INFO(rule.name);
    // Filters per group differ: 3 against 2.
    CHECK(rewrite::Matcher::find(mixed_group_convs(bias, {4, 2, 6}, {2, 1, 2}), rule).empty());
    CHECK(rewrite::Matcher::find(mixed_group_convs(bias, {2, 1, 2}, {4, 2, 6}), rule).empty());
    // Input channels per group differ: 2 against 3 (filters per group equal).
    CHECK(rewrite::Matcher::find(mixed_group_convs(bias, {4, 2, 6}, {3, 1, 3}), rule).empty());
    // Equal groups but different slices: 2 channels per group against 1.
    CHECK(rewrite::Matcher::find(mixed_group_convs(bias, {4, 2, 4}, {2, 2, 4}), rule).empty());
  }
}

TEST_CASE("a grouped merge with the weights in the wrong order fails the check", "[rules]") {
  rules::Rule wrong = rule_named(group_rules(), "merge-sliced-convs-to-group");
  for (rules::PatternNode& node : wrong.target) {
    if (node.op == ir::OpKind::kConcat && node.inputs == std::vector<std::string>{"w1", "w2"}) node.inputs = {"w2", "w1"};
  }
  const ir::Graph graph = sliced_convs(false, 1);
  const std::vector<ir::Graph> results = each_rewrite(graph, wrong);
  REQUIRE(results.size() == 1);
  CHECK_FALSE(runtime::check_equivalent(graph, results[0]).passed());
}

TEST_CASE("the regroupings write a grouped convolution as one of half the groups", "[rules]") {
  // Groups of 2 channels and 3 filters: 4 groups become 2 of 4 channels and 6 filters; 3 groups
  // become 2 with a group of zeros, the input padded by 2 channels and the result sliced to 9.
  const std::vector<rules::Rule> rules = group_rules();
  for (const int64_t groups : {2, 4, 3, 5}) {
    for (const bool bias : {false, true}) {
      for (const std::string activation : {"none", "relu", "sigmoid"}) {
        const std::string name = regroup_rule(groups, bias);
        DYNAMIC_SECTION(name << ", " << groups << " groups, activation " << activation) {
          const ir::Graph graph = grouped_conv(groups, 2, 3, bias, activation);
          const std::vector<ir::Graph> results = each_rewrite(graph, rule_named(rules, name));
          REQUIRE(results.size() == 1);
          CHECK(runtime::check_equivalent(graph, results[0]).passed());
          // The weights' tiling and mask fold away: one convolution, of (groups + 1) / 2 groups.
          const ir::Graph folded = onnx_io::fold_weight_nodes(results[0]);
          CHECK(only_conv_group(folded) == (groups + 1) / 2);
          CHECK(testing::count_of(folded, ir::OpKind::kTile) == 0);
          CHECK(testing::count_of(folded, ir::OpKind::kMul) == 0);
          CHECK(testing::count_of(folded, ir::OpKind::kPad) == groups % 2);
          CHECK(testing::count_of(folded, ir::OpKind::kSlice) == groups % 2);
          CHECK(runtime::check_equivalent(graph, folded).passed());
        }
      }
    }
  }
}

TEST_CASE("the regroupings refuse one group, the other parity, depthwise convolutions and weights computed at run time", "[rules]") {
  const std::vector<rules::Rule> rules = group_rules();
  for (const bool bias : {false, true}) {
    for (const int64_t groups : {2, 3}) {
      const rules::Rule& rule = rule_named(rules, regroup_rule(groups, bias));
      INFO(rule.name);
      CHECK(rewrite::Matcher::find(grouped_conv(1, 4, 4, bias), rule).empty());
      CHECK(rewrite::Matcher::find(grouped_conv(groups + 1, 2, 2, bias), rule).empty());
      CHECK(rewrite::Matcher::find(grouped_conv(groups, 2, 2, bias, "none", false), rule).empty());
      CHECK(rewrite::Matcher::find(depthwise_conv(groups, bias), rule).empty());
      CHECK(rewrite::Matcher::find(grouped_conv(groups, 2, 2, bias), rule).size() == 1);
    }
  }
}

TEST_CASE("a regrouping with its block-diagonal mask the wrong way round fails the check", "[rules]") {
  // Each filter then reads the other group of its pair.
  int replaced = 0;
  const std::vector<rules::Rule> wrong = group_rules_with("[1.0, 0.0, 0.0, 1.0]", "[0.0, 1.0, 1.0, 0.0]", replaced);
  for (const int64_t groups : {2, 3}) {
    const ir::Graph graph = grouped_conv(groups, 2, 3, true);
    const std::vector<ir::Graph> results = each_rewrite(graph, rule_named(wrong, regroup_rule(groups, true)));
    REQUIRE(results.size() == 1);
    CHECK_FALSE(runtime::check_equivalent(graph, results[0]).passed());
  }
}

TEST_CASE("a depthwise convolution of channels not filling blocks of 16 is padded to them and sliced back", "[rules]") {
  const std::vector<rules::Rule> rules = group_rules();
  for (const int64_t channels : {6, 17}) {
    for (const bool bias : {false, true}) {
      const std::string name = bias ? "pad-depthwise-conv-bias-to-16" : "pad-depthwise-conv-to-16";
      DYNAMIC_SECTION(name << ", " << channels << " channels") {
        const ir::Graph graph = depthwise_conv(channels, bias);
        const std::vector<ir::Graph> results = each_rewrite(graph, rule_named(rules, name));
        REQUIRE(results.size() == 1);
        CHECK(runtime::check_equivalent(graph, results[0]).passed());
        // The kernel's and bias's padding fold away: the input's Pad, the convolution, the Slice.
        const ir::Graph folded = onnx_io::fold_weight_nodes(results[0]);
        CHECK(only_conv_group(folded) == (channels + 15) / 16 * 16);
        CHECK(testing::count_of(folded, ir::OpKind::kPad) == 1);
        CHECK(testing::count_of(folded, ir::OpKind::kSlice) == 1);
        CHECK(runtime::check_equivalent(graph, folded).passed());
      }
    }
  }
}

TEST_CASE("the depthwise padding refuses full blocks, channel multipliers and grouped convolutions", "[rules]") {
  const std::vector<rules::Rule> rules = group_rules();
  for (const bool bias : {false, true}) {
    const rules::Rule& rule = rule_named(rules, bias ? "pad-depthwise-conv-bias-to-16" : "pad-depthwise-conv-to-16");
    INFO(rule.name);
    CHECK(rewrite::Matcher::find(depthwise_conv(16, bias), rule).empty());
    CHECK(rewrite::Matcher::find(depthwise_conv(32, bias), rule).empty());
    CHECK(rewrite::Matcher::find(depthwise_conv(6, bias, 2), rule).empty());
    CHECK(rewrite::Matcher::find(grouped_conv(3, 2, 2, bias), rule).empty());
    CHECK(rewrite::Matcher::find(grouped_conv(6, 1, 1, bias, "none", false), rule).empty());
  }
}

TEST_CASE("a depthwise padding with the input padded on the wrong side fails the check", "[rules]") {
  // The input's zero channels come first, so each filter reads the channel before its own.
  int replaced = 0;
  const std::vector<rules::Rule> wrong = group_rules_with("pads = [0, 0, 0, 0, 0, (?g + 15) / 16 * 16 - ?g, 0, 0]",
                                                         "pads = [0, (?g + 15) / 16 * 16 - ?g, 0, 0, 0, 0, 0, 0]", replaced);
  REQUIRE(replaced == 2);
  const ir::Graph graph = depthwise_conv(6, true);
  const std::vector<ir::Graph> results = each_rewrite(graph, rule_named(wrong, "pad-depthwise-conv-bias-to-16"));
  REQUIRE(results.size() == 1);
  CHECK_FALSE(runtime::check_equivalent(graph, results[0]).passed());
}

TEST_CASE("the search regroups convolutions of 8-channel groups where 16-channel ones cost less", "[rules]") {
  // ResNeXt-50's second stage (32 groups of 8) and one of RegNet's odd counts (3 groups of 8).
  for (const int64_t groups : {32, 3}) {
    DYNAMIC_SECTION(groups << " groups of 8 channels") {
      check_search_writes_group(grouped_conv(groups, 8, 8, true, "relu"), (groups + 1) / 2);
    }
  }
}

TEST_CASE("the search pads ShuffleNet-v2's 58-channel depthwise convolutions where 64 channels cost less", "[rules]") {
  check_search_writes_group(depthwise_conv(58, true), 64);
}

TEST_CASE("group.rules prints and parses back to the same rules", "[rules]") {
  const std::vector<rules::Rule> rules = group_rules();
  CHECK(rules::parse_rules(rules::print_rules(rules), "printed.rules") == rules);
}

}  // namespace graphsub
