// What every search takes and gives: its named limits, why it stopped, and what it found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/cost.h"
#include "ir/graph.h"
#include "rewrite/match.h"

namespace graphsub::search {

/// The named limits of a search; every one is settable from the command line. Each search reads
/// the ones its comment names (lib/search/README.md describes the algorithms).
struct SearchOptions {
  /// Backtracking: keep a candidate while cost < alpha · best (MetaFlow's α). MetaFlow and TASO
  /// used 1.05 on whole graphs; the split parts (at most 30 nodes) afford 1.1, which finds
  /// SqueezeNet's merged fire modules that 1.05 misses (lib/search/README.md has the figures).
  double alpha = 1.1;
  /// All: most graphs whose matches are enumerated and applied (sampling counts its look-ahead too).
  int64_t budget = 20000;
  /// All: wall-clock limit in seconds.
  double time_limit_s = 60;
  /// All: discard graphs with more nodes than this × the input's, counting only nodes that run
  /// (a target's computation on weights is folded away on export and does not count).
  double node_cap_factor = 2;
  /// Sampling: Q, how many sequences go on to the next round: the Q/2 cheapest that did not end
  /// in a cost increase, and the Q/2 cheapest found by exploring past cost increases.
  int sample_size = 20;
  /// Sampling: η, most successive cost-increasing substitutions a sequence may take (0: never
  /// accept a step that makes the graph slower).
  int exploration_depth = 1;
  /// Sampling: K, most substitutions from the input to a result. OCGGS used K = 10 with TASO's
  /// rules, where a whole model needed at most 11; here every fold and fusion is a step of its
  /// own (a ResNet-50 takes about 100), so the default leaves room for graphs ten times that.
  int max_length = 1000;
};

/// Why a search stopped.
enum class StopReason {
  kExhausted,    ///< Nothing was left to try: backtracking's queue or exhaustive's frontier ran
                 ///< empty, or no sampled sequence had a child.
  kBudget,       ///< SearchOptions::budget graphs were expanded.
  kTimeLimit,    ///< SearchOptions::time_limit_s passed.
  kLengthLimit,  ///< Sampling ended, but some sequence reached SearchOptions::max_length.
};

/// "exhausted", "budget", "time-limit", "length-limit".
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
  /// The match of each step, in the graph the step before made (the input for the first):
  /// applied in turn to the input, they make `best` (replay in search_state.h). Empty where the
  /// steps were gathered from several searches (an optimizer's parts and seams).
  std::vector<rewrite::Match> applied;
  StopReason stop = StopReason::kExhausted;
  int64_t expanded = 0;    ///< Graphs whose matches were enumerated and applied.
  int64_t generated = 0;   ///< Graphs produced by applying a match.
  int64_t duplicates = 0;  ///< Generated graphs already seen (same structural hash).
  int64_t rejected = 0;    ///< Matches whose application failed (shape, type, cycle) or over the cap.
  double seconds = 0;
};

}  // namespace graphsub::search
