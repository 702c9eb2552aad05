// Unit tests of the graph IR: construction, editing, topological order, cycles, hashing, copying.
#include <catch2/catch.hpp>

#include <algorithm>

#include "ir/graph.h"

using namespace graphsub::ir;

namespace {

TensorType float_type(std::vector<int64_t> dims) { return {DataType::kFloat, Shape::of(dims)}; }

/// x → Relu → Neg → out, with a weight w added to the Relu output: y = neg(relu(x)) + w.
struct Chain {
  Graph graph;
  ValueId x, w, relu_out, neg_out, add_out;
  NodeId relu, neg, add;
  Chain() {
    x = graph.add_input("x", float_type({2, 3}));
    w = graph.add_weight("w", share(Tensor(DataType::kFloat, {2, 3})));
    relu = graph.add_node(OpKind::kRelu, {x}, {{float_type({2, 3}), "r"}}, {}, "relu");
    relu_out = graph.node(relu).outputs[0];
    neg = graph.add_node(OpKind::kNeg, {relu_out}, {{float_type({2, 3}), "n"}}, {}, "neg");
    neg_out = graph.node(neg).outputs[0];
    add = graph.add_node(OpKind::kAdd, {neg_out, w}, {{float_type({2, 3}), "y"}}, {}, "add");
    add_out = graph.node(add).outputs[0];
    graph.set_outputs({add_out});
  }
};

}  // namespace

TEST_CASE("a graph records inputs, weights, nodes and outputs", "[ir]") {
  Chain c;
  CHECK(c.graph.node_count() == 3);
  CHECK(c.graph.inputs() == std::vector<ValueId>{c.x});
  CHECK(c.graph.output_names() == std::vector<std::string>{"y"});
  CHECK(c.graph.value(c.w).kind == ValueKind::kWeight);
  CHECK(c.graph.value(c.w).type == float_type({2, 3}));
  CHECK(c.graph.value(c.neg_out).producer == c.neg);
  CHECK_FALSE(c.graph.is_weight_only(c.add));
}

TEST_CASE("topological order follows edges, not insertion order", "[ir]") {
  Graph graph;
  ValueId x = graph.add_input("x", float_type({1}));
  NodeId a = graph.add_node(OpKind::kRelu, {x}, {{float_type({1}), "a"}});
  NodeId b = graph.add_node(OpKind::kNeg, {x}, {{float_type({1}), "b"}});
  // a now reads b's output, so b (the later id) must come first.
  Graph rewired = graph;
  NodeId c = rewired.add_node(OpKind::kAbs, {rewired.node(b).outputs[0]}, {{float_type({1}), "c"}});
  rewired.replace_all_uses(rewired.node(a).outputs[0], rewired.node(c).outputs[0]);
  Graph chain;
  ValueId in = chain.add_input("x", float_type({1}));
  NodeId late = chain.add_node(OpKind::kNeg, {in}, {{float_type({1}), "late"}});
  NodeId early = chain.add_node(OpKind::kRelu, {in}, {{float_type({1}), "early"}});
  chain.replace_all_uses(in, chain.node(late).outputs[0]);  // both nodes now read late's output
  CHECK(chain.has_cycle());                                  // late reads itself
  auto order = rewired.topological_order();
  REQUIRE(order);
  CHECK(std::find(order->begin(), order->end(), b) < std::find(order->begin(), order->end(), c));
  (void)early;
}

TEST_CASE("a cycle is detected", "[ir]") {
  Graph graph;
  ValueId x = graph.add_input("x", float_type({1}));
  NodeId a = graph.add_node(OpKind::kAdd, {x, x}, {{float_type({1}), "a"}});
  NodeId b = graph.add_node(OpKind::kRelu, {graph.node(a).outputs[0]}, {{float_type({1}), "b"}});
  graph.set_outputs({graph.node(b).outputs[0]});
  CHECK_FALSE(graph.has_cycle());
  // Make a read b's output: a → b → a.
  Graph cyclic = graph;
  cyclic.replace_all_uses(x, cyclic.node(b).outputs[0]);
  CHECK(cyclic.has_cycle());
  CHECK_FALSE(cyclic.topological_order().has_value());
  CHECK_FALSE(graph.has_cycle());  // the copy's edit did not touch the original
}

