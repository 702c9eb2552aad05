// Cost-based backtracking search over verified substitutions (TASO Alg. 2, MetaFlow Alg. 1).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost/cost.h"
#include "cost/cost_model.h"
#include "ir/graph.h"
#include "rewrite/matcher.h"

namespace graphsub::search {

/// The named limits of a search; every one is settable from the command line.
struct SearchOptions {
  double alpha = 1.05;         ///< Keep a candidate while cost < alpha · best (MetaFlow's α).
  int64_t budget = 20000;      ///< Most candidate graphs taken from the queue and expanded.
  double time_limit_s = 60;    ///< Wall-clock limit in seconds.
  /// Discard candidates with more nodes than this × the input's, counting only nodes that run
  /// (a target's computation on weights is folded away on export and does not count).
  double node_cap_factor = 2;
};

/// Why a search stopped.
enum class StopReason {
  kExhausted,  ///< The queue ran empty: every candidate within α was expanded.
  kBudget,     ///< SearchOptions::budget candidates were expanded.
  kTimeLimit,  ///< SearchOptions::time_limit_s passed.
};

/// "exhausted", "budget", "time-limit".
const char* to_string(StopReason reason);

/// One substitution on the path from the input to the result.
struct AppliedStep {
  std::string rule;
  std::string where;  ///< The matched nodes, by name.
};

/// What a search found and how.
struct SearchResult {
  ir::Graph best;
  cost::Cost initial_cost;
  cost::Cost best_cost;
  std::vector<AppliedStep> steps;  ///< From the input to `best`, in order.
  StopReason stop = StopReason::kExhausted;
  int64_t expanded = 0;    ///< Candidates taken from the queue.
  int64_t generated = 0;   ///< Graphs produced by applying a match.
  int64_t duplicates = 0;  ///< Generated graphs already seen (same structural hash).
  int64_t rejected = 0;    ///< Matches whose application failed (shape, type, cycle) or over the cap.
  double seconds = 0;
};

/// Searches for the cheapest graph reachable from `input` by the matcher's rules. The result is
/// never costlier than the input, and the same input, rules, options and cost model give the same
/// result (ties break by discovery order).
SearchResult backtracking_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                                 const cost::CostModel& model, const SearchOptions& options);

}  // namespace graphsub::search
