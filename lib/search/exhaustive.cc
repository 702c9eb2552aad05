// Exhaustive breadth-first search.
#include "search/exhaustive.h"

#include <deque>

#include "search/search_state.h"

namespace graphsub::search {

SearchResult exhaustive_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                               const cost::CostModel& model, const SearchOptions& options) {
  SearchState state(input, matcher, model, options);
  std::deque<Reached> frontier = {state.input()};
  while (!frontier.empty()) {
    if (std::optional<StopReason> stop = state.limit_reached()) return state.finish(*stop, "exhaustive");
    const Reached next = std::move(frontier.front());
    frontier.pop_front();
    state.expand(next, [&frontier](Reached&& child) { frontier.push_back(std::move(child)); });
  }
  return state.finish(StopReason::kExhausted, "exhaustive");
}

}  // namespace graphsub::search
