// Tests of the measured search with a deterministic cost source: misses are measured and searched
// again, and a part the target runs slower is not stitched in.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include "cost/device.h"
#include "pipeline/measured_search.h"
#include "search/search_state.h"
#include "pipeline_testing.h"
#include "search/search_testing.h"

namespace graphsub {
namespace {

using testing::TableProfiler;

/// A measurer whose table gives every node 1 ms (so fewer nodes are faster) and every graph the
/// time `graph_ms` says; the test keeps a hand on the table.
std::unique_ptr<pipeline::Measurer> measurer_of(TableProfiler*& table,
                                                std::function<double(const ir::Graph&)> graph_ms) {
  auto profiler = std::make_unique<TableProfiler>();
  profiler->node_rule = [](const cost::Miss&) { return 1.0; };
  profiler->graph_rule = std::move(graph_ms);
  table = profiler.get();
  cost::CostCache cache(profiler->header());
  return std::make_unique<pipeline::Measurer>(std::move(cache), "", std::move(profiler), cost::DimSizes{});
}

/// Whether any node of `graph` is a Conv with a fused activation.
bool has_fused_activation(const ir::Graph& graph) {
  const auto ids = graph.node_ids();
  return std::any_of(ids.begin(), ids.end(), [&](ir::NodeId id) {
    const ir::Node& node = graph.node(id);
    return node.op == ir::OpKind::kConv && node.attrs.get_string("activation", "none") != "none";
  });
}

search::OptimizeResult run(const ir::Graph& input, pipeline::Measurer& measurer, std::size_t threshold,
                           pipeline::MeasuredSearchStats& stats, int max_passes = 3) {
  cost::CachedModel model(measurer.cache(), measurer.backend(), cost::device_by_name("cpu"));
  search::OptimizerOptions options;
  options.split_threshold = threshold;
  return pipeline::measured_optimize(input, testing::shipped_matcher(), model, measurer, options,
                                     pipeline::GuardOptions{}, stats, 10, max_passes);
}

/// `branches` branches reading x [1, 16, 8, 8]: a 1x1 convolution to 4 channels and a 3x3 one,
/// each with its relu, concatenated (ResNeXt's block written out branch by branch).
ir::Graph branches(int count) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, 16, 8, 8}));
  std::vector<ir::ValueId> outputs;
  for (int k = 0; k < count; ++k) {
    const auto seed = static_cast<uint32_t>(100 * k);
    const ir::ValueId narrow = testing::relu(graph, testing::conv(graph, x, 4, {1, 1}, seed));
    outputs.push_back(testing::relu(graph, testing::conv(graph, narrow, 4, {3, 3}, seed + 10)));
  }
  testing::set_output(graph, testing::concat(graph, outputs));
  return graph;
}

TEST_CASE("the signatures a search misses are measured, and it searches again", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = measurer_of(table, [](const ir::Graph& graph) { return 1.0 * search::running_nodes(graph); });
  const ir::Graph input = testing::conv_bn_relu_chain();
  pipeline::MeasuredSearchStats first;
  const search::OptimizeResult result = run(input, *measurer, 0, first);
  CHECK(first.rounds >= 2);
  CHECK(first.estimated == 0);
  CHECK(table->node_calls > 0);
  CHECK(testing::running_ops(result.search.best).size() == 1);  // every BN folded, every relu fused
  testing::check_sound(input, result.search);
  const int calls = table->node_calls;
  pipeline::MeasuredSearchStats second;
  const search::OptimizeResult again = run(input, *measurer, 0, second);
  CHECK(second.rounds == second.passes);  // one round a pass: nothing left to measure
  CHECK(table->node_calls == calls);
  CHECK(again.search.best.structural_hash() == result.search.best.structural_hash());
}

TEST_CASE("a part that measures slower is kept as it was", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = measurer_of(table, [](const ir::Graph& graph) {
    return has_fused_activation(graph) ? 100.0 : 1.0 * search::running_nodes(graph);
  });
  const ir::Graph input = testing::conv_bn_relu_chain();
  pipeline::MeasuredSearchStats stats;
  const search::OptimizeResult result = run(input, *measurer, 3, stats);
  CHECK(result.split.judged > 0);
  CHECK(result.split.rejected > 0);
  CHECK_FALSE(has_fused_activation(result.search.best));
  for (const std::string& rule : testing::rules_of(result.search)) CHECK(rule.find("relu") == std::string::npos);
  CHECK(table->graph_calls > 0);
}

