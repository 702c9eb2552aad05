// Tests of written_chains: the chains export writes as a fused form, and how a measured model
// prices them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "cost/cached_model.h"
#include "cost/written_chains.h"
#include "cost_testing.h"
#include "ops/folding.h"

namespace graphsub {
namespace {

using cost::WrittenChain;
using testing::add_float_weight;
using testing::add_inferred;
using testing::conv_attrs;
using testing::conv_graph;
using testing::float_type;

/// `graph` with its output `output` computed by `node` instead, the nodes no output needs removed.
ir::Graph graph_with_node(ir::Graph graph, ir::NodeId node, ir::ValueId output) {
  graph.replace_all_uses(output, graph.node(node).outputs[0]);
  graph.set_outputs({graph.node(node).outputs[0]});
  graph.remove_dead_nodes();
  return graph;
}

std::vector<WrittenChain> chains_of(const ir::Graph& graph) {
  return cost::written_chains(graph, ops::folded_nodes(graph));
}

/// X [1,8,6,6] → Conv(3x3, bias) → Add(·, X) → Relu → output: ResNet's block end.
ir::Graph residual_block() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({1, 8, 6, 6}));
  const ir::ValueId w = add_float_weight(graph, "W", {8, 8, 3, 3});
  const ir::ValueId b = add_float_weight(graph, "B", {8});
  const ir::ValueId y = graph.node(add_inferred(graph, ir::OpKind::kConv, {x, w, b}, conv_attrs(3, 1))).outputs[0];
  const ir::ValueId sum = graph.node(add_inferred(graph, ir::OpKind::kAdd, {x, y})).outputs[0];
  graph.set_outputs({graph.node(add_inferred(graph, ir::OpKind::kRelu, {sum})).outputs[0]});
  return graph;
}

/// A cache holding only the fused form of conv_graph(64, 56, 3): the Conv with its relu.
cost::CostCache fused_conv_cache() {
  const std::filesystem::path path = testing::scratch_dir("written_chains") / "cache.json";
  testing::write_text(path, R"json({
  "schema_version": 2, "target": "onnxruntime-cpu", "device": "test", "driver": "",
  "libraries": {}, "settings": {},
  "entries": [
    {"signature": "Conv(activation=\"relu\",dilations=[1,1],group=1,kernel_shape=[3,3],pads=[1,1,1,1],strides=[1,1];float32[1,64,56,56],const float32[64,64,3,3],const float32[64])",
     "backend": "onnxruntime-cpu", "median_ms": 0.9, "spread_ms": 0.01, "runs": 20},
    {"signature": "Conv(activation=\"none\",dilations=[1,1],group=1,kernel_shape=[3,3],pads=[1,1,1,1],strides=[1,1];float32[1,64,56,56],const float32[64,64,3,3],const float32[64])",
     "backend": "onnxruntime-cpu", "median_ms": 0.88, "spread_ms": 0.01, "runs": 20},
    {"signature": "Relu(;float32[1,64,56,56])",
     "backend": "onnxruntime-cpu", "median_ms": 0.1, "spread_ms": 0.01, "runs": 20}
  ]
})json");
  return cost::CostCache::read(path.string());
}

TEST_CASE("a convolution's bias-add-residual and relu form one written chain", "[cost]") {
  const ir::Graph graph = residual_block();
  const std::vector<WrittenChain> chains = chains_of(graph);
  REQUIRE(chains.size() == 1);
  CHECK(chains[0].head == 0);
  CHECK(chains[0].tail == std::vector<ir::NodeId>{1, 2});
  CHECK(chains[0].summand == graph.inputs()[0]);
  CHECK(chains[0].activation == "relu");
  CHECK(chains[0].output == graph.outputs()[0]);
  ir::Graph with_fused = graph;
  ir::NodeId fused = -1;
  REQUIRE(cost::add_fused_form(with_fused, chains[0], fused));
  CHECK(with_fused.node(fused).inputs.size() == 4);
  CHECK(with_fused.node(fused).attrs.get_string("activation", "") == "relu");
}

TEST_CASE("a chain stops where export would not write the fused form", "[cost]") {
  SECTION("the convolution's output is read twice") {
    ir::Graph graph = conv_graph(8, 6, 3, "none", true);
    graph.set_outputs({graph.outputs()[0], graph.node(0).outputs[0]});
    CHECK(chains_of(graph).empty());
  }
  SECTION("a convolution without bias takes no residual, only the activation after it") {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("X", float_type({1, 8, 6, 6}));
    const ir::ValueId w = add_float_weight(graph, "W", {8, 8, 3, 3});
    const ir::ValueId y = graph.node(add_inferred(graph, ir::OpKind::kConv, {x, w}, conv_attrs(3, 1))).outputs[0];
    const ir::ValueId sum = graph.node(add_inferred(graph, ir::OpKind::kAdd, {y, x})).outputs[0];
    graph.set_outputs({graph.node(add_inferred(graph, ir::OpKind::kRelu, {sum})).outputs[0]});
    CHECK(chains_of(graph).empty());
  }
  SECTION("a residual that broadcasts is no Z") {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("X", float_type({1, 8, 6, 6}));
    const ir::ValueId r = graph.add_input("R", float_type({1, 8, 1, 1}));
    const ir::ValueId w = add_float_weight(graph, "W", {8, 8, 3, 3});
    const ir::ValueId b = add_float_weight(graph, "B", {8});
    const ir::ValueId y = graph.node(add_inferred(graph, ir::OpKind::kConv, {x, w, b}, conv_attrs(3, 1))).outputs[0];
    graph.set_outputs({graph.node(add_inferred(graph, ir::OpKind::kAdd, {y, r})).outputs[0]});
    CHECK(chains_of(graph).empty());
  }
  SECTION("a product takes a weight as its bias, then the tanh") {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("X", float_type({2, 4, 16}));
    const ir::ValueId w = add_float_weight(graph, "W", {16, 8});
    const ir::ValueId c = add_float_weight(graph, "C", {8});
    const ir::ValueId y = graph.node(add_inferred(graph, ir::OpKind::kMatMul, {x, w})).outputs[0];
    const ir::ValueId sum = graph.node(add_inferred(graph, ir::OpKind::kAdd, {c, y})).outputs[0];
    graph.set_outputs({graph.node(add_inferred(graph, ir::OpKind::kTanh, {sum})).outputs[0]});
    const std::vector<WrittenChain> chains = chains_of(graph);
    REQUIRE(chains.size() == 1);
    CHECK(chains[0].summand == c);
    CHECK(chains[0].activation == "tanh");
    ir::Graph with_fused = graph;
    ir::NodeId fused = -1;
    CHECK(cost::add_fused_form(with_fused, chains[0], fused));
  }
}

