// The "merges of many branches" of rules/merge.rules (a convolution joining an earlier merge of its
// input, two merges joined, sums of convolutions of different inputs, and chains of convolutions
// fused through their residual input Z), applied at each of their matches, compute what the graph
// did; each refuses the graphs where the merge would change the result; a ResNeXt-like sum of four
// branches merges step by step into one convolution of one concatenation; the rules survive a
// print/parse round trip.
#include <catch2/catch.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rewrite/matcher.h"
#include "rewrite/rewrite_testing.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "runtime/equivalence.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::add_canonical;
using testing::float_type;
using testing::out;

const char* const kBranchRules[] = {
    "extend-merged-convs",          "extend-merged-convs-bias",   "merge-sum-of-convs-bias",
    "extend-sum-of-convs-bias",     "merge-merged-convs-bias",    "merge-residual-convs-bias",
    "extend-residual-convs-bias",
};

const std::vector<rules::Rule>& merge_rules() {
  static const std::vector<rules::Rule> rules = rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/merge.rules");
  return rules;
}

const rules::Rule& rule_named(const std::string& name) {
  for (const rules::Rule& rule : merge_rules()) {
    if (rule.name == name) return rule;
  }
  throw std::runtime_error("no rule " + name);
}

/// One convolution's parameters (the input's channels and the filter count are given apart).
struct ConvParams {
  std::vector<int64_t> kernel = {3, 3};
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> pads = {1, 1, 1, 1};
  std::string activation = "none";
  bool bias = true;
  std::vector<int64_t> dilations = {1, 1};
  int64_t group = 1;
};

ConvParams with_strides(ConvParams params, std::vector<int64_t> strides) {
  params.strides = std::move(strides);
  return params;
}

ConvParams with_activation(ConvParams params, std::string activation) {
  params.activation = std::move(activation);
  return params;
}

ConvParams without_bias(ConvParams params) {
  params.bias = false;
  return params;
}

/// The parameter sets the positive cases run through: 3x3 same-size, 1x1 strided, 3x1 with
/// uneven strides, pads and dilations.
std::vector<ConvParams> parameter_cases() {
  return {
      ConvParams{},
      ConvParams{{1, 1}, {2, 2}, {0, 0, 0, 0}},
      ConvParams{{3, 1}, {2, 1}, {1, 0, 2, 0}, "none", true, {2, 1}},
  };
}

std::string describe(const ConvParams& params) {
  return std::to_string(params.kernel[0]) + "x" + std::to_string(params.kernel[1]) + " strides " +
         std::to_string(params.strides[0]) + "x" + std::to_string(params.strides[1]) + ", " + params.activation +
         (params.bias ? ", bias" : ", no bias");
}

int64_t channels_of(const ir::Graph& graph, ir::ValueId x) {
  return graph.value(x).type.shape.dims.at(1).value;
}

/// A canonical convolution of x with `filters` filters, seeded weights and bias, and the residual
/// input z when given (Y = act(conv(x, w) + b + z)).
ir::ValueId add_conv(ir::Graph& graph, ir::ValueId x, const ConvParams& params, int64_t filters, uint32_t seed,
                     ir::ValueId z = ir::kNoValue) {
  const ir::Attributes attrs = testing::conv_attributes(params.kernel, params.strides, params.pads, params.dilations,
                                                       params.group, params.activation);
  const std::vector<int64_t> dims = {filters, channels_of(graph, x) / params.group, params.kernel[0],
                                     params.kernel[1]};
  std::vector<ir::ValueId> inputs = {x, graph.add_weight({}, ir::share(testing::random_tensor(dims, seed)))};
  if (params.bias) {
    inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({filters}, seed + 1000))));
  }
  if (z != ir::kNoValue) inputs.push_back(z);
  return out(graph, add_canonical(graph, ir::OpKind::kConv, inputs, attrs));
}

std::vector<ir::ValueId> add_split(ir::Graph& graph, ir::ValueId y, const std::vector<int64_t>& sizes,
                                   int64_t axis = 1) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  attrs.set("split", sizes);
  return graph.node(add_canonical(graph, ir::OpKind::kSplit, {y}, attrs, static_cast<int>(sizes.size()))).outputs;
}

