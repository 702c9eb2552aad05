// Every rule of rules/group.rules, applied at each of its matches, computes what the graph did; a
// variant that concatenates the weights in the wrong order does not.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "rewrite/matcher.h"
#include "rewrite/rewrite_testing.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "runtime/equivalence.h"

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
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  const ir::ValueId y = out(graph, add_canonical(graph, ir::OpKind::kConcat, parts, axis));
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return graph;
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

TEST_CASE("group.rules prints and parses back to the same rules", "[rules]") {
  const std::vector<rules::Rule> rules = group_rules();
  CHECK(rules::parse_rules(rules::print_rules(rules), "printed.rules") == rules);
}

}  // namespace graphsub
