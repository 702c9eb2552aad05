// Channel shuffles written as Gathers: which shuffles qualify, the channels each Gather picks, and
// the same values after, bit for bit.
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

/// The graph rewritten, with the count, after checking that it computes exactly what `graph` does.
ir::Graph gathered(const ir::Graph& graph, int expected_count) {
  int count = -1;
  ir::Graph result = rewrite::gather_channel_shuffles(graph, &count);
  CHECK(count == expected_count);
  runtime::CheckOptions options;
  options.dims = {{"N", 3}};
  options.atol = 0;
  options.rtol = 0;
  const runtime::CheckReport check = runtime::check_equivalent(graph, result, options);
  CHECK(check.passed());
  return result;
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
  const ir::Graph result = gathered(graph, 1);
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
  const ir::Graph result = gathered(graph, 1);
  // Output channel o reads input channel (o % 3) * 2 + o / 3: 0 2 4 1 3 5.
  CHECK(gather_indices(result) == std::vector<std::vector<int64_t>>{{0, 2}, {4, 1, 3}});
}

TEST_CASE("channel shuffle: what is not a shuffle read only in slices stays as it is", "[channel_shuffle]") {
  SECTION("another op reads the shuffled tensor") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId y = shuffled(graph, x, 8, 2);
    const ir::ValueId half = channels_of(graph, y, 0, 4);
    const ir::ValueId all = first(graph, add_inferred(graph, ir::OpKind::kRelu, {y}));
    graph.set_outputs({half, all});
    CHECK(count_of(gathered(graph, 0), ir::OpKind::kGather) == 0);
  }
  SECTION("a slice with a step") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    graph.set_outputs({channels_of(graph, shuffled(graph, x, 8, 2), 0, 8, 2)});
    CHECK(count_of(gathered(graph, 0), ir::OpKind::kTranspose) == 1);
  }
  SECTION("the shuffled tensor is a graph output") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId y = shuffled(graph, x, 8, 2);
    graph.set_outputs({channels_of(graph, y, 0, 4), y});
    CHECK(count_of(gathered(graph, 0), ir::OpKind::kTranspose) == 1);
  }
  SECTION("a Transpose that is not the swap of the split axes") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId parts = reshape(graph, x, {0, 2, 4, 2, 3});
    const ir::ValueId swapped =
        first(graph, add_inferred(graph, ir::OpKind::kTranspose, {parts}, attr("perm", std::vector<int64_t>{0, 1, 2, 4, 3})));
    graph.set_outputs({channels_of(graph, reshape(graph, swapped, {0, 8, 3, 2}), 0, 4)});
    CHECK(count_of(gathered(graph, 0), ir::OpKind::kTranspose) == 1);
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
    int count = -1;
    rewrite::gather_channel_shuffles(graph, &count);
    CHECK(count == 0);
  }
}

}  // namespace graphsub
