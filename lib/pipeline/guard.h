// The measured checks: a part or a whole optimized graph replaces the original only when the
// target ran it faster.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"
#include "pipeline/measurer.h"
#include "profile/timing.h"

namespace graphsub::pipeline {

/// When a candidate counts as faster, and how long to time it.
struct GuardOptions {
  /// A candidate must take at most (1 - min_gain) × the original's median time: a difference
  /// within the noise of a few runs is no gain, and the original is kept.
  double min_gain = 0.01;
  /// Timing of whole graphs: at least 10 alternated runs each (onnxruntime_perf_test's habit of
  /// a median over repeated runs), stable to 0.5 %.
  profile::TimingLimits whole = {3, 10, 60, 10.0, 0.005, 5e-4};
  /// Timing of parts (small graphs of up to ~30 nodes).
  profile::TimingLimits part = {3, 10, 200, 2.0, 0.005, 5e-4};
};

/// The gain (a fraction of the original's median) below which a difference of the two medians may
/// be noise: twice the standard error of the difference, each median's standard error taken as
/// 1.2533 × spread / √runs (that of the median of normal samples). 0 without spreads.
double noise_gain(const profile::Timing& candidate, const profile::Timing& original);

/// True when `candidate`'s median is below `original`'s by at least max(min_gain, noise_gain).
/// Uses medians, spreads and run counts only (what the cost cache keeps), so that a decision
/// taken from cached numbers is the decision taken when they were measured.
bool clearly_faster(const profile::Timing& candidate, const profile::Timing& original, double min_gain);

/// The whole-graph check of an optimized graph against its input.
struct GuardVerdict {
  bool keep_candidate = false;
  std::optional<profile::Timing> before;  ///< The input's measured time (nullopt: not measured).
  std::optional<profile::Timing> after;   ///< The candidate's.
  std::string reason;                     ///< One sentence, for the log and the report.
};

/// Times `input` and `candidate` whole in the target (or takes both from the cache) and keeps the
/// candidate only when it is clearly faster. When either time cannot be had (the target fails,
/// or measuring is off and the cache lacks it) the input is kept.
GuardVerdict guard(const ir::Graph& input, const ir::Graph& candidate, Measurer& measurer,
                   const GuardOptions& options);

}  // namespace graphsub::pipeline
