// Grouped-query attention without the key/value copies of repeat_kv: the products read the shared
// heads in groups of queries, computing the same; any other reader of the copies keeps them.
#include "rewrite/grouped_attention.h"

#include <memory>
#include <utility>

#include <catch2/catch.hpp>

#include "rewrite/shape_testing.h"
#include "runtime/equivalence.h"

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;
using testing::count_of;

ir::ValueId node1(ir::Graph& graph, ir::OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}) {
  return first(graph, add_inferred(graph, op, std::move(inputs), std::move(attrs)));
}

ir::ValueId scalar(ir::Graph& graph, float value) {
  return graph.add_weight({}, ir::share(ir::Tensor::from_floats({}, {value})));
}

/// How the graph reads the repeated keys besides the products.
enum class Extra { kNone, kSequenceLength, kHeadCount, kOutput };

/// A LLaMA-style attention core as the exporters write it: q [B, 4, M, 8] against keys and values
/// [B, KV, S, 8] (KV = `groups`, 2 by default, 1 for multi-query attention) repeated to 4 heads
/// (Unsqueeze, Expand to [1, KV, 4 / KV, 1, 8], Reshape to a target computed from Shape(q) and
/// Shape(k)), the keys transposed and scaled, q scaled, softmax, and the product with the
/// values. `extra` adds another reader of the repeated keys. With `renamed_rows` the values are
/// repeated first, and q passes an Identity typed [B, 4, T, 8]: no graph input has T, as in the
/// later layers of optimum's exports, whose dims shape inference renamed.
ir::Graph attention(Extra extra = Extra::kNone, int64_t opset = 17, int64_t groups = 2, bool renamed_rows = false) {
  ir::Graph graph;
  auto info = std::make_shared<ir::ModelInfo>();
  info->opsets = {{"", opset}};
  graph.set_model_info(info);
  const ir::Dim b = ir::Dim::named("B");
  ir::ValueId q = input(graph, "q", {b, ir::Dim::known(4), ir::Dim::named("M"), ir::Dim::known(8)});
  if (renamed_rows) {
    const ir::TensorType renamed{ir::DataType::kFloat,
                                 ir::Shape{true, {b, ir::Dim::known(4), ir::Dim::named("T"), ir::Dim::known(8)}}};
    q = first(graph, graph.add_node(ir::OpKind::kIdentity, {q}, {{renamed, {}}}));
  }
  const ir::ValueId k = input(graph, "k", {b, ir::Dim::known(groups), ir::Dim::named("S"), ir::Dim::known(8)});
  const ir::ValueId v = input(graph, "v", {b, ir::Dim::known(groups), ir::Dim::named("S"), ir::Dim::known(8)});
  std::vector<ir::ValueId> repeated;
  for (ir::ValueId x : renamed_rows ? std::vector<ir::ValueId>{v, k} : std::vector<ir::ValueId>{k, v}) {
    const ir::ValueId unsqueezed = node1(graph, ir::OpKind::kUnsqueeze, {x}, attr("axes", std::vector<int64_t>{2}));
    const ir::ValueId expanded =
        node1(graph, ir::OpKind::kExpand, {unsqueezed, ints(graph, {5}, {1, groups, 4 / groups, 1, 8})});
    const ir::ValueId target =
        concat(graph, {dim_of(graph, q, 0), ints(graph, {1}, {4}), dim_of(graph, x, 2), ints(graph, {1}, {8})});
    repeated.push_back(first(graph, runtime_reshape(graph, expanded, target)));
  }
  if (renamed_rows) std::swap(repeated[0], repeated[1]);
  const ir::ValueId keys = node1(graph, ir::OpKind::kMul,
                                 {node1(graph, ir::OpKind::kTranspose, {repeated[0]}, attr("perm", std::vector<int64_t>{0, 1, 3, 2})),
                                  scalar(graph, 0.5f)});
  const ir::ValueId queries = node1(graph, ir::OpKind::kMul, {q, scalar(graph, 0.5f)});
  const ir::ValueId scores = node1(graph, ir::OpKind::kMatMul, {queries, keys});
  const ir::ValueId weights = node1(graph, ir::OpKind::kSoftmax, {scores}, attr("axis", int64_t{3}));
  const ir::ValueId out = node1(graph, ir::OpKind::kMatMul, {weights, repeated[1]});
  graph.set_name(out, "y");
  std::vector<ir::ValueId> outputs{out};
  if (extra == Extra::kSequenceLength || extra == Extra::kHeadCount) {
    // Shape(E) gathered at 2 (S, as attention masks are sliced) or at 1 (the head count).
    const ir::ValueId shape = node1(graph, ir::OpKind::kShape, {repeated[0]}, attr("start", int64_t{0}));
    const ir::ValueId dim = node1(graph, ir::OpKind::kGather,
                                  {shape, ints(graph, {}, {extra == Extra::kHeadCount ? 1 : 2})}, attr("axis", int64_t{0}));
    graph.set_name(dim, "n");
    outputs.push_back(dim);
  } else if (extra == Extra::kOutput) {
    graph.set_name(repeated[0], "keys");
    outputs.push_back(repeated[0]);
  }
  graph.set_outputs(outputs);
  return graph;
}

