// Keeping a candidate only when it measured faster.
#include "pipeline/guard.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace graphsub::pipeline {
namespace {

std::string format_ms(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g ms", ms);
  return text;
}

std::string format_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", 100 * fraction);
  return text;
}

/// False when the comparison recorded both graphs' median times and the candidate's is not below
/// (1 - min_gain) times the original's (true for a comparison cached without them).
bool medians_agree(const cost::Comparison& comparison, double min_gain) {
  if (!comparison.has_times()) return true;
  return min_gain > 0 ? comparison.candidate_ms <= (1 - min_gain) * comparison.original_ms
                      : comparison.candidate_ms < comparison.original_ms;
}

}  // namespace

double noise_gain(const cost::Comparison& comparison) {
  if (comparison.runs < 1) return 0;
  return 1 - std::exp(-2 * 1.2533 * comparison.spread / std::sqrt(static_cast<double>(comparison.runs)));
}

double claimed_speedup(const cost::Comparison& comparison) {
  const double run_by_run = 1 / comparison.median_ratio;
  return comparison.has_times() ? std::min(run_by_run, comparison.original_ms / comparison.candidate_ms) : run_by_run;
}

std::string describe_speedup(const cost::Comparison& comparison) {
  const double claimed = claimed_speedup(comparison);
  char text[160];
  if (claimed < 1 / comparison.median_ratio) {
    std::snprintf(text, sizeof text, "%.3gx faster (the ratio of the medians of %lld alternated runs; run by run %.3gx)",
                  claimed, static_cast<long long>(comparison.runs), 1 / comparison.median_ratio);
  } else {
    std::snprintf(text, sizeof text, "%.3gx faster (median of %lld alternated runs)", claimed,
                  static_cast<long long>(comparison.runs));
  }
  return text;
}

bool clearly_faster(const cost::Comparison& comparison, double min_gain) {
  return medians_agree(comparison, min_gain) && comparison.median_ratio <= 1 - std::max(min_gain, noise_gain(comparison));
}

GuardVerdict guard(const ir::Graph& input, const ir::Graph& candidate, Measurer& measurer,
                   const GuardOptions& options, const GuardNames& names, const std::string& input_file) {
  const std::string kept = std::string(", so ") + names.input + " is kept";
  GuardVerdict verdict;
  verdict.comparison = measurer.compare(input, candidate, options.deciding(options.whole), input_file);
  if (!verdict.comparison) {
    verdict.reason = measurer.can_measure() ? "the target could not run one of the two graphs" + kept
                                            : "the cost cache holds no whole-graph comparison of them and measuring "
                                              "is off" + kept;
    return verdict;
  }
  if (options.time_again && !clearly_faster(*verdict.comparison, options.min_gain) &&
      verdict.comparison->median_ratio <= 1 - options.min_gain) {
    const profile::TimingLimits limits = options.deciding(options.again);
    if (std::optional<cost::Comparison> again = measurer.compare_again(input, candidate, limits, input_file)) {
      verdict.comparison = std::move(again);
    }
  }
  if (verdict.comparison->has_times()) {
    const cost::Comparison& times = *verdict.comparison;
    verdict.before = profile::timing_of(times.original_ms, times.original_spread_ms, times.runs);
    verdict.after = profile::timing_of(times.candidate_ms, times.candidate_spread_ms, times.runs);
  } else {
    verdict.before = measurer.graph_time(input, input_file);
    verdict.after = measurer.graph_time(candidate);
  }
  const cost::Comparison& measured = *verdict.comparison;
  const double needed = std::max(options.min_gain, noise_gain(measured));
  std::string numbers = "it took " + format_percent(measured.median_ratio) + " of the time of " + names.input +
                        " (median of " + std::to_string(measured.runs) + " alternated runs";
  if (verdict.before && verdict.after) {
    numbers += ": " + format_ms(verdict.after->median_ms) + " against " + format_ms(verdict.before->median_ms);
  }
  numbers += "), and a gain had to reach " + format_percent(needed);
  if (!medians_agree(measured, options.min_gain)) {
    numbers += " in the ratio of the medians too";
  }
  verdict.keep_candidate = clearly_faster(measured, options.min_gain);
  verdict.reason = verdict.keep_candidate
                       ? std::string(names.candidate) + " measured faster: " + numbers
                       : std::string(names.candidate) + " was not measured faster than " + names.input +
                             " beyond noise: " + numbers + kept;
  return verdict;
}

}  // namespace graphsub::pipeline
