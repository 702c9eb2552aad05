// The backtracking search: finds the fused graph, never returns a costlier one, is deterministic.
#include <catch2/catch.hpp>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "onnx_io/onnx_io.h"
#include "rewrite/matcher.h"
#include "rules/parser.h"
#include "runtime/equivalence.h"
#include "search/backtracking.h"
#include "search/search_state.h"
#include "test_util.h"

namespace graphsub {
namespace {

std::size_t count_of(const ir::Graph& graph, ir::OpKind kind) {
  std::size_t count = 0;
  for (ir::NodeId id : graph.node_ids()) count += graph.node(id).op == kind;
  return count;
}

}  // namespace

TEST_CASE("the search folds and fuses a residual block and says how", "[search]") {
  const std::vector<rules::Rule> rules = rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/fusion.rules");
  const rewrite::Matcher matcher(rules);
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  const ir::Graph input = onnx_io::import_model(GRAPHSUB_SOURCE_DIR "/models/small_cnn.onnx");
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(count_of(result.best, ir::OpKind::kBatchNormalization) == 0);
  CHECK(count_of(result.best, ir::OpKind::kRelu) == 0);
  CHECK(result.steps.size() == 7);  // 3 folds, 2 relu fusions, the residual add and its relu
  CHECK(result.best.output_names() == input.output_names());
  runtime::CheckOptions check;
  check.dims["N"] = 2;
  CHECK(runtime::check_equivalent(input, result.best, check).passed());

  const search::SearchResult again = search::backtracking_search(input, matcher, model, {});
  CHECK(again.best.structural_hash() == result.best.structural_hash());
  CHECK(again.expanded == result.expanded);

  // The applied matches, replayed on the input, make the best graph and name the same steps.
  REQUIRE(result.applied.size() == result.steps.size());
  ir::Graph replayed;
  const std::vector<search::AppliedStep> steps = search::replay(input, result.applied, &replayed);
  CHECK(replayed.structural_hash() == result.best.structural_hash());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CHECK(steps[i].rule == result.steps[i].rule);
    CHECK(steps[i].where == result.steps[i].where);
  }
}

TEST_CASE("with nothing to apply the search returns the input", "[search]") {
  const std::vector<rules::Rule> rules = rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/fusion.rules");
  const rewrite::Matcher matcher(rules);
  const cost::AnalyticalModel model(cost::device_by_name("cpu"));
  const ir::Graph input = onnx_io::import_model(GRAPHSUB_SOURCE_DIR "/models/custom_op.onnx");
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  CHECK(result.steps.empty());
  CHECK(result.best.structural_hash() == input.structural_hash());
  CHECK(result.best_cost.time_ms == result.initial_cost.time_ms);
}

TEST_CASE("the budget stops the search and says so", "[search]") {
  const std::vector<rules::Rule> rules = rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/fusion.rules");
  const rewrite::Matcher matcher(rules);
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  const ir::Graph input = onnx_io::import_model(GRAPHSUB_SOURCE_DIR "/models/small_cnn.onnx");
  search::SearchOptions options;
  options.budget = 1;
  const search::SearchResult result = search::backtracking_search(input, matcher, model, options);
  CHECK(result.stop == search::StopReason::kBudget);
  CHECK(result.expanded == 1);
  CHECK(result.best_cost.time_ms <= result.initial_cost.time_ms);
}

}  // namespace graphsub
