// Cost-based backtracking search.
#include "search/backtracking.h"

#include <queue>
#include <vector>

#include "search/search_state.h"

namespace graphsub::search {
namespace {

/// A graph waiting in the queue.
struct Candidate {
  Reached reached;
  int64_t order;  ///< Discovery order: ties in cost go to the earlier graph.
};

struct LaterOrCostlier {
  bool operator()(const Candidate& a, const Candidate& b) const {
    const double cost_a = a.reached.cost.time_ms;
    const double cost_b = b.reached.cost.time_ms;
    return cost_a != cost_b ? cost_a > cost_b : a.order > b.order;
  }
};

/// The queue of candidates within alpha of the best, cheapest first.
class Backtracking {
 public:
  Backtracking(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
               const SearchOptions& options)
      : state_(input, matcher, model, options), alpha_(options.alpha) {
    queue_.push(Candidate{state_.input(), next_order_++});
  }

  SearchResult run() {
    while (!queue_.empty()) {
      if (std::optional<StopReason> stop = state_.limit_reached()) return state_.finish(*stop, "backtracking");
      const Candidate candidate = queue_.top();
      queue_.pop();
      state_.expand(candidate.reached, [this](Reached&& next) { keep_if_promising(std::move(next)); });
    }
    return state_.finish(StopReason::kExhausted, "backtracking");
  }

 private:
  void keep_if_promising(Reached&& next) {
    if (next.cost.time_ms < alpha_ * state_.best_cost().time_ms) {
      queue_.push(Candidate{std::move(next), next_order_++});
    }
  }

  SearchState state_;
  const double alpha_;
  std::priority_queue<Candidate, std::vector<Candidate>, LaterOrCostlier> queue_;
  int64_t next_order_ = 0;
};

}  // namespace

SearchResult backtracking_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                                 const cost::CostModel& model, const SearchOptions& options) {
  return Backtracking(input, matcher, model, options).run();
}

}  // namespace graphsub::search
