// Shape arithmetic resolved ahead of time: literal Reshape targets, constants, and the same values.
#include "rewrite/shape_arithmetic.h"

#include <catch2/catch.hpp>

#include "rewrite/shape_testing.h"
#include "runtime/equivalence.h"

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;

/// The only Reshape of `graph`.
const ir::Node& reshape_of(const ir::Graph& graph) {
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op == ir::OpKind::kReshape) return graph.node(id);
  }
  FAIL("no Reshape left");
  throw std::logic_error("unreachable");
}

void require_same_values(const ir::Graph& before, const ir::Graph& after, std::map<std::string, int64_t> dims) {
  runtime::CheckOptions options;
  options.dims = std::move(dims);
  REQUIRE(runtime::check_equivalent(before, after, options).passed());
}

TEST_CASE("shape arithmetic: a target built from a symbolic dim copies it with 0", "[shape_arithmetic]") {
  // Reshape(x, Concat(dim 0 of x, [2, 12]))  x: [N, 4, 6]  ->  Reshape(x, [0, 2, 12])
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(4), ir::Dim::known(6)});
  const ir::ValueId target = concat(graph, {dim_of(graph, x, 0), ints(graph, {2}, {2, 12})});
  graph.set_outputs({first(graph, runtime_reshape(graph, x, target))});

  rewrite::ShapeArithmeticStats stats;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph, &stats);
  CHECK(stats.reshapes == 1);
  CHECK(resolved.node_count() == 1);
  const ir::Node& reshape = reshape_of(resolved);
  CHECK(reshape.inputs.size() == 1);
  CHECK(reshape.attrs.get_ints("shape", {}) == std::vector<int64_t>{0, 2, 12});
  CHECK(ir::to_string(resolved.value(reshape.outputs[0]).type.shape) == "[N,2,12]");
  require_same_values(graph, resolved, {{"N", 3}});
}

TEST_CASE("shape arithmetic: sizes computed from known dims become constants", "[shape_arithmetic]") {
  // Reshape(x, Concat(dim 0, dim 1 / 2, [-1]))  x: [N, 4, 6]  ->  Reshape(x, [0, 2, -1])
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(4), ir::Dim::known(6)});
  const ir::ValueId half = first(graph, add_inferred(graph, ir::OpKind::kDiv, {dim_of(graph, x, 1), ints(graph, {}, {2})}));
  const ir::ValueId target = concat(graph, {dim_of(graph, x, 0), half, ints(graph, {1}, {-1})});
  graph.set_outputs({first(graph, runtime_reshape(graph, x, target))});

  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph);
  CHECK(resolved.node_count() == 1);
  CHECK(reshape_of(resolved).attrs.get_ints("shape", {}) == std::vector<int64_t>{0, 2, -1});
  require_same_values(graph, resolved, {{"N", 2}});
}

TEST_CASE("shape arithmetic: a symbol elsewhere becomes -1 only beside positive sizes", "[shape_arithmetic]") {
  ir::Graph graph;
  const ir::ValueId y = input(graph, "y", {ir::Dim::known(4), ir::Dim::named("N")});
  const ir::ValueId z = input(graph, "z", {ir::Dim::named("N"), ir::Dim::named("M"), ir::Dim::known(6)});
  // Reshape(y, Concat(dim 1 of y, [4]))  y: [4, N]  ->  Reshape(y, [-1, 4])
  const ir::NodeId to_rows = runtime_reshape(graph, y, concat(graph, {dim_of(graph, y, 1), ints(graph, {1}, {4})}));
  // Reshape(z, Concat(dim 0, [6], dim 1)): M would be a -1 beside a copied N, which is 0 for an
  // empty z; it stays computed.
  const ir::NodeId swapped = runtime_reshape(
      graph, z, concat(graph, {dim_of(graph, z, 0), ints(graph, {1}, {6}), dim_of(graph, z, 1)}));
  graph.set_outputs({first(graph, to_rows), first(graph, swapped)});

  rewrite::ShapeArithmeticStats stats;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph, &stats);
  CHECK(stats.reshapes == 1);
  std::vector<std::vector<int64_t>> literal;
  std::size_t computed = 0;
  for (ir::NodeId id : resolved.node_ids()) {
    const ir::Node& node = resolved.node(id);
    if (node.op != ir::OpKind::kReshape) continue;
    if (node.inputs.size() == 1) literal.push_back(node.attrs.get_ints("shape", {}));
    computed += node.inputs.size() == 2;
  }
  CHECK(literal == std::vector<std::vector<int64_t>>{{-1, 4}});
  CHECK(computed == 1);
  require_same_values(graph, resolved, {{"N", 5}, {"M", 2}});
}

