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
                           pipeline::MeasuredSearchStats& stats) {
  cost::CachedModel model(measurer.cache(), measurer.backend(), cost::device_by_name("cpu"));
  search::OptimizerOptions options;
  options.split_threshold = threshold;
  return pipeline::measured_optimize(input, testing::shipped_matcher(), model, measurer, options,
                                     pipeline::GuardOptions{}, stats);
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
  CHECK(second.rounds == 1);
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

}  // namespace
}  // namespace graphsub
