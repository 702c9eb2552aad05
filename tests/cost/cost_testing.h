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