TEST_CASE("shape arithmetic: a size the dims do not decide becomes -1 beside positive sizes", "[shape_arithmetic]") {
  // Reshape(x, Concat(dim 0 * dim 1, [6]))  x: [N, M, 6]  ->  Reshape(x, [-1, 6])
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::named("M"), ir::Dim::known(6)});
  const ir::ValueId rows = first(graph, add_inferred(graph, ir::OpKind::kMul, {dim_of(graph, x, 0), dim_of(graph, x, 1)}));
  graph.set_outputs({first(graph, runtime_reshape(graph, x, concat(graph, {rows, ints(graph, {1}, {6})})))});

  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph);
  CHECK(resolved.node_count() == 1);
  CHECK(reshape_of(resolved).attrs.get_ints("shape", {}) == std::vector<int64_t>{-1, 6});
  require_same_values(graph, resolved, {{"N", 3}, {"M", 2}});
}

TEST_CASE("shape arithmetic: with allowzero a symbol is never copied by 0", "[shape_arithmetic]") {
  // Reshape[allowzero=1](x, Concat(dim 0, [24]))  x: [N, 4, 6]  ->  Reshape[allowzero=1](x, [-1, 24])
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(4), ir::Dim::known(6)});
  graph.set_outputs({first(graph, runtime_reshape(graph, x, concat(graph, {dim_of(graph, x, 0), ints(graph, {1}, {24})}), 1))});

  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph);
  CHECK(reshape_of(resolved).attrs.get_ints("shape", {}) == std::vector<int64_t>{-1, 24});
  require_same_values(graph, resolved, {{"N", 3}});
}

TEST_CASE("shape arithmetic: Mod, Min and Max of known sizes are evaluated", "[shape_arithmetic]") {
  // Swin's pad to a multiple of the window: (7 - W % 7) % 7 with W = 12 is 2, in ONNX's Mod,
  // whose result takes the divisor's sign (-5 mod 7 is 2, and 5 mod -7 is -2).
  // Reshape(x, Concat(dim 0, [(7 - W % 7) % 7], [min(W, 3)], [max(-5 % 7, 5 % -7)], [-1]))
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(12)});
  auto binary = [&](ir::OpKind op, ir::ValueId a, ir::ValueId b) { return first(graph, add_inferred(graph, op, {a, b})); };
  const ir::ValueId width = dim_of(graph, x, 1);
  const ir::ValueId seven = ints(graph, {1}, {7});
  const ir::ValueId pad = binary(ir::OpKind::kMod, binary(ir::OpKind::kSub, seven, binary(ir::OpKind::kMod, width, seven)),
                                 seven);
  const ir::ValueId smaller = binary(ir::OpKind::kMin, width, ints(graph, {1}, {3}));
  const ir::ValueId larger = binary(ir::OpKind::kMax, binary(ir::OpKind::kMod, ints(graph, {1}, {-5}), seven),
                                    binary(ir::OpKind::kMod, ints(graph, {1}, {5}), ints(graph, {1}, {-7})));
  const ir::ValueId target = concat(graph, {dim_of(graph, x, 0), pad, smaller, larger, ints(graph, {1}, {-1})});
  graph.set_outputs({first(graph, runtime_reshape(graph, x, target))});

  rewrite::ShapeArithmeticStats stats;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph, &stats);
  CHECK(stats.reshapes == 1);
  CHECK(reshape_of(resolved).attrs.get_ints("shape", {}) == std::vector<int64_t>{0, 2, 3, 2, -1});
  require_same_values(graph, resolved, {{"N", 2}});
}

TEST_CASE("shape arithmetic: a Mod with a symbol or by zero stays computed", "[shape_arithmetic]") {
  // N % 4 is not known, nor N % 1 (not tracked), nor 12 % 0 (ONNX leaves it undefined): the
  // three stay, and only the known 12 that the last reads becomes a weight.
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(12)});
  const ir::ValueId rest = first(graph, add_inferred(graph, ir::OpKind::kMod, {dim_of(graph, x, 0), ints(graph, {1}, {4})}));
  const ir::ValueId once = first(graph, add_inferred(graph, ir::OpKind::kMod, {dim_of(graph, x, 0), ints(graph, {1}, {1})}));
  const ir::ValueId none = first(graph, add_inferred(graph, ir::OpKind::kMod, {dim_of(graph, x, 1), ints(graph, {1}, {0})}));
  graph.set_outputs({rest, once, none});
  rewrite::ShapeArithmeticStats stats;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph, &stats);
  CHECK(stats.constants == 1);
  std::size_t mods = 0;
  for (ir::NodeId id : resolved.node_ids()) mods += resolved.node(id).op == ir::OpKind::kMod ? 1 : 0;
  CHECK(mods == 3);
}

