// Test helpers for lib/cost: small graphs around a convolution, an opaque node, scratch files.
#pragma once


#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "test_util.h"

namespace graphsub::testing {

/// A zero-filled float32 weight of the given sizes.
inline ir::ValueId add_float_weight(ir::Graph& graph, const std::string& name,
                                    const std::vector<int64_t>& dims) {
  return graph.add_weight(name, ir::share(ir::Tensor(ir::DataType::kFloat, dims)));
}

/// Canonical Conv attributes: square kernel, unit strides and dilations, `pad` on every side.
/// A float32 scalar weight holding `value`.
inline ir::ValueId add_scalar(ir::Graph& graph, float value) {
  return graph.add_weight({}, ir::share(ir::Tensor::from_floats({}, {value})));
}

/// X [8, 64] -> MatMul -> Add(bias) -> GELU as PyTorch exports it (Div by sqrt(2), Erf, Add 1,
/// Mul by the sum, Mul by `half`) -> MatMul -> output: a feed-forward layer, whose bias and GELU
/// are one island. The bias holds `bias` in every element.
inline ir::Graph gelu_graph(float bias = 0.0f, float half = 0.5f) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({8, 64}));
  const ir::ValueId w = add_float_weight(graph, "W", {64, 64});
  const ir::ValueId up = graph.node(add_inferred(graph, ir::OpKind::kMatMul, {x, w})).outputs[0];
  const ir::ValueId b = graph.add_weight("B", ir::share(ir::Tensor::from_floats({64}, std::vector<float>(64, bias))));
  const ir::ValueId biased = graph.node(add_inferred(graph, ir::OpKind::kAdd, {up, b})).outputs[0];
  const ir::ValueId scaled =
      graph.node(add_inferred(graph, ir::OpKind::kDiv, {biased, add_scalar(graph, 1.4142135f)})).outputs[0];
  const ir::ValueId erf = graph.node(add_inferred(graph, ir::OpKind::kErf, {scaled})).outputs[0];
  const ir::ValueId one = graph.node(add_inferred(graph, ir::OpKind::kAdd, {erf, add_scalar(graph, 1.0f)})).outputs[0];
  const ir::ValueId product = graph.node(add_inferred(graph, ir::OpKind::kMul, {biased, one})).outputs[0];
  const ir::ValueId gelu = graph.node(add_inferred(graph, ir::OpKind::kMul, {product, add_scalar(graph, half)})).outputs[0];
  const ir::ValueId w2 = add_float_weight(graph, "W2", {64, 64});
  graph.set_outputs({graph.node(add_inferred(graph, ir::OpKind::kMatMul, {gelu, w2})).outputs[0]});
  return graph;
}

inline ir::Attributes conv_attrs(int64_t kernel, int64_t pad, const std::string& activation = "none") {
  ir::Attributes attrs;
  attrs.set("activation", activation);
  attrs.set("dilations", std::vector<int64_t>{1, 1});
  attrs.set("group", int64_t{1});
  attrs.set("kernel_shape", std::vector<int64_t>{kernel, kernel});
  attrs.set("pads", std::vector<int64_t>{pad, pad, pad, pad});
  attrs.set("strides", std::vector<int64_t>{1, 1});
  return attrs;
}

/// A graph X [1,c,h,w] → Conv(k×k, same padding, bias, `activation`) [→ Relu when `separate_relu`]
/// → output. Returns the graph; the Conv is node 0.
inline ir::Graph conv_graph(int64_t channels, int64_t size, int64_t kernel,
                            const std::string& activation, bool separate_relu) {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("X", float_type({1, channels, size, size}));
  const ir::ValueId w = add_float_weight(graph, "W", {channels, channels, kernel, kernel});
  const ir::ValueId b = add_float_weight(graph, "B", {channels});
  const ir::NodeId conv = add_inferred(graph, ir::OpKind::kConv, {x, w, b},
                                       conv_attrs(kernel, kernel / 2, activation));
  ir::ValueId y = graph.node(conv).outputs[0];
  if (separate_relu) y = graph.node(add_inferred(graph, ir::OpKind::kRelu, {y})).outputs[0];
  graph.set_outputs({y});
  return graph;
}

/// Adds an opaque node of ONNX type `op_type` reading `inputs` and writing one float32 output.
inline ir::NodeId add_opaque(ir::Graph& graph, const std::string& op_type,
                             std::vector<ir::ValueId> inputs, const std::vector<int64_t>& output_dims,
                             const std::string& serialized = "payload") {
  auto info = std::make_shared<ir::OpaqueInfo>();
  info->op_type = op_type;
  info->onnx_node = serialized;
  info->num_explicit_inputs = static_cast<int32_t>(inputs.size());
  return graph.add_node(ir::OpKind::kOpaque, std::move(inputs), {{float_type(output_dims), {}}}, {},
                        op_type, std::move(info));
}


/// The whole content of a file.
inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes `text` to `path`.
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace graphsub::testing