runtime::CheckOptions sizes(int64_t batch, int64_t rows, int64_t sequence) {
  runtime::CheckOptions options;
  options.dims = {{"B", batch}, {"M", rows}, {"S", sequence}};
  return options;
}

}  // namespace

TEST_CASE("grouped attention: repeat_kv's copies go, the queries are grouped, and it computes the same",
          "[grouped_attention]") {
  const Extra extra = GENERATE(Extra::kNone, Extra::kSequenceLength);
  const ir::Graph graph = attention(extra);
  rewrite::GroupedAttentionStats stats;
  const ir::Graph result = rewrite::group_repeated_heads(graph, &stats);
  CHECK(stats.repeats == 2);
  CHECK(stats.products == 2);
  CHECK(count_of(result, ir::OpKind::kExpand) == 0);
  CHECK(count_of(result, ir::OpKind::kUnsqueeze) == 0);  // the old targets' dims went with them
  // M is read once from q's dims (Shape with start and end), times 2 for the grouped rows.
  CHECK(count_of(result, ir::OpKind::kGather) == (extra == Extra::kSequenceLength ? 1 : 0));
  for (ir::NodeId id : result.node_ids()) {
    const ir::Node& node = result.node(id);
    if (node.op == ir::OpKind::kMatMul) {
      // Each product multiplies [B, 2, 2·M, ·] by the shared heads [B, 2, ·, ·].
      CHECK(result.value(node.inputs[0]).type.shape.dims[1] == ir::Dim::known(2));
      CHECK(result.value(node.inputs[1]).type.shape.dims[1] == ir::Dim::known(2));
    }
    if (node.op == ir::OpKind::kReshape && node.inputs.size() == 2) {
      // No target has -1: an empty batch reshapes as it did.
      CHECK(result.node(result.value(node.inputs[1]).producer).op == ir::OpKind::kConcat);
    }
  }
  CHECK(runtime::check_equivalent(graph, result, sizes(2, 3, 5)).passed());
  CHECK(runtime::check_equivalent(graph, result, sizes(1, 1, 7)).passed());
  CHECK(runtime::check_equivalent(graph, result, sizes(0, 3, 5)).passed());
  CHECK(runtime::check_equivalent(graph, result, sizes(2, 0, 5)).passed());  // no query rows: 2·0 copies 0
}

TEST_CASE("grouped attention: one key/value head for all queries (multi-query attention)", "[grouped_attention]") {
  const ir::Graph graph = attention(Extra::kNone, 17, 1);
  rewrite::GroupedAttentionStats stats;
  const ir::Graph result = rewrite::group_repeated_heads(graph, &stats);
  CHECK(stats.repeats == 2);
  CHECK(count_of(result, ir::OpKind::kExpand) == 0);
  CHECK(runtime::check_equivalent(graph, result, sizes(2, 3, 5)).passed());
  CHECK(runtime::check_equivalent(graph, result, sizes(1, 1, 9)).passed());
}

