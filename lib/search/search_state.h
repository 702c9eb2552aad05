// What backtracking, sampling and exhaustive search share: the path of applied steps, the graphs
// already seen, the best graph so far, the limits and the counters.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cost/cost.h"
#include "cost/cost_model.h"
#include "ir/graph.h"
#include "rewrite/match.h"
#include "rewrite/matcher.h"
#include "search/search_options.h"

namespace graphsub::search {

/// Nodes that will run: live nodes less those export folds into weights.
std::size_t running_nodes(const ir::Graph& graph);

/// `matches` less those whose every node is computed from weights alone. Rewriting such nodes
/// changes nothing that runs (export folds them either way, and they cost nothing), yet each
/// result is a new graph: a PyTorch export's k Identity nodes on weights made 2^k graphs of
/// equal cost, which filled a part's search.
std::vector<rewrite::Match> without_weight_only(const ir::Graph& graph, std::vector<rewrite::Match> matches);

/// True when `a` is below `b` by more than rounding (a relative 1e-12): a cost that is only
/// summed in another order is not cheaper.
bool clearly_less(double a, double b);

/// One applied match (in the graph the step before made) and the path before it: every graph
/// derived from a path shares it, so a path is a linked list, not a copy.
struct StepLink {
  rewrite::Match match;
  std::shared_ptr<const StepLink> previous;
};

/// The steps from the input to a graph, last first; null for the input itself.
using Path = std::shared_ptr<const StepLink>;

/// The matches of a path, from the input on.
std::vector<rewrite::Match> unroll(Path path);

/// The steps of `applied` (SearchResult::applied) applied to `input` in turn, each described
/// in the graph it applies to; sets `*result` to the graph they make when given. Throws
/// std::logic_error when the rewriter refuses one (`applied` must come from a search of `input`,
/// or of a graph with the same replica_hash).
std::vector<AppliedStep> replay(const ir::Graph& input, const std::vector<rewrite::Match>& applied,
                                ir::Graph* result = nullptr);

/// The steps of a search's result (SearchResult::applied) by the regions of the graph they
/// rewrote: `groups`, each group's step indices ascending, the groups by their first step, where
/// a step joins the group of every earlier step that made one of the nodes it matched, or made an
/// edge between two of them (changed a matched node's inputs, where it reads another matched
/// node); one group where every step builds on the ones before. `made`: the node ids each step
/// made in the whole sequence ([first, last + 1)), which replay_steps maps to the ids it makes.
struct StepRegions {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::pair<ir::NodeId, ir::NodeId>> made;
};

/// The regions of `applied` (SearchResult::applied, a search of `input`).
StepRegions step_regions(const ir::Graph& input, const std::vector<rewrite::Match>& applied);

/// `input` with only the steps `chosen` of `applied` replayed, in order (ascending indices,
/// whole groups of `regions`): each step's rule matched again on the same nodes (those an
/// earlier chosen step made by the ids it makes in this replay), reading the values there
/// outside its pattern. Sets `matches` to the chosen steps' matches as replayed
/// (SearchResult::applied of the result) and `steps` to them described (SearchResult::steps).
/// nullopt when a step's rule no longer matches its nodes, the rewriter refuses it, or it makes
/// another number of nodes than it did in the whole sequence.
std::optional<ir::Graph> replay_steps(const ir::Graph& input, const std::vector<rewrite::Match>& applied,
                                      const StepRegions& regions, const std::vector<std::size_t>& chosen,
                                      std::vector<rewrite::Match>& matches, std::vector<AppliedStep>& steps);

/// A graph the search reached: the graph, what it costs, and the steps that led there.
struct Reached {
  ir::Graph graph;
  cost::Cost cost;
  Path path;
};

/// One search run's shared state: the seen structural hashes, the best graph so far, the
/// counters of SearchResult, the node cap and the clock. A search algorithm decides which graphs
/// to expand and in what order; this class expands them and keeps the books.
class SearchState {
 public:
  /// Starts at `input`; the matcher, the model and the options must outlive the state.
  SearchState(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
              const SearchOptions& options);

  /// The input, reached by no step.
  Reached input() const;

  /// The budget or time limit if one is reached, else nullopt.
  std::optional<StopReason> limit_reached() const;

  /// Every match in `graph`; counts one expansion.
  std::vector<rewrite::Match> matches(const ir::Graph& graph);

  /// The matches in `graph` that bind one of `nodes` (Matcher::find_touching): a look-ahead
  /// around a few nodes, not counted as an expansion.
  std::vector<rewrite::Match> matches_touching(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) const;

  /// `graph` with `match` applied, or nullopt when the rewriter refuses it or the result has more
  /// running nodes than the cap (counted as rejected). Counts a generated graph; marks nothing seen.
  std::optional<ir::Graph> apply(const ir::Graph& graph, const rewrite::Match& match);

  /// `next` (from applying `match` to `from`) with its cost and its path.
  Reached reach(const Reached& from, const rewrite::Match& match, ir::Graph next) const;

  /// True the first time a graph of this structure comes; a later one is counted as a duplicate.
  /// Graphs that differ only in the operand order of commutative nodes count as one: the matcher
  /// takes such operands either way round, so what one reaches the other reaches too (up to that
  /// order), and x + y and y + x run alike.
  bool first_visit(const ir::Graph& graph);

  /// True when a graph of this structure came before; counts nothing.
  bool seen(const ir::Graph& graph) const;

  /// Makes `reached` the best so far when it is cheaper, or as cheap with fewer nodes: a
  /// substitution that removes a free node (a one-part split, a view) still tidies the result.
  void offer(const Reached& reached);

  /// Expands `from`: applies each of its matches in order and, for each graph not seen before,
  /// offers it as the best and then passes it to `visit(Reached&&)`. Stops early when the time
  /// limit passes (one expansion of a large graph takes a good fraction of a second), so the
  /// caller's next limit_reached() ends the search near the limit.
  template <typename Visit>
  void expand(const Reached& from, Visit&& visit) {
    for (const rewrite::Match& match : matches(from.graph)) {
      if (past_time_limit()) return;
      std::optional<ir::Graph> next = apply(from.graph, match);
      if (!next || !first_visit(*next)) continue;
      Reached reached = reach(from, match, std::move(*next));
      offer(reached);
      visit(std::move(reached));
    }
  }

  /// The cost of the best graph so far.
  const cost::Cost& best_cost() const { return result_.best_cost; }

  /// The result: the best graph and its steps, the counters, `reason` and the time taken. Logs
  /// one line naming the `algorithm`. The state is spent afterwards.
  SearchResult finish(StopReason reason, const char* algorithm);

 private:
  double elapsed_s() const;
  bool past_time_limit() const { return elapsed_s() >= options_.time_limit_s; }

  const rewrite::Matcher& matcher_;
  const cost::CostModel& model_;
  const SearchOptions& options_;
  const ir::Graph input_;
  const std::size_t node_cap_;
  const std::chrono::steady_clock::time_point start_;
  std::unordered_set<uint64_t> seen_;
  Path best_path_;
  SearchResult result_;
};

}  // namespace graphsub::search