ir::ValueId add_concat(ir::Graph& graph, const std::vector<ir::ValueId>& parts, int64_t axis = 1) {
  ir::Attributes attrs;
  attrs.set("axis", axis);
  return out(graph, add_canonical(graph, ir::OpKind::kConcat, parts, attrs));
}

ir::ValueId add_add(ir::Graph& graph, ir::ValueId a, ir::ValueId b) {
  return out(graph, add_canonical(graph, ir::OpKind::kAdd, {a, b}));
}

/// Names the outputs "o1", "o2", ... and makes them the graph's outputs.
void set_outputs(ir::Graph& graph, const std::vector<ir::ValueId>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) graph.set_name(outputs[i], "o" + std::to_string(i + 1));
  graph.set_outputs(outputs);
}

/// Applies `rule` at every match (each once, to `graph`), checks each result against `graph` and,
/// when given, its live node count; returns the results.
std::vector<ir::Graph> check_every_match(const ir::Graph& graph, const rules::Rule& rule,
                                         std::size_t expected_matches,
                                         std::optional<std::size_t> nodes_after = std::nullopt) {
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule);
  REQUIRE(matches.size() == expected_matches);
  std::vector<ir::Graph> results;
  for (const rewrite::Match& match : matches) {
    std::string why;
    std::optional<ir::Graph> after = rewrite::apply(graph, match, &why);
    INFO(rule.name << ": " << why);
    REQUIRE(after);
    CHECK(after->output_names() == graph.output_names());
    if (nodes_after) CHECK(after->node_count() == *nodes_after);
    CHECK(runtime::check_equivalent(graph, *after).passed());
    results.push_back(std::move(*after));
  }
  return results;
}

bool refuses(const ir::Graph& graph, const std::string& rule) {
  return rewrite::Matcher::find(graph, rule_named(rule)).empty();
}

// --- Graphs -----------------------------------------------------------------------------------

/// x [1,3,9,9]; a convolution `merged` (6 filters) split on `split_axis` ([2,4] on channels, [4,5]
/// on rows when the output has 9 rows) and convolutions `others` (3 filters each) of the same
/// input x. The parts and the other convolutions are the outputs, and the merged convolution's own
/// output too when `merged_is_output`.
ir::Graph split_conv_and_convs(const ConvParams& merged, const std::vector<ConvParams>& others,
                               int64_t split_axis = 1, bool merged_is_output = false) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 9, 9}));
  const ir::ValueId y = add_conv(graph, x, merged, 6, 11);
  std::vector<ir::ValueId> outputs =
      add_split(graph, y, split_axis == 1 ? std::vector<int64_t>{2, 4} : std::vector<int64_t>{4, 5}, split_axis);
  uint32_t seed = 21;
  for (const ConvParams& other : others) outputs.push_back(add_conv(graph, x, other, 3, seed++));
  if (merged_is_output) outputs.push_back(y);
  set_outputs(graph, outputs);
  return graph;
}

/// x [1,3,9,9]; two convolutions of x (5 and 4 filters), each split on channels ([2,3] and
/// [1,3], the second on `second_axis`); the four parts are the outputs.
ir::Graph two_split_convs(const ConvParams& first, const ConvParams& second, int64_t second_axis = 1) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 9, 9}));
  std::vector<ir::ValueId> outputs = add_split(graph, add_conv(graph, x, first, 5, 11), {2, 3});
  const ir::ValueId c = add_conv(graph, x, second, 4, 31);
  const std::vector<int64_t> sizes =
      second_axis == 1 ? std::vector<int64_t>{1, 3}
                       : std::vector<int64_t>{1, graph.value(c).type.shape.dims.at(2).value - 1};
  for (ir::ValueId part : add_split(graph, c, sizes, second_axis)) outputs.push_back(part);
  set_outputs(graph, outputs);
  return graph;
}