TEST_CASE("copies share nodes and weights until edited", "[ir]") {
  Chain c;
  Graph copy = c.graph;
  CHECK(&copy.node(c.relu) == &c.graph.node(c.relu));
  CHECK(copy.value(c.w).data.get() == c.graph.value(c.w).data.get());
  Attributes attrs;
  attrs.set("alpha", 0.5f);
  copy.set_attributes(c.relu, attrs);
  CHECK(&copy.node(c.relu) != &c.graph.node(c.relu));
  CHECK(c.graph.node(c.relu).attrs.empty());
  CHECK(&copy.node(c.neg) == &c.graph.node(c.neg));
}

TEST_CASE("replace_all_uses redirects nodes and graph outputs, remove_dead_nodes cleans up", "[ir]") {
  Chain c;
  // Bypass Neg: add reads relu directly.
  c.graph.replace_all_uses(c.neg_out, c.relu_out);
  CHECK(c.graph.node(c.add).inputs[0] == c.relu_out);
  CHECK(c.graph.remove_dead_nodes() == 1);
  CHECK_FALSE(c.graph.has_node(c.neg));
  CHECK(c.graph.node_count() == 2);
  // Replace the output value itself: the output name stays fixed.
  c.graph.replace_all_uses(c.add_out, c.relu_out);
  CHECK(c.graph.outputs() == std::vector<ValueId>{c.relu_out});
  CHECK(c.graph.output_names() == std::vector<std::string>{"y"});
  CHECK(c.graph.remove_dead_nodes() == 1);
  CHECK(c.graph.node_ids() == std::vector<NodeId>{c.relu});
}

TEST_CASE("structural hashes ignore node ids and names but see ops, attributes and weights", "[ir]") {
  Chain a;
  Chain b;
  CHECK(a.graph.structural_hash() == b.graph.structural_hash());

  // Same computation built in another id order with other names.
  Graph other;
  ValueId w = other.add_weight("weight", share(Tensor(DataType::kFloat, {2, 3})));
  ValueId x = other.add_input("x", float_type({2, 3}));
  NodeId relu = other.add_node(OpKind::kRelu, {x}, {{float_type({2, 3}), "q"}});
  NodeId neg = other.add_node(OpKind::kNeg, {other.node(relu).outputs[0]}, {{float_type({2, 3}), ""}});
  NodeId add = other.add_node(OpKind::kAdd, {other.node(neg).outputs[0], w}, {{float_type({2, 3}), "z"}});
  other.set_outputs({other.node(add).outputs[0]});
  CHECK(other.structural_hash() == a.graph.structural_hash());

  Attributes attrs;
  attrs.set("alpha", 0.5f);
  b.graph.set_attributes(b.relu, attrs);
  CHECK(b.graph.structural_hash() != a.graph.structural_hash());

  Chain c;
  Tensor ones = Tensor::from_floats({2, 3}, {1, 1, 1, 1, 1, 1});
  Graph d;
  ValueId dx = d.add_input("x", float_type({2, 3}));
  ValueId dw = d.add_weight("w", share(ones));
  NodeId dr = d.add_node(OpKind::kRelu, {dx}, {{float_type({2, 3}), "r"}});
  NodeId dn = d.add_node(OpKind::kNeg, {d.node(dr).outputs[0]}, {{float_type({2, 3}), "n"}});
  NodeId da = d.add_node(OpKind::kAdd, {d.node(dn).outputs[0], dw}, {{float_type({2, 3}), "y"}});
  d.set_outputs({d.node(da).outputs[0]});
  CHECK(d.structural_hash() != c.graph.structural_hash());
}

