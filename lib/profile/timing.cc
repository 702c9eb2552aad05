// Summaries of timed runs.
#include "profile/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <utility>

namespace graphsub::profile {

double percentile(const std::vector<double>& sorted, double fraction) {
  if (sorted.empty()) return 0;
  const double rank = fraction * static_cast<double>(sorted.size() - 1);
  const auto low = static_cast<std::size_t>(std::floor(rank));
  const std::size_t high = std::min(low + 1, sorted.size() - 1);
  return sorted[low] + (rank - static_cast<double>(low)) * (sorted[high] - sorted[low]);
}

Timing timing_of(double median_ms, double spread_ms, int64_t runs) {
  Timing timing;
  timing.median_ms = median_ms;
  timing.spread_ms = spread_ms;
  timing.runs = runs;
  return timing;
}

Timing summarize(std::vector<double> samples_ms) {
  Timing timing;
  timing.runs = static_cast<int64_t>(samples_ms.size());
  if (samples_ms.empty()) return timing;
  std::vector<double> sorted = samples_ms;
  std::sort(sorted.begin(), sorted.end());
  timing.median_ms = percentile(sorted, 0.5);
  timing.p10_ms = percentile(sorted, 0.1);
  timing.p90_ms = percentile(sorted, 0.9);
  timing.spread_ms = (percentile(sorted, 0.75) - percentile(sorted, 0.25)) / 1.349;
  const double n = static_cast<double>(sorted.size());
  timing.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  double squares = 0;
  for (double x : sorted) squares += (x - timing.mean_ms) * (x - timing.mean_ms);
  timing.std_ms = sorted.size() > 1 ? std::sqrt(squares / (n - 1)) : 0;
  timing.samples_ms = std::move(samples_ms);
  return timing;
}

Ratio paired_ratio(const std::vector<double>& original_ms, const std::vector<double>& candidate_ms) {
  std::vector<double> logs;
  for (std::size_t i = 0; i < std::min(original_ms.size(), candidate_ms.size()); ++i) {
    if (original_ms[i] > 0 && candidate_ms[i] > 0) logs.push_back(std::log(candidate_ms[i] / original_ms[i]));
  }
  Ratio ratio;
  ratio.runs = static_cast<int64_t>(logs.size());
  if (logs.empty()) return ratio;
  std::sort(logs.begin(), logs.end());
  ratio.median = std::exp(percentile(logs, 0.5));
  ratio.spread = (percentile(logs, 0.75) - percentile(logs, 0.25)) / 1.349;
  return ratio;
}

namespace {

/// The standard error of the mean of `samples` is within the limits (and there are enough).
bool stable(const std::vector<double>& samples, const TimingLimits& limits) {
  if (samples.size() < static_cast<std::size_t>(std::max(2, limits.min_runs))) return false;
  const Timing timing = summarize(samples);
  const double error = timing.std_ms / std::sqrt(static_cast<double>(samples.size()));
  return error <= std::max(limits.abs_error_ms, limits.rel_error * timing.mean_ms);
}

/// The median log ratio of every model to the first has a standard error within rel_error
/// (1.2533 × the robust spread / sqrt(runs)).
bool stable_ratios(const std::vector<std::vector<double>>& samples, const TimingLimits& limits) {
  for (std::size_t i = 1; i < samples.size(); ++i) {
    const Ratio ratio = paired_ratio(samples[0], samples[i]);
    if (ratio.runs < std::max<int64_t>(4, limits.min_runs)) return false;
    if (1.2533 * ratio.spread / std::sqrt(static_cast<double>(ratio.runs)) > limits.rel_error) return false;
  }
  return true;
}

}  // namespace

std::vector<std::vector<double>> time_alternately(const std::vector<TimedRun>& runs, const TimingLimits& limits,
                                                  const std::vector<std::vector<double>>& prior) {
  for (const TimedRun& run : runs) {
    double warmed_ms = 0;
    for (int i = 0; i < std::max(1, limits.warmup); ++i) {
      warmed_ms += run();
      if (limits.warmup_seconds > 0 && warmed_ms >= 1000 * limits.warmup_seconds) break;
    }
  }
  std::vector<std::vector<double>> samples = prior.size() == runs.size() ? prior : std::vector<std::vector<double>>(runs.size());
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < limits.max_runs; ++round) {
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::size_t i = round % 2 == 0 ? k : runs.size() - 1 - k;
      samples[i].push_back(runs[i]());
    }
    const bool done = limits.paired && runs.size() > 1
                          ? stable_ratios(samples, limits)
                          : std::all_of(samples.begin(), samples.end(),
                                        [&](const std::vector<double>& s) { return stable(s, limits); });
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (done || (elapsed.count() >= limits.max_seconds && round >= 2)) break;
  }
  return samples;
}

}  // namespace graphsub::profile
