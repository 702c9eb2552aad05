// Every rule of rules/generated.rules (found by generate-rules, proved by verify-rules; an opt-in
// file, not in the default set), applied to graphs it matches over several pooling windows,
// computes what the graph did; where the rule's literals say it does not hold, it does not match;
// and its proof line is current.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "rules/shipped_rules.h"
#include "runtime/equivalence.h"
#include "test_util.h"
#include "verify/proof_records.h"

namespace graphsub {
namespace {

using testing::add_inferred;
using testing::float_type;

std::vector<rules::Rule> generated_rules() {
  return rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/generated.rules");
}

const rules::Rule& rule_named(const std::vector<rules::Rule>& rules, const std::string& name) {
  for (const rules::Rule& rule : rules) {
    if (rule.name == name) return rule;
  }
  throw std::runtime_error("no rule " + name);
}

/// An AveragePool window.
struct Window {
  const char* name;
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> pads;
  int64_t ceil_mode;
  int64_t count_include_pad;
};

const Window kWindows[] = {
    {"3x3 stride 1 pads 1, counting pads", {3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 1},
    {"3x3 stride 1 pads 1, not counting pads (NasNet-A)", {3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 0},
    {"3x2 stride 2 uneven pads, ceil mode", {3, 2}, {2, 2}, {1, 0, 0, 1}, 1, 0},
    {"2x2 stride 2, no pads", {2, 2}, {2, 2}, {0, 0, 0, 0}, 0, 1},
};

ir::ValueId pool(ir::Graph& graph, ir::ValueId x, const Window& window) {
  const ir::Attributes attrs =
      testing::pool_attributes(window.kernel, window.strides, window.pads, window.ceil_mode, window.count_include_pad);
  return graph.node(add_inferred(graph, ir::OpKind::kAveragePool, {x}, attrs)).outputs[0];
}

ir::Graph with_output(ir::Graph graph, ir::ValueId y) {
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return graph;
}

/// pool(x) + pool(y), or pool(x) + pool(x) when `shared`; x and y [1, 3, 7, 8].
ir::Graph pooled_sum(const Window& window, bool shared) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 7, 8}));
  const ir::ValueId y = shared ? x : graph.add_input("y", float_type({1, 3, 7, 8}));
  const ir::ValueId sum = graph.node(add_inferred(graph, ir::OpKind::kAdd, {pool(graph, x, window), pool(graph, y, window)})).outputs[0];
  return with_output(std::move(graph), sum);
}

/// conv(pool(x), w): x [1, 3, 7, 8], w a [4, 3, k, k] weight (a bias when `bias`).
ir::Graph conv_of_pool(const Window& window, int64_t kernel, std::vector<int64_t> strides, bool bias) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 7, 8}));
  std::vector<ir::ValueId> inputs = {
      pool(graph, x, window), graph.add_weight("w", ir::share(testing::random_tensor({4, 3, kernel, kernel}, 5)))};
  if (bias) inputs.push_back(graph.add_weight("b", ir::share(testing::random_tensor({4}, 6))));
  const int64_t pad = kernel / 2;
  const ir::Attributes attrs =
      testing::conv_attributes({kernel, kernel}, strides, {pad, pad, pad, pad}, {1, 1}, 1, "none");
  return with_output(std::move(graph), graph.node(add_inferred(graph, ir::OpKind::kConv, inputs, attrs)).outputs[0]);
}

/// Applies `rule` at its only match and checks the result numerically against `before`.
void check_rewrite(const ir::Graph& before, const rules::Rule& rule) {
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(before, rule);
  REQUIRE(matches.size() == 1);
  std::string why;
  const std::optional<ir::Graph> after = rewrite::apply(before, matches[0], &why);
  INFO(why);
  REQUIRE(after);
  CHECK(after->output_names() == before.output_names());
  CHECK(after->value(after->outputs()[0]).type == before.value(before.outputs()[0]).type);
  CHECK(runtime::check_equivalent(before, *after).passed());
}

}  // namespace

TEST_CASE("pooling is linear: a sum of two pooled inputs is the pooled sum, for every window", "[rules]") {
  const std::vector<rules::Rule> rules = generated_rules();
  const rules::Rule& rule = rule_named(rules, "sum-of-average-pools");
  for (const Window& window : kWindows) {
    DYNAMIC_SECTION(window.name << ", two inputs") { check_rewrite(pooled_sum(window, false), rule); }
    DYNAMIC_SECTION(window.name << ", one input pooled twice") { check_rewrite(pooled_sum(window, true), rule); }
  }
}

TEST_CASE("a 1x1 convolution after average pooling moves before it, at stride 1 and without bias only",
          "[rules]") {
  const std::vector<rules::Rule> rules = generated_rules();
  const rules::Rule& rule = rule_named(rules, "pointwise-conv-before-average-pool");
  for (const Window& window : kWindows) {
    DYNAMIC_SECTION(window.name) { check_rewrite(conv_of_pool(window, 1, {1, 1}, false), rule); }
  }
  // A strided 1x1 convolution samples the pooled image, which pooling after it would not; a bias
  // is averaged with the pads that count; a 3x3 kernel mixes neighbours pooling already mixed.
  const Window& window = kWindows[0];
  CHECK(rewrite::Matcher::find(conv_of_pool(window, 1, {2, 2}, false), rule).empty());
  CHECK(rewrite::Matcher::find(conv_of_pool(window, 1, {1, 1}, true), rule).empty());
  CHECK(rewrite::Matcher::find(conv_of_pool(window, 3, {1, 1}, false), rule).empty());
}

TEST_CASE("the generated rule file records proofs under the current axioms", "[rules]") {
  // Edit rules/axioms.rules, and this fails until `graphsub verify-rules rules/generated.rules
  // --write` has recorded the proofs again.
  const std::string hash = verify::axioms_hash(rules::shipped_axiom_file().text);
  for (const rules::Rule& rule : generated_rules()) {
    INFO(rule.name);
    CHECK(rule.origin == rules::Origin::kGenerated);
    CHECK(rule.proof == rules::ProofStatus::kProved);
    CHECK(rule.proof_axioms == hash);
  }
}

}  // namespace graphsub