TEST_CASE("commuted operands hash differently (hashing is structural, not semantic)", "[ir]") {
  Graph a, b;
  for (Graph* g : {&a, &b}) {
    ValueId x = g->add_input("x", float_type({1}));
    ValueId y = g->add_input("y", float_type({1}));
    std::vector<ValueId> operands = g == &a ? std::vector<ValueId>{x, y} : std::vector<ValueId>{y, x};
    NodeId sub = g->add_node(OpKind::kSub, operands, {{float_type({1}), "z"}});
    g->set_outputs({g->node(sub).outputs[0]});
  }
  CHECK(a.structural_hash() != b.structural_hash());
}

TEST_CASE("with named symmetric ops, their operands hash in either order alike", "[ir]") {
  // z = (x op y) - x against (y op x) - x, with Add named symmetric (a search names every
  // commutative op: ops::is_commutative).
  const auto symmetric = [](OpKind op) { return op == OpKind::kAdd; };
  auto build = [](OpKind op, bool swapped) {
    Graph g;
    ValueId x = g.add_input("x", float_type({2}));
    ValueId y = g.add_input("y", float_type({1}));
    std::vector<ValueId> operands = swapped ? std::vector<ValueId>{y, x} : std::vector<ValueId>{x, y};
    NodeId inner = g.add_node(op, operands, {{float_type({2}), ""}});
    NodeId sub = g.add_node(OpKind::kSub, {g.node(inner).outputs[0], x}, {{float_type({2}), "z"}});
    g.set_outputs({g.node(sub).outputs[0]});
    return g;
  };
  CHECK(build(OpKind::kAdd, false).structural_hash() != build(OpKind::kAdd, true).structural_hash());
  CHECK(build(OpKind::kAdd, false).structural_hash(symmetric) == build(OpKind::kAdd, true).structural_hash(symmetric));
  CHECK(build(OpKind::kMul, false).structural_hash(symmetric) != build(OpKind::kMul, true).structural_hash(symmetric));
  // Without a symmetric op in the graph, both hashes agree.
  CHECK(build(OpKind::kMul, false).structural_hash(symmetric) == build(OpKind::kMul, false).structural_hash());
}

TEST_CASE("copying a large graph does not copy nodes or weights", "[ir]") {
  Graph graph;
  ValueId current = graph.add_input("x", float_type({1, 64}));
  ValueId w = graph.add_weight("w", share(Tensor(DataType::kFloat, {1 << 20})));
  for (int i = 0; i < 1000; ++i) {
    NodeId id = graph.add_node(OpKind::kRelu, {current}, {{float_type({1, 64}), ""}});
    current = graph.node(id).outputs[0];
  }
  graph.set_outputs({current});
  Graph copy = graph;
  CHECK(copy.node_count() == 1000);
  CHECK(&copy.value(w) == &graph.value(w));
  CHECK(&copy.node(500) == &graph.node(500));
}

namespace {

/// y = relu(x) + w, with x named `input`, w a float weight of `elements` elements filled with
/// `fill`, and a Reshape of the sum to `shape` (an int64 weight).
Graph layer(const std::string& input, int64_t elements, float fill, std::vector<int64_t> shape) {
  Graph graph;
  const ValueId x = graph.add_input(input, float_type({1, elements}));
  const ValueId w = graph.add_weight("w", share(Tensor::from_floats({1, elements}, std::vector<float>(elements, fill))));
  const ValueId r = graph.node(graph.add_node(OpKind::kRelu, {x}, {{float_type({1, elements}), "r"}})).outputs[0];
  const ValueId s = graph.node(graph.add_node(OpKind::kAdd, {r, w}, {{float_type({1, elements}), "s"}})).outputs[0];
  const int64_t rank = static_cast<int64_t>(shape.size());
  const ValueId t = graph.add_weight("t", share(Tensor::from_int64s({rank}, shape)));
  graph.set_outputs({graph.node(graph.add_node(OpKind::kReshape, {s, t}, {{float_type(shape), "y"}})).outputs[0]});
  return graph;
}

}  // namespace

