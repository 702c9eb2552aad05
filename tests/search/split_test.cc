// The flow-based graph split: minimum cuts that disable exactly the matches they count, parts
// that cover the graph in order, and extraction and stitching that keep what the graph computes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cost/analytical_model.h"
#include "ops/folding.h"
#include "cost/device.h"
#include "models/builders/models.h"
#include "onnx_io/onnx_io.h"
#include "rewrite/matcher.h"
#include "rewrite/rewrite_testing.h"
#include "rules/shipped_rules.h"
#include "runtime/equivalence.h"
#include "search/optimizer.h"
#include "search/search_testing.h"
#include "search/split.h"
#include "search/subgraph.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::add_canonical;
using testing::out;

ir::ValueId conv3x3(ir::Graph& graph, ir::ValueId x, uint32_t seed) {
  const int64_t channels = graph.value(x).type.shape.dims[1].value;
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  const ir::ValueId w = graph.add_weight({}, ir::share(testing::random_tensor({channels, channels, 3, 3}, seed, -0.2f, 0.2f)));
  const ir::ValueId b = graph.add_weight({}, ir::share(testing::random_tensor({channels}, seed + 1)));
  return out(graph, add_canonical(graph, ir::OpKind::kConv, {x, w, b}, attrs));
}

/// `blocks` residual blocks x -> relu(conv(relu(conv(x))) + x): 5 nodes each, as OCGGS's ResNet.
ir::Graph resnet_chain(int blocks) {
  ir::Graph graph;
  ir::ValueId x = graph.add_input("x", testing::float_type({1, 8, 6, 6}));
  for (int b = 0; b < blocks; ++b) {
    const ir::ValueId a = out(graph, add_canonical(graph, ir::OpKind::kRelu, {conv3x3(graph, x, 10 * b + 1)}));
    const ir::ValueId c = conv3x3(graph, a, 10 * b + 5);
    x = out(graph, add_canonical(graph, ir::OpKind::kRelu, {out(graph, add_canonical(graph, ir::OpKind::kAdd, {c, x}))}));
  }
  graph.set_name(x, "y");
  graph.set_outputs({x});
  return graph;
}

/// ((x + w1) + w2) + ...: every adjacent pair matches Add's associativity, so every cut disables
/// matches.
ir::Graph elementwise_chain(int adds) {
  ir::Graph graph;
  ir::ValueId x = graph.add_input("x", testing::float_type({2, 16}));
  for (int i = 0; i < adds; ++i) {
    const ir::ValueId w = graph.add_weight({}, ir::share(testing::random_tensor({16}, 100 + i)));
    x = out(graph, add_canonical(graph, ir::OpKind::kAdd, {x, w}));
  }
  graph.set_name(x, "y");
  graph.set_outputs({x});
  return graph;
}

/// `triples` of conv (no bias) -> batch norm -> relu, in a chain: each relu fuses into its conv
/// only once the batch norm is folded.
ir::Graph conv_bn_relu_chain(int triples) {
  ir::Graph graph;
  ir::ValueId x = graph.add_input("x", testing::float_type({1, 4, 6, 6}));
  for (int t = 0; t < triples; ++t) {
    ir::Attributes attrs;
    attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
    attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    const ir::ValueId w = graph.add_weight({}, ir::share(testing::random_tensor({4, 4, 3, 3}, 200 + t, -0.3f, 0.3f)));
    const ir::ValueId c = out(graph, add_canonical(graph, ir::OpKind::kConv, {x, w}, attrs));
    std::vector<ir::ValueId> bn = {c};
    for (int i = 0; i < 4; ++i) {
      bn.push_back(graph.add_weight({}, ir::share(testing::random_tensor({4}, 300 + 10 * t + i, i == 3 ? 0.5f : -1.0f, 1.5f))));
    }
    x = out(graph, add_canonical(graph, ir::OpKind::kRelu, {out(graph, add_canonical(graph, ir::OpKind::kBatchNormalization, bn))}));
  }
  graph.set_name(x, "y");
  graph.set_outputs({x});
  return graph;
}

/// The producers of a node's inputs among the graph's nodes.
std::vector<ir::NodeId> producers(const ir::Graph& graph, ir::NodeId id) {
  std::vector<ir::NodeId> found;
  for (ir::ValueId input : graph.node(id).inputs) {
    if (input != ir::kNoValue && graph.value(input).kind == ir::ValueKind::kIntermediate) {
      found.push_back(graph.value(input).producer);
    }
  }
  return found;
}

/// Indices of the matches with nodes in both `upstream` and the rest.
std::vector<std::size_t> crossing(const std::vector<rewrite::Match>& matches, const std::set<ir::NodeId>& upstream) {
  std::vector<std::size_t> found;
  for (std::size_t j = 0; j < matches.size(); ++j) {
    const auto& nodes = matches[j].nodes;
    const auto up = std::count_if(nodes.begin(), nodes.end(), [&](ir::NodeId id) { return upstream.count(id) != 0; });
    if (up != 0 && up != static_cast<std::ptrdiff_t>(nodes.size())) found.push_back(j);
  }
  return found;
}

