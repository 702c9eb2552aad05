// Chains of data-movement nodes written anew: which chains qualify, the nodes written, and the
// same values after, bit for bit (checked at several sizes of the symbolic dims).
#include "rewrite/view_chains.h"

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

const ir::Dim S = ir::Dim::named("S");
const ir::Dim N = ir::Dim::named("N");
ir::Dim k(int64_t size) { return ir::Dim::known(size); }

ir::ValueId reshape(ir::Graph& graph, ir::ValueId x, std::vector<int64_t> target) {
  return first(graph, add_inferred(graph, ir::OpKind::kReshape, {x}, attr("shape", std::move(target))));
}

ir::ValueId transpose(ir::Graph& graph, ir::ValueId x, std::vector<int64_t> perm) {
  return first(graph, add_inferred(graph, ir::OpKind::kTranspose, {x}, attr("perm", std::move(perm))));
}

ir::ValueId unary(ir::Graph& graph, ir::OpKind op, ir::ValueId x, const std::string& axes_name = {},
                  std::vector<int64_t> axes = {}) {
  return first(graph, add_inferred(graph, op, {x}, axes_name.empty() ? ir::Attributes{} : attr(axes_name, axes)));
}

ir::ValueId gather(ir::Graph& graph, ir::ValueId x, int64_t index, int64_t axis) {
  return first(graph, add_inferred(graph, ir::OpKind::kGather, {x, ints(graph, {}, {index})}, attr("axis", axis)));
}

/// The graph rewritten, after checking the counts and that it computes exactly what `graph`
/// does at two sizes of each symbol.
ir::Graph rewritten(const ir::Graph& graph, int chains) {
  rewrite::ViewChainStats stats;
  ir::Graph result = rewrite::simplify_view_chains(graph, &stats);
  CHECK(stats.chains == chains);
  CHECK(stats.nodes_removed == static_cast<int>(graph.node_count() - result.node_count()));
  for (int64_t size : {1, 3}) {
    runtime::CheckOptions options;
    options.dims = {{"S", size + 1}, {"N", size}};
    options.atol = 0;
    options.rtol = 0;
    const runtime::CheckReport check = runtime::check_equivalent(graph, result, options);
    CHECK(check.passed());
  }
  return result;
}

/// The perm of the one Transpose of `graph`.
std::vector<int64_t> perm_of(const ir::Graph& graph) {
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op == ir::OpKind::kTranspose) return graph.node(id).attrs.get_ints("perm", {});
  }
  return {};
}

}  // namespace

TEST_CASE("view chains: PyTorch's packed q, k, v become Gathers of one Reshape", "[view_chains]") {
  // proj.unflatten(-1, (3, 8)).unsqueeze(0).transpose(0, -2).squeeze(-2), then [0], [1], [2].
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {S, N, k(24)});
  const ir::ValueId parts = reshape(graph, x, {0, 0, 3, 8});
  const ir::ValueId lifted = unary(graph, ir::OpKind::kUnsqueeze, parts, "axes", {0});
  const ir::ValueId swapped = transpose(graph, lifted, {3, 1, 2, 0, 4});
  const ir::ValueId packed = unary(graph, ir::OpKind::kSqueeze, swapped, "axes", {3});
  std::vector<ir::ValueId> outs;
  for (int64_t i = 0; i < 3; ++i) outs.push_back(unary(graph, ir::OpKind::kRelu, gather(graph, packed, i, 0)));
  graph.set_outputs(outs);
  const ir::Graph result = rewritten(graph, 1);
  CHECK(count_of(result, ir::OpKind::kTranspose) == 0);
  CHECK(count_of(result, ir::OpKind::kSqueeze) == 0);
  CHECK(count_of(result, ir::OpKind::kUnsqueeze) == 0);
  CHECK(count_of(result, ir::OpKind::kReshape) == 1);
  CHECK(count_of(result, ir::OpKind::kGather) == 3);
}

