// Tests of islands: element-wise chains found convex, keyed for the cache, priced as one model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "cost/cached_model.h"
#include "cost/islands.h"
#include "cost_testing.h"
#include "ops/folding.h"

namespace graphsub {
namespace {

using testing::add_float_weight;
using testing::add_inferred;
using testing::float_type;
using testing::gelu_graph;

std::vector<cost::Island> islands_of(const ir::Graph& graph, std::size_t max_nodes = 24) {
  return cost::islands(graph, ops::folded_nodes(graph), max_nodes);
}

std::vector<ir::OpKind> ops_of(const ir::Graph& graph, const cost::Island& island) {
  std::vector<ir::OpKind> ops;
  for (ir::NodeId id : island.nodes) ops.push_back(graph.node(id).op);
  return ops;
}

/// X -> Add(X, b) = a -> Relu -> MatMul -> Add(·, a) -> Sigmoid -> output: the residual sum reads
/// the first Add's output past the MatMul.
ir::Graph residual_graph() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({8, 64}));
  const ir::ValueId a = graph.node(add_inferred(graph, ir::OpKind::kAdd, {x, add_float_weight(graph, "B", {64})})).outputs[0];
  const ir::ValueId r = graph.node(add_inferred(graph, ir::OpKind::kRelu, {a})).outputs[0];
  const ir::ValueId m = graph.node(add_inferred(graph, ir::OpKind::kMatMul, {r, add_float_weight(graph, "W", {64, 64})})).outputs[0];
  const ir::ValueId s = graph.node(add_inferred(graph, ir::OpKind::kAdd, {m, a})).outputs[0];
  graph.set_outputs({graph.node(add_inferred(graph, ir::OpKind::kSigmoid, {s})).outputs[0]});
  return graph;
}

/// A measured model of `cache` that prices islands as one model.
struct IslandModel : cost::CachedModel {
  explicit IslandModel(const cost::CostCache& cache) : CachedModel(cache, "onnxruntime-cpu", cost::device_by_name("cpu")) {
    set_prices_islands(true);
  }
};

const cost::CacheHeader kHeader{"onnxruntime-cpu", "test", "", {}, {}};

TEST_CASE("a GELU and the bias added before it are one island", "[cost]") {
  const ir::Graph graph = gelu_graph();
  const std::vector<cost::Island> found = islands_of(graph);
  REQUIRE(found.size() == 1);
  using ir::OpKind;
  CHECK(ops_of(graph, found[0]) ==
        std::vector<OpKind>{OpKind::kAdd, OpKind::kDiv, OpKind::kErf, OpKind::kAdd, OpKind::kMul, OpKind::kMul});
  const ir::ValueId last = graph.node(found[0].nodes.back()).outputs[0];
  CHECK(found[0].exposed == std::vector<ir::ValueId>{last});
  // The first MatMul's output, the bias and the three constants.
  CHECK(cost::island_inputs(graph, found[0]).size() == 5);
  CHECK(islands_of(graph, 5).empty());  // over the limit: priced node by node
}

TEST_CASE("nodes joined only through a path past another node are separate islands", "[cost]") {
  const ir::Graph graph = residual_graph();
  const std::vector<cost::Island> found = islands_of(graph);
  REQUIRE(found.size() == 2);
  CHECK(ops_of(graph, found[0]) == std::vector<ir::OpKind>{ir::OpKind::kAdd, ir::OpKind::kRelu});
  CHECK(ops_of(graph, found[1]) == std::vector<ir::OpKind>{ir::OpKind::kAdd, ir::OpKind::kSigmoid});
  // The first exposes the sum the second reads and the Relu the MatMul reads.
  CHECK(found[0].exposed.size() == 2);
  CHECK(found[1].exposed == graph.outputs());
}

