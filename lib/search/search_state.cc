// The books every search keeps.
#include "search/search_state.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ir/log.h"
#include "ops/folding.h"
#include "ops/registry.h"
#include "rewrite/rewriter.h"

namespace graphsub::search {

std::size_t running_nodes(const ir::Graph& graph) {
  const std::vector<bool> folded = ops::folded_nodes(graph);
  return graph.node_count() - static_cast<std::size_t>(std::count(folded.begin(), folded.end(), true));
}

std::vector<rewrite::Match> without_weight_only(const ir::Graph& graph, std::vector<rewrite::Match> matches) {
  const std::vector<bool> folded = ops::folded_nodes(graph);
  auto weight_only = [&](const rewrite::Match& match) {
    return std::all_of(match.nodes.begin(), match.nodes.end(),
                       [&](ir::NodeId id) { return folded[static_cast<std::size_t>(id)]; });
  };
  matches.erase(std::remove_if(matches.begin(), matches.end(), weight_only), matches.end());
  return matches;
}

bool clearly_less(double a, double b) {
  if (!(a < b)) return false;
  return std::isinf(b) || a < b - 1e-12 * std::max(b, 1e-300);
}

std::vector<rewrite::Match> unroll(Path path) {
  std::vector<rewrite::Match> matches;
  for (; path; path = path->previous) matches.push_back(path->match);
  return {matches.rbegin(), matches.rend()};
}

std::vector<AppliedStep> replay(const ir::Graph& input, const std::vector<rewrite::Match>& applied, ir::Graph* result) {
  std::vector<AppliedStep> steps;
  ir::Graph graph = input;
  for (const rewrite::Match& match : applied) {
    steps.push_back({match.rule->name, rewrite::matched_nodes(graph, match)});
    std::string why_not;
    std::optional<ir::Graph> next = rewrite::apply(graph, match, &why_not);
    if (!next) throw std::logic_error("replaying a search's steps: " + why_not);
    graph = std::move(*next);
  }
  if (result) *result = std::move(graph);
  return steps;
}

SearchState::SearchState(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
                         const SearchOptions& options)
    : matcher_(matcher), model_(model), options_(options), input_(input),
      node_cap_(static_cast<std::size_t>(options.node_cap_factor * static_cast<double>(running_nodes(input)) + 1)),
      start_(std::chrono::steady_clock::now()) {
  result_.initial_cost = model.graph_cost(input);
  result_.best = input;
  result_.best_cost = result_.initial_cost;
  seen_.insert(input.structural_hash(ops::is_commutative));
}

Reached SearchState::input() const { return Reached{input_, result_.initial_cost, nullptr}; }

std::optional<StopReason> SearchState::limit_reached() const {
  if (result_.expanded >= options_.budget) return StopReason::kBudget;
  if (past_time_limit()) return StopReason::kTimeLimit;
  return std::nullopt;
}

std::vector<rewrite::Match> SearchState::matches(const ir::Graph& graph) {
  ++result_.expanded;
  return without_weight_only(graph, matcher_.find_all(graph));
}

std::vector<rewrite::Match> SearchState::matches_touching(const ir::Graph& graph,
                                                          const std::vector<ir::NodeId>& nodes) const {
  return without_weight_only(graph, matcher_.find_touching(graph, nodes));
}

std::optional<ir::Graph> SearchState::apply(const ir::Graph& graph, const rewrite::Match& match) {
  std::optional<ir::Graph> next = rewrite::apply(graph, match, nullptr);
  if (!next || running_nodes(*next) > node_cap_) {
    ++result_.rejected;
    return std::nullopt;
  }
  ++result_.generated;
  return next;
}

Reached SearchState::reach(const Reached& from, const rewrite::Match& match, ir::Graph next) const {
  const cost::Cost cost = model_.graph_cost(next);
  auto path = std::make_shared<const StepLink>(StepLink{match, from.path});
  return Reached{std::move(next), cost, std::move(path)};
}

bool SearchState::first_visit(const ir::Graph& graph) {
  if (seen_.insert(graph.structural_hash(ops::is_commutative)).second) return true;
  ++result_.duplicates;
  return false;
}

bool SearchState::seen(const ir::Graph& graph) const { return seen_.count(graph.structural_hash(ops::is_commutative)) > 0; }

void SearchState::offer(const Reached& reached) {
  const double cost = reached.cost.time_ms;
  const double best = result_.best_cost.time_ms;
  const bool as_cheap = !clearly_less(best, cost);
  if (clearly_less(cost, best) || (as_cheap && reached.graph.node_count() < result_.best.node_count())) {
    result_.best = reached.graph;
    result_.best_cost = reached.cost;
    best_path_ = reached.path;
  }
}

SearchResult SearchState::finish(StopReason reason, const char* algorithm) {
  result_.stop = reason;
  result_.applied = unroll(best_path_);
  result_.steps = replay(input_, result_.applied);
  result_.seconds = elapsed_s();
  logger("search")->info("{} {}: {} expanded, {} generated, {} duplicates, best {:.6g} ms (from {:.6g})", algorithm,
                         to_string(reason), result_.expanded, result_.generated, result_.duplicates,
                         result_.best_cost.time_ms, result_.initial_cost.time_ms);
  return std::move(result_);
}

double SearchState::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace graphsub::search
