// Matcher: which nodes a rule's source matches, and where it must not.
#include "rewrite/matcher.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "onnx_io/onnx_io.h"
#include "rewrite/rewrite_testing.h"
#include "rewrite/rewriter.h"
#include "rules/shipped_rules.h"

namespace graphsub::rewrite {
namespace {

using testing::add_canonical;
using testing::out;
using testing::parse_rule;

/// x [1,3,8,8] → conv (3x3, 4 filters) → relu; the relu output is the graph output.
struct ConvRelu {
  ir::Graph graph;
  ir::ValueId x = 0;
  ir::NodeId conv = 0;
  ir::NodeId relu = 0;

  explicit ConvRelu(ir::Attributes conv_attrs = {}) {
    x = graph.add_input("x", testing::float_type({1, 3, 8, 8}));
    const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({4, 3, 3, 3}, 1)));
    conv = add_canonical(graph, ir::OpKind::kConv, {x, w}, std::move(conv_attrs));
    relu = add_canonical(graph, ir::OpKind::kRelu, {out(graph, conv)});
    graph.set_name(out(graph, relu), "z");
    graph.set_outputs({out(graph, relu)});
  }
};

TEST_CASE("conv followed by relu matches the fusion rule") {
  const std::vector<rules::Rule> rules{parse_rule(testing::kFuseConvRelu)};
  ConvRelu g;
  const std::vector<Match> matches = Matcher(rules).find_all(g.graph);
  REQUIRE(matches.size() == 1);
  CHECK(matches[0].rule == &rules[0]);
  CHECK(matches[0].nodes == std::vector<ir::NodeId>{g.conv, g.relu});
  CHECK(matches[0].values.at("x") == g.x);
  CHECK(matches[0].values.at("y") == out(g.graph, g.conv));
  CHECK(matches[0].values.at("z") == out(g.graph, g.relu));
  CHECK(describe(g.graph, matches[0]) == "fuse-conv-relu at #" + std::to_string(g.conv) + ", #" +
                                             std::to_string(g.relu));
}

TEST_CASE("a matcher less a rule finds the other rules' matches and none of that rule's") {
  const std::vector<rules::Rule> rules = rules::default_rules();
  ConvRelu g;
  const Matcher all(rules);
  const std::vector<Match> matches = all.find_all(g.graph);
  REQUIRE_FALSE(matches.empty());
  const std::string left_out = matches[0].rule->name;
  const std::vector<Match> fewer = all.without({left_out}).find_all(g.graph);
  std::vector<const rules::Rule*> expected;
  for (const Match& match : matches) {
    if (match.rule->name != left_out) expected.push_back(match.rule);
  }
  std::vector<const rules::Rule*> found;
  for (const Match& match : fewer) found.push_back(match.rule);
  CHECK(found == expected);
  CHECK(all.without({}).find_all(g.graph).size() == matches.size());
}

TEST_CASE("an attribute constraint that the node does not meet prevents the match") {
  const std::vector<rules::Rule> rules{parse_rule(testing::kFuseConvRelu)};
  ir::Attributes fused;
  fused.set("activation", std::string("sigmoid"));
  ConvRelu g(fused);
  CHECK(Matcher(rules).find_all(g.graph).empty());
}

TEST_CASE("no match when the conv output is also used outside the match and not mapped") {
  const std::vector<rules::Rule> rules{parse_rule(testing::kFuseConvRelu)};
  SECTION("used by another node") {
    ConvRelu g;
    const ir::NodeId other = add_canonical(g.graph, ir::OpKind::kSigmoid, {out(g.graph, g.conv)});
    g.graph.set_outputs({out(g.graph, g.relu), out(g.graph, other)});
    CHECK(Matcher(rules).find_all(g.graph).empty());
  }
  SECTION("a graph output") {
    ConvRelu g;
    g.graph.set_outputs({out(g.graph, g.relu), out(g.graph, g.conv)});
    CHECK(Matcher(rules).find_all(g.graph).empty());
  }
}

