// Channel shuffles rewritten: which shuffles qualify, the channels each Gather picks (the same
// values after, bit for bit), and the convolutions that fold them into their weights (the same
// values up to rounding).
#include "rewrite/channel_shuffle.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rewrite/shape_testing.h"
#include "runtime/equivalence.h"

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;
using testing::count_of;

const ir::Dim N = ir::Dim::named("N");
ir::Dim k(int64_t size) { return ir::Dim::known(size); }

/// Reshape(x, target) with a literal target.
ir::ValueId reshape(ir::Graph& graph, ir::ValueId x, std::vector<int64_t> target) {
  return first(graph, add_inferred(graph, ir::OpKind::kReshape, {x}, attr("shape", std::move(target))));
}

/// ShuffleNet's shuffle of x [N, channels, 2, 3] in `groups` groups, as the shape arithmetic
/// leaves it: Reshape to [N, groups, channels / groups, 2, 3], Transpose(perm), Reshape back.
ir::ValueId shuffled(ir::Graph& graph, ir::ValueId x, int64_t channels, int64_t groups,
                     std::vector<int64_t> perm = {0, 2, 1, 3, 4}) {
  const ir::ValueId parts = reshape(graph, x, {0, groups, channels / groups, 2, 3});
  const ir::ValueId swapped = first(graph, add_inferred(graph, ir::OpKind::kTranspose, {parts}, attr("perm", std::move(perm))));
  return reshape(graph, swapped, {0, channels, 2, 3});
}

/// A Slice of channels [begin, end) (axis 1).
ir::ValueId channels_of(ir::Graph& graph, ir::ValueId x, int64_t begin, int64_t end, int64_t step = 1) {
  ir::Attributes attrs;
  attrs.set("starts", std::vector<int64_t>{begin});
  attrs.set("ends", std::vector<int64_t>{end});
  attrs.set("axes", std::vector<int64_t>{1});
  attrs.set("steps", std::vector<int64_t>{step});
  return first(graph, add_inferred(graph, ir::OpKind::kSlice, {x}, std::move(attrs)));
}

/// The graph rewritten, after checking the counts and that it computes what `graph` does: exactly
/// when only Gathers were written, to rounding when convolutions were folded.
ir::Graph rewritten(const ir::Graph& graph, int as_gather, int into_convolutions = 0) {
  rewrite::ShuffleStats stats;
  ir::Graph result = rewrite::rewrite_channel_shuffles(graph, &stats);
  CHECK(stats.as_gather == as_gather);
  CHECK(stats.into_convolutions == into_convolutions);
  runtime::CheckOptions options;
  options.dims = {{"N", 3}};
  if (into_convolutions == 0) {
    options.atol = 0;
    options.rtol = 0;
  }
  const runtime::CheckReport check = runtime::check_equivalent(graph, result, options);
  CHECK(check.passed());
  return result;
}

/// A 2-D Conv(x, w) with a seeded random weight of `dims` and `group`, padded to keep the size.
ir::ValueId conv(ir::Graph& graph, ir::ValueId x, std::vector<int64_t> dims, int64_t group, uint32_t seed,
                 bool bias = false) {
  std::vector<ir::ValueId> inputs = {x, graph.add_weight({}, ir::share(testing::random_tensor(dims, seed)))};
  if (bias) inputs.push_back(graph.add_weight({}, ir::share(testing::random_tensor({dims[0]}, seed + 100))));
  const int64_t pad = dims.back() / 2;
  return first(graph, add_inferred(graph, ir::OpKind::kConv, std::move(inputs),
                                   testing::conv_attributes({dims[2], dims[3]}, {1, 1}, {pad, pad, pad, pad}, {1, 1},
                                                            group, "none")));
}

/// The int64 indices of the Gathers of `graph`, in node id order.
std::vector<std::vector<int64_t>> gather_indices(const ir::Graph& graph) {
  std::vector<std::vector<int64_t>> all;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    if (node.op == ir::OpKind::kGather) all.push_back(graph.value(node.inputs[1]).data->to_int64s());
  }
  return all;
}

}  // namespace

TEST_CASE("channel shuffle: a Split of the shuffled channels becomes Gathers of the unshuffled ones",
          "[channel_shuffle]") {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
  const ir::ValueId y = shuffled(graph, x, 8, 2);
  const ir::NodeId split = add_inferred(graph, ir::OpKind::kSplit, {y}, [] {
    ir::Attributes attrs;
    attrs.set("axis", int64_t{1});
    attrs.set("split", std::vector<int64_t>{4, 4});
    return attrs;
  }());
  const ir::ValueId a = first(graph, add_inferred(graph, ir::OpKind::kRelu, {graph.node(split).outputs[0]}));
  const ir::ValueId b = first(graph, add_inferred(graph, ir::OpKind::kNeg, {graph.node(split).outputs[1]}));
  graph.set_outputs({a, b});
  const ir::Graph result = rewritten(graph, 1);
  CHECK(count_of(result, ir::OpKind::kTranspose) == 0);
  CHECK(count_of(result, ir::OpKind::kReshape) == 0);
  CHECK(count_of(result, ir::OpKind::kSplit) == 0);
  // Output channel o reads input channel (o % 2) * 4 + o / 2.
  CHECK(gather_indices(result) == std::vector<std::vector<int64_t>>{{0, 4, 1, 5}, {2, 6, 3, 7}});
}