TEST_CASE("timing hashes see what runs, not the values of large weights or the names of inputs", "[ir]") {
  const int64_t large = Graph::kLargeWeight;
  const Graph a = layer("x", large, 1.0f, {large, 1});
  // Another layer of the model: other weights, another input name.
  const Graph b = layer("layer2/x", large, 2.0f, {large, 1});
  CHECK(a.structural_hash() != b.structural_hash());
  CHECK(a.timing_hash() == b.timing_hash());
  // What is computed differs: another Reshape target, another op.
  CHECK(layer("x", large, 1.0f, {1, large}).timing_hash() != a.timing_hash());
  Graph other_attributes = layer("x", large, 1.0f, {large, 1});
  Attributes attrs;
  attrs.set("alpha", 0.5f);
  other_attributes.set_attributes(0, attrs);
  CHECK(other_attributes.timing_hash() != a.timing_hash());
  // A small float weight (a scale, an exponent) counts by value.
  CHECK(layer("x", large - 1, 1.0f, {large - 1, 1}).timing_hash() !=
        layer("x", large - 1, 2.0f, {large - 1, 1}).timing_hash());
}

namespace graphsub::ir {
namespace {

/// y = relu(x) + w with w the float weight `data` (shape [1, n]); the weight made before the
/// Relu or after it (other value ids, the same structure).
Graph weighted_layer(const std::string& input, const std::vector<float>& data, bool weight_first = true) {
  const auto n = static_cast<int64_t>(data.size());
  Graph graph;
  const ValueId x = graph.add_input(input, float_type({1, n}));
  auto weight = [&] { return graph.add_weight("w", share(Tensor::from_floats({1, n}, data))); };
  const ValueId early = weight_first ? weight() : kNoValue;
  const ValueId r = graph.node(graph.add_node(OpKind::kRelu, {x}, {{float_type({1, n}), "r"}})).outputs[0];
  const ValueId w = weight_first ? early : weight();
  graph.set_outputs({graph.node(graph.add_node(OpKind::kAdd, {r, w}, {{float_type({1, n}), "y"}})).outputs[0]});
  return graph;
}

std::vector<float> ramp(std::size_t n, float from) {
  std::vector<float> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = from + static_cast<float>(i);
  return data;
}

}  // namespace

TEST_CASE("replica hashes see ids, types, small weights and uniform large ones, not names or other values",
          "[ir]") {
  const auto large = static_cast<std::size_t>(Graph::kLargeWeight);
  const Graph a = weighted_layer("x", ramp(large, 0));
  // Another layer: another input name, other values in a large weight.
  const Graph b = weighted_layer("layer2/x", ramp(large, 5));
  CHECK(a.structural_hash() != b.structural_hash());
  CHECK(a.replica_hash() == b.replica_hash());
  // The same computation with other ids.
  const Graph reordered = weighted_layer("x", ramp(large, 0), false);
  CHECK(reordered.structural_hash() == a.structural_hash());
  CHECK(reordered.replica_hash() != a.replica_hash());
  // A large weight whose elements are all one number (what a rule's value(x) reads) counts by it.
  const Graph ones = weighted_layer("x", std::vector<float>(large, 1.0f));
  CHECK(ones.replica_hash() != a.replica_hash());
  CHECK(ones.replica_hash() != weighted_layer("x", std::vector<float>(large, 2.0f)).replica_hash());
  CHECK(ones.replica_hash() == weighted_layer("y", std::vector<float>(large, 1.0f)).replica_hash());
  // A small weight counts by its values; another size is another type.
  CHECK(weighted_layer("x", ramp(large - 1, 0)).replica_hash() !=
        weighted_layer("x", ramp(large - 1, 5)).replica_hash());
  CHECK(weighted_layer("x", ramp(large + 1, 0)).replica_hash() != a.replica_hash());
}

}  // namespace graphsub::ir
