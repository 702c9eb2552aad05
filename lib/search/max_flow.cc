// Dinic's maximum flow.
#include "search/max_flow.h"

#include <algorithm>
#include <queue>

namespace graphsub::search {

FlowNetwork::FlowNetwork(int vertices) : out_(static_cast<std::size_t>(vertices)) {}

void FlowNetwork::add_edge(int from, int to, int64_t capacity) {
  out_[static_cast<std::size_t>(from)].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({to, capacity});
  out_[static_cast<std::size_t>(to)].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({from, 0});
}

/// Breadth-first distances from `source` over edges with capacity left; -1 where unreachable.
std::vector<int> FlowNetwork::residual_levels(int source) const {
  std::vector<int> level(out_.size(), -1);
  level[static_cast<std::size_t>(source)] = 0;
  std::queue<int> queue;
  queue.push(source);
  while (!queue.empty()) {
    const int vertex = queue.front();
    queue.pop();
    for (int index : out_[static_cast<std::size_t>(vertex)]) {
      const Edge& edge = edges_[static_cast<std::size_t>(index)];
      if (edge.capacity > 0 && level[static_cast<std::size_t>(edge.to)] < 0) {
        level[static_cast<std::size_t>(edge.to)] = level[static_cast<std::size_t>(vertex)] + 1;
        queue.push(edge.to);
      }
    }
  }
  return level;
}

/// Dinic's level graph; true when the sink is reached.
bool FlowNetwork::build_levels(int source, int sink) {
  level_ = residual_levels(source);
  return level_[static_cast<std::size_t>(sink)] >= 0;
}

/// Pushes up to `limit` along level-increasing paths from `vertex` (depth first); returns the amount.
int64_t FlowNetwork::push(int vertex, int sink, int64_t limit) {
  if (vertex == sink) return limit;
  const auto v = static_cast<std::size_t>(vertex);
  for (; next_edge_[v] < out_[v].size(); ++next_edge_[v]) {
    const auto index = static_cast<std::size_t>(out_[v][next_edge_[v]]);
    Edge& edge = edges_[index];
    if (edge.capacity <= 0 || level_[static_cast<std::size_t>(edge.to)] != level_[v] + 1) continue;
    const int64_t pushed = push(edge.to, sink, std::min(limit, edge.capacity));
    if (pushed > 0) {
      edge.capacity -= pushed;
      edges_[index ^ 1].capacity += pushed;
      return pushed;
    }
  }
  return 0;
}

int64_t FlowNetwork::max_flow(int source, int sink) {
  int64_t total = 0;
  while (build_levels(source, sink)) {
    next_edge_.assign(out_.size(), 0);
    while (const int64_t pushed = push(source, sink, kInfinite)) total += pushed;
  }
  return total;
}

std::vector<bool> FlowNetwork::source_side(int source) const {
  const std::vector<int> level = residual_levels(source);
  std::vector<bool> reached(level.size());
  std::transform(level.begin(), level.end(), reached.begin(), [](int l) { return l >= 0; });
  return reached;
}

}  // namespace graphsub::search