TEST_CASE("channel shuffle: Slices of three groups, a negative end among them", "[channel_shuffle]") {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {N, k(6), k(2), k(3)});
  const ir::ValueId y = shuffled(graph, x, 6, 3);
  const ir::ValueId low = channels_of(graph, y, 0, 2);
  const ir::ValueId high = channels_of(graph, y, 2, -1);
  graph.set_outputs({low, high});
  const ir::Graph result = rewritten(graph, 1);
  // Output channel o reads input channel (o % 3) * 2 + o / 3: 0 2 4 1 3 5.
  CHECK(gather_indices(result) == std::vector<std::vector<int64_t>>{{0, 2}, {4, 1, 3}});
}

TEST_CASE("channel shuffle: what is not a shuffle read only in slices stays as it is", "[channel_shuffle]") {
  SECTION("a convolution and another op read the shuffled tensor") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId y = shuffled(graph, x, 8, 2);
    graph.set_outputs({conv(graph, y, {4, 8, 1, 1}, 1, 1), first(graph, add_inferred(graph, ir::OpKind::kRelu, {y}))});
    CHECK(count_of(rewritten(graph, 0), ir::OpKind::kTranspose) == 1);
  }
  SECTION("another op reads the shuffled tensor") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId y = shuffled(graph, x, 8, 2);
    const ir::ValueId half = channels_of(graph, y, 0, 4);
    const ir::ValueId all = first(graph, add_inferred(graph, ir::OpKind::kRelu, {y}));
    graph.set_outputs({half, all});
    CHECK(count_of(rewritten(graph, 0), ir::OpKind::kGather) == 0);
  }
  SECTION("a slice with a step") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    graph.set_outputs({channels_of(graph, shuffled(graph, x, 8, 2), 0, 8, 2)});
    CHECK(count_of(rewritten(graph, 0), ir::OpKind::kTranspose) == 1);
  }
  SECTION("the shuffled tensor is a graph output") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId y = shuffled(graph, x, 8, 2);
    graph.set_outputs({channels_of(graph, y, 0, 4), y});
    CHECK(count_of(rewritten(graph, 0), ir::OpKind::kTranspose) == 1);
  }
  SECTION("a Transpose that is not the swap of the split axes") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId parts = reshape(graph, x, {0, 2, 4, 2, 3});
    const ir::ValueId swapped =
        first(graph, add_inferred(graph, ir::OpKind::kTranspose, {parts}, attr("perm", std::vector<int64_t>{0, 1, 2, 4, 3})));
    graph.set_outputs({channels_of(graph, reshape(graph, swapped, {0, 8, 3, 2}), 0, 4)});
    CHECK(count_of(rewritten(graph, 0), ir::OpKind::kTranspose) == 1);
  }
  SECTION("an unnamed unknown dim beside the channels") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), ir::Dim{}, k(3)});
    const ir::ValueId parts = first(graph, add_inferred(graph, ir::OpKind::kReshape, {x},
                                                        attr("shape", std::vector<int64_t>{0, 2, 4, 0, 3})));
    const ir::ValueId swapped =
        first(graph, add_inferred(graph, ir::OpKind::kTranspose, {parts}, attr("perm", std::vector<int64_t>{0, 2, 1, 3, 4})));
    const ir::ValueId y = first(graph, add_inferred(graph, ir::OpKind::kReshape, {swapped},
                                                    attr("shape", std::vector<int64_t>{0, 8, -1, 3})));
    graph.set_outputs({channels_of(graph, y, 0, 4)});
    rewrite::ShuffleStats stats;
    rewrite::rewrite_channel_shuffles(graph, &stats);
    CHECK(stats.as_gather + stats.into_convolutions == 0);
  }
}

TEST_CASE("channel shuffle: convolutions that read it take the unshuffled tensor with reordered weights",
          "[channel_shuffle]") {
  // The last shuffle of a ShuffleNet stage: a depthwise 3x3 convolution (its output then read by
  // a 1x1 one) and a 1x1 convolution read it.
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
  const ir::ValueId y = shuffled(graph, x, 8, 2);
  const ir::ValueId depthwise = conv(graph, y, {8, 1, 3, 3}, 8, 1, true);
  const ir::ValueId mixed = conv(graph, depthwise, {5, 8, 1, 1}, 1, 2, true);
  const ir::ValueId pointwise = conv(graph, y, {6, 8, 1, 1}, 1, 3);
  graph.set_outputs({mixed, pointwise});
  const ir::Graph result = rewritten(graph, 0, 1);
  CHECK(count_of(result, ir::OpKind::kTranspose) == 0);
  CHECK(count_of(result, ir::OpKind::kReshape) == 0);
  CHECK(count_of(result, ir::OpKind::kConv) == 3);
}

TEST_CASE("channel shuffle: a depthwise convolution whose output another op reads keeps it", "[channel_shuffle]") {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
  const ir::ValueId depthwise = conv(graph, shuffled(graph, x, 8, 2), {8, 1, 3, 3}, 8, 1);
  graph.set_outputs({first(graph, add_inferred(graph, ir::OpKind::kRelu, {depthwise}))});
  CHECK(count_of(rewritten(graph, 0), ir::OpKind::kTranspose) == 1);
}

}  // namespace graphsub