/// conv(a, w1, b1) + conv(c, w2, b2), 5 filters each unless given, a [1,3,ha,ha] and c [1,4,hc,hc];
/// the sum is the output, and the first convolution's output too when `first_is_output`.
ir::Graph sum_of_convs(const ConvParams& first, const ConvParams& second, int64_t ha = 9, int64_t hc = 9,
                       int64_t first_filters = 5, int64_t second_filters = 5, bool first_is_output = false) {
  ir::Graph graph;
  const ir::ValueId a = graph.add_input("a", float_type({1, 3, ha, ha}));
  const ir::ValueId c = graph.add_input("c", float_type({1, 4, hc, hc}));
  const ir::ValueId y1 = add_conv(graph, a, first, first_filters, 11);
  const ir::ValueId y2 = add_conv(graph, c, second, second_filters, 21);
  std::vector<ir::ValueId> outputs = {add_add(graph, y1, y2)};
  if (first_is_output) outputs.push_back(y1);
  set_outputs(graph, outputs);
  return graph;
}

/// conv(concat(as...), w1, b1) + conv(c, w2, b2), 5 filters each: the parts of the concatenation
/// (on `axis`) have 2, 3 (and 1, when three) channels and [hx,hx] pixels, c [1,4,hc,hc]; the sum is
/// the output, and the concatenation too when `concat_is_output`.
ir::Graph sum_of_conv_of_concat_and_conv(const ConvParams& first, const ConvParams& second, int parts = 2,
                                         int64_t hx = 9, int64_t hc = 9, int64_t axis = 1,
                                         bool concat_is_output = false) {
  ir::Graph graph;
  std::vector<ir::ValueId> as;
  const int64_t channels[] = {2, 3, 1};
  for (int i = 0; i < parts; ++i) {
    const int64_t ch = axis == 1 ? channels[i] : 3;
    as.push_back(graph.add_input("a" + std::to_string(i + 1), float_type({1, ch, hx, hx})));
  }
  const ir::ValueId x = add_concat(graph, as, axis);
  const ir::ValueId c = graph.add_input("c", float_type({1, 4, hc, axis == 1 ? hc : hx}));
  const ir::ValueId y1 = add_conv(graph, x, first, 5, 11);
  const ir::ValueId y2 = add_conv(graph, c, second, 5, 21);
  std::vector<ir::ValueId> outputs = {add_add(graph, y1, y2)};
  if (concat_is_output) outputs.push_back(x);
  set_outputs(graph, outputs);
  return graph;
}

/// A chain of convolutions fused through their residual input: conv(a, .., conv(c, .., z)) where
/// `inputs` lists the convolutions' inputs' channels from the outermost in, each [1,ch,h,h] (the
/// innermost's size `h_inner`), `params` their parameters from the outermost in (5 filters each),
/// z a graph input of the output's type. The outermost output is the output, and the second's too
/// when `inner_is_output`.
ir::Graph residual_chain(const std::vector<ConvParams>& params, const std::vector<int64_t>& channels, int64_t h = 9,
                         int64_t h_inner = 9, bool inner_is_output = false) {
  ir::Graph graph;
  std::vector<ir::ValueId> xs;
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const int64_t size = i + 1 == channels.size() ? h_inner : h;
    xs.push_back(graph.add_input("x" + std::to_string(i + 1), float_type({1, channels[i], size, size})));
  }
  // z has the innermost convolution's output type: the output size of its window on h_inner.
  const ConvParams& inner = params.back();
  const int64_t span = inner.dilations[0] * (inner.kernel[0] - 1) + 1;
  const int64_t rows = (h_inner + inner.pads[0] + inner.pads[2] - span) / inner.strides[0] + 1;
  const int64_t span1 = inner.dilations[1] * (inner.kernel[1] - 1) + 1;
  const int64_t cols = (h_inner + inner.pads[1] + inner.pads[3] - span1) / inner.strides[1] + 1;
  ir::ValueId y = graph.add_input("z", float_type({1, 5, rows, cols}));
  std::vector<ir::ValueId> ys;
  for (std::size_t i = params.size(); i-- > 0;) {
    y = add_conv(graph, xs[i], params[i], 5, static_cast<uint32_t>(40 + 10 * i), y);
    ys.insert(ys.begin(), y);
  }
  std::vector<ir::ValueId> outputs = {ys[0]};
  if (inner_is_output) outputs.push_back(ys[1]);
  set_outputs(graph, outputs);
  return graph;
}

