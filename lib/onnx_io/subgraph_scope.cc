// Outer-scope references and nested definitions of subgraphs.
#include "onnx_io/subgraph_scope.h"

namespace graphsub::onnx_io {
namespace {

/// Calls `visit` on each subgraph attribute of `node`.
template <class Visit>
void for_each_subgraph(const onnx::NodeProto& node, Visit&& visit) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.has_g()) visit(attribute.g());
    for (const onnx::GraphProto& graph : attribute.graphs()) visit(graph);
  }
}

void add_defined_names(const onnx::GraphProto& graph, std::unordered_set<std::string>& names) {
  for (const auto& input : graph.input()) names.insert(input.name());
  for (const auto& tensor : graph.initializer()) names.insert(tensor.name());
  for (const auto& sparse : graph.sparse_initializer()) names.insert(sparse.values().name());
  for (const auto& node : graph.node()) names.insert(node.output().begin(), node.output().end());
}

/// Appends to `out` the names `graph` reads but does not define, each once.
void add_free_names(const onnx::GraphProto& graph, std::vector<std::string>& out) {
  std::unordered_set<std::string> defined;
  add_defined_names(graph, defined);
  std::unordered_set<std::string> seen;
  auto visit = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out.push_back(name);
  };
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& input : node.input()) visit(input);
    for (const std::string& name : outer_scope_names(node)) visit(name);
  }
  for (const auto& output : graph.output()) visit(output.name());
}

}  // namespace

std::vector<std::string> outer_scope_names(const onnx::NodeProto& node) {
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for_each_subgraph(node, [&](const onnx::GraphProto& graph) {
    std::vector<std::string> free;
    add_free_names(graph, free);
    for (std::string& name : free) {
      if (seen.insert(name).second) names.push_back(std::move(name));
    }
  });
  return names;
}

void collect_subgraph_names(const onnx::NodeProto& node, std::unordered_set<std::string>& names) {
  for_each_subgraph(node, [&](const onnx::GraphProto& graph) {
    add_defined_names(graph, names);
    for (const onnx::NodeProto& inner : graph.node()) collect_subgraph_names(inner, names);
  });
}

}  // namespace graphsub::onnx_io