/// The best cost of searching `graph` whole (no split): the reference a split search must reach.
double unsplit_best_ms(const ir::Graph& graph) {
  search::OptimizerOptions whole;
  whole.split_threshold = 0;
  return search::optimize(graph, testing::shipped_matcher(), testing::v100(), whole).search.best_cost.time_ms;
}

}  // namespace

TEST_CASE("a bisection disables exactly the matches its cut capacity counts", "[search][split]") {
  const bool dense = GENERATE(false, true);
  const ir::Graph graph = dense ? elementwise_chain(24) : resnet_chain(8);
  const std::vector<rewrite::Match> matches = testing::shipped_matcher().find_all(graph);
  const search::Bisection halves = search::bisect(graph, graph.node_ids(), matches);
  if (dense) CHECK(halves.capacity > 0);  // no cut of this chain avoids every match
  const std::set<ir::NodeId> upstream(halves.upstream.begin(), halves.upstream.end());
  CHECK(halves.disabled == crossing(matches, upstream));
  CHECK(halves.capacity == static_cast<int64_t>(halves.disabled.size()));
  CHECK(halves.upstream.size() + halves.downstream.size() == graph.node_count());
  CHECK(halves.upstream.size() >= graph.node_count() / 4);
  CHECK(halves.downstream.size() >= graph.node_count() / 4);
  for (ir::NodeId id : halves.upstream) {
    for (ir::NodeId producer : producers(graph, id)) CHECK(upstream.count(producer) == 1);
  }
}

TEST_CASE("the cut is a minimum over every balanced, upstream-closed bisection", "[search][split]") {
  // 15 and 14 nodes: every subset can be tried.
  const bool dense = GENERATE(false, true);
  const ir::Graph graph = dense ? elementwise_chain(14) : resnet_chain(3);
  const std::vector<rewrite::Match> matches = testing::shipped_matcher().find_all(graph);
  const std::vector<ir::NodeId> order = *graph.topological_order();
  const std::size_t n = order.size();
  const std::size_t quarter = std::max<std::size_t>(1, n / 4);
  std::size_t best = matches.size() + 1;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    std::set<ir::NodeId> upstream;
    for (std::size_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) upstream.insert(order[i]);
    }
    bool valid = true;
    for (std::size_t k = 0; k < quarter; ++k) {
      valid = valid && upstream.count(order[k]) == 1 && upstream.count(order[n - 1 - k]) == 0;
    }
    for (ir::NodeId id : upstream) {
      for (ir::NodeId producer : producers(graph, id)) valid = valid && upstream.count(producer) == 1;
    }
    if (valid) best = std::min(best, crossing(matches, upstream).size());
  }
  const search::Bisection halves = search::bisect(graph, graph.node_ids(), matches);
  CHECK(halves.disabled.size() == best);
  if (dense) CHECK(best > 0);
}

TEST_CASE("the split covers the graph with parts under the threshold, in order", "[search][split]") {
  const ir::Graph graph = resnet_chain(16);
  const std::vector<rewrite::Match> matches = testing::shipped_matcher().find_all(graph);
  const search::Partition partition = search::split_graph(graph, matches, 12);
  REQUIRE(partition.parts.size() > 1);
  std::unordered_map<ir::NodeId, std::size_t> part_of;
  for (std::size_t i = 0; i < partition.parts.size(); ++i) {
    CHECK(partition.parts[i].size() <= 12);
    for (ir::NodeId id : partition.parts[i]) CHECK(part_of.emplace(id, i).second);
  }
  CHECK(part_of.size() == graph.node_count());
  for (const auto& [id, part] : part_of) {
    for (ir::NodeId producer : producers(graph, id)) CHECK(part_of.at(producer) <= part);
  }
  std::vector<std::size_t> cut;
  for (std::size_t j = 0; j < matches.size(); ++j) {
    std::set<std::size_t> parts;
    for (ir::NodeId id : matches[j].nodes) parts.insert(part_of.at(id));
    if (parts.size() > 1) cut.push_back(j);
  }
  CHECK(partition.disabled == cut);
  CHECK(search::split_graph(graph, matches, 0).parts.size() == 1);
  CHECK(search::split_graph(graph, matches, 1000).parts.size() == 1);
}

