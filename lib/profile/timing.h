// Timed runs of a graph and their summary: median, spread, percentiles.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace graphsub::profile {

/// How long to time something and when its numbers are stable enough.
struct TimingLimits {
  int warmup = 3;              ///< Untimed runs first (allocations, caches, prepacking).
  /// With > 0: a model's warm-up also stops once its runs took this long (after one run). A
  /// 300 ms model's first run after its session is made times as its later ones (ViT-B/16 on
  /// onnxruntime), and a comparison over several blocks of sessions warms up again in each.
  double warmup_seconds = 0;
  int min_runs = 10;           ///< Timed runs at least.
  int max_runs = 100;          ///< Timed runs at most.
  double max_seconds = 5;      ///< Stop after this long (with at least three runs each).
  double rel_error = 0.01;     ///< Stable when the standard error of the mean is at most this × the mean...
  double abs_error_ms = 5e-4;  ///< ... or at most this many milliseconds.
  /// When timing several models: stop instead when the run-by-run log ratio of each to the first
  /// has a standard error of at most rel_error (what a comparison needs, in fewer runs).
  bool paired = false;
  /// Blocks of fresh sessions the rounds are spread over, every other one creating the sessions
  /// in reverse order (the onnxruntime worker; see ort_worker.py). Two sessions of one file can
  /// time a few per cent apart, the one created later mostly faster, so a comparison made with one
  /// pair of sessions inherits that; several blocks average it out. More than one is made even,
  /// and the stopping rule is asked only after whole pairs of blocks. time_alternately and the
  /// CUDA executor, which have no sessions, ignore it.
  int sessions = 1;
  /// With `paired` and > 0: stop also once every model's median run-by-run ratio to the first is
  /// decided against this ratio (the guard's 1 - min_gain): below it by three standard errors of
  /// that median, or above it by two. A comparison that only has to tell "faster by the needed
  /// gain or not" stops there instead of timing on to rel_error's precision. It stops too where
  /// the runs max_runs and max_seconds leave cannot make it a gain (the onnxruntime worker: at the
  /// pace so far, the noise bound at the limit would still lie beyond the median measured).
  double decide_at = 0;
  /// max_seconds bounds the timed runs' own time, not the creation and warm-up of sessions
  /// (bench: a 4 GB model's sessions take seconds each, and 30 s left it 3 runs). The onnxruntime
  /// worker only; the guard keeps the whole time bounded.
  bool runs_only_seconds = false;
};

/// The timed runs of one graph, in milliseconds, and their summary.
struct Timing {
  std::vector<double> samples_ms;  ///< In the order they ran.
  double median_ms = 0;
  double p10_ms = 0;
  double p90_ms = 0;
  double mean_ms = 0;
  double std_ms = 0;  ///< Sample standard deviation (0 for one run).
  /// Interquartile range / 1.349: the standard deviation of a normal distribution with this
  /// interquartile range. Unlike std_ms, a few runs disturbed by the machine barely move it.
  double spread_ms = 0;
  int64_t runs = 0;
};

/// The summary of `samples_ms` (percentiles by linear interpolation between closest ranks).
/// An empty list gives runs 0 and zeros.
Timing summarize(std::vector<double> samples_ms);

/// A Timing of only a median, spread and run count (no samples): what a cost cache keeps of one.
Timing timing_of(double median_ms, double spread_ms, int64_t runs);

/// A candidate timed against an original, round by round.
struct Ratio {
  double median = 1;  ///< Median over the rounds of candidate time / original time.
  double spread = 0;  ///< Interquartile range / 1.349 of the log of the ratio.
  int64_t runs = 0;   ///< Rounds paired.
};

/// Pairs the i-th run of `original` with the i-th run of `candidate` (the runs of one round of
/// alternated timing) and summarizes their ratios. Extra runs of the longer list are left out.
Ratio paired_ratio(const std::vector<double>& original_ms, const std::vector<double>& candidate_ms);

/// One run of one model; returns the milliseconds it took.
using TimedRun = std::function<double()>;

/// Times models alternately, as the onnxruntime worker does (ort_worker.py): `limits.warmup`
/// untimed runs of each (at least one; fewer once they took `limits.warmup_seconds`), then rounds that run each model once (even rounds in order,
/// odd ones in reverse), until every model has min_runs runs and the standard error of its mean is
/// at most max(abs_error_ms, rel_error × mean) — with `paired`, until the median of each model's
/// run-by-run log ratio to the first has a standard error of at most rel_error — or max_runs
/// rounds, or max_seconds of wall-clock time (after at least three rounds). Returns each model's
/// samples in the order they ran. With `prior` (one list per model, of one length: runs an
/// earlier timing made), the samples open with those runs and the stopping rule counts them;
/// max_runs and max_seconds bound the new rounds.
std::vector<std::vector<double>> time_alternately(const std::vector<TimedRun>& runs, const TimingLimits& limits,
                                                  const std::vector<std::vector<double>>& prior = {});

/// The value below which `fraction` (0..1) of the sorted `values` lie, by linear interpolation.
double percentile(const std::vector<double>& sorted, double fraction);

}  // namespace graphsub::profile
