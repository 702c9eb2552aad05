// Helpers for the rewrite tests: rules from text, canonical nodes, and the rules the tests share.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/registry.h"
#include "rules/parser.h"
#include "test_util.h"

namespace graphsub::testing {

/// The one rule in `text`.
inline rules::Rule parse_rule(const std::string& text) {
  std::vector<rules::Rule> parsed = rules::parse_rules(text, "test.rules");
  if (parsed.size() != 1) throw std::runtime_error("expected one rule");
  return parsed[0];
}

/// Adds a node whose attributes are first put in canonical form, as import does (opset 17).
inline ir::NodeId add_canonical(ir::Graph& graph, ir::OpKind op, std::vector<ir::ValueId> inputs,
                                ir::Attributes attrs = {}, int num_outputs = 1) {
  std::vector<ir::TensorType> types;
  for (ir::ValueId input : inputs) types.push_back(graph.value(input).type);
  ops::ImportContext context{attrs, types, num_outputs, 17};
  const std::string reason = ops::op_def(op).canonicalize(context);
  if (!reason.empty()) throw std::runtime_error("canonicalize failed: " + reason);
  return add_inferred(graph, op, std::move(inputs), std::move(attrs));
}

/// The first output of a node.
inline ir::ValueId out(const ir::Graph& graph, ir::NodeId node) { return graph.node(node).outputs.at(0); }

/// relu(conv(x, w)) → conv[activation=relu](x, w)
inline const char* const kFuseConvRelu = R"(
# Fuse a ReLU into the convolution that feeds it.
#   relu(conv(x, w)) -> conv[activation=relu](x, w)
rule fuse-conv-relu
  source
    y = Conv(x, w) [activation = "none"]
    z = Relu(y)
  target
    z2 = Conv(x, w) [@y, activation = "relu"]
  map z -> z2
end
)";

/// matmul(x, w1), matmul(x, w2) → split(matmul(x, concat(w1, w2)))
inline const char* const kMergeMatMuls = R"(
# Merge two matrix products that share their left operand.
#   matmul(x, w1), matmul(x, w2) -> split(matmul(x, concat(w1, w2, axis=1)), axis=1)
rule merge-matmuls
  source
    y1 = MatMul(x, w1)
    y2 = MatMul(x, w2)
  where rank(w1) == 2
  where rank(w2) == 2
  target
    w = Concat(w1, w2) [axis = 1]
    y = MatMul(x, w)
    z1, z2 = Split(y) [axis = -1, split = [shape(w1)[1], shape(w2)[1]]]
  map y1 -> z1, y2 -> z2
end
)";

/// conv(x, w1), conv(x, w2) with equal parameters → split(conv(x, concat(w1, w2)))
inline const char* const kMergeConvs = R"(
# Merge two convolutions of one input with equal parameters.
#   conv(x, w1), conv(x, w2) -> split(conv(x, concat(w1, w2, axis=0)), axis=1)
rule merge-convs
  source
    y1 = Conv(x, w1) [strides = ?s, pads = ?p, dilations = ?d, kernel_shape = ?k, group = 1, activation = ?a]
    y2 = Conv(x, w2) [strides = ?s, pads = ?p, dilations = ?d, kernel_shape = ?k, group = 1, activation = ?a]
  target
    w = Concat(w1, w2) [axis = 0]
    y = Conv(x, w) [@y1]
    z1, z2 = Split(y) [axis = 1, split = [shape(w1)[0], shape(w2)[0]]]
  map y1 -> z1, y2 -> z2
end
)";

/// Two convs (2 filters, 3x3) reading x [1,3,9,9] with the given strides; both are graph outputs.
inline ir::Graph two_convs(const std::vector<int64_t>& strides1, const std::vector<int64_t>& strides2) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", float_type({1, 3, 9, 9}));
  std::vector<ir::ValueId> outputs;
  uint32_t seed = 7;
  for (const auto& strides : {strides1, strides2}) {
    const ir::ValueId w = graph.add_weight({}, ir::share(random_tensor({2, 3, 3, 3}, seed++)));
    ir::Attributes attrs;
    attrs.set("strides", strides);
    outputs.push_back(out(graph, add_canonical(graph, ir::OpKind::kConv, {x, w}, attrs)));
    graph.set_name(outputs.back(), "y" + std::to_string(outputs.size()));
  }
  graph.set_outputs(outputs);
  return graph;
}

}  // namespace graphsub::testing