TEST_CASE("two-step matches keep a conv, its batch norm and its relu on one side of a cut", "[search][split]") {
  const ir::Graph graph = conv_bn_relu_chain(6);
  const std::vector<rewrite::Match> first = testing::shipped_matcher().find_all(graph);
  const std::vector<rewrite::Match> matches = search::with_two_step_matches(graph, testing::shipped_matcher(), first);
  REQUIRE(matches.size() > first.size());
  for (std::size_t j = 0; j < first.size(); ++j) CHECK(matches[j].nodes == first[j].nodes);
  // No single rule spans a conv and the relu behind its batch norm; fold, then fuse, does.
  const std::vector<ir::NodeId> order = *graph.topological_order();
  const std::vector<ir::NodeId> triple(order.begin(), order.begin() + 3);
  auto spans_triple = [&](const rewrite::Match& match) {
    std::vector<ir::NodeId> nodes = match.nodes;
    std::sort(nodes.begin(), nodes.end());
    return nodes == triple;
  };
  CHECK(std::none_of(first.begin(), first.end(), spans_triple));
  CHECK(std::count_if(matches.begin(), matches.end(), spans_triple) == 1);

  const search::Partition partition = search::split_graph(graph, matches, 6);
  REQUIRE(partition.parts.size() > 1);
  CHECK(partition.disabled.empty());
  for (const auto& part : partition.parts) CHECK(part.size() % 3 == 0);  // whole triples only
}

namespace {

/// x -> relu(conv(x, w * s)): the kernel is computed from weights alone, by a Mul node.
struct ScaledKernelConv {
  ir::Graph graph;
  ir::ValueId x, w, s;
  ir::NodeId scale, conv;
};

ScaledKernelConv scaled_kernel_conv() {
  ScaledKernelConv c;
  ir::Graph& graph = c.graph;
  c.x = graph.add_input("x", testing::float_type({1, 4, 6, 6}));
  c.w = graph.add_weight({}, ir::share(testing::random_tensor({4, 4, 3, 3}, 7)));
  c.s = graph.add_weight({}, ir::share(testing::random_tensor({4, 1, 1, 1}, 8)));
  c.scale = add_canonical(graph, ir::OpKind::kMul, {c.w, c.s});
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  c.conv = add_canonical(graph, ir::OpKind::kConv, {c.x, out(graph, c.scale)}, attrs);
  const ir::ValueId y = out(graph, add_canonical(graph, ir::OpKind::kRelu, {out(graph, c.conv)}));
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return c;
}

}  // namespace

TEST_CASE("a part reading a folded weight computed outside it gets its own copy of that computation", "[search][split]") {
  const ScaledKernelConv c = scaled_kernel_conv();
  const ir::Graph& graph = c.graph;
  const search::Subgraph part = search::extract(graph, {c.conv});
  CHECK(part.outer_inputs == std::vector<ir::ValueId>{c.x});  // the kernel is not an input
  CHECK(part.graph.node_count() == 2);
  CHECK(part.outer_constants.size() == 1);
  const std::vector<bool> folded = ops::folded_nodes(part.graph);
  CHECK(std::count(folded.begin(), folded.end(), true) == 1);
  // The copy is folded, so the part costs what its conv costs in the whole graph.
  CHECK(testing::v100().graph_cost(part.graph).time_ms == testing::v100().node_cost(graph, c.conv).time_ms);

  ir::Graph stitched = graph;
  search::stitch(stitched, part, part.graph);
  CHECK(stitched.node_count() == graph.node_count());  // the outer Mul is reused, not copied
  CHECK(stitched.structural_hash() == graph.structural_hash());
  CHECK(runtime::check_equivalent(graph, stitched).passed());
}

TEST_CASE("a part whose folded weight an earlier stitch removed gets the computation back", "[search][split]") {
  // Before the conv's part is stitched, another part's rewrite replaces the outer Mul (here: by
  // an equal copy), so the value the part's copy stood for is gone. A TransformerEncoder export
  // hit this: the part's kernel read a removed value.
  const ScaledKernelConv c = scaled_kernel_conv();
  const ir::Graph& graph = c.graph;
  const search::Subgraph part = search::extract(graph, {c.conv});
  REQUIRE(part.outer_constants.size() == 1);

  ir::Graph stitched = graph;
  const ir::ValueId replacement = out(stitched, add_canonical(stitched, ir::OpKind::kMul, {c.w, c.s}));
  stitched.replace_all_uses(out(graph, c.scale), replacement);
  stitched.remove_dead_nodes();
  REQUIRE_FALSE(stitched.has_value(out(graph, c.scale)));
  search::stitch(stitched, part, part.graph);
  CHECK(stitched.node_count() == graph.node_count());
  CHECK(runtime::check_equivalent(graph, stitched).passed());
}

TEST_CASE("a part taken out and stitched back unchanged computes the same", "[search][split]") {
  const ir::Graph graph = resnet_chain(4);
  const search::Partition partition = search::split_graph(graph, testing::shipped_matcher().find_all(graph), 6);
  ir::Graph stitched = graph;
  std::unordered_map<ir::ValueId, ir::ValueId> moved;
  for (const auto& nodes : partition.parts) {
    search::Subgraph part = search::extract(graph, nodes);
    CHECK(part.graph.node_count() == nodes.size());
    for (ir::ValueId& input : part.outer_inputs) {
      if (moved.count(input) != 0) input = moved.at(input);
    }
    const search::Stitched done = search::stitch(stitched, part, part.graph);
    for (std::size_t k = 0; k < done.outputs.size(); ++k) moved[part.outer_outputs[k]] = done.outputs[k];
  }
  CHECK(stitched.node_count() == graph.node_count());
  CHECK(stitched.structural_hash() == graph.structural_hash());
  CHECK(runtime::check_equivalent(graph, stitched).passed());
}