TEST_CASE("opaque nodes never match") {
  const rules::Rule rule = parse_rule(testing::kFuseConvRelu);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2}));
  const ir::NodeId opaque = graph.add_node(ir::OpKind::kOpaque, {x}, {{testing::float_type({2}), "y"}}, {}, "op",
                                           std::make_shared<ir::OpaqueInfo>());
  graph.set_outputs({out(graph, opaque)});
  CHECK(Matcher::find(graph, rule).empty());
}

TEST_CASE("attribute variables bind on the first conv and must be equal on the second") {
  const std::vector<rules::Rule> rules{parse_rule(testing::kMergeConvs)};
  const Matcher matcher(rules);
  const std::vector<Match> equal = matcher.find_all(testing::two_convs({2, 2}, {2, 2}));
  REQUIRE(equal.size() == 2);  // either conv can play y1
  CHECK(equal[0].nodes == std::vector<ir::NodeId>{0, 1});
  CHECK(equal[1].nodes == std::vector<ir::NodeId>{1, 0});
  CHECK(equal[0].variables.at("s") == ir::AttrValue(std::vector<int64_t>{2, 2}));
  CHECK(matcher.find_all(testing::two_convs({1, 1}, {2, 2})).empty());
}

const char* const kSquareMatMul = R"(
rule square-weight
  source
    y = MatMul(x, w)
  where shape(w)[0] == shape(w)[1]
  where weight(w)
  target
    y2 = MatMul(x, w)
  map y -> y2
end
)";

TEST_CASE("where conditions must hold") {
  const rules::Rule rule = parse_rule(kSquareMatMul);
    auto graph_with = [](const std::vector<int64_t>& dims, bool weight) {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("x", testing::float_type({2, dims[0]}));
    const ir::ValueId w = weight ? graph.add_weight("w", ir::share(testing::random_tensor(dims, 3)))
                                 : graph.add_input("w", testing::float_type(dims));
    graph.set_outputs({out(graph, add_canonical(graph, ir::OpKind::kMatMul, {x, w}))});
    return graph;
  };
  CHECK(Matcher::find(graph_with({4, 4}, true), rule).size() == 1);
  CHECK(Matcher::find(graph_with({4, 5}, true), rule).empty());
  CHECK(Matcher::find(graph_with({4, 4}, false), rule).empty());
}

TEST_CASE("a weight computed from weights only counts as a weight") {
  const rules::Rule rule = parse_rule(kSquareMatMul);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 4}));
  const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({4, 4}, 3)));
  const ir::NodeId relu = add_canonical(graph, ir::OpKind::kRelu, {w});
  graph.set_outputs({out(graph, add_canonical(graph, ir::OpKind::kMatMul, {x, out(graph, relu)}))});
  CHECK(Matcher::find(graph, rule).size() == 1);
}

TEST_CASE("matches come in anchor order and matching never changes the graph") {
  const std::vector<rules::Rule> rules{parse_rule(testing::kFuseConvRelu), parse_rule(testing::kMergeMatMuls)};
  ConvRelu g;
  const ir::NodeId conv2 = add_canonical(g.graph, ir::OpKind::kConv,
                                         {g.x, g.graph.node(g.conv).inputs[1]});
  const ir::NodeId relu2 = add_canonical(g.graph, ir::OpKind::kRelu, {out(g.graph, conv2)});
  g.graph.set_outputs({out(g.graph, g.relu), out(g.graph, relu2)});
  const uint64_t before = g.graph.structural_hash();
  const std::vector<ir::NodeId> ids = g.graph.node_ids();
  const std::vector<Match> matches = Matcher(rules).find_all(g.graph);
  REQUIRE(matches.size() == 2);
  CHECK(matches[0].nodes == std::vector<ir::NodeId>{g.conv, g.relu});
  CHECK(matches[1].nodes == std::vector<ir::NodeId>{conv2, relu2});
  CHECK(g.graph.structural_hash() == before);
  CHECK(g.graph.node_ids() == ids);
}

