// The books every search keeps.
#include "search/search_state.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

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

namespace {

/// What one step of a sequence did: the node ids it made ([begin, end)), and the nodes that were
/// there before it whose inputs it changed.
struct StepEffect {
  ir::NodeId begin = 0;
  ir::NodeId end = 0;
  std::unordered_set<ir::NodeId> rewired;
};

StepEffect step_effect(const ir::Graph& before, const ir::Graph& after) {
  StepEffect effect{before.node_capacity(), after.node_capacity(), {}};
  for (ir::NodeId id : before.node_ids()) {
    if (after.has_node(id) && after.node(id).inputs != before.node(id).inputs) effect.rewired.insert(id);
  }
  return effect;
}

/// Whether `match` (in `graph`, after `effect`'s step; `matched`, its nodes as a set) needs what
/// that step did: it matched a node the step made, or a node whose inputs the step changed and
/// that reads another matched node (an edge of the pattern the step made). A matched node that
/// only reads a value the step made from outside the pattern matches as well without it (a
/// GELU's division after the convolution a sum was folded into).
bool depends_on(const ir::Graph& graph, const rewrite::Match& match, const std::unordered_set<ir::NodeId>& matched,
                const StepEffect& effect) {
  for (ir::NodeId id : match.nodes) {
    if (id >= effect.begin && id < effect.end) return true;
    if (!effect.rewired.count(id)) continue;
    for (ir::ValueId input : graph.node(id).inputs) {
      if (input != ir::kNoValue && matched.count(graph.value(input).producer)) return true;
    }
  }
  return false;
}

}  // namespace

StepRegions step_regions(const ir::Graph& input, const std::vector<rewrite::Match>& applied) {
  std::vector<std::size_t> group(applied.size());
  for (std::size_t k = 0; k < group.size(); ++k) group[k] = k;
  auto root = [&](std::size_t k) {
    while (group[k] != k) k = group[k] = group[group[k]];
    return k;
  };
  StepRegions regions;
  std::vector<StepEffect> effects;
  ir::Graph graph = input;
  for (std::size_t k = 0; k < applied.size(); ++k) {
    const std::unordered_set<ir::NodeId> matched(applied[k].nodes.begin(), applied[k].nodes.end());
    for (std::size_t i = 0; i < k; ++i) {
      if (depends_on(graph, applied[k], matched, effects[i])) group[root(k)] = root(i);
    }
    std::string why_not;
    std::optional<ir::Graph> next = rewrite::apply(graph, applied[k], &why_not);
    if (!next) throw std::logic_error("replaying a search's steps: " + why_not);
    effects.push_back(step_effect(graph, *next));
    regions.made.emplace_back(effects.back().begin, effects.back().end);
    graph = std::move(*next);
  }
  std::vector<std::size_t> index_of(applied.size(), applied.size());
  for (std::size_t k = 0; k < applied.size(); ++k) {
    const std::size_t r = root(k);
    if (index_of[r] == applied.size()) {
      index_of[r] = regions.groups.size();
      regions.groups.emplace_back();
    }
    regions.groups[index_of[r]].push_back(k);
  }
  return regions;
}

std::optional<ir::Graph> replay_steps(const ir::Graph& input, const std::vector<rewrite::Match>& applied,
                                      const StepRegions& regions, const std::vector<std::size_t>& chosen,
                                      std::vector<rewrite::Match>& matches, std::vector<AppliedStep>& steps) {
  matches.clear();
  steps.clear();
  // The node ids each chosen step made in the whole sequence, and where those made here begin.
  std::vector<std::pair<std::pair<ir::NodeId, ir::NodeId>, ir::NodeId>> moved;
  auto node_here = [&](ir::NodeId id) {
    for (const auto& [there, here] : moved) {
      if (id >= there.first && id < there.second) return id - there.first + here;
    }
    return id;
  };
  ir::Graph graph = input;
  for (std::size_t k : chosen) {
    // The step's match found again on its nodes here: the values it reads from outside the
    // pattern may be others than in the whole sequence.
    std::vector<ir::NodeId> nodes = applied[k].nodes;
    for (ir::NodeId& id : nodes) id = node_here(id);
    std::optional<rewrite::Match> found;
    for (rewrite::Match& match : rewrite::Matcher::find(graph, *applied[k].rule)) {
      if (match.nodes == nodes && match.variables == applied[k].variables) {
        found = std::move(match);
        break;
      }
    }
    if (!found) return std::nullopt;
    std::optional<ir::Graph> after = rewrite::apply(graph, *found);
    if (!after) return std::nullopt;
    const std::pair<ir::NodeId, ir::NodeId>& there = regions.made.at(k);
    if (there.second - there.first != after->node_capacity() - graph.node_capacity()) return std::nullopt;
    moved.emplace_back(there, graph.node_capacity());
    steps.push_back({found->rule->name, rewrite::matched_nodes(graph, *found)});
    matches.push_back(std::move(*found));
    graph = std::move(*after);
  }
  return graph;
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
