// The exhaustive search: the known optimum of small graphs, an honest stop reason, and the oracle
// backtracking is checked against (MetaFlow Table 3).
#include "search/exhaustive.h"

#include <catch2/catch.hpp>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "rewrite/matcher.h"
#include "rules/shipped_rules.h"
#include "search/backtracking.h"
#include "search/search_testing.h"

namespace graphsub {
namespace {

using testing::running_ops;
using testing::shipped_matcher;
using testing::v100;

}  // namespace

TEST_CASE("exhaustive search folds and fuses a conv-BN-relu chain completely", "[search]") {
  const ir::Graph input = testing::conv_bn_relu_chain();
  const search::SearchResult result = search::exhaustive_search(input, shipped_matcher(), v100(), {});
  CHECK(result.stop == search::StopReason::kExhausted);
  // The optimum: each BN folded into its conv and each relu fused, four steps (breadth first, so
  // the shortest path to it).
  CHECK(running_ops(result.best) == std::map<ir::OpKind, int>{{ir::OpKind::kConv, 2}});
  CHECK(result.steps.size() == 4);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  testing::check_sound(input, result);
}

TEST_CASE("exhaustive search finds the enlarge-then-merge that no cheaper step leads to", "[search]") {
  // Only the two steps apart: enlarging the 1x1 shortcut costs more, merging it then costs less.
  const std::vector<rules::Rule> rules =
      testing::shipped_rules_named({"enlarge-conv-bias-1x1-to-3x3", "merge-convs-bias"});
  const rewrite::Matcher matcher(rules);
  const ir::Graph input = testing::conv3x3_and_shortcut();
  const search::SearchResult result = search::exhaustive_search(input, matcher, v100(), {});
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(testing::rules_of(result) == std::vector<std::string>{"enlarge-conv-bias-1x1-to-3x3", "merge-convs-bias"});
  CHECK(running_ops(result.best).at(ir::OpKind::kConv) == 1);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  testing::check_sound(input, result);
}

TEST_CASE("exhaustive search is deterministic", "[search]") {
  const ir::Graph input = testing::small_inception_e();
  const search::SearchResult first = search::exhaustive_search(input, shipped_matcher(), v100(), {});
  const search::SearchResult second = search::exhaustive_search(input, shipped_matcher(), v100(), {});
  CHECK(first.best.structural_hash() == second.best.structural_hash());
  CHECK(testing::rules_of(first) == testing::rules_of(second));
  CHECK(first.expanded == second.expanded);
}

TEST_CASE("exhaustive search stopped by its budget says it is no oracle", "[search]") {
  const ir::Graph input = testing::conv_bn_relu_chain();
  search::SearchOptions options;
  options.budget = 3;
  const search::SearchResult result = search::exhaustive_search(input, shipped_matcher(), v100(), options);
  CHECK(result.stop == search::StopReason::kBudget);
  CHECK(result.expanded == 3);
  CHECK(result.best_cost.time_ms <= result.initial_cost.time_ms);
}

TEST_CASE("backtracking finds exhaustive search's optimum on small graphs (MetaFlow Table 3)", "[search]") {
  const auto [name, input] = GENERATE(table<const char*, ir::Graph>({
      {"conv-BN-relu chain", testing::conv_bn_relu_chain()},
      {"3x3 conv and 1x1 shortcut of one input", testing::conv3x3_and_shortcut()},
      {"small InceptionE", testing::small_inception_e()},
  }));
  INFO(name);
  const search::SearchResult oracle = search::exhaustive_search(input, shipped_matcher(), v100(), {});
  REQUIRE(oracle.stop == search::StopReason::kExhausted);
  const search::SearchResult result = search::backtracking_search(input, shipped_matcher(), v100(), {});
  CHECK(result.best_cost.time_ms == Approx(oracle.best_cost.time_ms).epsilon(1e-12));
  CHECK(result.expanded <= oracle.expanded);
  testing::check_sound(input, oracle);
}

}  // namespace graphsub
