// Every rule of rules/fusion.rules, applied to a graph it matches, computes what the graph did.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "runtime/equivalence.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::add_inferred;
using testing::float_type;

std::vector<rules::Rule> fusion_rules() {
  return rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/fusion.rules");
}

/// A canonical 3x3 convolution of x [1,3,8,8] to 4 channels, with or without bias.
ir::NodeId add_conv(ir::Graph& graph, ir::ValueId x, bool bias, uint32_t seed) {
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  attrs.set("group", int64_t{1});
  attrs.set("activation", std::string("none"));
  std::vector<ir::ValueId> inputs = {
      x, graph.add_weight("w", ir::share(testing::random_tensor({4, 3, 3, 3}, seed)))};
  if (bias) inputs.push_back(graph.add_weight("b", ir::share(testing::random_tensor({4}, seed + 1))));
  return add_inferred(graph, ir::OpKind::kConv, inputs, attrs);
}

/// conv (with or without bias) followed by `op` on its output, as the graph output.
ir::Graph conv_then(ir::OpKind op, bool bias) {
  ir::Graph graph;
  ir::ValueId x = graph.add_input("x", float_type({1, 3, 8, 8}));
  ir::NodeId conv = add_conv(graph, x, bias, 11);
  ir::ValueId y = graph.node(conv).outputs[0];
  ir::NodeId last;
  if (op == ir::OpKind::kBatchNormalization) {
    std::vector<ir::ValueId> inputs = {y};
    const char* names[] = {"scale", "beta", "mean", "var"};
    for (int i = 0; i < 4; ++i) {
      const float low = i == 3 ? 0.5f : -1.0f;  // variances stay positive
      inputs.push_back(graph.add_weight(names[i], ir::share(testing::random_tensor({4}, 20 + i, low, 1.5f))));
    }
    ir::Attributes attrs;
    attrs.set("epsilon", 1e-5f);
    last = add_inferred(graph, op, inputs, attrs);
  } else {
    last = add_inferred(graph, op, {y});
  }
  graph.set_name(graph.node(last).outputs[0], "z");
  graph.set_outputs({graph.node(last).outputs[0]});
  return graph;
}

/// The graph after applying the named rule at its only match.
ir::Graph rewritten(const ir::Graph& graph, const std::vector<rules::Rule>& rules, const std::string& name) {
  for (const rules::Rule& rule : rules) {
    if (rule.name != name) continue;
    std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule);
    REQUIRE(matches.size() == 1);
    std::string why;
    std::optional<ir::Graph> result = rewrite::apply(graph, matches[0], &why);
    INFO(why);
    REQUIRE(result);
    return *result;
  }
  FAIL("no rule " << name);
  return graph;
}

}  // namespace

TEST_CASE("fusion rules keep what the graph computes", "[rules]") {
  const std::vector<rules::Rule> rules = fusion_rules();
  struct Case {
    const char* rule;
    ir::OpKind op;
    bool bias;
  };
  const Case cases[] = {
      {"fuse-conv-relu", ir::OpKind::kRelu, false},
      {"fuse-conv-bias-relu", ir::OpKind::kRelu, true},
      {"fuse-conv-sigmoid", ir::OpKind::kSigmoid, false},
      {"fuse-conv-bias-sigmoid", ir::OpKind::kSigmoid, true},
      {"fuse-conv-tanh", ir::OpKind::kTanh, false},
      {"fuse-conv-bias-tanh", ir::OpKind::kTanh, true},
      {"fold-conv-batchnorm", ir::OpKind::kBatchNormalization, false},
      {"fold-conv-bias-batchnorm", ir::OpKind::kBatchNormalization, true},
  };
  REQUIRE(rules.size() == std::size(cases));
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.rule) {
      const ir::Graph before = conv_then(c.op, c.bias);
      const ir::Graph after = rewritten(before, rules, c.rule);
      CHECK(after.output_names() == before.output_names());
      CHECK(runtime::check_equivalent(before, after).passed());
    }
  }
}

TEST_CASE("a wrong fusion rule fails the numeric check", "[rules]") {
  // Fusing a Sigmoid as if it were a ReLU is the kind of slip the check must catch.
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-fusion
  source
    y = Conv(x, w, b) [activation = "none"]
    z = Sigmoid(y)
  target
    z2 = Conv(x, w, b) [@y, activation = "relu"]
  map z -> z2
end
)",
                                                            "wrong.rules");
  const ir::Graph before = conv_then(ir::OpKind::kSigmoid, true);
  const ir::Graph after = rewritten(before, wrong, "wrong-fusion");
  CHECK_FALSE(runtime::check_equivalent(before, after).passed());
}

}  // namespace graphsub
