// Flow-based recursive graph split (MetaFlow Alg. 2): cut a graph where the fewest rule matches span.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "rewrite/match.h"
#include "rewrite/matcher.h"

namespace graphsub::search {

/// A set of nodes cut in two. `upstream` holds every predecessor (within the set) of its nodes, so
/// no edge runs from `downstream` back to `upstream` and each side is a convex part of the graph.
struct Bisection {
  std::vector<ir::NodeId> upstream;
  std::vector<ir::NodeId> downstream;
  /// The matches with nodes on both sides, which neither side can apply: indices into the
  /// matches given to bisect. The cut's capacity is exactly their number.
  std::vector<std::size_t> disabled;
  int64_t capacity = 0;  ///< The minimum cut's capacity (the max flow), equal to disabled.size().
};

/// The bisection of `nodes` (live nodes of `graph`, at least 2) that disables the fewest of
/// `matches` (those lying wholly inside `nodes` count; others are ignored), with each side
/// holding at least a quarter of the nodes in topological order: a minimum cut by max flow.
///
/// MetaFlow gives each operator a capacity, the number of matches spanning it, and takes a
/// minimum vertex cut. Here each match is a vertex of capacity 1 joined to its operators, and the
/// operators cannot be cut: the same max-flow formulation, but the cut's value is exactly the
/// number of matches it disables, where operator capacities over- or under-count a match whose
/// operators fall on both sides through different edges.
Bisection bisect(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                 const std::vector<rewrite::Match>& matches);

/// A graph's live nodes cut into parts of at most a threshold of nodes each.
struct Partition {
  /// The parts, each a convex set of nodes; every part reads only graph inputs, weights and
  /// outputs of earlier parts.
  std::vector<std::vector<ir::NodeId>> parts;
  /// Indices into the matches given of those the cuts disabled, in increasing order.
  std::vector<std::size_t> disabled;
};

/// `matches` (every match of `graph`) and the two-step matches behind them: for each match, the
/// matches its rewrite makes possible, each standing for the nodes of `graph` it would use up (the
/// first match's nodes and the untouched nodes it binds). Counting these too keeps a cut from
/// separating a Conv+BatchNormalization from its Relu, where folding then fusing would take both
/// steps. Each node set appears once; the two-step ones follow the first-order ones, in the
/// order of the matches behind them, whatever the number of `threads` that apply the matches.
std::vector<rewrite::Match> with_two_step_matches(const ir::Graph& graph, const rewrite::Matcher& matcher,
                                                  std::vector<rewrite::Match> matches, int threads = 1);

/// MetaFlow Alg. 2: bisects recursively until every part has at most `threshold` nodes. A
/// threshold of 0 or one not below the node count gives a single part.
Partition split_graph(const ir::Graph& graph, const std::vector<rewrite::Match>& matches,
                      std::size_t threshold);

}  // namespace graphsub::search