/// conv(concat(cs...), W, B, z) inside conv(a, w1, b1, ·): cs [1,2,h,h] and [1,3,h,h] (on `axis`),
/// a [1,4,ha,ha], z the inner output's type; the outer output is the output, and the concatenation
/// too when `concat_is_output`.
ir::Graph residual_of_concat(const ConvParams& outer, const ConvParams& inner, int64_t h = 9, int64_t ha = 9,
                             bool concat_is_output = false) {
  ir::Graph graph;
  const ir::ValueId c1 = graph.add_input("c1", float_type({1, 2, h, h}));
  const ir::ValueId c2 = graph.add_input("c2", float_type({1, 3, h, h}));
  const ir::ValueId a = graph.add_input("a", float_type({1, 4, ha, ha}));
  const ir::ValueId x2 = add_concat(graph, {c1, c2});
  // The inner output's type, from a probe convolution without z.
  ir::Graph probe = graph;
  const ir::TensorType inner_type = probe.value(add_conv(probe, x2, inner, 5, 0)).type;
  const ir::ValueId z = graph.add_input("z", inner_type);
  const ir::ValueId y2 = add_conv(graph, x2, inner, 5, 51, z);
  std::vector<ir::ValueId> outputs = {add_conv(graph, a, outer, 5, 61, y2)};
  if (concat_is_output) outputs.push_back(x2);
  set_outputs(graph, outputs);
  return graph;
}

}  // namespace

TEST_CASE("the branch merges parse from merge.rules and survive a print/parse round trip", "[rules]") {
  std::vector<rules::Rule> branch_rules;
  for (const char* name : kBranchRules) {
    INFO(name);
    REQUIRE_NOTHROW(branch_rules.push_back(rule_named(name)));
  }
  REQUIRE(branch_rules.size() == 7);
  const std::vector<rules::Rule> again = rules::parse_rules(rules::print_rules(branch_rules), "again.rules");
  REQUIRE(again.size() == branch_rules.size());
  for (std::size_t i = 0; i < again.size(); ++i) {
    INFO(branch_rules[i].name);
    CHECK(again[i] == branch_rules[i]);
  }
  CHECK(rules::parse_rules(rules::print_rules(merge_rules()), "again.rules") == merge_rules());
}

TEST_CASE("extend-merged-convs adds a convolution to a split merged convolution of its input", "[rules]") {
  const rules::Rule& rule = rule_named("extend-merged-convs");
  for (ConvParams params : parameter_cases()) {
    params.bias = false;
    for (const std::string activation : {"none", "relu"}) {
      params.activation = activation;
      DYNAMIC_SECTION(describe(params)) {
        // Concat(w1, w2), the merged Conv and its Split.
        check_every_match(split_conv_and_convs(params, {params}), rule, 1, 3);
        // Two more convolutions: either joins; the other stays.
        check_every_match(split_conv_and_convs(params, {params, params}), rule, 2, 4);
      }
    }
  }
}

TEST_CASE("extend-merged-convs refuses what the merged convolution would not compute", "[rules]") {
  const ConvParams plain = without_bias(ConvParams{});
  CHECK(refuses(split_conv_and_convs(plain, {with_strides(plain, {2, 2})}), "extend-merged-convs"));
  CHECK(refuses(split_conv_and_convs(plain, {with_activation(plain, "relu")}), "extend-merged-convs"));
  ConvParams one_by_one = plain;
  one_by_one.kernel = {1, 1};
  one_by_one.pads = {0, 0, 0, 0};
  CHECK(refuses(split_conv_and_convs(plain, {one_by_one}), "extend-merged-convs"));
  ConvParams dilated = plain;
  dilated.dilations = {2, 2};
  dilated.pads = {2, 2, 2, 2};
  CHECK(refuses(split_conv_and_convs(plain, {dilated}), "extend-merged-convs"));
  ConvParams grouped = plain;  // x has 3 channels: group 3
  grouped.group = 3;
  CHECK(refuses(split_conv_and_convs(grouped, {grouped}), "extend-merged-convs"));
  // Bias on one side only (the bias variant needs it on both).
  CHECK(refuses(split_conv_and_convs(plain, {ConvParams{}}), "extend-merged-convs"));
  CHECK(refuses(split_conv_and_convs(ConvParams{}, {plain}), "extend-merged-convs"));
  CHECK(refuses(split_conv_and_convs(plain, {ConvParams{}}), "extend-merged-convs-bias"));
  // A split of rows, not channels; the merged output also used whole.
  CHECK(refuses(split_conv_and_convs(plain, {plain}, 2), "extend-merged-convs"));
  CHECK(refuses(split_conv_and_convs(plain, {plain}, 1, true), "extend-merged-convs"));
}

