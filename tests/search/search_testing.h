// Helpers for the search tests: small graphs built node by node with seeded random weights, rule
// subsets, and what a search result must satisfy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "ir/graph.h"
#include "ops/folding.h"
#include "rewrite/matcher.h"
#include "rewrite/rewrite_testing.h"
#include "rules/shipped_rules.h"
#include "runtime/equivalence.h"
#include "search/search_options.h"
#include "test_util.h"

namespace graphsub::testing {

/// Every shipped rule, as `graphsub optimize` searches with by default.
inline const rewrite::Matcher& shipped_matcher() {
  static const std::vector<rules::Rule> rules = rules::default_rules();
  static const rewrite::Matcher matcher(rules);
  return matcher;
}

/// The default device's analytical cost model.
inline const cost::AnalyticalModel& v100() {
  static const cost::AnalyticalModel model(cost::device_by_name("v100"));
  return model;
}

/// A weight of random values in [low, high).
inline ir::ValueId random_weight(ir::Graph& graph, const std::vector<int64_t>& dims, uint32_t seed,
                                 float low = -1.0f, float high = 1.0f) {
  return graph.add_weight({}, ir::share(random_tensor(dims, seed, low, high)));
}

/// A canonical convolution of `x` by a random [filters, C, kh, kw] weight and a random bias, its
/// pads keeping the size for odd kernels, and the given fused activation.
inline ir::ValueId conv(ir::Graph& graph, ir::ValueId x, int64_t filters, const std::vector<int64_t>& kernel,
                        uint32_t seed, const char* activation = "none") {
  const int64_t channels = graph.value(x).type.shape.dims[1].value;
  ir::Attributes attrs;
  attrs.set("activation", std::string(activation));
  attrs.set("kernel_shape", kernel);
  attrs.set("pads", std::vector<int64_t>{kernel[0] / 2, kernel[1] / 2, kernel[0] / 2, kernel[1] / 2});
  const ir::ValueId w = random_weight(graph, {filters, channels, kernel[0], kernel[1]}, seed);
  const ir::ValueId b = random_weight(graph, {filters}, seed + 1000);
  return out(graph, add_canonical(graph, ir::OpKind::kConv, {x, w, b}, attrs));
}

/// Inference batch normalization of `x` with random statistics (variances in [0.5, 1.5)).
inline ir::ValueId batch_norm(ir::Graph& graph, ir::ValueId x, uint32_t seed) {
  const int64_t channels = graph.value(x).type.shape.dims[1].value;
  std::vector<ir::ValueId> inputs = {x};
  for (uint32_t i = 0; i < 3; ++i) inputs.push_back(random_weight(graph, {channels}, seed + i));
  inputs.push_back(random_weight(graph, {channels}, seed + 3, 0.5f, 1.5f));
  return out(graph, add_canonical(graph, ir::OpKind::kBatchNormalization, inputs));
}

inline ir::ValueId relu(ir::Graph& graph, ir::ValueId x) {
  return out(graph, add_canonical(graph, ir::OpKind::kRelu, {x}));
}

/// Concatenation along the channels.
inline ir::ValueId concat(ir::Graph& graph, std::vector<ir::ValueId> parts) {
  ir::Attributes axis;
  axis.set("axis", int64_t{1});
  return out(graph, add_canonical(graph, ir::OpKind::kConcat, std::move(parts), axis));
}

/// Makes `y` the graph's one output, named "y".
inline void set_output(ir::Graph& graph, ir::ValueId y) {
  graph.set_name(y, "y");
  graph.set_outputs({y});
}

/// x -> conv3x3 -> BN -> relu -> conv3x3 -> BN -> relu, 8 channels at 8x8.
inline ir::Graph conv_bn_relu_chain() {
  ir::Graph graph;
  ir::ValueId y = graph.add_input("x", float_type({1, 8, 8, 8}));
  for (uint32_t layer = 0; layer < 2; ++layer) {
    y = relu(graph, batch_norm(graph, conv(graph, y, 8, {3, 3}, 10 * layer), 10 * layer + 5));
  }
  set_output(graph, y);
  return graph;
}

/// A ResNet module's first 3x3 convolution (with its relu) and its 1x1 shortcut, both reading x
/// (MetaFlow Fig. 1): merging them needs the 1x1 enlarged to 3x3 first, a step that costs more.
inline ir::Graph conv3x3_and_shortcut() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 64, 8, 8}));
  const ir::ValueId a = relu(graph, conv(graph, x, 64, {3, 3}, 1));
  const ir::ValueId shortcut = conv(graph, x, 64, {1, 1}, 3);
  graph.set_name(a, "a");
  graph.set_name(shortcut, "shortcut");
  graph.set_outputs({a, shortcut});
  return graph;
}

