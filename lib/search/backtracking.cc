// Cost-based backtracking search.
#include "search/backtracking.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <unordered_set>

#include "ir/log.h"
#include "ops/folding.h"
#include "rewrite/rewriter.h"

namespace graphsub::search {
namespace {

/// Nodes that will run: live nodes less those export folds into weights.
std::size_t running_nodes(const ir::Graph& graph) {
  const std::vector<bool> folded = ops::folded_nodes(graph);
  return graph.node_count() - static_cast<std::size_t>(std::count(folded.begin(), folded.end(), true));
}

/// A step shared by every candidate derived from it: the path is a linked list, not a copy.
struct StepLink {
  AppliedStep step;
  std::shared_ptr<const StepLink> previous;
};

/// A graph waiting in the queue.
struct Candidate {
  ir::Graph graph;
  double cost;
  int64_t order;  ///< Discovery order: ties in cost go to the earlier graph.
  std::shared_ptr<const StepLink> path;
};

struct LaterOrCostlier {
  bool operator()(const Candidate& a, const Candidate& b) const {
    return a.cost != b.cost ? a.cost > b.cost : a.order > b.order;
  }
};

std::vector<AppliedStep> unroll(std::shared_ptr<const StepLink> link) {
  std::vector<AppliedStep> steps;
  for (; link; link = link->previous) steps.push_back(link->step);
  return {steps.rbegin(), steps.rend()};
}

/// The search state: queue, seen hashes, best so far, counters.
class Search {
 public:
  Search(const ir::Graph& input, const rewrite::Matcher& matcher, const cost::CostModel& model,
         const SearchOptions& options)
      : matcher_(matcher), model_(model), options_(options),
        node_cap_(static_cast<std::size_t>(options.node_cap_factor * static_cast<double>(running_nodes(input)) + 1)),
        start_(std::chrono::steady_clock::now()) {
    result_.initial_cost = model.graph_cost(input);
    result_.best = input;
    result_.best_cost = result_.initial_cost;
    seen_.insert(input.structural_hash());
    queue_.push(Candidate{input, result_.initial_cost.time_ms, next_order_++, nullptr});
  }

  SearchResult run() {
    while (!queue_.empty()) {
      if (result_.expanded >= options_.budget) return finish(StopReason::kBudget);
      if (elapsed() >= options_.time_limit_s) return finish(StopReason::kTimeLimit);
      Candidate candidate = queue_.top();
      queue_.pop();
      ++result_.expanded;
      expand(candidate);
    }
    return finish(StopReason::kExhausted);
  }

 private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void expand(const Candidate& candidate) {
    for (const rewrite::Match& match : matcher_.find_all(candidate.graph)) {
      std::optional<ir::Graph> next = rewrite::apply(candidate.graph, match, nullptr);
      if (!next || running_nodes(*next) > node_cap_) {
        ++result_.rejected;
        continue;
      }
      ++result_.generated;
      if (!seen_.insert(next->structural_hash()).second) {
        ++result_.duplicates;
        continue;
      }
      consider(std::move(*next), candidate, match);
    }
  }

  void consider(ir::Graph graph, const Candidate& parent, const rewrite::Match& match) {
    const cost::Cost cost = model_.graph_cost(graph);
    auto path = std::make_shared<const StepLink>(
        StepLink{{match.rule->name, rewrite::matched_nodes(parent.graph, match)}, parent.path});
    if (improves(cost, graph)) {
      result_.best = graph;
      result_.best_cost = cost;
      best_path_ = path;
    }
    if (cost.time_ms < options_.alpha * result_.best_cost.time_ms) {
      queue_.push(Candidate{std::move(graph), cost.time_ms, next_order_++, std::move(path)});
    }
  }

  /// Cheaper than the best so far; at an equal cost (up to rounding), fewer nodes: a substitution
  /// that removes a free node (a one-part split, a view) still tidies the result.
  bool improves(const cost::Cost& cost, const ir::Graph& graph) const {
    const double best = result_.best_cost.time_ms;
    const double tolerance = 1e-12 * std::max(best, 1e-300);
    if (cost.time_ms < best - tolerance) return true;
    return cost.time_ms <= best + tolerance && graph.node_count() < result_.best.node_count();
  }

  SearchResult finish(StopReason reason) {
    result_.stop = reason;
    result_.steps = unroll(best_path_);
    result_.seconds = elapsed();
    logger("search")->info("{}: {} expanded, {} generated, {} duplicates, best {:.6g} ms (from {:.6g})",
                           to_string(reason), result_.expanded, result_.generated, result_.duplicates,
                           result_.best_cost.time_ms, result_.initial_cost.time_ms);
    return std::move(result_);
  }

  const rewrite::Matcher& matcher_;
  const cost::CostModel& model_;
  const SearchOptions& options_;
  const std::size_t node_cap_;
  const std::chrono::steady_clock::time_point start_;
  std::priority_queue<Candidate, std::vector<Candidate>, LaterOrCostlier> queue_;
  std::unordered_set<uint64_t> seen_;
  std::shared_ptr<const StepLink> best_path_;
  int64_t next_order_ = 0;
  SearchResult result_;
};

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kExhausted: return "exhausted";
    case StopReason::kBudget: return "budget";
    case StopReason::kTimeLimit: return "time-limit";
  }
  return "exhausted";
}

SearchResult backtracking_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                                 const cost::CostModel& model, const SearchOptions& options) {
  return Search(input, matcher, model, options).run();
}

}  // namespace graphsub::search