TEST_CASE("view chains: a per-head split with a Reshape on each side becomes one Reshape and one Transpose",
          "[view_chains]") {
  SECTION("known sizes: [4, 2, 24] -> [4, 6, 8] -> [6, 4, 8] -> [2, 3, 4, 8]") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {k(4), k(2), k(24)});
    const ir::ValueId heads = reshape(graph, transpose(graph, reshape(graph, x, {4, 6, 8}), {1, 0, 2}), {2, 3, 4, 8});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, heads)});
    const ir::Graph result = rewritten(graph, 1);
    CHECK(count_of(result, ir::OpKind::kReshape) == 1);
    CHECK(perm_of(result) == std::vector<int64_t>{1, 2, 0, 3});
  }
  SECTION("and transposed again for k: the Transposes become one") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {k(4), k(2), k(24)});
    const ir::ValueId heads = reshape(graph, transpose(graph, reshape(graph, x, {4, 6, 8}), {1, 2, 0}), {2, 3, 8, 4});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, heads)});
    const ir::Graph result = rewritten(graph, 1);
    CHECK(count_of(result, ir::OpKind::kReshape) == 1);
    CHECK(count_of(result, ir::OpKind::kTranspose) == 1);
    CHECK(perm_of(result) == std::vector<int64_t>{1, 2, 3, 0});
  }
  SECTION("symbolic sizes: [S, N, 24] -> [S, -1, 8] is [S, 3 N, 8]") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {S, N, k(24)});
    const ir::ValueId split = reshape(graph, x, {0, -1, 8});
    const ir::ValueId swapped = transpose(graph, split, {1, 0, 2});
    const ir::ValueId back = transpose(graph, swapped, {1, 0, 2});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, reshape(graph, back, {0, -1, 3, 8}))});
    const ir::Graph result = rewritten(graph, 1);
    CHECK(count_of(result, ir::OpKind::kTranspose) == 0);
    CHECK(count_of(result, ir::OpKind::kReshape) == 1);
  }
}

TEST_CASE("view chains: Reshape targets computed from the dims, as the TorchScript exporter writes them",
          "[view_chains]") {
  // q.view(S, N * 3, 8).transpose(0, 1).view(N, 3, S, 8) with S and N read at run time.
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {S, N, k(24)});
  const ir::ValueId heads = first(graph, add_inferred(graph, ir::OpKind::kMul, {dim_of(graph, x, 1), ints(graph, {1}, {3})}));
  const ir::ValueId split_target = concat(graph, {dim_of(graph, x, 0), heads, ints(graph, {1}, {8})});
  const ir::ValueId split = first(graph, runtime_reshape(graph, x, split_target));
  const ir::ValueId swapped = transpose(graph, split, {1, 0, 2});
  const ir::ValueId merge_target =
      concat(graph, {dim_of(graph, x, 1), ints(graph, {1}, {3}), dim_of(graph, x, 0), ints(graph, {1}, {8})});
  const ir::ValueId merged = first(graph, runtime_reshape(graph, swapped, merge_target));
  graph.set_outputs({unary(graph, ir::OpKind::kRelu, merged)});
  const ir::Graph result = rewritten(graph, 1);
  CHECK(count_of(result, ir::OpKind::kReshape) == 1);
  CHECK(count_of(result, ir::OpKind::kShape) == 0);
  CHECK(count_of(result, ir::OpKind::kConcat) == 0);
  CHECK(perm_of(result) == std::vector<int64_t>{1, 2, 0, 3});
}

TEST_CASE("view chains: a chain that undoes itself reads its start", "[view_chains]") {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {N, k(6)});
  const ir::ValueId y = transpose(graph, transpose(graph, unary(graph, ir::OpKind::kUnsqueeze, x, "axes", {2}), {2, 1, 0}),
                                  {2, 1, 0});
  graph.set_outputs({unary(graph, ir::OpKind::kRelu, unary(graph, ir::OpKind::kSqueeze, y, "axes", {2}))});
  const ir::Graph result = rewritten(graph, 1);
  CHECK(result.node_count() == 1);
}

TEST_CASE("view chains: a Flatten regroups as a Reshape does", "[view_chains]") {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {N, k(6), k(4)});
  const ir::ValueId split = reshape(graph, x, {0, 2, 3, 4});
  const ir::ValueId swapped = transpose(graph, split, {0, 2, 1, 3});
  const ir::ValueId flat = first(graph, add_inferred(graph, ir::OpKind::kFlatten, {swapped}, attr("axis", int64_t{2})));
  const ir::ValueId picked = gather(graph, unary(graph, ir::OpKind::kIdentity, flat), -1, 1);
  graph.set_outputs({unary(graph, ir::OpKind::kRelu, picked)});
  // [N, 2, 3, 4] -> [N, 3, 2, 4] -> [3 N, 8] -> column 7. The Gather takes two atoms (2 x 4)
  // at once, which a view does not follow: the chain is cut before it, at the Identity, and
  // the Flatten is written as the Reshape [-1, 8].
  const ir::Graph result = rewritten(graph, 1);
  CHECK(count_of(result, ir::OpKind::kIdentity) == 0);
  CHECK(count_of(result, ir::OpKind::kFlatten) == 0);
  CHECK(count_of(result, ir::OpKind::kGather) == 1);
  CHECK(count_of(result, ir::OpKind::kReshape) == 2);
}