TEST_CASE("extend-merged-convs-bias adds a convolution with bias to a split merged one", "[rules]") {
  const rules::Rule& rule = rule_named("extend-merged-convs-bias");
  for (ConvParams params : parameter_cases()) {
    for (const std::string activation : {"none", "tanh"}) {
      params.activation = activation;
      DYNAMIC_SECTION(describe(params)) {
        // Concat(w1, w2), Concat(b1, b2), the merged Conv and its Split.
        check_every_match(split_conv_and_convs(params, {params}), rule, 1, 4);
        check_every_match(split_conv_and_convs(params, {params, params}), rule, 2, 5);
      }
    }
  }
  SECTION("the lone convolution may itself be split") {
    // It then joins with its split kept after the merged one's.
    check_every_match(two_split_convs(ConvParams{}, ConvParams{}), rule, 2);
  }
}

TEST_CASE("extend-merged-convs-bias refuses what the merged convolution would not compute", "[rules]") {
  const ConvParams params;
  const std::string rule = "extend-merged-convs-bias";
  CHECK(refuses(split_conv_and_convs(params, {with_strides(params, {1, 2})}), rule));
  CHECK(refuses(split_conv_and_convs(params, {with_activation(params, "sigmoid")}), rule));
  CHECK(refuses(split_conv_and_convs(with_activation(params, "relu"), {params}), rule));
  ConvParams padded = params;
  padded.pads = {2, 2, 2, 2};
  CHECK(refuses(split_conv_and_convs(params, {padded}), rule));
  CHECK(refuses(split_conv_and_convs(params, {without_bias(params)}), rule));
  CHECK(refuses(split_conv_and_convs(params, {params}, 2), rule));
  CHECK(refuses(split_conv_and_convs(params, {params}, 1, true), rule));
}

TEST_CASE("merge-merged-convs-bias joins two split merged convolutions of one input", "[rules]") {
  const rules::Rule& rule = rule_named("merge-merged-convs-bias");
  for (ConvParams params : parameter_cases()) {
    for (const std::string activation : {"none", "relu"}) {
      params.activation = activation;
      DYNAMIC_SECTION(describe(params)) {
        // Either split first: Concat(w1, w2), Concat(b1, b2), the merged Conv and one Split.
        check_every_match(two_split_convs(params, params), rule, 2, 4);
      }
    }
  }
}

TEST_CASE("merge-merged-convs-bias refuses merges with other parameters", "[rules]") {
  const ConvParams params;
  const std::string rule = "merge-merged-convs-bias";
  CHECK(refuses(two_split_convs(params, with_strides(params, {2, 2})), rule));
  CHECK(refuses(two_split_convs(params, with_activation(params, "relu")), rule));
  CHECK(refuses(two_split_convs(params, without_bias(params)), rule));
  CHECK(refuses(two_split_convs(without_bias(params), without_bias(params)), rule));
  // The second convolution split on rows: its parts are not filter blocks.
  CHECK(refuses(two_split_convs(params, params, 2), rule));
}

TEST_CASE("merge-sum-of-convs-bias turns a sum of two convolutions into one of a concatenation", "[rules]") {
  const rules::Rule& rule = rule_named("merge-sum-of-convs-bias");
  for (const ConvParams& params : parameter_cases()) {
    DYNAMIC_SECTION(describe(params)) {
      // Concat(a, c), Concat(w1, w2) on input channels, Add(b1, b2) and the Conv.
      check_every_match(sum_of_convs(params, params), rule, 1, 4);
    }
  }
  SECTION("inputs of different sizes where the outputs agree are fine only when equal") {
    // 9x9 and 10x10 at stride 2, pads 1: both outputs 5x5, but the windows differ.
    const ConvParams strided = with_strides(ConvParams{}, {2, 2});
    CHECK(refuses(sum_of_convs(strided, strided, 9, 10), "merge-sum-of-convs-bias"));
    check_every_match(sum_of_convs(strided, strided, 10, 10), rule, 1, 4);
  }
}

