// The measured checks: a part or a whole optimized graph replaces the original only when the
// target ran it faster.
#pragma once

#include <optional>
#include <string>

#include "cost/cost_cache.h"
#include "ir/graph.h"
#include "pipeline/measurer.h"
#include "profile/timing.h"

namespace graphsub::pipeline {

/// When a candidate counts as faster, and how long to time it.
struct GuardOptions {
  /// The guard's warm-up runs of a model stop once they took a quarter of a second (at least
  /// one; TimingLimits::warmup_seconds): a model that large is warm after one run, and a check
  /// over several blocks of sessions warms every graph up again in each.
  static constexpr double kWarmupSeconds = 0.25;
  /// A candidate must take at most (1 - min_gain) × the original's median time: a difference
  /// within the noise of a few runs is no gain, and the original is kept.
  double min_gain = 0.01;
  /// Timing of whole graphs: at least 20 alternated runs each (onnxruntime_perf_test's habit of
  /// a median over repeated runs; with 10, the spread of the ratios is itself too uncertain and a
  /// 1.6 % "gain" of ViT-B/16 that an independent bench saw as 0.993x got through), until the
  /// run-by-run ratio is known to 0.5 %, at most 100 runs or 30 s; over 4 blocks of fresh
  /// sessions, as one pair of onnxruntime sessions of the same file timed up to 3 % apart
  /// (DistilBERT, the later-created one faster: the candidate's side).
  profile::TimingLimits whole = {3, kWarmupSeconds, 20, 100, 30.0, 0.005, 5e-4, true, 4};
  /// A whole graph measured at least min_gain faster but within the noise is timed again, going
  /// on from the first timing's runs (Measurer::compare_again), until the ratio over both is
  /// known to 0.25 %, at most 400 more runs or 60 s, and judged on that:
  /// on a noisy machine (run-by-run ratios spreading 10-16 %) 40 runs bound a gain only beyond
  /// 4-6 %, and MaxViT-T's Einsums as MatMul, 1.03-1.05x in `bench`, were kept out.
  profile::TimingLimits again = {3, kWarmupSeconds, 20, 400, 60.0, 0.0025, 5e-4, true, 4};
  /// Whether such a gain within the noise is timed again at all. The pipeline turns it off for
  /// an alternative to a graph already kept (the result without value_info, the input with its
  /// Einsums as MatMul): that alternative then only replaces the kept graph when its first
  /// timing, made in the same request as the kept graph's, already proves it a gain and ranks
  /// it faster; and for the result itself when such an alternative already measured clearly
  /// faster in that request. Timing it again could at most pick between two graphs a few tenths
  /// of a per cent apart, and cost ViT-B/16's and the BERT classifier's cold runs a minute each.
  bool time_again = true;
  /// Timing of parts (small graphs of up to ~30 nodes): at least 10 runs, the ratio to 0.5 %, at
  /// most 200 runs or 2 s; two blocks of sessions, created in both orders.
  profile::TimingLimits part = {3, kWarmupSeconds, 10, 200, 2.0, 0.005, 5e-4, true, 2};

  /// `limits` that also stop once the ratio is decided against 1 - min_gain (TimingLimits's
  /// decide_at): a part measured 0.8x or 1.2x in its first ten runs needs no more to be judged.
  profile::TimingLimits deciding(profile::TimingLimits limits) const {
    limits.decide_at = 1 - min_gain;
    return limits;
  }
};

/// The gain below which a measured ratio may be noise: twice the standard error of the median of
/// the log ratios (1.2533 × spread / √runs, that of the median of normal samples), as a fraction.
double noise_gain(const cost::Comparison& comparison);

/// The speedup a comparison supports: the lesser of 1 / its median run-by-run ratio and, where it
/// recorded both graphs' medians, the ratio of those. On a noisy machine the two estimates differ
/// by several per cent (ViT-B/16's narrowed graph over 24 runs: 1.09x run by run, 336.7 against
/// 325.2 ms), and what the summary and the report claim is the smaller.
double claimed_speedup(const cost::Comparison& comparison);

/// "1.04x faster (median of 24 alternated runs)", naming the estimate when it is the medians'.
std::string describe_speedup(const cost::Comparison& comparison);

/// True when the candidate's median ratio to the original is at most 1 - max(min_gain,
/// noise_gain), and, where the comparison recorded both graphs' median times, the ratio of those
/// is at most 1 - min_gain too: on a noisy machine the median of the run-by-run ratios can say
/// 0.947 while the medians of the same 48 runs say 341 ms against 325 (ViT-B/16, 2026-11-29), and
/// a graph whose own runs measured slower, or faster by less than the minimum gain, is no gain to
/// write; the speedup claimed for a kept graph (claimed_speedup, the lesser of the two) is then
/// always at least 1 / (1 - min_gain). Uses only what the cost cache keeps of a comparison, so
/// that a decision taken from cached numbers is the decision taken when they were measured.
bool clearly_faster(const cost::Comparison& comparison, double min_gain);

/// The whole-graph check of an optimized graph against its input.
struct GuardVerdict {
  bool keep_candidate = false;
  std::optional<cost::Comparison> comparison;  ///< Candidate against input (nullopt: not measured).
  /// The input's measured time in that comparison (or, for a comparison cached without the
  /// times, the input's last timing in the cache).
  std::optional<profile::Timing> before;
  std::optional<profile::Timing> after;  ///< The candidate's, likewise.
  std::string reason;                          ///< One sentence, for the log and the report.
};

/// What the two graphs are called in a verdict's reason.
struct GuardNames {
  const char* candidate = "the optimized graph";
  const char* input = "the input";
};

/// Times `candidate` whole against `input` in the target (or takes the comparison from the cache)
/// and keeps the candidate only when it is clearly faster; a gain of min_gain or more within the
/// noise, measured in this run, is timed again with `options.again` and judged on that (unless
/// `options.time_again` is off). When either time cannot be had (the target fails, or measuring is
/// off and the cache lacks it) the input is kept. With `input_file`, the input is
/// timed as that file (the model the user gave, which `input` was read from), not as an export.
GuardVerdict guard(const ir::Graph& input, const ir::Graph& candidate, Measurer& measurer,
                   const GuardOptions& options, const GuardNames& names = {}, const std::string& input_file = {});

}  // namespace graphsub::pipeline