TEST_CASE("split, search and stitch keep what the graph computes and find the unsplit optimum", "[search][split]") {
  const ir::Graph graph = resnet_chain(8);
  const cost::AnalyticalModel& model = testing::v100();
  const double unsplit_ms = unsplit_best_ms(graph);
  search::OptimizerOptions options;
  options.split_threshold = 10;
  options.threads = 2;
  const search::OptimizeResult split = search::optimize(graph, testing::shipped_matcher(), model, options);
  CHECK(split.split.parts > 1);
  CHECK(split.search.best_cost.time_ms < split.search.initial_cost.time_ms);
  CHECK(split.search.best_cost.time_ms <= unsplit_ms * (1 + 1e-9));
  CHECK(runtime::check_equivalent(graph, split.search.best).passed());
  CHECK(split.search.best.output_names() == graph.output_names());

  options.threads = 1;
  const search::OptimizeResult serial = search::optimize(graph, testing::shipped_matcher(), model, options);
  CHECK(serial.search.best.structural_hash() == split.search.best.structural_hash());
}

/// The v100 estimate, whose answers for the nodes that read the value named `name` (every node,
/// for "") are provisional (as a measured model's misses are until measured). Counts over all
/// threads: for one-thread runs.
class ReadingProvisional : public cost::CostModel {
 public:
  explicit ReadingProvisional(std::string name) : name_(std::move(name)) {}
  cost::Cost node_cost(const ir::Graph& graph, ir::NodeId id) const override {
    if (name_.empty()) ++provisional_;
    for (ir::ValueId input : graph.node(id).inputs) {
      if (!name_.empty() && input != ir::kNoValue && graph.value(input).name == name_) ++provisional_;
    }
    return testing::v100().node_cost(graph, id);
  }
  int64_t provisional_answers() const override { return provisional_; }

 private:
  std::string name_;
  mutable int64_t provisional_ = 0;
};

TEST_CASE("a part's search is taken from the memo in the next call unless a cost it met was provisional",
          "[search][split]") {
  const ir::Graph graph = resnet_chain(8);
  const ReadingProvisional model("x");  // the first convolution, in the first part
  search::SplitMemo split;
  search::SearchMemo memo;
  search::OptimizerOptions options;
  options.split_threshold = 10;
  options.threads = 1;
  options.split_memo = &split;
  options.search_memo = &memo;
  const search::OptimizeResult once = search::optimize(graph, testing::shipped_matcher(), model, options);
  REQUIRE(once.split.parts > 2);

  const search::OptimizeResult again = search::optimize(graph, testing::shipped_matcher(), model, options);
  // Every part but the first conv's: that one only where another part hashes alike.
  CHECK(again.split.reused_parts >= once.split.parts - 1);
  CHECK(again.search.best.structural_hash() == once.search.best.structural_hash());
  CHECK(again.search.best_cost.time_ms == once.search.best_cost.time_ms);
  CHECK(runtime::check_equivalent(graph, again.search.best).passed());

  // Nothing is kept from a search that met a provisional answer.
  const ReadingProvisional everywhere("");
  search::SplitMemo other_split;
  search::SearchMemo fresh;
  options.split_memo = &other_split;
  options.search_memo = &fresh;
  CHECK(search::optimize(graph, testing::shipped_matcher(), everywhere, options).split.reused_parts == 0);
  CHECK(search::optimize(graph, testing::shipped_matcher(), everywhere, options).split.reused_parts == 0);
}

TEST_CASE("parts that hash alike share one search, which finds what each would find", "[search][split]") {
  // Encoder layers of the same shapes and other weights: parts that differ but for their weights.
  const ir::Graph graph = models::build_model("bert", models::small_config("bert"));
  search::OptimizerOptions options;
  options.split_threshold = 10;
  options.threads = 1;
  const search::OptimizeResult without = search::optimize(graph, testing::shipped_matcher(), testing::v100(), options);
  search::SearchMemo memo;
  options.search_memo = &memo;
  const search::OptimizeResult with = search::optimize(graph, testing::shipped_matcher(), testing::v100(), options);
  CHECK(with.split.reused_parts > 0);
  CHECK(without.split.reused_parts == 0);
  CHECK(with.search.best.structural_hash() == without.search.best.structural_hash());
  CHECK(with.search.best_cost.time_ms == without.search.best_cost.time_ms);
  CHECK(with.search.expanded == without.search.expanded);
  REQUIRE(with.search.steps.size() == without.search.steps.size());
  for (std::size_t i = 0; i < with.search.steps.size(); ++i) {
    CHECK(with.search.steps[i].rule == without.search.steps[i].rule);
    CHECK(with.search.steps[i].where == without.search.steps[i].where);  // each part's own node names
  }
  CHECK(runtime::check_equivalent(graph, with.search.best).passed());
}

