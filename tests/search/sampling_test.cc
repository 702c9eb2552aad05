// The sampling search (OCGGS Alg. 3): past a cost-increasing step with η = 1, never costlier,
// computing the same, deterministic, and stopped by its limits with the reason said.
#include "search/sampling.h"

#include <catch2/catch.hpp>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"
#include "rules/shipped_rules.h"
#include "search/exhaustive.h"
#include "search/search_testing.h"

namespace graphsub {
namespace {

using testing::rules_of;
using testing::shipped_matcher;
using testing::v100;

search::SearchOptions exploring(int depth) {
  search::SearchOptions options;
  options.exploration_depth = depth;
  return options;
}

}  // namespace

TEST_CASE("sampling with η = 1 enlarges a 1x1 convolution to merge it (MetaFlow Fig. 1)", "[search]") {
  // Only the two steps apart, and the first makes the graph slower: no greedy search takes it.
  const std::vector<rules::Rule> rules =
      testing::shipped_rules_named({"enlarge-conv-bias-1x1-to-3x3", "merge-convs-bias"});
  const rewrite::Matcher matcher(rules);
  const ir::Graph input = testing::conv3x3_and_shortcut();
  const std::vector<rewrite::Match> enlargements = rewrite::Matcher::find(input, rules[0]);
  REQUIRE(enlargements.size() == 1);
  const double enlarged_ms = v100().graph_cost(*rewrite::apply(input, enlargements[0])).time_ms;
  REQUIRE(enlarged_ms > v100().graph_cost(input).time_ms);

  const search::SearchResult result = search::sampling_search(input, matcher, v100(), exploring(1));
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(rules_of(result) == std::vector<std::string>{"enlarge-conv-bias-1x1-to-3x3", "merge-convs-bias"});
  CHECK(testing::running_ops(result.best).at(ir::OpKind::kConv) == 1);
  const search::SearchResult oracle = search::exhaustive_search(input, matcher, v100(), {});
  CHECK(result.best_cost.time_ms == Approx(oracle.best_cost.time_ms).epsilon(1e-12));
  testing::check_sound(input, result);

  const search::SearchResult greedy = search::sampling_search(input, matcher, v100(), exploring(0));
  CHECK(greedy.steps.empty());
  CHECK(greedy.best_cost.time_ms == greedy.initial_cost.time_ms);
}

TEST_CASE("sampling finds exhaustive search's optimum on small graphs, computing the same", "[search]") {
  const auto [name, input] = GENERATE(table<const char*, ir::Graph>({
      {"conv-BN-relu chain", testing::conv_bn_relu_chain()},
      {"3x3 conv and 1x1 shortcut of one input", testing::conv3x3_and_shortcut()},
      {"small InceptionE", testing::small_inception_e()},
  }));
  INFO(name);
  const search::SearchResult oracle = search::exhaustive_search(input, shipped_matcher(), v100(), {});
  REQUIRE(oracle.stop == search::StopReason::kExhausted);
  const search::SearchResult result = search::sampling_search(input, shipped_matcher(), v100(), {});
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(result.best_cost.time_ms == Approx(oracle.best_cost.time_ms).epsilon(1e-12));
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  testing::check_sound(input, result);
}

TEST_CASE("sampling is deterministic", "[search]") {
  const ir::Graph input = testing::small_inception_e();
  const search::SearchResult first = search::sampling_search(input, shipped_matcher(), v100(), {});
  const search::SearchResult second = search::sampling_search(input, shipped_matcher(), v100(), {});
  CHECK(first.best.structural_hash() == second.best.structural_hash());
  REQUIRE(first.steps.size() == second.steps.size());
  for (std::size_t i = 0; i < first.steps.size(); ++i) {
    CHECK(first.steps[i].rule == second.steps[i].rule);
    CHECK(first.steps[i].where == second.steps[i].where);
  }
  CHECK(first.expanded == second.expanded);
  CHECK(first.generated == second.generated);
}

TEST_CASE("sampling stops at the length limit and says so", "[search]") {
  const ir::Graph input = testing::conv_bn_relu_chain();
  search::SearchOptions options;
  options.max_length = 1;
  const search::SearchResult result = search::sampling_search(input, shipped_matcher(), v100(), options);
  CHECK(result.stop == search::StopReason::kLengthLimit);
  CHECK(result.steps.size() == 1);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  testing::check_sound(input, result);
}

TEST_CASE("sampling stops at its budget and says so", "[search]") {
  const ir::Graph input = testing::conv_bn_relu_chain();
  search::SearchOptions options;
  options.budget = 1;
  const search::SearchResult result = search::sampling_search(input, shipped_matcher(), v100(), options);
  CHECK(result.stop == search::StopReason::kBudget);
  CHECK(result.expanded == 1);
  CHECK(result.best_cost.time_ms <= result.initial_cost.time_ms);
}

TEST_CASE("with nothing to apply sampling returns the input", "[search]") {
  const std::vector<rules::Rule> rules = testing::shipped_rules_named({"merge-matmuls"});
  const rewrite::Matcher matcher(rules);
  const ir::Graph input = testing::conv_bn_relu_chain();
  const search::SearchResult result = search::sampling_search(input, matcher, v100(), {});
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(result.steps.empty());
  CHECK(result.best.structural_hash() == input.structural_hash());
  CHECK(result.expanded == 1);
}

}  // namespace graphsub