TEST_CASE("shape arithmetic: a computed size read as data becomes a weight", "[shape_arithmetic]") {
  // Mul(x, Cast(Gather(Shape(x), 1)))  x: [N, 4]  ->  Mul(x, 4.0) after folding; here the int
  // size read by the Cast becomes the weight 4.
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(4)});
  const ir::ValueId size = dim_of(graph, x, 1);
  const ir::ValueId as_float = first(graph, add_inferred(graph, ir::OpKind::kCast, {size}, attr("to", int64_t{1})));
  graph.set_outputs({first(graph, add_inferred(graph, ir::OpKind::kMul, {x, as_float}))});

  rewrite::ShapeArithmeticStats stats;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph, &stats);
  CHECK(stats.constants == 1);
  CHECK(resolved.node_count() == 2);  // the Cast of a weight (folded later) and the Mul
  require_same_values(graph, resolved, {{"N", 3}});
}

}  // namespace
}  // namespace graphsub

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;

/// torch's token.expand(n, -1, -1) as the TorchScript exporter writes it (ViT's class token):
///   r = Reshape(Concat(dim 0 of x, [-1], [-1]), [-1]);  ones = ConstantOfShape(Shape(r), 1)
///   Expand(token, Where(Equal(r, ones * -1), ones, r))        token [1, 1, 4], x [N, 5, 4]
ir::Graph class_token_expand(const std::vector<ir::Dim>& x_dims) {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", x_dims);
  const ir::ValueId token = input(graph, "token", {ir::Dim::known(1), ir::Dim::known(1), ir::Dim::known(4)});
  const ir::ValueId parts = concat(graph, {dim_of(graph, x, 0), ints(graph, {1}, {-1}), ints(graph, {1}, {-1})});
  const ir::ValueId r = first(graph, runtime_reshape(graph, parts, ints(graph, {1}, {-1})));
  const ir::ValueId shape = first(graph, add_inferred(graph, ir::OpKind::kShape, {r}, attr("start", int64_t{0})));
  const ir::ValueId ones = first(graph, add_inferred(graph, ir::OpKind::kConstantOfShape, {shape},
                                                     attr("value", ir::share(ir::Tensor::from_int64s({1}, {1})))));
  const ir::ValueId minus = first(graph, add_inferred(graph, ir::OpKind::kMul, {ones, ints(graph, {}, {-1})}));
  const ir::ValueId equal = first(graph, add_inferred(graph, ir::OpKind::kEqual, {r, minus}));
  const ir::ValueId sizes = first(graph, add_inferred(graph, ir::OpKind::kWhere, {equal, ones, r}));
  const ir::ValueId expanded = first(graph, add_inferred(graph, ir::OpKind::kExpand, {token, sizes}));
  graph.set_name(expanded, "y");
  graph.set_outputs({expanded});
  return graph;
}

}  // namespace

TEST_CASE("shape arithmetic: an expand of a class token over the batch is evaluated", "[shape_arithmetic]") {
  // At known sizes (the measuring instance), Equal, Where and ConstantOfShape are evaluated: the
  // Expand's shape is a constant [2, 1, 1] and every node of its computation goes.
  const ir::Graph known = class_token_expand({ir::Dim::known(2), ir::Dim::known(5), ir::Dim::known(4)});
  rewrite::KnownValues values;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(known, nullptr, &values);
  CHECK(resolved.node_count() == 1);
  CHECK(ir::to_string(resolved.value(resolved.outputs()[0]).type.shape) == "[2,1,4]");
  require_same_values(known, resolved, {});
  // With the batch symbolic, [N, 1, 1] is not all known: the computation stays, computing the
  // same, and the Expand's result is typed [N, 1, 4] from it.
  const ir::Graph symbolic = class_token_expand({ir::Dim::named("N"), ir::Dim::known(5), ir::Dim::known(4)});
  const ir::Graph kept = rewrite::resolve_shape_arithmetic(symbolic);
  CHECK(kept.node_count() > 1);
  CHECK(ir::to_string(kept.value(kept.outputs()[0]).type.shape) == "[N,1,4]");
  require_same_values(symbolic, kept, {{"N", 3}});
}

}  // namespace graphsub