TEST_CASE("island signatures are alike for layers that differ in large weights only", "[cost]") {
  const ir::Graph first = gelu_graph(0.0f);
  const std::string signature = cost::island_signature(first, islands_of(first)[0], {});
  CHECK(signature.rfind("Island(", 0) == 0);
  CHECK(signature.find(";Add,Div,Erf,Add,Mul,Mul;float32[8,64],const float32[64],const float32") != std::string::npos);
  const ir::Graph other_bias = gelu_graph(1.0f);
  CHECK(cost::island_signature(other_bias, islands_of(other_bias)[0], {}) == signature);
  const ir::Graph other_constant = gelu_graph(0.0f, 0.6f);  // no longer a GELU the runtime knows
  CHECK(cost::island_signature(other_constant, islands_of(other_constant)[0], {}) != signature);
}

TEST_CASE("a measured model prices an island as the island's time, and measures it as one", "[cost]") {
  const ir::Graph graph = gelu_graph();
  const cost::Island island = islands_of(graph)[0];
  const cost::AnalyticalModel estimate(cost::device_by_name("cpu"));

  const cost::CostCache empty(kHeader);
  IslandModel missing(empty);
  const double estimated = missing.graph_cost(graph).time_ms;
  CHECK(estimated == Approx(estimate.graph_cost(graph).time_ms));
  // Until the island is measured, its nodes measured alone price it: the signatures of its six
  // nodes and of the MatMuls (one for both) are asked for, the island not yet.
  std::vector<cost::Miss> misses = missing.take_misses();
  CHECK(misses.size() == 7);
  for (const cost::Miss& miss : misses) CHECK(miss.nodes.size() == 1);
  // The input of a search: its island is asked for, as one.
  const int64_t provisional = missing.provisional_answers();
  missing.ask_to_measure(graph);
  CHECK(missing.provisional_answers() == provisional + 1);
  misses = missing.take_misses();
  REQUIRE(misses.size() == 1);
  const cost::Miss* as_one = &misses[0];
  CHECK(as_one->nodes == island.nodes);
  CHECK(as_one->signature == cost::island_signature(graph, island, {}));

  cost::CostCache measured(kHeader);
  measured.insert(cost::CacheEntry{as_one->signature, "onnxruntime-cpu", 0.001, 0.0001, 20, {}});
  IslandModel hit(measured);
  double nodes_estimate = 0;
  for (ir::NodeId id : island.nodes) nodes_estimate += estimate.node_cost(graph, id).time_ms;
  CHECK(hit.graph_cost(graph).time_ms == Approx(estimated - nodes_estimate + 0.001));
  CHECK(hit.hits() == 1);
  hit.ask_to_measure(graph);
  const std::vector<cost::Miss> rest = hit.take_misses();
  REQUIRE(rest.size() == 1);  // the MatMuls' signature: the island is measured
  CHECK(graph.node(rest[0].nodes.front()).op == ir::OpKind::kMatMul);

  // An island the runtime could not run as one is priced node by node, each measured alone.
  cost::CostCache failed(kHeader);
  failed.insert(cost::CacheEntry{as_one->signature, "onnxruntime-cpu", 0, 0, 0, "cannot run"});
  IslandModel alone(failed);
  CHECK(alone.graph_cost(graph).time_ms == Approx(estimated));
  const std::vector<cost::Miss> nodes = alone.take_misses();
  CHECK(nodes.size() == 7);
  for (const cost::Miss& miss : nodes) CHECK(miss.nodes.size() == 1);
}

TEST_CASE("islands are priced only by a model of a runtime that fuses them", "[cost]") {
  const ir::Graph graph = gelu_graph();
  const cost::CostCache empty(kHeader);
  cost::CachedModel model(empty, "onnxruntime-cpu", cost::device_by_name("cpu"));
  model.graph_cost(graph);
  model.ask_to_measure(graph);
  for (const cost::Miss& miss : model.take_misses()) CHECK(miss.nodes.size() == 1);
}

}  // namespace
}  // namespace graphsub