TEST_CASE("grouped attention: rows no graph input names are read from each product's own operand",
          "[grouped_attention]") {
  // The values' product is grouped first; its scores share the queries' renamed row count T, but
  // they are computed from the keys' product: reading T from them for the queries would make a cycle.
  const ir::Graph graph = attention(Extra::kNone, 17, 2, true);
  rewrite::GroupedAttentionStats stats;
  const ir::Graph result = rewrite::group_repeated_heads(graph, &stats);
  CHECK(stats.repeats == 2);
  REQUIRE(result.topological_order().has_value());
  CHECK(runtime::check_equivalent(graph, result, sizes(2, 3, 5)).passed());
}

TEST_CASE("grouped attention: before opset 15 the rows are read with Shape and Gather", "[grouped_attention]") {
  const ir::Graph graph = attention(Extra::kNone, 14);
  rewrite::GroupedAttentionStats stats;
  const ir::Graph result = rewrite::group_repeated_heads(graph, &stats);
  CHECK(stats.repeats == 2);
  for (ir::NodeId id : result.node_ids()) {
    const ir::Node& node = result.node(id);
    if (node.op == ir::OpKind::kShape) CHECK_FALSE(node.attrs.has("end"));
  }
  CHECK(runtime::check_equivalent(graph, result, sizes(2, 3, 5)).passed());
}

TEST_CASE("grouped attention: repeated heads read as such elsewhere keep their copies", "[grouped_attention]") {
  const Extra extra = GENERATE(Extra::kHeadCount, Extra::kOutput);
  const ir::Graph graph = attention(extra);
  rewrite::GroupedAttentionStats stats;
  const ir::Graph result = rewrite::group_repeated_heads(graph, &stats);
  // The keys stay repeated; the values, read by their product only, are grouped.
  CHECK(stats.repeats == 1);
  CHECK(stats.products == 1);
  CHECK(count_of(result, ir::OpKind::kExpand) == 1);
  CHECK(runtime::check_equivalent(graph, result, sizes(2, 3, 5)).passed());
}

TEST_CASE("grouped attention: an expansion of another axis is no repetition of heads", "[grouped_attention]") {
  ir::Graph graph;
  const ir::ValueId q = input(graph, "q", {ir::Dim::known(1), ir::Dim::known(4), ir::Dim::known(3), ir::Dim::known(8)});
  const ir::ValueId k = input(graph, "k", {ir::Dim::known(1), ir::Dim::known(2), ir::Dim::known(5), ir::Dim::known(1)});
  // k's last axis (1) is broadcast to 8 as well: not a copy of whole heads.
  const ir::ValueId unsqueezed = node1(graph, ir::OpKind::kUnsqueeze, {k}, attr("axes", std::vector<int64_t>{2}));
  const ir::ValueId expanded =
      node1(graph, ir::OpKind::kExpand, {unsqueezed, ints(graph, {5}, {1, 2, 2, 5, 8})});
  ir::Attributes shape = attr("shape", std::vector<int64_t>{1, 4, 5, 8});
  shape.set("allowzero", int64_t{0});
  const ir::ValueId keys = node1(graph, ir::OpKind::kReshape, {expanded}, std::move(shape));
  const ir::ValueId scores = node1(graph, ir::OpKind::kMatMul,
                                   {q, node1(graph, ir::OpKind::kTranspose, {keys}, attr("perm", std::vector<int64_t>{0, 1, 3, 2}))});
  graph.set_outputs({scores});
  rewrite::GroupedAttentionStats stats;
  const ir::Graph result = rewrite::group_repeated_heads(graph, &stats);
  CHECK(stats.repeats == 0);
  CHECK(count_of(result, ir::OpKind::kExpand) == 1);
}

}  // namespace graphsub