TEST_CASE("a part that measures faster is stitched in", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = measurer_of(table, [](const ir::Graph& graph) { return 1.0 * search::running_nodes(graph); });
  const ir::Graph input = testing::conv_bn_relu_chain();
  pipeline::MeasuredSearchStats stats;
  const search::OptimizeResult result = run(input, *measurer, 3, stats);
  CHECK(result.split.judged > 0);
  CHECK(result.split.rejected == 0);
  CHECK(has_fused_activation(result.search.best));
  testing::check_sound(input, result.search);
}

TEST_CASE("the result as written is searched again, and a pass is kept when it is estimated cheaper", "[pipeline]") {
  // Costs as the v100 estimate gives them, node by node and graph by graph: four branches split
  // into parts of three nodes stop short of what the rules reach in one pass.
  const auto estimated = [](TableProfiler*& table) {
    auto measurer = measurer_of(table, [](const ir::Graph& graph) { return testing::v100().graph_cost(graph).time_ms; });
    table->node_rule = [](const cost::Miss& miss) { return testing::v100().node_cost(miss.graph, miss.node).time_ms; };
    return measurer;
  };
  const ir::Graph input = branches(4);
  TableProfiler* table = nullptr;
  auto once_measurer = estimated(table);
  pipeline::MeasuredSearchStats once;
  const search::OptimizeResult one_pass = run(input, *once_measurer, 3, once, 1);
  CHECK(once.passes == 1);
  CHECK(once.last_pass_end == "the passes' limit was reached");

  auto measurer = estimated(table);
  pipeline::MeasuredSearchStats stats;
  const search::OptimizeResult result = run(input, *measurer, 3, stats);
  REQUIRE(stats.pass_steps.size() >= 2);
  CHECK(stats.pass_steps.front() == one_pass.search.steps.size());
  std::size_t steps = 0;
  for (std::size_t found : stats.pass_steps) steps += found;
  CHECK(result.search.steps.size() == steps);
  CHECK(result.search.best_cost.time_ms < one_pass.search.best_cost.time_ms);
  CHECK(stats.each.back().pass == stats.passes);
  CHECK(std::is_sorted(stats.each.begin(), stats.each.end(),
                       [](const pipeline::SearchRound& a, const pipeline::SearchRound& b) { return a.pass < b.pass; }));
  testing::check_sound(input, result.search);

  // The same cache again: every pass as before, nothing measured.
  const int calls = table->node_calls;
  pipeline::MeasuredSearchStats again_stats;
  const search::OptimizeResult again = run(input, *measurer, 3, again_stats);
  CHECK(table->node_calls == calls);
  CHECK(again_stats.pass_steps == stats.pass_steps);
  CHECK(again.search.best.structural_hash() == result.search.best.structural_hash());
}

TEST_CASE("a further pass that finds nothing cheaper is not kept", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = measurer_of(table, [](const ir::Graph& graph) { return 1.0 * search::running_nodes(graph); });
  const ir::Graph input = testing::conv_bn_relu_chain();
  pipeline::MeasuredSearchStats stats;
  const search::OptimizeResult result = run(input, *measurer, 0, stats);
  // The second pass searches the chain as written (its relus their own nodes again) and fuses
  // them once more: no cheaper, so the first pass's result and steps stand.
  CHECK(stats.passes == 2);
  CHECK(stats.pass_steps.size() == 1);
  CHECK(result.search.steps.size() == stats.pass_steps.front());
  CHECK(stats.last_pass_end == "pass 2's result was not estimated cheaper than the last one's");
  CHECK(stats.estimated == 0);
}

TEST_CASE("the written form of a result is what export and import make of it", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = measurer_of(table, [](const ir::Graph& graph) { return 1.0 * search::running_nodes(graph); });
  pipeline::MeasuredSearchStats stats;
  const search::OptimizeResult result = run(testing::conv_bn_relu_chain(), *measurer, 0, stats);
  REQUIRE(has_fused_activation(result.search.best));
  const ir::Graph written = pipeline::written_form(result.search.best);
  CHECK_FALSE(has_fused_activation(written));
  CHECK(written.structural_hash() == pipeline::as_written(result.search.best).structural_hash());
  runtime::CheckOptions options;
  options.atol = 1e-5;
  options.rtol = 1e-5;
  for (const runtime::OutputCheck& output : runtime::check_equivalent(result.search.best, written, options).outputs) {
    CHECK(output.passed);
  }
}

}  // namespace
}  // namespace graphsub
