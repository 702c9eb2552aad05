// Flow-based recursive graph split.
#include "search/split.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/parallel.h"
#include "rewrite/rewriter.h"
#include "search/max_flow.h"
#include "search/search_state.h"

namespace graphsub::search {
namespace {

/// The nodes of `nodes` in the graph's topological order.
std::vector<ir::NodeId> in_topological_order(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  std::vector<bool> member(static_cast<std::size_t>(graph.node_capacity()), false);
  for (ir::NodeId id : nodes) member[static_cast<std::size_t>(id)] = true;
  std::vector<ir::NodeId> ordered;
  const std::vector<ir::NodeId> order = graph.topological_order().value();
  for (ir::NodeId id : order) {
    if (member[static_cast<std::size_t>(id)]) ordered.push_back(id);
  }
  return ordered;
}

/// The flow network of a bisection: vertex i per node, two per match (in, out) joined by
/// capacity 1, then source and sink. Every other edge is infinite.
class CutNetwork {
 public:
  CutNetwork(const ir::Graph& graph, const std::vector<ir::NodeId>& ordered,
             const std::vector<std::size_t>& inside, const std::vector<rewrite::Match>& matches)
      : graph_(graph), ordered_(ordered),
        network_(static_cast<int>(ordered.size() + 2 * inside.size() + 2)),
        source_(static_cast<int>(ordered.size() + 2 * inside.size())), sink_(source_ + 1) {
    for (std::size_t i = 0; i < ordered.size(); ++i) local_[ordered[i]] = static_cast<int>(i);
    add_closure_edges();
    for (std::size_t j = 0; j < inside.size(); ++j) add_match(static_cast<int>(j), matches[inside[j]]);
    add_seeds();
  }

  /// Runs the max flow, setting `capacity`; returns whether each node (by position in `ordered`)
  /// is upstream.
  std::vector<bool> upstream(int64_t& capacity) {
    capacity = network_.max_flow(source_, sink_);
    const std::vector<bool> reached = network_.source_side(source_);
    return {reached.begin(), reached.begin() + static_cast<std::ptrdiff_t>(ordered_.size())};
  }

 private:
  /// consumer → producer, infinite: a node upstream keeps its producers upstream.
  void add_closure_edges() {
    for (std::size_t i = 0; i < ordered_.size(); ++i) {
      for (ir::ValueId input : graph_.node(ordered_[i]).inputs) {
        if (input == ir::kNoValue || graph_.value(input).kind != ir::ValueKind::kIntermediate) continue;
        const auto producer = local_.find(graph_.value(input).producer);
        if (producer != local_.end()) {
          network_.add_edge(static_cast<int>(i), producer->second, FlowNetwork::kInfinite);
        }
      }
    }
  }

  /// node → match-in, match-in → match-out (1), match-out → node: the match is cut, at capacity 1,
  /// exactly when its nodes fall on both sides.
  void add_match(int index, const rewrite::Match& match) {
    const int in = static_cast<int>(ordered_.size()) + 2 * index;
    network_.add_edge(in, in + 1, 1);
    for (ir::NodeId id : match.nodes) {
      network_.add_edge(local_.at(id), in, FlowNetwork::kInfinite);
      network_.add_edge(in + 1, local_.at(id), FlowNetwork::kInfinite);
    }
  }

  /// The first quarter in topological order stays upstream, the last quarter downstream.
  void add_seeds() {
    const std::size_t quarter = std::max<std::size_t>(1, ordered_.size() / 4);
    for (std::size_t k = 0; k < quarter; ++k) {
      network_.add_edge(source_, static_cast<int>(k), FlowNetwork::kInfinite);
      network_.add_edge(static_cast<int>(ordered_.size() - 1 - k), sink_, FlowNetwork::kInfinite);
    }
  }