TEST_CASE("merge-sum-of-convs-bias refuses sums it would change", "[rules]") {
  const ConvParams params;
  const std::string rule = "merge-sum-of-convs-bias";
  // An activation runs before the sum: the merged convolution could not apply it per branch.
  CHECK(refuses(sum_of_convs(with_activation(params, "relu"), params), rule));
  CHECK(refuses(sum_of_convs(params, with_activation(params, "relu")), rule));
  CHECK(refuses(sum_of_convs(with_activation(params, "relu"), with_activation(params, "relu")), rule));
  // Other strides (inputs sized so that the outputs agree), other kernels (likewise).
  CHECK(refuses(sum_of_convs(params, with_strides(params, {2, 2}), 9, 17), rule));
  ConvParams one_by_one = params;
  one_by_one.kernel = {1, 1};
  one_by_one.pads = {0, 0, 0, 0};
  CHECK(refuses(sum_of_convs(params, one_by_one), rule));
  // Inputs of different spatial sizes, equal outputs.
  const ConvParams strided = with_strides(params, {2, 2});
  CHECK(refuses(sum_of_convs(strided, strided, 9, 10), rule));
  // Without bias on one side; grouped; an Add that broadcasts one filter over five.
  CHECK(refuses(sum_of_convs(params, without_bias(params)), rule));
  ConvParams grouped = params;  // a has 3 channels, c 4: group 3 on a, group 2 on c, 6 filters each
  grouped.group = 3;
  ConvParams grouped2 = params;
  grouped2.group = 2;
  CHECK(refuses(sum_of_convs(grouped, grouped2, 9, 9, 6, 6), rule));
  CHECK(refuses(sum_of_convs(params, grouped2, 9, 9, 6, 6), rule));
  CHECK(refuses(sum_of_convs(params, params, 9, 9, 5, 1), rule));
  // The first convolution's output also used on its own.
  CHECK(refuses(sum_of_convs(params, params, 9, 9, 5, 5, true), rule));
}

TEST_CASE("extend-sum-of-convs-bias adds a convolution to a convolution of a concatenation", "[rules]") {
  const rules::Rule& rule = rule_named("extend-sum-of-convs-bias");
  for (const ConvParams& params : parameter_cases()) {
    for (int parts : {2, 3}) {
      DYNAMIC_SECTION(describe(params) << ", " << parts << " parts") {
        // Concat(as..., c), Concat(w1, w2) on input channels, Add(b1, b2) and the Conv.
        check_every_match(sum_of_conv_of_concat_and_conv(params, params, parts), rule, 1, 4);
      }
    }
  }
}

TEST_CASE("extend-sum-of-convs-bias refuses sums it would change", "[rules]") {
  const ConvParams params;
  const std::string rule = "extend-sum-of-convs-bias";
  CHECK(refuses(sum_of_conv_of_concat_and_conv(with_activation(params, "relu"), params), rule));
  CHECK(refuses(sum_of_conv_of_concat_and_conv(params, with_activation(params, "tanh")), rule));
  CHECK(refuses(sum_of_conv_of_concat_and_conv(params, with_strides(params, {2, 2}), 2, 9, 17), rule));
  const ConvParams strided = with_strides(params, {2, 2});
  CHECK(refuses(sum_of_conv_of_concat_and_conv(strided, strided, 2, 9, 10), rule));
  CHECK(refuses(sum_of_conv_of_concat_and_conv(params, without_bias(params)), rule));
  // A concatenation of rows is not one of channels; a concatenation used elsewhere stays.
  CHECK(refuses(sum_of_conv_of_concat_and_conv(params, params, 2, 9, 18, 2), rule));
  CHECK(refuses(sum_of_conv_of_concat_and_conv(params, params, 2, 9, 9, 1, true), rule));
}