TEST_CASE("seam regions' searches are taken from the memo too, where the parts came out the same", "[search][split]") {
  const ir::Graph graph = elementwise_chain(40);  // every cut disables matches: seams to search
  search::SplitMemo split;
  search::SearchMemo memo;
  search::OptimizerOptions options;
  options.split_threshold = 8;
  options.threads = 1;
  options.split_memo = &split;
  options.search_memo = &memo;
  const search::OptimizeResult once = search::optimize(graph, testing::shipped_matcher(), testing::v100(), options);
  REQUIRE(once.split.seam_regions > 0);
  const search::OptimizeResult again = search::optimize(graph, testing::shipped_matcher(), testing::v100(), options);
  CHECK(again.split.reused_parts == once.split.parts);
  CHECK(again.split.reused_seams == once.split.seam_regions);
  CHECK(again.search.best.structural_hash() == once.search.best.structural_hash());
  CHECK(runtime::check_equivalent(graph, again.search.best).passed());
}

TEST_CASE("a part whose search reaches the part budget is split again, and the result computes the same",
          "[search][split]") {
  const ir::Graph graph = resnet_chain(4);  // 20 nodes: under the threshold, searched as one part first
  const cost::AnalyticalModel& model = testing::v100();
  const double unsplit_ms = unsplit_best_ms(graph);
  search::OptimizerOptions options;
  options.part_budget = 20;
  const search::OptimizeResult split = search::optimize(graph, testing::shipped_matcher(), model, options);
  INFO(split.split.parts << " parts, " << split.split.resplit_parts << " split again");
  CHECK(split.split.resplit_parts > 0);
  CHECK(split.split.parts > 1);
  CHECK(split.search.stop == search::StopReason::kExhausted);
  CHECK(split.search.best_cost.time_ms < split.search.initial_cost.time_ms);
  CHECK(split.search.best_cost.time_ms <= unsplit_ms * (1 + 1e-9));
  CHECK(runtime::check_equivalent(graph, split.search.best).passed());

  options.part_budget = 0;  // never split again: one search of the whole graph, at the full budget
  const search::OptimizeResult one_part = search::optimize(graph, testing::shipped_matcher(), model, options);
  CHECK(one_part.split.parts == 1);
  CHECK(one_part.split.resplit_parts == 0);
}

namespace {

/// models/qdq_branches.onnx: two convolutions of one input in onnxruntime's QDQ form.
ir::Graph qdq_branches() {
  return onnx_io::import_model(std::string(GRAPHSUB_SOURCE_DIR) + "/models/qdq_branches.onnx");
}

ir::NodeId node_named(const ir::Graph& graph, const std::string& name) {
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).name == name) return id;
  }
  FAIL("no node " << name);
  return -1;
}

/// The op types of a graph's opaque nodes, counted.
std::map<std::string, int> opaque_ops(const ir::Graph& graph) {
  std::map<std::string, int> ops;
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).opaque) ++ops[graph.node(id).opaque->op_type];
  }
  return ops;
}

/// A convolution costs ten times any other node: merging two convolutions pays.
class ConvolutionsDear : public cost::CostModel {
 public:
  cost::Cost node_cost(const ir::Graph& graph, ir::NodeId id) const override {
    return cost::Cost{graph.node(id).op == ir::OpKind::kConv ? 10.0 : 1.0, 0, 0, 1};
  }
};

/// Records what the search asks the judge, and rejects everything.
struct RecordingJudge : search::PartJudge {
  std::vector<ir::Graph> originals, candidates;
  Verdict verdict(const ir::Graph& original, const ir::Graph& candidate, double) override {
    originals.push_back(original);
    candidates.push_back(candidate);
    return {false, 1};
  }
};

/// x -> conv -> GELU as exporters write it (x/sqrt(2), erf, +1, times x, times 1/2) -> conv: five
/// element-wise nodes a runtime fuses into one.
struct ConvGelu {
  ir::Graph graph;
  ir::NodeId conv = -1, div = -1;
};

ConvGelu conv_gelu_conv() {
  ConvGelu made;
  ir::Graph& graph = made.graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, 4, 6, 6}));
  const ir::ValueId c = conv3x3(graph, x, 1);
  made.conv = graph.value(c).producer;
  auto scalar = [&](uint32_t seed) { return graph.add_weight({}, ir::share(testing::random_tensor({1}, seed, 0.5f, 1.5f))); };
  const ir::ValueId d = out(graph, add_canonical(graph, ir::OpKind::kDiv, {c, scalar(11)}));
  made.div = graph.value(d).producer;
  const ir::ValueId e = out(graph, add_canonical(graph, ir::OpKind::kErf, {d}));
  const ir::ValueId a = out(graph, add_canonical(graph, ir::OpKind::kAdd, {e, scalar(12)}));
  const ir::ValueId m = out(graph, add_canonical(graph, ir::OpKind::kMul, {c, a}));
  const ir::ValueId g = out(graph, add_canonical(graph, ir::OpKind::kMul, {m, scalar(13)}));
  const ir::ValueId y = conv3x3(graph, g, 20);
  graph.set_name(y, "y");
  graph.set_outputs({y});
  return made;
}

