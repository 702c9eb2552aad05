// Maximum flow and a minimum cut in a directed network (Dinic's algorithm), for the graph split.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace graphsub::search {

/// A flow network with integer capacities. Dinic's algorithm: O(V²E) in general and far less on
/// the small, shallow networks the graph split builds (one vertex per operator and per match).
/// Hand-written rather than Boost.Graph's, which graphsub does not otherwise depend on: the
/// algorithm is 60 lines, its property-map set-up would be as long.
class FlowNetwork {
 public:
  /// Capacity that no cut may sever.
  static constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

  explicit FlowNetwork(int vertices);
  /// Adds the edge from → to with the given capacity (and its residual twin).
  void add_edge(int from, int to, int64_t capacity);
  /// Pushes the most flow from `source` to `sink`; returns its value, the capacity of a minimum
  /// cut. Call once per network.
  int64_t max_flow(int source, int sink);
  /// After max_flow: whether each vertex is reachable from the source in the residual network,
  /// the source side of a minimum cut.
  std::vector<bool> source_side(int source) const;

 private:
  struct Edge {
    int to;
    int64_t capacity;  ///< Remaining (residual) capacity.
  };
  std::vector<int> residual_levels(int source) const;
  bool build_levels(int source, int sink);
  int64_t push(int vertex, int sink, int64_t limit);

  std::vector<Edge> edges_;              ///< Edge 2i and its twin 2i+1.
  std::vector<std::vector<int>> out_;    ///< Edge indices leaving each vertex.
  std::vector<int> level_;
  std::vector<std::size_t> next_edge_;
};

}  // namespace graphsub::search