TEST_CASE("a model of a target timing the written file prices a convolution and its relu as their fused form",
          "[cost]") {
  const cost::CostCache cache = fused_conv_cache();
  cost::CachedModel measured(cache, "onnxruntime-cpu", cost::device_by_name("cpu"));
  const cost::CachedModel per_node(cache, "onnxruntime-cpu", cost::device_by_name("cpu"));
  measured.set_prices_written_chains(true);
  const ir::Graph separate = conv_graph(64, 56, 3, "none", true);
  CHECK(per_node.graph_cost(separate).time_ms == Approx(0.98));
  const ir::Graph fused = conv_graph(64, 56, 3, "relu", false);
  CHECK(measured.written_cost(separate).time_ms == 0.9);
  CHECK(measured.written_cost(fused).time_ms == 0.9);
  CHECK(measured.misses() == 0);
  ir::Graph read_twice = separate;
  read_twice.set_outputs({separate.outputs()[0], separate.node(0).outputs[0]});
  CHECK(measured.written_cost(read_twice).time_ms == Approx(0.98));

  // The search's price sums the nodes, so that the fusion leads it on; so does every written_cost
  // of a model of another target.
  CHECK(measured.graph_cost(separate).time_ms == Approx(0.98));
  CHECK(per_node.written_cost(separate).time_ms == Approx(0.98));
  const cost::AnalyticalModel estimate(cost::device_by_name("cpu"));
  CHECK(estimate.written_cost(separate).time_ms > estimate.written_cost(fused).time_ms);
}

/// Two convolutions with bias of one input summed, then a ReLU: a (3x3) is node 0, b (1x1) node 1.
ir::Graph two_convolutions_summed() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({1, 8, 6, 6}));
  const ir::ValueId wa = add_float_weight(graph, "WA", {8, 8, 3, 3});
  const ir::ValueId wb = add_float_weight(graph, "WB", {8, 8, 1, 1});
  const ir::ValueId ba = add_float_weight(graph, "BA", {8});
  const ir::ValueId bb = add_float_weight(graph, "BB", {8});
  const ir::ValueId a = graph.node(add_inferred(graph, ir::OpKind::kConv, {x, wa, ba}, conv_attrs(3, 1))).outputs[0];
  const ir::ValueId b = graph.node(add_inferred(graph, ir::OpKind::kConv, {x, wb, bb}, conv_attrs(1, 0))).outputs[0];
  const ir::ValueId sum = graph.node(add_inferred(graph, ir::OpKind::kAdd, {a, b})).outputs[0];
  graph.set_outputs({graph.node(add_inferred(graph, ir::OpKind::kRelu, {sum})).outputs[0]});
  return graph;
}

TEST_CASE("a sum of two convolutions is priced with the cheaper of the two fused forms", "[cost]") {
  const ir::Graph graph = two_convolutions_summed();
  const std::vector<WrittenChain> chains = chains_of(graph);
  REQUIRE(chains.size() == 1);
  CHECK(chains[0].head == 0);
  CHECK(chains[0].other_head == 1);

  // The fused forms, and each convolution alone, as a cache holds them.
  ir::Graph forms = graph;
  ir::NodeId a_takes = -1;
  ir::NodeId b_takes = -1;
  REQUIRE(cost::add_fused_form(forms, chains[0], a_takes));
  REQUIRE(cost::add_fused_form(forms, cost::swapped(graph, chains[0]), b_takes));
  cost::CostCache cache;
  const auto time = [&](ir::NodeId id, double ms) {
    cost::CacheEntry entry;
    entry.signature = cost::op_signature(forms, id, nullptr);
    entry.backend = "onnxruntime-cpu";
    entry.median_ms = ms;
    entry.runs = 10;
    cache.insert(entry);
  };
  time(a_takes, 1.0);
  time(b_takes, 0.35);
  time(0, 0.9);
  time(1, 0.3);
  cost::CachedModel model(cache, "onnxruntime-cpu", cost::device_by_name("cpu"));
  model.set_prices_written_chains(true);
  CHECK(model.written_cost(graph).time_ms == Approx(1.25));  // b takes the sum: 0.35 + 0.9

  // Each fused by the search: the same nodes once written, and the one the rule chose is priced.
  CHECK(model.written_cost(graph_with_node(forms, a_takes, graph.outputs()[0])).time_ms == Approx(1.3));
  CHECK(model.written_cost(graph_with_node(forms, b_takes, graph.outputs()[0])).time_ms == Approx(1.25));
  CHECK(model.misses() == 0);
}

}  // namespace
}  // namespace graphsub
