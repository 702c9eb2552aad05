// Kahn's algorithm over ONNX node inputs, smallest index first, with a cycle report.
#include "onnx_io/node_order.h"

#include <functional>
#include <queue>
#include <unordered_map>

#include "ir/error.h"

namespace graphsub::onnx_io {
namespace {

/// The dependency edges between nodes: for each node, the nodes producing its inputs.
struct Dependencies {
  std::vector<std::vector<int>> producers;
  std::vector<std::vector<int>> readers;
};

Dependencies dependencies(const onnx::GraphProto& graph,
                          const std::vector<std::vector<std::string>>& implicit) {
  const int count = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < count; ++i) {
    for (const std::string& name : graph.node(i).output()) {
      if (!name.empty()) producer.emplace(name, i);
    }
  }
  Dependencies deps{std::vector<std::vector<int>>(count), std::vector<std::vector<int>>(count)};
  auto add_edge = [&](const std::string& name, int reader) {
    auto it = producer.find(name);
    if (it == producer.end()) return;
    deps.producers[reader].push_back(it->second);
    deps.readers[it->second].push_back(reader);
  };
  for (int i = 0; i < count; ++i) {
    for (const std::string& name : graph.node(i).input()) add_edge(name, i);
    for (const std::string& name : implicit[i]) add_edge(name, i);
  }
  return deps;
}

std::string node_label(const onnx::NodeProto& node) {
  if (!node.name().empty()) return "'" + node.name() + "'";
  const std::string output = node.output_size() > 0 ? node.output(0) : std::string();
  return node.op_type() + " producing '" + output + "'";
}

/// A node on a cycle among the nodes not `placed`: walking from any of them to an unplaced
/// producer must revisit a node.
int node_on_cycle(const Dependencies& deps, const std::vector<char>& placed) {
  int current = 0;
  while (placed[current]) ++current;
  std::vector<char> visited(placed.size(), 0);
  while (!visited[current]) {
    visited[current] = 1;
    for (int producer : deps.producers[current]) {
      if (!placed[producer]) {
        current = producer;
        break;
      }
    }
  }
  return current;
}

}  // namespace

std::vector<int> topological_node_order(const onnx::GraphProto& graph,
                                        const std::vector<std::vector<std::string>>& implicit) {
  const Dependencies deps = dependencies(graph, implicit);
  const int count = graph.node_size();
  std::vector<int> pending(count);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i) {
    pending[i] = static_cast<int>(deps.producers[i].size());
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<int> order;
  std::vector<char> placed(count, 0);
  while (!ready.empty()) {
    const int node = ready.top();
    ready.pop();
    order.push_back(node);
    placed[node] = 1;
    for (int reader : deps.readers[node]) {
      if (--pending[reader] == 0) ready.push(reader);
    }
  }
  if (static_cast<int>(order.size()) < count) {
    throw Error("graph has a cycle through node " + node_label(graph.node(node_on_cycle(deps, placed))));
  }
  return order;
}

void reorder_nodes(onnx::GraphProto& graph, const std::vector<int>& order) {
  auto* nodes = graph.mutable_node();
  std::vector<onnx::NodeProto*> released(order.size());
  for (std::size_t i = order.size(); i-- > 0;) released[i] = nodes->ReleaseLast();
  for (int index : order) nodes->AddAllocated(released[index]);
}

}  // namespace graphsub::onnx_io