  const ir::Graph& graph_;
  const std::vector<ir::NodeId>& ordered_;
  std::unordered_map<ir::NodeId, int> local_;
  FlowNetwork network_;
  const int source_;
  const int sink_;
};

/// Indices of the matches whose nodes all lie in `nodes`.
std::vector<std::size_t> matches_inside(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                                        const std::vector<rewrite::Match>& matches) {
  std::vector<bool> member(static_cast<std::size_t>(graph.node_capacity()), false);
  for (ir::NodeId id : nodes) member[static_cast<std::size_t>(id)] = true;
  std::vector<std::size_t> inside;
  for (std::size_t j = 0; j < matches.size(); ++j) {
    const std::vector<ir::NodeId>& used = matches[j].nodes;
    if (std::all_of(used.begin(), used.end(), [&](ir::NodeId id) { return member[static_cast<std::size_t>(id)]; })) {
      inside.push_back(j);
    }
  }
  return inside;
}

void split_into(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                const std::vector<rewrite::Match>& matches, std::size_t threshold, Partition& partition) {
  if (nodes.size() <= threshold) {
    partition.parts.push_back(nodes);
    return;
  }
  Bisection halves = bisect(graph, nodes, matches);
  partition.disabled.insert(partition.disabled.end(), halves.disabled.begin(), halves.disabled.end());
  split_into(graph, halves.upstream, matches, threshold, partition);
  split_into(graph, halves.downstream, matches, threshold, partition);
}

}  // namespace

Bisection bisect(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                 const std::vector<rewrite::Match>& matches) {
  const std::vector<ir::NodeId> ordered = in_topological_order(graph, nodes);
  const std::vector<std::size_t> inside = matches_inside(graph, nodes, matches);
  Bisection halves;
  const std::vector<bool> upstream = CutNetwork(graph, ordered, inside, matches).upstream(halves.capacity);
  std::unordered_map<ir::NodeId, bool> side;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    (upstream[i] ? halves.upstream : halves.downstream).push_back(ordered[i]);
    side[ordered[i]] = upstream[i];
  }
  for (std::size_t j : inside) {
    const std::vector<ir::NodeId>& used = matches[j].nodes;
    const bool any_up = std::any_of(used.begin(), used.end(), [&](ir::NodeId id) { return side.at(id); });
    const bool any_down = std::any_of(used.begin(), used.end(), [&](ir::NodeId id) { return !side.at(id); });
    if (any_up && any_down) halves.disabled.push_back(j);
  }
  return halves;
}

std::vector<rewrite::Match> with_two_step_matches(const ir::Graph& graph, const rewrite::Matcher& matcher,
                                                  std::vector<rewrite::Match> matches, int threads) {
  auto sorted = [](std::vector<ir::NodeId> nodes) {
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
  };
  const std::size_t first_order = matches.size();
  const ir::NodeId fresh_from = graph.node_capacity();
  // Each match applied to the whole graph and the matches it enables, in threads (a tenth to a
  // quarter of a warm search's time on graphs with many matches), each match's by its index.
  std::vector<std::vector<rewrite::Match>> enabled_by(first_order);
  run_parallel(first_order, threads, [&](std::size_t i) {
    const std::optional<ir::Graph> next = rewrite::apply(graph, matches[i], nullptr);
    if (!next) return;
    std::vector<ir::NodeId> made;
    for (ir::NodeId id = fresh_from; id < next->node_capacity(); ++id) {
      if (next->has_node(id)) made.push_back(id);
    }
    for (rewrite::Match& enabled : without_weight_only(*next, matcher.find_touching(*next, made))) {
      std::vector<ir::NodeId> used = matches[i].nodes;
      for (ir::NodeId id : enabled.nodes) {
        if (id < fresh_from) used.push_back(id);
      }
      enabled.nodes = sorted(std::move(used));
      enabled.values.clear();
      enabled.lists.clear();
      enabled_by[i].push_back(std::move(enabled));
    }
  });
  std::set<std::vector<ir::NodeId>> seen;
  for (const rewrite::Match& match : matches) seen.insert(sorted(match.nodes));
  for (std::vector<rewrite::Match>& enabled : enabled_by) {
    for (rewrite::Match& match : enabled) {
      if (seen.insert(match.nodes).second) matches.push_back(std::move(match));
    }
  }
  return matches;
}

Partition split_graph(const ir::Graph& graph, const std::vector<rewrite::Match>& matches,
                      std::size_t threshold) {
  Partition partition;
  const std::vector<ir::NodeId> nodes = in_topological_order(graph, graph.node_ids());
  if (threshold == 0 || nodes.size() <= threshold) {
    partition.parts.push_back(nodes);
    return partition;
  }
  split_into(graph, nodes, matches, std::max<std::size_t>(threshold, 2), partition);
  std::sort(partition.disabled.begin(), partition.disabled.end());
  return partition;
}

}  // namespace graphsub::search