TEST_CASE("merge-residual-convs-bias joins a convolution and the one in its residual input", "[rules]") {
  const rules::Rule& rule = rule_named("merge-residual-convs-bias");
  for (const ConvParams& params : parameter_cases()) {
    for (const std::string activation : {"none", "relu", "sigmoid"}) {
      DYNAMIC_SECTION(describe(params) << ", outer " << activation) {
        const ConvParams outer = with_activation(params, activation);
        // Concat(c, a), Concat(w2, w1) on input channels, Add(b2, b1) and the Conv.
        check_every_match(residual_chain({outer, params}, {3, 4}), rule, 1, 4);
        // A chain of three: the outer pair or the inner pair.
        check_every_match(residual_chain({outer, params, params}, {3, 4, 2}), rule, 2, 5);
      }
    }
  }
}

TEST_CASE("merge-residual-convs-bias refuses chains it would change", "[rules]") {
  const ConvParams params;
  const std::string rule = "merge-residual-convs-bias";
  // The inner convolution's activation runs before the outer sum.
  CHECK(refuses(residual_chain({params, with_activation(params, "relu")}, {3, 4}), rule));
  CHECK(refuses(residual_chain({with_activation(params, "relu"), with_activation(params, "relu")}, {3, 4}), rule));
  // Other strides or kernels, inputs of other sizes giving the same output.
  CHECK(refuses(residual_chain({params, with_strides(params, {2, 2})}, {3, 4}, 9, 17), rule));
  ConvParams one_by_one = params;
  one_by_one.kernel = {1, 1};
  one_by_one.pads = {0, 0, 0, 0};
  CHECK(refuses(residual_chain({params, one_by_one}, {3, 4}), rule));
  const ConvParams strided = with_strides(params, {2, 2});
  CHECK(refuses(residual_chain({strided, strided}, {3, 4}, 9, 10), rule));
  // The inner sum also used on its own.
  CHECK(refuses(residual_chain({params, params}, {3, 4}, 9, 9, true), rule));
}

TEST_CASE("extend-residual-convs-bias grows the concatenation an inner residual convolution reads", "[rules]") {
  const rules::Rule& rule = rule_named("extend-residual-convs-bias");
  for (const ConvParams& params : parameter_cases()) {
    for (const std::string activation : {"none", "relu"}) {
      DYNAMIC_SECTION(describe(params) << ", outer " << activation) {
        // Concat(cs..., a), Concat(W, w1) on input channels, Add(B, b1) and the Conv.
        check_every_match(residual_of_concat(with_activation(params, activation), params), rule, 1, 4);
      }
    }
  }
}

TEST_CASE("extend-residual-convs-bias refuses chains it would change", "[rules]") {
  const ConvParams params;
  const std::string rule = "extend-residual-convs-bias";
  CHECK(refuses(residual_of_concat(params, with_activation(params, "relu")), rule));
  CHECK(refuses(residual_of_concat(with_strides(params, {2, 2}), params, 9, 17), rule));
  const ConvParams strided = with_strides(params, {2, 2});
  CHECK(refuses(residual_of_concat(strided, strided, 9, 10), rule));
  CHECK(refuses(residual_of_concat(params, params, 9, 9, true), rule));
}

TEST_CASE("wrong variants of the branch merges fail the numeric check", "[rules]") {
  // The check these tests lean on tells a wrong merge apart: the inputs concatenated in the other
  // order than the kernels (equal channel counts keep every shape), and one bias dropped.
  const rules::Rule swapped = testing::parse_rule(R"(
rule wrong-residual-order
  source
    y2 = Conv(c, w2, b2, z) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = "none"]
    y1 = Conv(a, w1, b1, y2) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = ?act]
  target
    x = Concat(a, c) [axis = 1]
    w = Concat(w2, w1) [axis = 1]
    b = Add(b2, b1)
    y = Conv(x, w, b, z) [@y1]
  map y1 -> y
end
)");
  const rules::Rule dropped = testing::parse_rule(R"(
rule wrong-sum-bias
  source
    y1 = Conv(a, w1, b1) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = "none"]
    y2 = Conv(c, w2, b2) [kernel_shape = ?k, strides = ?s, pads = ?p, dilations = ?d, group = 1, activation = "none"]
    s = Add(y1, y2)
  target
    x = Concat(a, c) [axis = 1]
    w = Concat(w1, w2) [axis = 1]
    y = Conv(x, w, b1) [@y1]
  map s -> y