/// One per node: fewer nodes cost less.
class NodesCount : public cost::CostModel {
 public:
  cost::Cost node_cost(const ir::Graph&, ir::NodeId) const override { return cost::Cost{1.0, 0, 0, 1}; }
};

std::size_t relus(const ir::Graph& graph) {
  const std::vector<ir::NodeId> ids = graph.node_ids();
  return static_cast<std::size_t>(
      std::count_if(ids.begin(), ids.end(), [&](ir::NodeId id) { return graph.node(id).op == ir::OpKind::kRelu; }));
}

/// NodesCount for a target that times the written model: a chain export writes as a fused form
/// counts as one node, as that form does.
class WrittenNodesCount : public NodesCount {
 public:
  bool prices_written_chains() const override { return true; }
};

/// Keeps every candidate as 10 % faster, and counts them.
struct CountsCandidates : search::PartJudge {
  int asked = 0;
  Verdict verdict(const ir::Graph&, const ir::Graph&, double) override {
    ++asked;
    return {true, 0.9};
  }
};

/// Refuses a candidate with fewer ReLU nodes than the original as 10 % slower (as if the runtime
/// ran a ReLU fused into a convolution slower than apart), and keeps the others as 10 % faster;
/// or refuses those as about even (`even`).
struct KeepsRelus : search::PartJudge {
  bool even = false;
  Verdict verdict(const ir::Graph& original, const ir::Graph& candidate, double) override {
    if (relus(candidate) >= relus(original)) return {true, 0.9};
    return {false, even ? 1.0 : 1.1};
  }
};

/// `graph` with four sigmoids after `v`, the last the graph output "z" (its only output).
void with_sigmoids(ir::Graph& graph, ir::ValueId v) {
  for (int i = 0; i < 4; ++i) v = out(graph, add_canonical(graph, ir::OpKind::kSigmoid, {v}));
  graph.set_name(v, "z");
  graph.set_outputs({v});
}

std::size_t count_op(const ir::Graph& graph, ir::OpKind op) {
  const std::vector<ir::NodeId> ids = graph.node_ids();
  return static_cast<std::size_t>(
      std::count_if(ids.begin(), ids.end(), [&](ir::NodeId id) { return graph.node(id).op == op; }));
}

/// Refuses a candidate with fewer Identity nodes than the original as 10 % slower (standing for
/// a rewrite that stops a runtime's fusion, as a GELU's division written as a product does),
/// keeps the others as 10 % faster (or, with `keeps_fewer`, those too as 5 % faster), and
/// records every candidate.
struct KeepsIdentities : search::PartJudge {
  bool keeps_fewer = false;
  std::vector<ir::Graph> candidates;
  Verdict verdict(const ir::Graph& original, const ir::Graph& candidate, double) override {
    candidates.push_back(candidate);
    if (count_op(candidate, ir::OpKind::kIdentity) >= count_op(original, ir::OpKind::kIdentity)) return {true, 0.9};
    return keeps_fewer ? Verdict{true, 0.95} : Verdict{false, 1.1};
  }
};

}  // namespace

TEST_CASE("a judged part keeps the separate regions of its result that measure faster",
          "[search][split]") {
  // conv3x3(identity(x)) + conv1x1(identity(x)), then sigmoids: the search removes the Identity
  // and sums the convolutions into one, whose input the removal changed from outside the sum's
  // pattern (two regions). The judge refuses the removal; the sum alone, replayed without it, is
  // the first alternative judged, and kept.
  ir::Graph graph;
  const ir::ValueId input = graph.add_input("x", testing::float_type({1, 4, 6, 6}));
  const ir::ValueId x = out(graph, add_canonical(graph, ir::OpKind::kIdentity, {input}));
  const ir::ValueId small = testing::conv(graph, x, 4, {1, 1}, 1);
  const ir::ValueId large = testing::conv(graph, x, 4, {3, 3}, 2);
  with_sigmoids(graph, out(graph, add_canonical(graph, ir::OpKind::kAdd, {large, small})));

  KeepsIdentities judge;
  search::OptimizerOptions options;
  options.split_threshold = 7;
  options.judge = &judge;
  const search::OptimizeResult result = search::optimize(graph, testing::shipped_matcher(), NodesCount(), options);
  REQUIRE(judge.candidates.size() >= 2);
  CHECK(count_op(judge.candidates[0], ir::OpKind::kIdentity) == 0);
  CHECK(count_op(judge.candidates[1], ir::OpKind::kIdentity) == 1);
  CHECK(count_op(judge.candidates[1], ir::OpKind::kConv) == 1);
  CHECK(result.split.retried >= 1);
  CHECK(count_op(result.search.best, ir::OpKind::kConv) == 1);
  CHECK(count_op(result.search.best, ir::OpKind::kIdentity) == 1);
  CHECK(runtime::check_equivalent(graph, result.search.best).passed());

  // Where the judge keeps the whole result but measures the sum alone faster, the sum alone is
  // kept.
  KeepsIdentities lenient;
  lenient.keeps_fewer = true;
  options.judge = &lenient;
  const search::OptimizeResult kept = search::optimize(graph, testing::shipped_matcher(), NodesCount(), options);
  REQUIRE(lenient.candidates.size() >= 2);
  CHECK(count_op(lenient.candidates[0], ir::OpKind::kIdentity) == 0);
  CHECK(count_op(kept.search.best, ir::OpKind::kConv) == 1);
  CHECK(count_op(kept.search.best, ir::OpKind::kIdentity) == 1);
  CHECK(runtime::check_equivalent(graph, kept.search.best).passed());
}