TEST_CASE("pattern inputs may share a graph value, a value the match produces has one name") {
  // Two pattern inputs naming one value: a proved rule holds for equal inputs too.
  const rules::Rule rule = parse_rule(testing::kMergeMatMuls);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({3, 3}));
  const ir::ValueId w = graph.add_input("w", testing::float_type({3, 3}));
  const ir::NodeId square = add_canonical(graph, ir::OpKind::kMatMul, {x, x});  // w1 or w2 is x
  const ir::NodeId product = add_canonical(graph, ir::OpKind::kMatMul, {x, w});
  graph.set_outputs({out(graph, square), out(graph, product)});
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(!matches.empty());
  for (const Match& match : matches) {
    CHECK(apply(graph, match).has_value());
  }

  // A pattern input never names what a matched node produces: the rewrite replaces that value.
  const rules::Rule reads_own = parse_rule(R"(
rule add-relu
  source
    y = Relu(p)
    z = Add(y, q)
  target
    z2 = Add(p, q)
  map z -> z2
end
)");
  ir::Graph doubled;
  const ir::ValueId input = doubled.add_input("p", testing::float_type({3}));
  const ir::ValueId relu = out(doubled, add_canonical(doubled, ir::OpKind::kRelu, {input}));
  doubled.set_outputs({out(doubled, add_canonical(doubled, ir::OpKind::kAdd, {relu, relu}))});
  CHECK(Matcher::find(doubled, reads_own).empty());
}

TEST_CASE("a rule whose source is not connected is refused") {
  std::vector<rules::Rule> rules{parse_rule(testing::kFuseConvRelu)};
  rules[0].source[1].inputs = {"unrelated"};
  CHECK_THROWS_AS(Matcher(rules), std::invalid_argument);
  CHECK_THROWS_AS(Matcher::find(ir::Graph(), rules[0]), std::invalid_argument);
}

}  // namespace
}  // namespace graphsub::rewrite

namespace graphsub::rewrite {

TEST_CASE("value lists match every adjacent pair, and bind what lies around it") {
  // y = concat(relu(x0), relu(x1), relu(x2), relu(x3)): three adjacent pairs of relus.
  ir::Graph graph;
  std::vector<ir::ValueId> parts;
  for (int i = 0; i < 4; ++i) {
    const ir::ValueId x = graph.add_input("x" + std::to_string(i), testing::float_type({1, 2}));
    parts.push_back(out(graph, add_canonical(graph, ir::OpKind::kRelu, {x})));
  }
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  const ir::ValueId y = out(graph, add_canonical(graph, ir::OpKind::kConcat, parts, axis));
  graph.set_outputs({y});
  const rules::Rule rule = parse_rule(R"(
rule pair
  source
    a = Relu(p)
    b = Relu(q)
    y = Concat(pre..., a, b, post...) [axis = 1]
  target
    c = Concat(p, q) [axis = 1]
    r = Relu(c)
    t = Concat(pre..., r, post...) [axis = 1]
  map y -> t
end
)");
  const std::vector<Match> matches = Matcher::find(graph, rule);
  REQUIRE(matches.size() == 3);
  std::set<std::size_t> before;
  for (const Match& match : matches) {
    const std::size_t lead = match.lists.at("pre...").size();
    before.insert(lead);
    CHECK(match.lists.at("post...").size() == 2 - lead);
    CHECK(match.values.at("a") == parts[lead]);
    CHECK(match.values.at("b") == parts[lead + 1]);
  }
  CHECK(before == std::set<std::size_t>{0, 1, 2});

  // A lone list takes all inputs.
  const std::vector<Match> all = Matcher::find(
      graph, parse_rule("rule all\n  source\n    y = Concat(xs...)\n  target\n    t = Concat(xs...)\n  map y -> t\nend\n"));
  REQUIRE(all.size() == 1);
  CHECK(all[0].lists.at("xs...") == parts);
}

}  // namespace graphsub::rewrite