end
)");
  const std::pair<ir::Graph, const rules::Rule*> cases[] = {
      {residual_chain({ConvParams{}, ConvParams{}}, {4, 4}), &swapped},
      {sum_of_convs(ConvParams{}, ConvParams{}), &dropped},
  };
  for (const auto& [graph, rule] : cases) {
    INFO(rule->name);
    const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, *rule);
    REQUIRE(matches.size() == 1);
    const std::optional<ir::Graph> after = rewrite::apply(graph, matches[0]);
    REQUIRE(after);
    CHECK_FALSE(runtime::check_equivalent(graph, *after).passed());
  }
}

TEST_CASE("a chain of four residual convolutions merges into one", "[rules]") {
  // conv[relu](x1, .., conv(x2, .., conv(x3, .., conv(x4, .., z)))): each step extends the
  // concatenation when the inner convolution reads one, else merges a pair.
  const ConvParams params;
  ir::Graph graph = residual_chain({with_activation(params, "relu"), params, params, params}, {3, 4, 2, 5});
  const ir::Graph before = graph;
  for (int step = 0; step < 3; ++step) {
    INFO("step " << step);
    std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule_named("extend-residual-convs-bias"));
    if (matches.empty()) matches = rewrite::Matcher::find(graph, rule_named("merge-residual-convs-bias"));
    REQUIRE_FALSE(matches.empty());
    std::optional<ir::Graph> after = rewrite::apply(graph, matches[0]);
    REQUIRE(after);
    CHECK(runtime::check_equivalent(before, *after).passed());
    graph = std::move(*after);
  }
  CHECK(testing::count_of(graph, ir::OpKind::kConv) == 1);
  CHECK(rewrite::Matcher::find(graph, rule_named("merge-residual-convs-bias")).empty());
}

TEST_CASE("a sum of four branches merges into one convolution of one concatenation", "[rules]") {
  // x [1,4,8,8] -> conv1x1_i[relu] (3 filters) -> conv3x3_i (6 filters), summed by a chain of Adds.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 4, 8, 8}));
  const ConvParams first{{1, 1}, {1, 1}, {0, 0, 0, 0}, "relu"};
  const ConvParams second;
  ir::ValueId sum = ir::kNoValue;
  for (uint32_t i = 0; i < 4; ++i) {
    const ir::ValueId branch = add_conv(graph, add_conv(graph, x, first, 3, 100 + i), second, 6, 200 + i);
    sum = sum == ir::kNoValue ? branch : add_add(graph, sum, branch);
  }
  set_outputs(graph, {sum});
  const ir::Graph before = graph;
  REQUIRE(testing::count_of(before, ir::OpKind::kConv) == 8);

  const auto step = [&](const std::string& name, std::size_t expected_matches) {
    INFO(name);
    const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule_named(name));
    REQUIRE(matches.size() == expected_matches);
    std::optional<ir::Graph> after = rewrite::apply(graph, matches[0]);
    REQUIRE(after);
    CHECK(runtime::check_equivalent(before, *after).passed());
    graph = std::move(*after);
  };
  // The sum: the first Add, then each Add after it.
  step("merge-sum-of-convs-bias", 1);
  step("extend-sum-of-convs-bias", 1);
  step("extend-sum-of-convs-bias", 1);
  CHECK(testing::count_of(graph, ir::OpKind::kConv) == 5);
  CHECK(testing::count_of(graph, ir::OpKind::kAdd) == 3);  // Only the biases' sums are left.
  const ir::Node& last = graph.node(graph.value(graph.outputs()[0]).producer);
  REQUIRE(last.op == ir::OpKind::kConv);
  const ir::Value& input = graph.value(last.inputs[0]);
  REQUIRE(input.kind == ir::ValueKind::kIntermediate);
  const ir::Node& concat = graph.node(input.producer);
  CHECK(concat.op == ir::OpKind::kConcat);
  CHECK(concat.inputs.size() == 4);

  // The four 1x1 convolutions of x: a pair (any of 12 ordered pairs), then one at a time.
  step("merge-convs-bias", 12);
  step("extend-merged-convs-bias", 2);
  step("extend-merged-convs-bias", 1);
  CHECK(testing::count_of(graph, ir::OpKind::kConv) == 2);
  CHECK(testing::count_of(graph, ir::OpKind::kSplit) == 1);
}

}  // namespace graphsub