TEST_CASE("a part of a quantized model is put in the quantization around it", "[search][split]") {
  const ir::Graph graph = qdq_branches();
  const search::Subgraph part = search::extract(graph, {node_named(graph, "conv1"), node_named(graph, "conv2")});
  // Taken out alone, the convolutions read dequantized floats: onnxruntime would run them in float.
  REQUIRE(part.graph.inputs().size() == 5);  // the activation, two kernels, two biases
  REQUIRE_FALSE(search::QuantizationContext(graph, part).empty());
  const ir::Graph context = search::QuantizationContext(graph, part).around(part.graph);
  // In context: the quantized activation is the one input, the kernels and biases are quantized
  // weights dequantized in the graph, and both outputs are quantized.
  REQUIRE(context.inputs().size() == 1);
  CHECK(context.value(context.inputs()[0]).name == "x_q");
  CHECK(context.value(context.inputs()[0]).type.dtype == ir::DataType::kUint8);
  CHECK(opaque_ops(context) == std::map<std::string, int>{{"DequantizeLinear", 5}, {"QuantizeLinear", 2}});
  REQUIRE(context.outputs().size() == 2);
  for (ir::ValueId output : context.outputs()) {
    CHECK(context.value(output).type.dtype == ir::DataType::kUint8);
    const ir::Node& producer = context.node(context.value(output).producer);
    CHECK(producer.opaque->op_type == "QuantizeLinear");
  }
  CHECK(context.value(context.outputs()[0]).name == "c1_q");
  CHECK(context.node_count() == part.graph.node_count() + 7);

  // A graph derived from the part (here the part itself, stitched as is) gets the same context.
  const ir::Graph again = search::QuantizationContext(graph, part).around(ir::Graph(part.graph));
  CHECK(again.structural_hash() == context.structural_hash());

  // A part with its quantization inside, or of a float model, is left as it is.
  std::vector<ir::NodeId> all = graph.node_ids();
  const search::Subgraph whole = search::extract(graph, all);
  CHECK(search::QuantizationContext(graph, whole).empty());
  CHECK(search::QuantizationContext(graph, whole).around(whole.graph).structural_hash() == whole.graph.structural_hash());
  const ScaledKernelConv c = scaled_kernel_conv();
  const search::Subgraph plain = search::extract(c.graph, {c.conv});
  CHECK(search::QuantizationContext(c.graph, plain).empty());
  CHECK(search::QuantizationContext(c.graph, plain).around(plain.graph).structural_hash() ==
        plain.graph.structural_hash());
}

TEST_CASE("the judge times a changed part of a quantized model in its quantization", "[search][split]") {
  // Parts of at most two nodes: the merge of the two convolutions is searched in a seam region of
  // the two, and the judge is given it with the dequantization before and quantization after.
  const ir::Graph graph = qdq_branches();
  RecordingJudge judge;
  search::OptimizerOptions options;
  options.split_threshold = 2;
  options.judge = &judge;
  const search::OptimizeResult result = search::optimize(graph, testing::shipped_matcher(), ConvolutionsDear(), options);
  REQUIRE(!judge.originals.empty());
  bool merge_judged = false;
  for (std::size_t i = 0; i < judge.originals.size(); ++i) {
    const ir::Graph& original = judge.originals[i];
    const ir::Graph& candidate = judge.candidates[i];
    CHECK(original.inputs().size() == candidate.inputs().size());
    CHECK(original.outputs().size() == candidate.outputs().size());
    for (ir::ValueId input : original.inputs()) CHECK(original.value(input).type.dtype != ir::DataType::kFloat);
    std::size_t convs = 0;
    for (ir::NodeId id : original.node_ids()) convs += original.node(id).op == ir::OpKind::kConv ? 1 : 0;
    if (convs == 2) {
      merge_judged = true;
      CHECK(opaque_ops(original).at("QuantizeLinear") == 2);
    }
  }
  CHECK(merge_judged);
  CHECK(result.search.best.structural_hash() == graph.structural_hash());  // every change rejected
}

