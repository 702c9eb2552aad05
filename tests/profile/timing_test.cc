// Tests of the timing summaries.
#include <catch2/catch.hpp>

#include <vector>

#include "profile/timing.h"

namespace graphsub {
namespace {

TEST_CASE("a timing summary gives median, percentiles, mean and spread", "[profile]") {
  const profile::Timing timing = profile::summarize({5, 1, 4, 2, 3});
  CHECK(timing.runs == 5);
  CHECK(timing.median_ms == 3);
  CHECK(timing.p10_ms == Approx(1.4));
  CHECK(timing.p90_ms == Approx(4.6));
  CHECK(timing.mean_ms == 3);
  CHECK(timing.std_ms == Approx(1.5811388));
  CHECK(timing.spread_ms == Approx(2 / 1.349));
  CHECK(timing.samples_ms == std::vector<double>{5, 1, 4, 2, 3});
}

TEST_CASE("a median of an even count lies between the middle runs", "[profile]") {
  CHECK(profile::summarize({4, 1, 3, 2}).median_ms == 2.5);
  CHECK(profile::summarize({7}).std_ms == 0);
  CHECK(profile::summarize({}).runs == 0);
}

TEST_CASE("paired ratios compare run by run, so a common drift cancels", "[profile]") {
  // The machine slows down by half during the rounds; the candidate is always 20 % faster.
  const std::vector<double> original = {10, 11, 12, 13, 14, 15};
  std::vector<double> candidate;
  for (double ms : original) candidate.push_back(0.8 * ms);
  const profile::Ratio ratio = profile::paired_ratio(original, candidate);
  CHECK(ratio.median == Approx(0.8));
  CHECK(ratio.spread == Approx(0).margin(1e-12));
  CHECK(ratio.runs == 6);
  CHECK(profile::summarize(original).spread_ms > 1);
  CHECK(profile::paired_ratio({1, 2, 3}, {2}).runs == 1);
}

}  // namespace
}  // namespace graphsub
