// Tests of the timing summaries.
#include <catch2/catch.hpp>

#include <string>
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

TEST_CASE("time_alternately warms up, alternates the models round by round, and stops once stable",
          "[profile][timing]") {
  std::vector<std::string> order;
  auto model = [&order](std::string name, double ms) {
    return [&order, name, ms] {
      order.push_back(name);
      return ms;
    };
  };
  profile::TimingLimits limits;
  limits.warmup = 2;
  limits.min_runs = 4;
  limits.max_runs = 50;
  const auto samples = profile::time_alternately({model("a", 2.0), model("b", 1.0)}, limits);
  // Constant times are stable as soon as each model has min_runs runs.
  REQUIRE(samples.size() == 2);
  CHECK(samples[0] == std::vector<double>(4, 2.0));
  CHECK(samples[1] == std::vector<double>(4, 1.0));
  const std::vector<std::string> expected = {"a", "a", "b", "b", "a", "b", "b", "a", "a", "b", "b", "a"};
  CHECK(order == expected);
}

TEST_CASE("time_alternately runs to max_runs while the times scatter, and paired mode judges the ratio",
          "[profile][timing]") {
  int calls = 0;
  auto noisy = [&calls] { return ++calls % 2 == 0 ? 1.0 : 3.0; };
  profile::TimingLimits limits;
  limits.warmup = 0;
  limits.min_runs = 2;
  limits.max_runs = 7;
  limits.rel_error = 1e-6;
  limits.abs_error_ms = 0;
  CHECK(profile::time_alternately({noisy}, limits)[0].size() == 7);
  // Two drifting models whose ratio is exactly 2 every round: paired timing stops at its minimum of 4 rounds.
  double a = 0, b = 0;
  auto drifting = [&a] { return a += 1; };
  auto twice = [&b] { return b += 2; };
  limits.paired = true;
  limits.rel_error = 0.01;
  const auto samples = profile::time_alternately({drifting, twice}, limits);
  CHECK(samples[0].size() == 4);
}

TEST_CASE("time_alternately goes on from prior runs, which its stopping rule counts", "[profile][timing]") {
  // Six earlier rounds at a ratio of exactly 2 already settle the comparison: one more round
  // does, and the samples open with the prior runs.
  double a = 0, b = 0;
  auto drifting = [&a] { return a += 1; };
  auto twice = [&b] { return b += 2; };
  profile::TimingLimits limits;
  limits.warmup = 0;
  limits.min_runs = 4;
  limits.max_runs = 50;
  limits.paired = true;
  const std::vector<std::vector<double>> prior = {{5, 5, 6, 6, 7, 7}, {10, 10, 12, 12, 14, 14}};
  const auto samples = profile::time_alternately({drifting, twice}, limits, prior);
  REQUIRE(samples[0].size() == 7);
  CHECK(std::vector<double>(samples[1].begin(), samples[1].begin() + 6) == prior[1]);
  CHECK(samples[1].back() == 2 * samples[0].back());  // the new round (after one warm-up run each)
}

}  // namespace
}  // namespace graphsub