namespace graphsub::rewrite {

TEST_CASE("find_touching returns the matches of find_all that bind the given nodes, in order") {
  // y = concat(relu(x0), relu(x1), relu(x2)); the pair rule anchors on a Relu two steps from another.
  ir::Graph graph;
  std::vector<ir::ValueId> parts;
  std::vector<ir::NodeId> relus;
  for (int i = 0; i < 3; ++i) {
    const ir::ValueId x = graph.add_input("x" + std::to_string(i), testing::float_type({1, 2}));
    relus.push_back(add_canonical(graph, ir::OpKind::kRelu, {x}));
    parts.push_back(out(graph, relus.back()));
  }
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  const ir::NodeId concat = add_canonical(graph, ir::OpKind::kConcat, parts, axis);
  graph.set_outputs({out(graph, concat)});
  const std::vector<rules::Rule> rules{parse_rule(R"(
rule pair
  source
    a = Relu(p)
    b = Relu(q)
    y = Concat(pre..., a, b, post...) [axis = 1]
  target
    c = Concat(p, q) [axis = 1]
    r = Relu(c)
    t = Concat(pre..., r, post...) [axis = 1]
  map y -> t
end
)")};
  const Matcher matcher(rules);
  const std::vector<Match> all = matcher.find_all(graph);
  REQUIRE(all.size() == 2);
  const auto nodes_of = [](const std::vector<Match>& matches) {
    std::vector<std::vector<ir::NodeId>> nodes;
    for (const Match& match : matches) nodes.push_back(match.nodes);
    return nodes;
  };
  CHECK(nodes_of(matcher.find_touching(graph, {concat})) == nodes_of(all));
  CHECK(nodes_of(matcher.find_touching(graph, {relus[2]})) == nodes_of({all[1]}));
  CHECK(nodes_of(matcher.find_touching(graph, {relus[0]})) == nodes_of({all[0]}));
  CHECK(matcher.find_touching(graph, {}).empty());
}

TEST_CASE("find_touching reaches an anchor that only shares an input with the given node") {
  const std::vector<rules::Rule> rules{parse_rule(testing::kMergeConvs)};
  const ir::Graph graph = testing::two_convs({1, 1}, {1, 1});
  const std::vector<ir::NodeId> convs = graph.node_ids();
  const Matcher matcher(rules);
  REQUIRE(matcher.find_all(graph).size() == 2);  // both orders
  CHECK(matcher.find_touching(graph, {convs[1]}).size() == 2);
}

}  // namespace graphsub::rewrite

namespace graphsub::rewrite {

TEST_CASE("find_touching agrees with find_all on every node, with every shipped rule") {
  // A residual block and every graph one shipped rule away from it.
  const std::vector<rules::Rule> rules = rules::default_rules();
  const Matcher matcher(rules);
  const ir::Graph input = onnx_io::import_model(GRAPHSUB_SOURCE_DIR "/models/small_cnn.onnx");
  std::vector<ir::Graph> graphs = {input};
  for (const Match& match : matcher.find_all(input)) graphs.push_back(*apply(input, match));
  std::size_t compared = 0;
  for (const ir::Graph& graph : graphs) {
    const std::vector<Match> all = matcher.find_all(graph);
    compared += all.size();
    for (ir::NodeId id : graph.node_ids()) {
      std::vector<std::vector<ir::NodeId>> expected;
      for (const Match& match : all) {
        if (std::count(match.nodes.begin(), match.nodes.end(), id)) expected.push_back(match.nodes);
      }
      std::vector<std::vector<ir::NodeId>> touching;
      for (const Match& match : matcher.find_touching(graph, {id})) touching.push_back(match.nodes);
      INFO("node " << id);
      CHECK(touching == expected);
    }
  }
  CHECK(compared > 10);
}

}  // namespace graphsub::rewrite