TEST_CASE("a changed part is timed with the nodes around it that a runtime may fuse with it", "[search][split]") {
  const ConvGelu made = conv_gelu_conv();
  const ir::Graph& graph = made.graph;
  const std::vector<ir::NodeId> part_nodes = {made.conv, made.div};
  // The part cuts the GELU after its division; four steps take in the rest of it, and not the
  // convolution after it.
  const std::vector<ir::NodeId> wide = search::with_neighbours(graph, part_nodes, 4);
  CHECK(wide.size() == 6);
  for (ir::NodeId id : wide) CHECK((graph.node(id).op != ir::OpKind::kConv || id == part_nodes[0]));
  // One step takes in the Erf; the Mul reading the convolution waits for the Add before it.
  CHECK(search::with_neighbours(graph, part_nodes, 1).size() == 3);
  CHECK(search::with_neighbours(graph, part_nodes, 0).size() == 2);

  const search::Subgraph part = search::extract(graph, part_nodes);
  const search::TimingContext alone(graph, part, 0);
  CHECK(alone.original().node_count() == 2);
  CHECK(alone.around(part.graph).node_count() == 2);
  // A candidate for the part (the part itself, stitched back as it is) gets the same nodes around it.
  const search::TimingContext timed(graph, part, 4);
  const ir::Graph candidate = timed.around(ir::Graph(part.graph));
  CHECK(timed.original().node_count() == 6);
  CHECK(candidate.node_count() == 6);
  CHECK(timed.original().inputs().size() == candidate.inputs().size());
  CHECK(timed.original().outputs().size() == candidate.outputs().size());
  CHECK(runtime::check_equivalent(timed.original(), candidate).passed());

  // A residual's Add after a ReLU is not taken in: the set would hold a path through the
  // convolution between them.
  const ir::Graph chain = resnet_chain(1);
  ir::NodeId relu = -1;
  for (ir::NodeId id : chain.node_ids()) {
    if (chain.node(id).op == ir::OpKind::kRelu) {
      relu = id;
      break;
    }
  }
  const std::vector<ir::NodeId> around = search::with_neighbours(chain, {relu}, 4);
  for (ir::NodeId id : around) CHECK(chain.node(id).op != ir::OpKind::kAdd);
}

TEST_CASE("a part the judge refuses is searched again less a rule it used", "[search][split]") {
  // relu(conv(relu(conv(x))) + x), then sigmoids, in two parts: the search fuses the residual Add
  // into the second convolution and the ReLU after it into that. A judge that wants the ReLU
  // refuses it; the part searched again without the ReLU's fusion (the residual fused alone) is
  // kept.
  ir::Graph graph = resnet_chain(1);
  with_sigmoids(graph, graph.outputs()[0]);

  KeepsRelus judge;
  search::OptimizerOptions options;
  options.split_threshold = 7;
  options.judge = &judge;
  const search::OptimizeResult result = search::optimize(graph, testing::shipped_matcher(), NodesCount(), options);
  CHECK(result.split.retried >= 1);
  CHECK(relus(result.search.best) == 2);
  REQUIRE(result.search.steps.size() == 1);
  CHECK(result.search.steps[0].rule == "fuse-conv-bias-add-residual");
  CHECK(result.search.best.node_count() == graph.node_count() - 1);
  CHECK(runtime::check_equivalent(graph, result.search.best).passed());

  // A result refused as about even with its part is not searched again, nor any without retries:
  // the refused parts stay as they were.
  KeepsRelus even;
  even.even = true;
  options.judge = &even;
  const search::OptimizeResult about_even = search::optimize(graph, testing::shipped_matcher(), NodesCount(), options);
  CHECK(about_even.split.retried == 0);
  CHECK(about_even.search.best.structural_hash() == graph.structural_hash());
  KeepsRelus strict;
  options.judge = &strict;
  options.retries = 0;
  const search::OptimizeResult once = search::optimize(graph, testing::shipped_matcher(), NodesCount(), options);
  CHECK(once.split.retried == 0);
  CHECK(once.search.best.structural_hash() == graph.structural_hash());
}

TEST_CASE("a part changed only by fusions that export writes back is not judged", "[search][split]") {
  // Residual blocks: the search fuses each ReLU and residual sum into a convolution, which the
  // written model holds as a convolution, an Add and a ReLU again. Counted as written, no part
  // gains: none is timed, and the graph stays as it was.
  const ir::Graph graph = resnet_chain(2);
  search::OptimizerOptions options;
  options.split_threshold = 7;
  CountsCandidates judge;
  options.judge = &judge;
  const search::OptimizeResult written = search::optimize(graph, testing::shipped_matcher(), WrittenNodesCount(), options);
  CHECK(judge.asked == 0);
  CHECK(written.split.judged == 0);
  CHECK(written.split.unjudged >= 2);
  CHECK(written.search.best.structural_hash() == graph.structural_hash());

  // Counted node by node, each fusion saves a node: the parts are judged, and kept.
  CountsCandidates counting;
  options.judge = &counting;
  const search::OptimizeResult summed = search::optimize(graph, testing::shipped_matcher(), NodesCount(), options);
  CHECK(counting.asked >= 2);
  CHECK(summed.split.unjudged == 0);
  CHECK(summed.search.best.node_count() < graph.node_count());
}

}  // namespace graphsub
