// The reciprocal of a square root written as Div(1, Sqrt): the RMSNorm form onnxruntime fuses,
// computing exactly the same values; other reciprocals stay.
#include "rewrite/rsqrt_form.h"

#include <catch2/catch.hpp>

#include "rewrite/shape_testing.h"
#include "runtime/equivalence.h"

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;
using testing::count_of;

ir::ValueId unary(ir::Graph& graph, ir::OpKind op, ir::ValueId x) { return first(graph, add_inferred(graph, op, {x})); }

ir::ValueId binary(ir::Graph& graph, ir::OpKind op, ir::ValueId a, ir::ValueId b) {
  return first(graph, add_inferred(graph, op, {a, b}));
}

/// x · rsqrt(mean(x²) + ε) as the dynamo exporter writes an RMSNorm (x: [N, 8]), and beside it
/// Reciprocal(x + 2), which is no square root's.
ir::Graph rms_norm() {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(8)});
  const ir::ValueId squares = binary(graph, ir::OpKind::kMul, x, x);
  ir::Attributes mean;
  mean.set("axes", std::vector<int64_t>{1});
  mean.set("keepdims", int64_t{1});
  const ir::ValueId variance = first(graph, add_inferred(graph, ir::OpKind::kReduceMean, {squares}, std::move(mean)));
  const ir::ValueId epsilon = graph.add_weight({}, ir::share(ir::Tensor::from_floats({}, {1e-6f})));
  const ir::ValueId root = unary(graph, ir::OpKind::kSqrt, binary(graph, ir::OpKind::kAdd, variance, epsilon));
  const ir::ValueId normed = binary(graph, ir::OpKind::kMul, x, unary(graph, ir::OpKind::kReciprocal, root));
  const ir::ValueId two = graph.add_weight({}, ir::share(ir::Tensor::from_floats({}, {2.0f})));
  const ir::ValueId other = unary(graph, ir::OpKind::kReciprocal, binary(graph, ir::OpKind::kAdd, x, two));
  graph.set_name(normed, "y");
  graph.set_name(other, "z");
  graph.set_outputs({normed, other});
  return graph;
}

}  // namespace

TEST_CASE("rsqrt form: the reciprocal of a square root becomes Div(1, Sqrt), computing the same", "[rsqrt_form]") {
  const ir::Graph graph = rms_norm();
  int rewritten = 0;
  const ir::Graph result = rewrite::write_rsqrt_as_division(graph, &rewritten);
  CHECK(rewritten == 1);
  CHECK(count_of(result, ir::OpKind::kReciprocal) == 1);  // Reciprocal(x + 2) stays
  CHECK(count_of(result, ir::OpKind::kDiv) == 1);
  for (ir::NodeId id : result.node_ids()) {
    const ir::Node& node = result.node(id);
    if (node.op != ir::OpKind::kDiv) continue;
    REQUIRE(result.value(node.inputs[0]).kind == ir::ValueKind::kWeight);
    CHECK(result.value(node.inputs[0]).data->data<float>()[0] == 1.0f);
    CHECK(result.node(result.value(node.inputs[1]).producer).op == ir::OpKind::kSqrt);
  }
  runtime::CheckOptions options;
  options.dims = {{"N", 3}};
  options.atol = 0;
  options.rtol = 0;
  CHECK(runtime::check_equivalent(graph, result, options).passed());
}

TEST_CASE("rsqrt form: a graph without one is returned as it is", "[rsqrt_form]") {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::known(4)});
  graph.set_outputs({unary(graph, ir::OpKind::kReciprocal, x)});
  int rewritten = -1;
  const ir::Graph result = rewrite::write_rsqrt_as_division(graph, &rewritten);
  CHECK(rewritten == 0);
  CHECK(count_of(result, ir::OpKind::kReciprocal) == 1);
}

}  // namespace graphsub