/// Inception-v3's InceptionE module, small: 8x8, 16 channels in, 8 per branch, relus fused into
/// the convolutions. A 1x1 branch, a 1x1 followed by a 1x3 and a 3x1 convolution concatenated, and
/// a pooled 1x1 branch (the module's second 1x3/3x1 branch is left out to keep it small enough
/// for the exhaustive search).
inline ir::Graph small_inception_e() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 16, 8, 8}));
  const ir::ValueId b1 = conv(graph, x, 8, {1, 1}, 10, "relu");
  const ir::ValueId b2 = conv(graph, x, 8, {1, 1}, 20, "relu");
  const ir::ValueId b2a = conv(graph, b2, 8, {1, 3}, 21, "relu");
  const ir::ValueId b2b = conv(graph, b2, 8, {3, 1}, 22, "relu");
  ir::Attributes pool;
  pool.set("kernel_shape", std::vector<int64_t>{3, 3});
  pool.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  pool.set("count_include_pad", int64_t{1});
  const ir::ValueId pooled = out(graph, add_canonical(graph, ir::OpKind::kAveragePool, {x}, pool));
  const ir::ValueId b4 = conv(graph, pooled, 8, {1, 1}, 40, "relu");
  set_output(graph, concat(graph, {b1, concat(graph, {b2a, b2b}), b4}));
  return graph;
}

/// The shipped rules of the given names, in that order; throws for an unknown name.
inline std::vector<rules::Rule> shipped_rules_named(const std::vector<std::string>& names) {
  const std::vector<rules::Rule> all = rules::default_rules();
  std::vector<rules::Rule> chosen;
  for (const std::string& name : names) {
    const auto rule = std::find_if(all.begin(), all.end(), [&](const rules::Rule& r) { return r.name == name; });
    if (rule == all.end()) throw std::runtime_error("no shipped rule " + name);
    chosen.push_back(*rule);
  }
  return chosen;
}

/// How many nodes of each op run (weight-only nodes, which export folds, are left out).
inline std::map<ir::OpKind, int> running_ops(const ir::Graph& graph) {
  std::map<ir::OpKind, int> counts;
  const std::vector<bool> folded = ops::folded_nodes(graph);
  for (ir::NodeId id : graph.node_ids()) {
    if (!folded[id]) ++counts[graph.node(id).op];
  }
  return counts;
}

/// The rules of the steps, in order.
inline std::vector<std::string> rules_of(const search::SearchResult& result) {
  std::vector<std::string> names;
  for (const search::AppliedStep& step : result.steps) names.push_back(step.rule);
  return names;
}

/// What every search result must be: no costlier than the input, and computing what the input
/// does on seeded random inputs through the reference executor.
inline void check_sound(const ir::Graph& input, const search::SearchResult& result) {
  CHECK(result.best_cost.time_ms <= result.initial_cost.time_ms);
  CHECK(result.best.output_names() == input.output_names());
  runtime::CheckOptions options;
  options.atol = 1e-4;
  options.rtol = 1e-4;
  const runtime::CheckReport report = runtime::check_equivalent(input, result.best, options);
  for (const runtime::OutputCheck& output : report.outputs) {
    INFO(output.name << ": max abs error " << output.max_abs_error << ", max rel error " << output.max_rel_error);
    CHECK(output.passed);
  }
}

}  // namespace graphsub::testing