namespace graphsub {
namespace {

using namespace testing::shapes;
using testing::add_inferred;

/// Grouped-query attention's repeat_kv as Hugging Face's exports write it, x: [N, 4, S, 8]:
///   e = Expand(Unsqueeze(x, 2), Concat(dim 0 of x, [4], [2], dim 2 of x, [8]))
///   Reshape(e, Concat(dim 0 of x, [8], dim 2 of x, [8]))
/// with the second Reshape's dim 2 read as Reshape(Gather(Shape(x), 2), [1]), the form an
/// Unsqueeze takes once the data-movement chains have run.
ir::Graph repeat_kv() {
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(4), ir::Dim::named("S"), ir::Dim::known(8)});
  const ir::ValueId u = first(graph, add_inferred(graph, ir::OpKind::kUnsqueeze, {x}, attr("axes", std::vector<int64_t>{2})));
  const ir::ValueId sizes = concat(graph, {dim_of(graph, x, 0), ints(graph, {2}, {4, 2}), dim_of(graph, x, 2), ints(graph, {1}, {8})});
  const ir::ValueId e = first(graph, add_inferred(graph, ir::OpKind::kExpand, {u, sizes}));
  const ir::ValueId shape = first(graph, add_inferred(graph, ir::OpKind::kShape, {x}, attr("start", int64_t{0})));
  const ir::ValueId s = first(graph, add_inferred(graph, ir::OpKind::kGather, {shape, ints(graph, {}, {2})}, attr("axis", int64_t{0})));
  const ir::ValueId s_vector = first(graph, add_inferred(graph, ir::OpKind::kReshape, {s}, attr("shape", std::vector<int64_t>{1})));
  const ir::ValueId target = concat(graph, {dim_of(graph, x, 0), ints(graph, {1}, {8}), s_vector, ints(graph, {1}, {8})});
  graph.set_outputs({first(graph, runtime_reshape(graph, e, target))});
  return graph;
}

}  // namespace

TEST_CASE("shape arithmetic: an expand whose symbols keep the input's dims gets a literal shape", "[shape_arithmetic]") {
  const ir::Graph graph = repeat_kv();
  rewrite::ShapeArithmeticStats stats;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph, &stats);
  CHECK(stats.expands == 1);
  for (ir::NodeId id : resolved.node_ids()) {
    const ir::Node& node = resolved.node(id);
    if (node.op != ir::OpKind::kExpand) continue;
    const ir::Value& shape = resolved.value(node.inputs[1]);
    REQUIRE(shape.kind == ir::ValueKind::kWeight);
    CHECK(shape.data->to_int64s() == std::vector<int64_t>{1, 4, 2, 1, 8});
    CHECK(ir::to_string(resolved.value(node.outputs[0]).type.shape) == "[N,4,2,S,8]");
  }
  require_same_values(graph, resolved, {{"N", 2}, {"S", 3}});
}

TEST_CASE("shape arithmetic: a shape that stays computed reads the input's dims in one Shape", "[shape_arithmetic]") {
  // The Reshape's [N, 8, S, 8] cannot be literal (S would be a -1 beside a copied N): it becomes
  // Concat(Shape(x)[0:1], [8], Shape(x)[2:3], [8]), 3 nodes for the 8 the export computed it with.
  const ir::Graph graph = repeat_kv();
  rewrite::ShapeArithmeticStats stats;
  const ir::Graph resolved = rewrite::resolve_shape_arithmetic(graph, &stats);
  CHECK(stats.compacted == 1);
  std::map<ir::OpKind, int> ops;
  for (ir::NodeId id : resolved.node_ids()) ++ops[resolved.node(id).op];
  CHECK(ops == std::map<ir::OpKind, int>{{ir::OpKind::kUnsqueeze, 1}, {ir::OpKind::kExpand, 1},
                                         {ir::OpKind::kShape, 2}, {ir::OpKind::kConcat, 1}, {ir::OpKind::kReshape, 1}});
  for (ir::NodeId id : resolved.node_ids()) {
    const ir::Node& node = resolved.node(id);
    if (node.op != ir::OpKind::kShape) continue;
    CHECK(resolved.value(node.inputs[0]).kind == ir::ValueKind::kInput);
    CHECK(node.attrs.get_int("end", 0) - node.attrs.get_int("start", 0) == 1);
  }
  require_same_values(graph, resolved, {{"N", 2}, {"S", 3}});
  // Resolving again changes nothing: the optimizer repeats the resolution until it does.
  rewrite::ShapeArithmeticStats again;
  const ir::Graph twice = rewrite::resolve_shape_arithmetic(resolved, &again);
  CHECK_FALSE(again.changed());
  CHECK(twice.node_count() == resolved.node_count());
}

}  // namespace graphsub
