// Tests of CachedModel: measured times for cached signatures, the analytical fallback otherwise.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "cost/cached_model.h"
#include "cost_testing.h"

namespace graphsub {
namespace {

using cost::AnalyticalModel;
using cost::CachedModel;
using cost::Cost;
using cost::CostCache;
using testing::conv_graph;

/// A cache written by hand, as a profiler would: one 3x3 Conv with fused relu on cuDNN, and a
/// 1x1 one that failed to run.
CostCache read_hand_written_cache() {
  const std::filesystem::path path = testing::scratch_dir("cached_model") / "cache.json";
  testing::write_text(path, R"json({
  "schema_version": 2,
  "target": "cuda",
  "device": "NVIDIA A100-SXM4-40GB",
  "driver": "535.104.05",
  "libraries": {"cudnn": "9.1.0"},
  "settings": {},
  "entries": [
    {"signature": "Conv(activation=\"relu\",dilations=[1,1],group=1,kernel_shape=[3,3],pads=[1,1,1,1],strides=[1,1];float32[1,64,56,56],const float32[64,64,3,3],const float32[64])",
     "backend": "cudnn", "median_ms": 0.0421, "spread_ms": 0.0007, "runs": 200},
    {"signature": "Conv(activation=\"relu\",dilations=[1,1],group=1,kernel_shape=[1,1],pads=[0,0,0,0],strides=[1,1];float32[1,64,56,56],const float32[64,64,1,1],const float32[64])",
     "backend": "cudnn", "error": "no algorithm"}
  ]
})json");
  return CostCache::read(path.string());
}

const CostCache& hand_written_cache() {
  static const CostCache cache = read_hand_written_cache();
  return cache;
}


TEST_CASE("a cached signature costs its measured time", "[cost]") {
  const CachedModel model(hand_written_cache(), "cudnn", cost::device_by_name("a100"));
  const ir::Graph graph = conv_graph(64, 56, 3, "relu", false);
  const Cost cost = model.graph_cost(graph);
  REQUIRE(cost.time_ms == 0.0421);
  REQUIRE(cost.flops == cost::node_work(graph, 0).flops);
  REQUIRE(cost.launches == 1);
  REQUIRE(model.hits() == 1);
  REQUIRE(model.misses() == 0);
}

TEST_CASE("a missing signature falls back to the analytical model and is counted", "[cost]") {
  const CachedModel model(hand_written_cache(), "cudnn", cost::device_by_name("a100"));
  const ir::Graph other_shape = conv_graph(64, 28, 3, "relu", false);
  const Cost cost = model.graph_cost(other_shape);
  REQUIRE(cost.time_ms == AnalyticalModel(cost::device_by_name("a100")).graph_cost(other_shape).time_ms);
  REQUIRE(model.hits() == 0);
  REQUIRE(model.misses() == 1);
  REQUIRE(model.fallback().opaque_nodes() == 0);
}

TEST_CASE("misses are remembered once per signature until taken", "[cost]") {
  CachedModel model(hand_written_cache(), "cudnn", cost::device_by_name("a100"));
  const ir::Graph other_shape = conv_graph(64, 28, 3, "relu", false);
  model.graph_cost(other_shape);
  model.graph_cost(conv_graph(64, 28, 3, "relu", false));
  REQUIRE(model.misses() == 2);
  REQUIRE(model.pending_misses());
  const std::vector<cost::Miss> misses = model.take_misses();
  REQUIRE(misses.size() == 1);
  CHECK(misses[0].signature == cost::op_signature(other_shape, 0, &model.sizes()));
  CHECK(misses[0].graph.node(misses[0].node).op == ir::OpKind::kConv);
  CHECK_FALSE(model.pending_misses());
  CHECK(model.take_misses().empty());
}

TEST_CASE("an entry recording a failed measurement is estimated and not remembered as a miss", "[cost]") {
  CachedModel model(hand_written_cache(), "cudnn", cost::device_by_name("a100"));
  const ir::Graph one_by_one = conv_graph(64, 56, 1, "relu", false);
  REQUIRE(model.graph_cost(one_by_one).time_ms ==
          AnalyticalModel(cost::device_by_name("a100")).graph_cost(one_by_one).time_ms);
  REQUIRE(model.misses() == 1);
  CHECK_FALSE(model.pending_misses());
}

TEST_CASE("a view costs nothing and is neither looked up nor remembered for measuring", "[cost]") {
  CachedModel model(hand_written_cache(), "cudnn", cost::device_by_name("a100"));
  ir::Graph graph = conv_graph(64, 56, 3, "relu", false);
  ir::Attributes flatten;
  flatten.set("axis", int64_t{1});
  const ir::NodeId view =
      testing::add_inferred(graph, ir::OpKind::kFlatten, {graph.node(0).outputs[0]}, flatten);
  graph.set_outputs({graph.node(view).outputs[0]});
  const Cost cost = model.node_cost(graph, view);
  CHECK(cost.time_ms == 0);
  CHECK(cost.launches == 0);
  CHECK(model.graph_cost(graph).time_ms == 0.0421);
  CHECK(model.hits() == 1);
  CHECK(model.misses() == 0);
  CHECK_FALSE(model.pending_misses());
}

TEST_CASE("entries of another backend do not answer", "[cost]") {
  const CachedModel model(hand_written_cache(), "reference", cost::device_by_name("cpu"));
  const ir::Graph graph = conv_graph(64, 56, 3, "relu", true);
  REQUIRE(model.graph_cost(graph).time_ms > 0.0421);
  REQUIRE(model.hits() == 0);
  REQUIRE(model.misses() == 2);
}

}  // namespace
}  // namespace graphsub
