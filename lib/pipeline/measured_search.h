// The search with measured costs: search, measure what it missed, search again; parts checked
// in the target before they are stitched; then the result, as it will be written, searched again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cost/cached_model.h"
#include "pipeline/guard.h"
#include "pipeline/measurer.h"
#include "rewrite/matcher.h"
#include "search/optimizer.h"

namespace graphsub::pipeline {

/// One round of the measured search.
struct SearchRound {
  int pass = 1;                  ///< The pass it belongs to (measured_optimize).
  double search_seconds = 0;     ///< The search, with the parts' checks of the last round.
  std::size_t reused_parts = 0;  ///< Part searches taken from an earlier round (SplitMemo::final_searches).
  std::size_t reused_seams = 0;  ///< Seam region searches likewise (SplitMemo::final_seams).
  int64_t signatures = 0;        ///< Node signatures it missed (measured after it, unless it was the last).
  double measure_seconds = 0;    ///< Measuring them.
};

/// How the passes of search_in_passes went.
struct PassStats {
  int passes = 0;                        ///< Passes run (a pass's result is kept only when estimated cheaper).
  std::vector<std::size_t> pass_steps;   ///< Substitutions of each kept pass.
  std::string last_pass_end;             ///< Why no further pass ran.
};

/// How the measured search went.
struct MeasuredSearchStats : PassStats {
  int rounds = 0;          ///< Searches run, over every pass.
  int64_t estimated = 0;   ///< Node signatures of the last search that are still estimated.
  std::vector<SearchRound> each;  ///< Every round, in order.
};

/// `graph` as written: exported to ONNX and read back (a fused activation or summand is its own
/// node again, graphsub's own ops are their ONNX forms, weight-only nodes are weights). Exact,
/// but its weights are copies (through a file).
ir::Graph as_written(const ir::Graph& graph);

/// What export does to `graph` that a search can undo, done in the IR: weight-only nodes folded
/// (onnx_io::fold_weight_nodes) and each fused Conv or MatMul written as the product, an Add of
/// its summand and its activation's node, as export writes them. Weights are shared with `graph`,
/// not copied. Where it is a graph's hash, so is as_written's; not always the other way round
/// (graphsub's own ops such as SMul stay as they are), so it is a fast first check, and the
/// passes search as_written's exact form.
ir::Graph written_form(const ir::Graph& graph);

/// One pass of a search: the search of `graph`, the `pass`-th (from 1).
using SearchPass = std::function<search::OptimizeResult(const ir::Graph& graph, int pass)>;

/// Searches `input` with `search_pass`, then its result, as it will be written (as_written), in
/// a further pass, up to `max_passes`; a pass is kept when its result costs less than the last
/// kept one's by `model` as it stands then. A pass stops short of what the rules can reach: its
/// parts and seam regions are searched once each, where a merge across them may open further
/// merges, and its fused forms hide the plain nodes other rules match. No pass starts when the
/// last one found nothing, when its result as written is the graph it searched, when that graph
/// has a symbolic dim `sizes` lacks (where given: a measured model would measure it at 1), or
/// once `time_limit_s` has passed since the first began. The result's steps are the kept passes'
/// in order, its costs those of `input` and the result by `model` at the end.
search::OptimizeResult search_in_passes(const ir::Graph& input, const cost::CostModel& model,
                                        const SearchPass& search_pass, double time_limit_s, int max_passes,
                                        const cost::DimSizes* sizes, PassStats& stats);

/// Optimizes `input` ranking graphs by `model` (measured node times from `measurer`'s cache).
/// Each round searches; the node signatures it missed are measured and the search runs again,
/// until a round misses nothing or `max_rounds` have run. When the measurer can measure (or its
/// cache holds the times), every changed part is timed against the original part and kept only
/// when clearly faster (GuardOptions::min_gain). Each round's search has the options' time limit;
/// no new round starts once the rounds so far took longer than it.
///
/// Those rounds are one pass of search_in_passes (the measurer's sizes, the search's time limit).
search::OptimizeResult measured_optimize(const ir::Graph& input, const rewrite::Matcher& matcher,
                                         cost::CachedModel& model, Measurer& measurer,
                                         search::OptimizerOptions options, const GuardOptions& guard,
                                         MeasuredSearchStats& stats, int max_rounds = 10, int max_passes = 8);

}  // namespace graphsub::pipeline
