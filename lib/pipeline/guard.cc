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

}  // namespace

double noise_gain(const profile::Timing& candidate, const profile::Timing& original) {
  auto standard_error = [](const profile::Timing& timing) {
    return timing.runs > 0 ? 1.2533 * timing.spread_ms / std::sqrt(static_cast<double>(timing.runs)) : 0.0;
  };
  if (!(original.median_ms > 0)) return 0;
  return 2 * std::hypot(standard_error(candidate), standard_error(original)) / original.median_ms;
}

bool clearly_faster(const profile::Timing& candidate, const profile::Timing& original, double min_gain) {
  return candidate.median_ms <= (1 - std::max(min_gain, noise_gain(candidate, original))) * original.median_ms;
}

GuardVerdict guard(const ir::Graph& input, const ir::Graph& candidate, Measurer& measurer,
                   const GuardOptions& options) {
  const auto times = measurer.graph_times({&input, &candidate}, options.whole);
  GuardVerdict verdict{false, times[0], times[1], {}};
  if (!verdict.before || !verdict.after) {
    verdict.reason = measurer.can_measure() ? "the target could not run one of the two graphs, so the input is kept"
                                            : "the cost cache holds no whole-graph time for them and measuring is "
                                              "off, so the input is kept";
    return verdict;
  }
  const double needed = std::max(options.min_gain, noise_gain(*verdict.after, *verdict.before));
  const std::string numbers = format_ms(verdict.after->median_ms) + " against " + format_ms(verdict.before->median_ms) +
                              ", a gain must reach " + format_percent(needed);
  verdict.keep_candidate = clearly_faster(*verdict.after, *verdict.before, options.min_gain);
  verdict.reason = verdict.keep_candidate
                       ? "the optimized graph measured faster: " + numbers
                       : "the optimized graph was not measured faster than the input beyond noise (" + numbers +
                             "), so the input is kept";
  return verdict;
}

}  // namespace graphsub::pipeline
