// Helpers for tests of shape arithmetic: graphs that compute Reshape targets the way exporters do.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ir/graph.h"
#include "ops/registry.h"
#include "test_util.h"

namespace graphsub::testing::shapes {

/// An int64 weight.
inline ir::ValueId ints(ir::Graph& graph, std::vector<int64_t> dims, std::vector<int64_t> values) {
  return graph.add_weight({}, ir::share(ir::Tensor::from_int64s(std::move(dims), values)));
}

/// The first output of a node.
inline ir::ValueId first(const ir::Graph& graph, ir::NodeId node) { return graph.node(node).outputs.at(0); }

/// One attribute.
inline ir::Attributes attr(const std::string& name, ir::AttrValue value) {
  ir::Attributes attrs;
  attrs.set(name, std::move(value));
  return attrs;
}

/// A float graph input of the given dims.
inline ir::ValueId input(ir::Graph& graph, const std::string& name, const std::vector<ir::Dim>& dims) {
  return graph.add_input(name, ir::TensorType{ir::DataType::kFloat, ir::Shape{true, dims}});
}

/// dim `axis` of x as a 1-element vector, as exporters compute it: Unsqueeze(Gather(Shape(x), axis)).
inline ir::ValueId dim_of(ir::Graph& graph, ir::ValueId x, int64_t axis) {
  const ir::ValueId shape = first(graph, add_inferred(graph, ir::OpKind::kShape, {x}, attr("start", int64_t{0})));
  const ir::ValueId dim = first(graph, add_inferred(graph, ir::OpKind::kGather, {shape, ints(graph, {}, {axis})},
                                                    attr("axis", int64_t{0})));
  return first(graph, add_inferred(graph, ir::OpKind::kUnsqueeze, {dim}, attr("axes", std::vector<int64_t>{0})));
}

/// Reshape(x, target) in the run-time form (target computed).
inline ir::NodeId runtime_reshape(ir::Graph& graph, ir::ValueId x, ir::ValueId target, int64_t allowzero = 0) {
  ir::Node probe;
  probe.op = ir::OpKind::kReshape;
  probe.attrs.set("allowzero", allowzero);
  probe.inputs = {x, target};
  const ops::InferResult inferred =
      ops::op_def(ir::OpKind::kReshape).infer_runtime(probe, {graph.value(x).type, graph.value(target).type});
  REQUIRE(inferred.ok());
  return graph.add_node(ir::OpKind::kReshape, {x, target}, {{inferred.outputs[0], {}}}, probe.attrs);
}

/// Concat along axis 0.
inline ir::ValueId concat(ir::Graph& graph, std::vector<ir::ValueId> parts) {
  return first(graph, add_inferred(graph, ir::OpKind::kConcat, std::move(parts), attr("axis", int64_t{0})));
}

/// The values of data_shaped_expand's graph.
struct DataShaped {
  ir::ValueId target;  ///< Concat(Unsqueeze(ids[0]) + N, [4]), named "target".
  ir::ValueId y;       ///< Expand(w, target), w: [1, 4], named "y".
};

/// A graph whose shapes depend on data, as transformer exports shape their embeddings: input
/// ids [N] int64, y = Expand(w, Concat(Unsqueeze(ids[0]) + N, [4])), output Relu(y) ("z"). No
/// static analysis sizes y or computes target; fed as a timing feeds it (integers zero), ids[0]
/// is 0, so target is [N, 4] and y has that shape.
inline DataShaped data_shaped_expand(ir::Graph& graph) {
  const ir::ValueId ids =
      graph.add_input("ids", ir::TensorType{ir::DataType::kInt64, ir::Shape{true, {ir::Dim::named("N")}}});
  const ir::ValueId w = graph.add_weight("w", ir::share(ir::Tensor::from_floats({1, 4}, {1, 2, 3, 4})));
  const ir::ValueId head = first(
      graph, add_inferred(graph, ir::OpKind::kGather, {ids, ints(graph, {}, {0})}, attr("axis", int64_t{0})));
  const ir::ValueId rows =
      first(graph, add_inferred(graph, ir::OpKind::kUnsqueeze, {head}, attr("axes", std::vector<int64_t>{0})));
  const ir::ValueId more = first(graph, add_inferred(graph, ir::OpKind::kAdd, {rows, dim_of(graph, ids, 0)}));
  const ir::ValueId target = concat(graph, {more, ints(graph, {1}, {4})});
  graph.set_name(target, "target");
  const ir::ValueId y = first(graph, add_inferred(graph, ir::OpKind::kExpand, {w, target}));
  graph.set_name(y, "y");
  const ir::ValueId z = first(graph, add_inferred(graph, ir::OpKind::kRelu, {y}));
  graph.set_name(z, "z");
  graph.set_outputs({z});
  return {target, y};
}

}  // namespace graphsub::testing::shapes
