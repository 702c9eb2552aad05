// The substitution sequences of the MetaFlow and TASO papers, reproduced from each paper's original
// graph by `optimize`'s defaults: the shipped rules, α = 1.05, the default budget and the v100
// analytical cost model. Each result computes what the original did and is estimated cheaper.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "ops/folding.h"
#include "rewrite/matcher.h"
#include "rewrite/rewrite_testing.h"
#include "rules/shipped_rules.h"
#include "runtime/equivalence.h"
#include "search/backtracking.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::add_canonical;
using testing::float_type;
using testing::out;

/// The search exactly as `graphsub optimize` runs it by default.
search::SearchResult optimize_by_default(const ir::Graph& graph) {
  static const std::vector<rules::Rule> rules = rules::default_rules();
  static const rewrite::Matcher matcher(rules);
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  search::SearchResult result = search::backtracking_search(graph, matcher, model, {});
  UNSCOPED_INFO("cost " << result.initial_cost.time_ms << " -> " << result.best_cost.time_ms << " ms, "
                        << result.steps.size() << " steps, " << result.expanded << " expanded, stop "
                        << search::to_string(result.stop));
  for (const search::AppliedStep& step : result.steps) UNSCOPED_INFO("  " << step.where);
  return result;
}

/// How many nodes of each op run (weight-only nodes, which export folds, are left out).
std::map<ir::OpKind, int> running_ops(const ir::Graph& graph) {
  std::map<ir::OpKind, int> counts;
  const std::vector<bool> folded = ops::folded_nodes(graph);
  for (ir::NodeId id : graph.node_ids()) {
    if (!folded[id]) ++counts[graph.node(id).op];
  }
  return counts;
}

ir::Attributes conv_attrs(std::vector<int64_t> kernel, std::vector<int64_t> pads, int64_t group = 1) {
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::move(kernel));
  attrs.set("pads", std::move(pads));
  attrs.set("group", group);
  return attrs;
}

ir::ValueId weight(ir::Graph& graph, const std::vector<int64_t>& dims, uint32_t seed) {
  return graph.add_weight({}, ir::share(testing::random_tensor(dims, seed)));
}

/// The result computes what the input did, on random inputs through the reference executor.
void check_same_outputs(const ir::Graph& input, const ir::Graph& result) {
  const runtime::CheckReport report = runtime::check_equivalent(input, result, {});
  for (const runtime::OutputCheck& output : report.outputs) {
    INFO(output.name << ": max abs error " << output.max_abs_error << ", max rel error " << output.max_rel_error);
    CHECK(output.passed);
  }
}

}  // namespace

TEST_CASE("TASO Fig. 9: 32 ResNeXt branches become one grouped convolution", "[paper]") {
  // x [1, 128, 14, 14] split into 32 slices of 4 channels, a 3x3 convolution on each, concatenated.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 128, 14, 14}));
  ir::Attributes split;
  split.set("axis", int64_t{1});
  split.set("split", std::vector<int64_t>(32, 4));
  const ir::NodeId slices = add_canonical(graph, ir::OpKind::kSplit, {x}, split, 32);
  std::vector<ir::ValueId> branches;
  for (int i = 0; i < 32; ++i) {
    const ir::ValueId w = weight(graph, {4, 4, 3, 3}, 100 + i);
    const ir::ValueId slice = graph.node(slices).outputs[i];
    branches.push_back(out(graph, add_canonical(graph, ir::OpKind::kConv, {slice, w}, conv_attrs({3, 3}, {1, 1, 1, 1}))));
  }
  ir::Attributes concat;
  concat.set("axis", int64_t{1});
  const ir::ValueId y = out(graph, add_canonical(graph, ir::OpKind::kConcat, branches, concat));
  graph.set_name(y, "y");
  graph.set_outputs({y});

  const search::SearchResult result = optimize_by_default(graph);
  const std::map<ir::OpKind, int> ops = running_ops(result.best);
  CHECK(ops.size() == 1);
  CHECK(ops.at(ir::OpKind::kConv) == 1);
  for (ir::NodeId id : result.best.node_ids()) {
    if (result.best.node(id).op == ir::OpKind::kConv) CHECK(result.best.node(id).attrs.get_int("group", 0) == 32);
  }
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  check_same_outputs(graph, result.best);
}
}  // namespace graphsub
