// Tests of Measurer: what is measured once is looked up afterwards, and the cache file persists it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "../cost/cost_testing.h"
#include "pipeline/measurer.h"
#include "pipeline_testing.h"

namespace graphsub {
namespace {

using pipeline::Measurer;
using testing::TableProfiler;

/// A measurer over an empty cache at `path`, with a table profiler the test keeps a hand on.
std::unique_ptr<Measurer> table_measurer(const std::string& path, TableProfiler*& table) {
  auto profiler = std::make_unique<TableProfiler>();
  table = profiler.get();
  cost::CostCache cache(profiler->header());
  return std::make_unique<Measurer>(std::move(cache), path, std::move(profiler), cost::DimSizes{});
}

TEST_CASE("a graph is measured once, then read from the cache", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const ir::Graph fused = testing::conv_graph(8, 8, 3, "relu", false);
  const ir::Graph separate = testing::conv_graph(8, 8, 3, "none", true);
  table->graph_ms[cost::graph_signature(fused, {})] = 1.0;
  table->graph_ms[cost::graph_signature(separate, {})] = 2.0;
  auto times = measurer->graph_times({&separate, &fused}, {});
  REQUIRE(times[0]->median_ms == 2.0);
  REQUIRE(times[1]->median_ms == 1.0);
  REQUIRE(table->graph_calls == 2);
  times = measurer->graph_times({&fused, &separate}, {});
  CHECK(times[0]->median_ms == 1.0);
  CHECK(table->graph_calls == 2);
  CHECK(measurer->stats().graph_hits == 2);
  CHECK(measurer->stats().graphs_measured == 2);
}

TEST_CASE("a graph the target cannot run has no time, and is not tried again", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", false);
  CHECK_FALSE(measurer->graph_times({&graph}, {})[0].has_value());
  CHECK_FALSE(measurer->graph_times({&graph}, {})[0].has_value());
  CHECK(table->graph_calls == 1);
  CHECK(measurer->cache().entries().front().failed());
}

TEST_CASE("missed nodes are measured into the cache, failures recorded", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", true);
  const std::string conv = cost::op_signature(graph, 0, &measurer->sizes());
  const std::string relu = cost::op_signature(graph, 1, &measurer->sizes());
  table->node_ms[conv] = 0.5;
  CHECK(measurer->measure({{conv, graph, 0}, {relu, graph, 1}}) == 2);
  CHECK(measurer->cache().find(conv, "onnxruntime-cpu")->median_ms == 0.5);
  CHECK(measurer->cache().find(relu, "onnxruntime-cpu")->failed());
  CHECK(measurer->stats().nodes_measured == 2);
  CHECK(measurer->stats().nodes_failed == 1);
}

TEST_CASE("the cache file keeps what was measured and merges what others wrote", "[pipeline]") {
  const std::string path = (testing::scratch_dir("measurer") / "sub" / "cache.json").string();
  TableProfiler* table = nullptr;
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", false);
  {
    auto first = table_measurer(path, table);
    table->graph_ms[cost::graph_signature(graph, {})] = 3.0;
    first->graph_times({&graph}, {});
    first->save();
  }
  const ir::Graph other = testing::conv_graph(8, 4, 3, "relu", false);
  auto second = table_measurer(path, table);
  table->graph_ms[cost::graph_signature(other, {})] = 4.0;
  second->graph_times({&other}, {});
  second->save();
  const cost::CostCache saved = cost::CostCache::read(path);
  CHECK(saved.size() == 2);
  CHECK(saved.find(cost::graph_signature(graph, {}), "onnxruntime-cpu")->median_ms == 3.0);
  CHECK(saved.header() == table->header());
}

TEST_CASE("without a profiler, a measurer only reads its cache", "[pipeline]") {
  cost::CostCache cache(TableProfiler().header());
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", false);
  cache.insert({cost::graph_signature(graph, {}), "onnxruntime-cpu", 2.5, 0.1, 10, {}});
  Measurer measurer(std::move(cache), "", nullptr, {});
  const ir::Graph other = testing::conv_graph(8, 4, 3, "relu", false);
  const auto times = measurer.graph_times({&graph, &other}, {});
  CHECK(times[0]->median_ms == 2.5);
  CHECK_FALSE(times[1].has_value());
  CHECK(measurer.stats().graphs_unmeasured == 1);
  CHECK(measurer.measure({{"Relu(;float32[1])", other, 0}}) == 0);
}

}  // namespace
}  // namespace graphsub