TEST_CASE("view chains: what cannot be written in fewer nodes, or exactly, stays as it is", "[view_chains]") {
  SECTION("a size an exporter fixed: [S, N, 24] -> [4, -1, 8] regroups only at S = 4") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {S, N, k(24)});
    const ir::ValueId y = reshape(graph, transpose(graph, reshape(graph, x, {4, -1, 8}), {1, 0, 2}), {-1, 3, 4, 8});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, y)});
    rewrite::ViewChainStats stats;
    const ir::Graph result = rewrite::simplify_view_chains(graph, &stats);
    CHECK(stats.chains == 0);
    CHECK(result.node_count() == graph.node_count());
  }
  SECTION("a Transpose shared by two readers would be copied twice") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {k(4), k(6)});
    const ir::ValueId t = transpose(graph, x, {1, 0});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, reshape(graph, t, {2, 3, 4})),
                       unary(graph, ir::OpKind::kNeg, reshape(graph, t, {3, 2, 4}))});
    rewrite::ViewChainStats stats;
    rewrite::simplify_view_chains(graph, &stats);
    CHECK(stats.chains == 0);
  }
  SECTION("a chain value that is a graph output") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {k(4), k(6)});
    const ir::ValueId t = transpose(graph, x, {1, 0});
    graph.set_outputs({t, transpose(graph, t, {1, 0})});
    rewrite::ViewChainStats stats;
    rewrite::simplify_view_chains(graph, &stats);
    CHECK(stats.chains == 0);
  }
  SECTION("a channel shuffle: Reshape, Transpose, Reshape already") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(8), k(2), k(3)});
    const ir::ValueId y = reshape(graph, transpose(graph, reshape(graph, x, {0, 2, 4, 2, 3}), {0, 2, 1, 3, 4}), {0, 8, 2, 3});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, y)});
    rewrite::ViewChainStats stats;
    rewrite::simplify_view_chains(graph, &stats);
    CHECK(stats.chains == 0);
  }
}

TEST_CASE("view chains: a pooled image squeezed and reshaped back is the pooled image itself", "[view_chains]") {
  // tf2onnx's squeeze-and-excitation: GlobalAveragePool [N, 8, 1, 1], Squeeze(2), Reshape to
  // [-1, 8, 1, 1] for the 1x1 convolution.
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {N, k(8), k(5), k(5)});
  const ir::ValueId pooled = unary(graph, ir::OpKind::kGlobalAveragePool, x);
  const ir::ValueId squeezed = unary(graph, ir::OpKind::kSqueeze, pooled, "axes", {2});
  const ir::ValueId back = reshape(graph, squeezed, {-1, 8, 1, 1});
  graph.set_outputs({unary(graph, ir::OpKind::kRelu, back)});
  const ir::Graph result = rewritten(graph, 1);
  CHECK(result.node_count() == 2);  // the pool and the Relu
}

TEST_CASE("view chains: a lone Reshape that keeps every dim goes, and Reshapes without a Transpose become one",
          "[view_chains]") {
  SECTION("[N, 4, 1, 1] reshaped to [-1, 4, 1, 1]") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(4), k(1), k(1)});
    const ir::ValueId same = reshape(graph, unary(graph, ir::OpKind::kRelu, x), {-1, 4, 1, 1});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, same)});
    CHECK(count_of(rewritten(graph, 1), ir::OpKind::kReshape) == 0);
  }
  SECTION("[S, N, 24] -> [S, N, 4, 6] -> Squeeze-free regroup [S, N, 2, 12]") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {S, N, k(24)});
    const ir::ValueId split = reshape(graph, x, {0, 0, 4, 6});
    const ir::ValueId lifted = unary(graph, ir::OpKind::kUnsqueeze, split, "axes", {2});
    const ir::ValueId regrouped = reshape(graph, lifted, {0, 0, 2, 12});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, regrouped)});
    const ir::Graph result = rewritten(graph, 1);
    CHECK(count_of(result, ir::OpKind::kReshape) == 1);
    CHECK(count_of(result, ir::OpKind::kUnsqueeze) == 0);
  }
  SECTION("a lone Reshape that changes the dims stays") {
    ir::Graph graph;
    const ir::ValueId x = input(graph, "x", {N, k(4), k(6)});
    graph.set_outputs({unary(graph, ir::OpKind::kRelu, reshape(graph, x, {0, 24}))});
    CHECK(count_of(rewritten(graph, 0), ir::OpKind::kReshape) == 1);
  }
}

}  // namespace graphsub
