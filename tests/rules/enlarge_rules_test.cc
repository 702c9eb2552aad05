// Every rule of rules/enlarge.rules, applied to a graph it matches, computes what the graph did.
#include <catch2/catch.hpp>

#include <optional>
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

std::vector<rules::Rule> enlarge_rules() {
  return rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/enlarge.rules");
}

/// The parameters of one convolution of x [1,3,9,8] to 4 channels.
struct ConvParams {
  std::vector<int64_t> kernel;
  bool bias = false;
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {0, 0, 0, 0};
  std::string activation = "none";
  int64_t group = 1;
  std::vector<int64_t> dilations = {1, 1};
};

/// One canonical convolution with the given parameters, its output the graph output "y".
ir::Graph one_conv(const ConvParams& params) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 4, 9, 8}));
  const ir::Attributes attrs = testing::conv_attributes(params.kernel, params.strides, params.pads, params.dilations,
                                                       params.group, params.activation);
  const int64_t channels = 4 / params.group;
  std::vector<ir::ValueId> inputs = {
      x, graph.add_weight("w", ir::share(testing::random_tensor(
                                   {4, channels, params.kernel[0], params.kernel[1]}, 5)))};
  if (params.bias) inputs.push_back(graph.add_weight("b", ir::share(testing::random_tensor({4}, 6))));
  const ir::NodeId conv = add_inferred(graph, ir::OpKind::kConv, inputs, attrs);
  graph.set_name(graph.node(conv).outputs[0], "y");
  graph.set_outputs({graph.node(conv).outputs[0]});
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

/// The kernel_shape of the graph's only Conv.
std::vector<int64_t> conv_kernel(const ir::Graph& graph) {
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op == ir::OpKind::kConv) return graph.node(id).attrs.get_ints("kernel_shape", {});
  }
  return {};
}

}  // namespace

TEST_CASE("enlarge rules keep what the graph computes", "[rules]") {
  const std::vector<rules::Rule> rules = enlarge_rules();
  struct Case {
    const char* rule;
    std::vector<int64_t> kernel;
    bool bias;
  };
  const Case cases[] = {
      {"enlarge-conv-1x1-to-3x3", {1, 1}, false},      {"enlarge-conv-bias-1x1-to-3x3", {1, 1}, true},
      {"enlarge-conv-1x3-to-3x3", {1, 3}, false},      {"enlarge-conv-bias-1x3-to-3x3", {1, 3}, true},
      {"enlarge-conv-3x1-to-3x3", {3, 1}, false},      {"enlarge-conv-bias-3x1-to-3x3", {3, 1}, true},
  };
  REQUIRE(rules.size() == std::size(cases));
  struct Variant {
    const char* name;
    std::vector<int64_t> strides;
    std::vector<int64_t> pads;
    std::string activation;
    int64_t group;
  };
  const Variant variants[] = {
      {"unit strides, no pads", {1, 1}, {0, 0, 0, 0}, "none", 1},
      {"strides 2, uneven pads, relu", {2, 2}, {1, 0, 0, 2}, "relu", 1},
      {"strides 1x2, pads 1, grouped, tanh", {1, 2}, {1, 1, 1, 1}, "tanh", 2},
  };
  for (const Case& c : cases) {
    for (const Variant& v : variants) {
      DYNAMIC_SECTION(c.rule << ", " << v.name) {
        const ir::Graph before = one_conv({c.kernel, c.bias, v.strides, v.pads, v.activation, v.group});
        const ir::Graph after = rewritten(before, rules, c.rule);
        CHECK(conv_kernel(after) == std::vector<int64_t>{3, 3});
        CHECK(after.output_names() == before.output_names());
        CHECK(after.value(after.outputs()[0]).type == before.value(before.outputs()[0]).type);
        CHECK(runtime::check_equivalent(before, after).passed());
      }
    }
  }
}

TEST_CASE("enlarge rules leave dilated and other kernels alone", "[rules]") {
  const std::vector<rules::Rule> rules = enlarge_rules();
  const ir::Graph dilated = one_conv({{1, 3}, false, {1, 1}, {0, 0, 0, 0}, "none", 1, {2, 2}});
  const ir::Graph square = one_conv({{3, 3}, true});
  for (const rules::Rule& rule : rules) {
    INFO(rule.name);
    CHECK(rewrite::Matcher::find(dilated, rule).empty());
    CHECK(rewrite::Matcher::find(square, rule).empty());
  }
}

TEST_CASE("an enlargement off the kernel's centre fails the numeric check", "[rules]") {
  // Pads grown by 2 before and 0 after on the height keep every shape but move the window.
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-enlarge
  source
    y = Conv(x, w) [kernel_shape = [1, 1], pads = ?p, dilations = ?d]
  where ?d == [1, 1]
  target
    w3 = Enlarge(w) [kernel_shape = [3, 3]]
    y2 = Conv(x, w3) [@y, kernel_shape = [3, 3], pads = ?p + [2, 1, 0, 1]]
  map y -> y2
end
)",
                                                            "wrong.rules");
  const ir::Graph before = one_conv({{1, 1}});
  const ir::Graph after = rewritten(before, wrong, "wrong-enlarge");
  CHECK(after.value(after.outputs()[0]).type == before.value(before.outputs()[0]).type);
  CHECK_FALSE(runtime::check_equivalent(before, after).passed());
}

}  // namespace graphsub
