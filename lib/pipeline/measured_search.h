// The search with measured costs: search, measure what it missed, search again; parts checked
// in the target before they are stitched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cost/cached_model.h"
#include "pipeline/guard.h"
#include "pipeline/measurer.h"
#include "rewrite/matcher.h"
#include "search/optimizer.h"

namespace graphsub::pipeline {

/// One round of the measured search.
struct SearchRound {
  double search_seconds = 0;     ///< The search, with the parts' checks of the last round.
  std::size_t reused_parts = 0;  ///< Part searches taken from an earlier round (SplitMemo::final_searches).
  std::size_t reused_seams = 0;  ///< Seam region searches likewise (SplitMemo::final_seams).
  int64_t signatures = 0;        ///< Node signatures it missed (measured after it, unless it was the last).
  double measure_seconds = 0;    ///< Measuring them.
};

/// How the measured search went.
struct MeasuredSearchStats {
  int rounds = 0;          ///< Searches run (the last one's result is kept).
  int64_t estimated = 0;   ///< Node signatures of the last search that are still estimated.
  std::vector<SearchRound> each;  ///< Every round, in order.
};

/// Optimizes `input` ranking graphs by `model` (measured node times from `measurer`'s cache).
/// Each round searches; the node signatures it missed are measured and the search runs again,
/// until a round misses nothing or `max_rounds` have run. When the measurer can measure (or its
/// cache holds the times), every changed part is timed against the original part and kept only
/// when clearly faster (GuardOptions::min_gain). Each round's search has the options' time limit;
/// no new round starts once the rounds so far took longer than it.
search::OptimizeResult measured_optimize(const ir::Graph& input, const rewrite::Matcher& matcher,
                                         cost::CachedModel& model, Measurer& measurer,
                                         search::OptimizerOptions options, const GuardOptions& guard,
                                         MeasuredSearchStats& stats, int max_rounds = 10);

}  // namespace graphsub::pipeline
