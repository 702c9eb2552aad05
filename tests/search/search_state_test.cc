// What every search shares: matches whose nodes all compute from weights alone are not tried.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rewrite/rewrite_testing.h"
#include "rewrite/rewriter.h"
#include "search/backtracking.h"
#include "search/search_state.h"
#include "search/search_testing.h"

namespace graphsub {
namespace {

using testing::add_canonical;
using testing::out;

/// h = x · Identity(w1) · Identity(w2) · ... : `count` Identity nodes on weights, as exporters
/// write them, each removable by eliminate-identity.
ir::Graph matmuls_through_identities(int count) {
  ir::Graph graph;
  ir::ValueId h = graph.add_input("x", testing::float_type({1, 8}));
  for (int i = 0; i < count; ++i) {
    const ir::ValueId w = graph.add_weight({}, ir::share(testing::random_tensor({8, 8}, static_cast<uint32_t>(i))));
    const ir::ValueId copy = out(graph, add_canonical(graph, ir::OpKind::kIdentity, {w}));
    h = out(graph, add_canonical(graph, ir::OpKind::kMatMul, {h, copy}));
  }
  graph.set_name(h, "h");
  graph.set_outputs({h});
  return graph;
}

/// z = (conv3x3(x) + [conv1x1(x) + 0 when `zero`]) / 2: a sum add-conv-bias-1x1-into-3x3 folds
/// (after eliminate-add-zero, with `zero`), and a division div-by-scalar-to-mul rewrites.
ir::Graph summed_convs_divided(bool zero) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, 4, 6, 6}));
  ir::ValueId small = testing::conv(graph, x, 4, {1, 1}, 1);
  if (zero) {
    const ir::ValueId nothing = graph.add_weight({}, ir::share(ir::Tensor::from_floats({}, {0.0f})));
    small = out(graph, add_canonical(graph, ir::OpKind::kAdd, {small, nothing}));
  }
  const ir::ValueId large = testing::conv(graph, x, 4, {3, 3}, 2);
  const ir::ValueId sum = out(graph, add_canonical(graph, ir::OpKind::kAdd, {large, small}));
  const ir::ValueId two = graph.add_weight({}, ir::share(ir::Tensor::from_floats({}, {2.0f})));
  const ir::ValueId z = out(graph, add_canonical(graph, ir::OpKind::kDiv, {sum, two}));
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return graph;
}

/// The rules named, applied in turn at their only match; sets `applied` to the matches.
ir::Graph applied_in_turn(ir::Graph graph, const std::vector<std::string>& names,
                          std::vector<rewrite::Match>& applied) {
  static const std::vector<rules::Rule> rules =
      testing::shipped_rules_named({"eliminate-add-zero", "add-conv-bias-1x1-into-3x3", "div-by-scalar-to-mul"});
  for (const std::string& name : names) {
    const auto rule = std::find_if(rules.begin(), rules.end(), [&](const rules::Rule& r) { return r.name == name; });
    const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, *rule);
    REQUIRE(matches.size() == 1);
    std::optional<ir::Graph> next = rewrite::apply(graph, matches[0]);
    REQUIRE(next);
    applied.push_back(matches[0]);
    graph = std::move(*next);
  }
  return graph;
}

}  // namespace

TEST_CASE("a search's steps in separate regions replay one region at a time", "[search]") {
  // The division reads the folded convolution's output from outside its pattern: a region of
  // its own, which matches again on the sum it read before the fold.
  const ir::Graph input = summed_convs_divided(false);
  std::vector<rewrite::Match> applied;
  const ir::Graph whole = applied_in_turn(input, {"add-conv-bias-1x1-into-3x3", "div-by-scalar-to-mul"}, applied);
  const search::StepRegions regions = search::step_regions(input, applied);
  CHECK(regions.groups == std::vector<std::vector<std::size_t>>{{0}, {1}});
  for (const std::vector<std::size_t>& chosen :
       {std::vector<std::size_t>{0}, std::vector<std::size_t>{1}, std::vector<std::size_t>{0, 1}}) {
    INFO(chosen.size() << " steps from " << chosen.front());
    std::vector<rewrite::Match> matches;
    std::vector<search::AppliedStep> steps;
    const std::optional<ir::Graph> replayed = search::replay_steps(input, applied, regions, chosen, matches, steps);
    REQUIRE(replayed);
    CHECK(matches.size() == chosen.size());
    CHECK(runtime::check_equivalent(input, *replayed).passed());
    const std::map<ir::OpKind, int> ops = testing::running_ops(*replayed);
    const bool folded = chosen.front() == 0;
    const bool divided = chosen.back() == 1;
    REQUIRE(ops.count(ir::OpKind::kConv) == 1);
    CHECK(ops.at(ir::OpKind::kConv) == (folded ? 1 : 2));
    CHECK(ops.count(ir::OpKind::kDiv) == (divided ? 0 : 1));
    // The matches as replayed make the same graph again.
    ir::Graph again;
    search::replay(input, matches, &again);
    CHECK(again.structural_hash() == replayed->structural_hash());
  }
  std::vector<rewrite::Match> matches;
  std::vector<search::AppliedStep> steps;
  const std::optional<ir::Graph> both = search::replay_steps(input, applied, regions, {0, 1}, matches, steps);
  REQUIRE(both);
  CHECK(both->structural_hash() == whole.structural_hash());
}

TEST_CASE("a step that needs an earlier step's edge is in its region", "[search]") {
  // The sum matches the 1x1 convolution only once the zero added to it is gone.
  const ir::Graph input = summed_convs_divided(true);
  std::vector<rewrite::Match> applied;
  applied_in_turn(input, {"eliminate-add-zero", "add-conv-bias-1x1-into-3x3", "div-by-scalar-to-mul"}, applied);
  const search::StepRegions regions = search::step_regions(input, applied);
  CHECK(regions.groups == std::vector<std::vector<std::size_t>>{{0, 1}, {2}});
  // The fold without the elimination is no match: nothing to replay.
  std::vector<rewrite::Match> matches;
  std::vector<search::AppliedStep> steps;
  CHECK_FALSE(search::replay_steps(input, applied, regions, {1}, matches, steps));
  const std::optional<ir::Graph> fold = search::replay_steps(input, applied, regions, {0, 1}, matches, steps);
  REQUIRE(fold);
  CHECK(runtime::check_equivalent(input, *fold).passed());
}

TEST_CASE("matches whose nodes all compute from weights alone are left out", "[search]") {
  const ir::Graph graph = matmuls_through_identities(3);
  const std::vector<rewrite::Match> all = testing::shipped_matcher().find_all(graph);
  const auto identities = std::count_if(all.begin(), all.end(), [](const rewrite::Match& match) {
    return match.rule->name == "eliminate-identity";
  });
  CHECK(identities == 3);
  for (const rewrite::Match& match : search::without_weight_only(graph, all)) {
    CHECK(match.rule->name != "eliminate-identity");
  }
}

TEST_CASE("k Identity nodes on weights do not make 2^k graphs to search", "[search]") {
  const ir::Graph graph = matmuls_through_identities(12);
  const search::SearchResult result = search::backtracking_search(graph, testing::shipped_matcher(), testing::v100(), {});
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(result.expanded == 1);  // only the input: no match changes a node that runs
  CHECK(result.steps.empty());
}

}  // namespace graphsub
