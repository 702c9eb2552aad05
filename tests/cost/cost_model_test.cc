// Tests of CostModel::graph_cost: the sum of node costs, folded weight-only nodes, the memory cap.
#include <catch2/catch.hpp>

#include <vector>

#include "cost/analytical_model.h"
#include "cost/cost_model.h"
#include "ops/folding.h"
#include "cost_testing.h"

namespace graphsub {
namespace {

using cost::AnalyticalModel;
using cost::Cost;
using testing::add_float_weight;
using testing::add_inferred;
using testing::add_opaque;
using testing::float_type;

ir::Attributes transpose_2d() {
  ir::Attributes attrs;
  attrs.set("perm", std::vector<int64_t>{1, 0});
  return attrs;
}

/// X [8,32] · Transpose(W [64,32]) → Y [8,64]; returns the graph, the MatMul is node 1.
ir::Graph transposed_weight_graph() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({8, 32}));
  const ir::ValueId w = add_float_weight(graph, "W", {64, 32});
  const ir::NodeId transpose = add_inferred(graph, ir::OpKind::kTranspose, {w}, transpose_2d());
  const ir::NodeId mat_mul = add_inferred(graph, ir::OpKind::kMatMul, {x, graph.node(transpose).outputs[0]});
  graph.set_outputs({graph.node(mat_mul).outputs[0]});
  return graph;
}

void require_equal(const Cost& a, const Cost& b) {
  REQUIRE(a.time_ms == Approx(b.time_ms));
  REQUIRE(a.flops == Approx(b.flops));
  REQUIRE(a.bytes == Approx(b.bytes));
  REQUIRE(a.launches == b.launches);
}

TEST_CASE("graph cost is the sum of the node costs", "[cost]") {
  ir::Graph graph = testing::conv_graph(16, 8, 3, "none", true);
  const ir::ValueId relu_out = graph.outputs()[0];
  const ir::NodeId sigmoid = add_inferred(graph, ir::OpKind::kSigmoid, {relu_out});
  graph.set_outputs({graph.node(sigmoid).outputs[0]});
  const AnalyticalModel model(cost::device_by_name("a100"));
  Cost sum;
  for (ir::NodeId id : graph.node_ids()) sum += model.node_cost(graph, id);
  require_equal(model.graph_cost(graph), sum);
  REQUIRE(sum.launches == 3);
}

TEST_CASE("a node computed from weights alone costs nothing", "[cost]") {
  const ir::Graph graph = transposed_weight_graph();
  const AnalyticalModel model(cost::device_by_name("v100"));
  REQUIRE(ops::folded_nodes(graph) == std::vector<bool>{true, false});
  REQUIRE(model.node_cost(graph, 0).time_ms > 0);
  require_equal(model.graph_cost(graph), model.node_cost(graph, 1));
}

TEST_CASE("chains of weight-only nodes fold, inputs with defaults and opaque nodes do not", "[cost]") {
  ir::Graph graph;
  const ir::ValueId w = add_float_weight(graph, "W", {4, 4});
  const ir::ValueId x = graph.add_input("X", float_type({4, 4}), ir::share(ir::Tensor(ir::DataType::kFloat, {4, 4})));
  const ir::NodeId transpose = add_inferred(graph, ir::OpKind::kTranspose, {w}, transpose_2d());
  const ir::NodeId relu = add_inferred(graph, ir::OpKind::kRelu, {graph.node(transpose).outputs[0]});
  const ir::NodeId opaque = add_opaque(graph, "Custom", {w}, {4, 4});
  const ir::NodeId negated = add_inferred(graph, ir::OpKind::kNeg, {x});
  const ir::NodeId after_opaque = add_inferred(graph, ir::OpKind::kRelu, {graph.node(opaque).outputs[0]});
  graph.set_outputs({graph.node(relu).outputs[0], graph.node(negated).outputs[0],
                     graph.node(after_opaque).outputs[0]});
  REQUIRE(ops::folded_nodes(graph) == std::vector<bool>{true, true, false, false, false});
}

TEST_CASE("opaque nodes cost a launch and their tensors", "[cost]") {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({1, 1000}));
  const ir::NodeId opaque = add_opaque(graph, "TopK", {x}, {1, 10});
  graph.set_outputs({graph.node(opaque).outputs[0]});
  const AnalyticalModel model(cost::device_by_name("cpu"));
  const Cost cost = model.graph_cost(graph);
  REQUIRE(cost.time_ms > 0);
  REQUIRE(cost.launches == 1);
  REQUIRE(cost.bytes == 4 * (1000 + 10));
  REQUIRE(cost.flops == 0);
  REQUIRE(model.opaque_nodes() == 1);
}

TEST_CASE("views cost nothing", "[cost]") {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({2, 3, 4}));
  ir::Attributes attrs;
  attrs.set("axis", int64_t{1});
  const ir::NodeId flatten = add_inferred(graph, ir::OpKind::kFlatten, {x}, attrs);
  graph.set_outputs({graph.node(flatten).outputs[0]});
  for (const std::string& device : cost::device_names()) {
    require_equal(AnalyticalModel(cost::device_by_name(device)).graph_cost(graph), Cost{});
  }
}

TEST_CASE("a graph over the memory cap costs infinity", "[cost]") {
  const ir::Graph graph = testing::conv_graph(16, 8, 3, "relu", false);
  const double bytes = 4.0 * (16 * 8 * 8 + 16 * 16 * 3 * 3 + 16 + 16 * 8 * 8);
  REQUIRE(cost::memory_upper_bound(graph) == bytes);
  AnalyticalModel model(cost::device_by_name("h100"));
  model.set_memory_cap_bytes(bytes);
  REQUIRE_FALSE(model.graph_cost(graph).is_infinite());
  model.set_memory_cap_bytes(bytes - 1);
  const Cost capped = model.graph_cost(graph);
  REQUIRE(capped.is_infinite());
  REQUIRE((capped + model.node_cost(graph, 0)).is_infinite());
}

}  // namespace
}  // namespace graphsub
