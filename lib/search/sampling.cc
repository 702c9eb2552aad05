// Sampling search (OCGGS Alg. 3): a sample of Q sequences extended round by round, with a
// look-ahead past cost-increasing substitutions.
#include "search/sampling.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "search/search_state.h"

namespace graphsub::search {
namespace {

/// A substitution sequence: the graph it gives and what the sampling rule needs to know of it.
struct Sequence {
  Reached reached;
  int length = 0;             ///< Substitutions from the input.
  int rising = 0;             ///< Successive cost-increasing substitutions at its end.
  ir::NodeId fresh_from = 0;  ///< Nodes with ids from here on were made by its last substitution.
  int64_t order = 0;          ///< Discovery order: ties go to the earlier sequence.
  double potential = 0;       ///< Set for a sequence ending in a cost increase (Sampling::potential).
};

double time_of(const Sequence& sequence) { return sequence.reached.cost.time_ms; }

/// The nodes the sequence's last substitution made: a substitution that replaces one of them
/// depends on it (OCGGS Definition 7).
std::vector<ir::NodeId> made_by_last_step(const Sequence& sequence) {
  const ir::Graph& graph = sequence.reached.graph;
  std::vector<ir::NodeId> made;
  for (ir::NodeId id = sequence.fresh_from; id < graph.node_capacity(); ++id) {
    if (graph.has_node(id)) made.push_back(id);
  }
  return made;
}

/// The `count` sequences of least `key` (ties by discovery order), in that order.
template <typename Key>
std::vector<Sequence> least(std::vector<Sequence> pool, std::size_t count, Key key) {
  std::vector<std::pair<double, std::size_t>> ranks;
  for (std::size_t i = 0; i < pool.size(); ++i) ranks.emplace_back(key(pool[i]), i);
  const auto before = [&](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : pool[a.second].order < pool[b.second].order;
  };
  count = std::min(count, ranks.size());
  std::partial_sort(ranks.begin(), ranks.begin() + static_cast<std::ptrdiff_t>(count), ranks.end(), before);
  std::vector<Sequence> kept;
  for (std::size_t i = 0; i < count; ++i) kept.push_back(std::move(pool[ranks[i].second]));
  return kept;
}

/// The rounds of Alg. 3 and the look-ahead of the potentials.
class Sampling {
 public:
  Sampling(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
           const SearchOptions& options)
      : state_(input, matcher, model, options), options_(options),
        half_(static_cast<std::size_t>(std::max(1, options.sample_size / 2))) {
    sample_.push_back(Sequence{state_.input(), 0, 0, input.node_capacity(), next_order_++, kNone});
  }

  SearchResult run() {
    while (!sample_.empty() && !stop_) next_round();
    const StopReason natural = length_reached_ ? StopReason::kLengthLimit : StopReason::kExhausted;
    return state_.finish(stop_.value_or(natural), "sampling");
  }

 private:
  /// Alg. 3, lines 4-14: extend the sample; keep the cheapest that did not rise and the cheapest
  /// found past those that did.
  void next_round() {
    std::vector<Sequence> settled;
    std::vector<Sequence> rising;
    sort_out(extend(sample_), settled, rising);
    std::vector<Sequence> explored = explore(std::move(rising));
    sample_ = least(std::move(settled), half_, time_of);
    for (Sequence& sequence : least(std::move(explored), half_, time_of)) sample_.push_back(std::move(sequence));
  }

  /// Alg. 3, lines 8-13: extends the most promising of `rising` (sequences ending in a cost
  /// increase) again and again while they keep rising; returns the extensions that did not rise.
  std::vector<Sequence> explore(std::vector<Sequence> rising) {
    std::vector<Sequence> settled;
    while (!rising.empty() && !stop_) {
      std::vector<Sequence> next;
      sort_out(extend(most_promising(std::move(rising))), settled, next);
      rising = std::move(next);
    }
    return settled;
  }

  /// Sorts extensions by their last step: into `settled` when it did not raise the cost, into
  /// `rising` when it did, at most η times in a row; drops the others.
  void sort_out(std::vector<Sequence> children, std::vector<Sequence>& settled,
                std::vector<Sequence>& rising) const {
    for (Sequence& child : children) {
      if (child.rising == 0) {
        settled.push_back(std::move(child));
      } else if (child.rising <= options_.exploration_depth) {
        rising.push_back(std::move(child));
      }
    }
  }

  /// The Q/2 sequences of least potential (those with none last); all, when there are no more.
  std::vector<Sequence> most_promising(std::vector<Sequence> rising) {
    if (rising.size() <= half_) return rising;
    for (Sequence& sequence : rising) sequence.potential = potential(sequence);
    return least(std::move(rising), half_, [](const Sequence& sequence) { return sequence.potential; });
  }

  /// OCGGS Definition 12: the cheapest graph reached from `sequence` by a chain of dependent
  /// substitutions that raise the cost, at most η in a row, and a last one that lowers it; kNone
  /// when there is no such chain. The graphs it makes are offered as the best but not marked as
  /// seen: an extension may reach them again.
  double potential(const Sequence& sequence) {
    if (sequence.length >= options_.max_length || !within_limits()) return kNone;
    double best = kNone;
    const ir::Graph& graph = sequence.reached.graph;
    for (const rewrite::Match& match : state_.matches_touching(graph, made_by_last_step(sequence))) {
      std::optional<ir::Graph> next = state_.apply(graph, match);
      if (!next || state_.seen(*next)) continue;
      const Sequence child = child_of(sequence, state_.reach(sequence.reached, match, std::move(*next)), 0);
      state_.offer(child.reached);
      if (child.rising == 0 && clearly_less(time_of(child), time_of(sequence))) {
        best = std::min(best, time_of(child));
      } else if (child.rising > 0 && child.rising <= options_.exploration_depth) {
        best = std::min(best, potential(child));
      }
    }
    return best;
  }

  /// Every extension by one substitution of every sequence shorter than max_length (Alg. 3,
  /// line 4), in sample order then match order; each new graph is offered as the best.
  std::vector<Sequence> extend(const std::vector<Sequence>& sequences) {
    std::vector<Sequence> children;
    for (const Sequence& parent : sequences) {
      if (parent.length >= options_.max_length) {
        length_reached_ = true;
        continue;
      }
      if (!within_limits()) break;
      state_.expand(parent.reached, [&](Reached&& reached) {
        children.push_back(child_of(parent, std::move(reached), next_order_++));
      });
    }
    return children;
  }

  /// `reached`, made by one substitution from `parent`, as a sequence.
  Sequence child_of(const Sequence& parent, Reached reached, int64_t order) const {
    const bool rises = clearly_less(time_of(parent), reached.cost.time_ms);
    return Sequence{std::move(reached), parent.length + 1, rises ? parent.rising + 1 : 0,
                    parent.reached.graph.node_capacity(), order, kNone};
  }

  /// False (and the reason recorded) once the budget or the time limit is reached.
  bool within_limits() {
    if (!stop_) stop_ = state_.limit_reached();
    return !stop_;
  }

  static constexpr double kNone = std::numeric_limits<double>::infinity();

  SearchState state_;
  const SearchOptions& options_;
  const std::size_t half_;
  std::vector<Sequence> sample_;
  std::optional<StopReason> stop_;
  bool length_reached_ = false;
  int64_t next_order_ = 0;
};

}  // namespace

SearchResult sampling_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                             const cost::CostModel& model, const SearchOptions& options) {
  return Sampling(input, matcher, model, options).run();
}

}  // namespace graphsub::search
