// Tests of the measured checks with a deterministic cost source: the input is kept unless the
// candidate measured clearly faster.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "../cost/cost_testing.h"
#include "pipeline/guard.h"
#include "pipeline_testing.h"

namespace graphsub {
namespace {

using testing::TableProfiler;

/// The guard's verdict on `candidate_ms` against `input_ms` for a conv+relu graph and its fused form.
pipeline::GuardVerdict verdict(double input_ms, double candidate_ms, bool measurable = true) {
  const ir::Graph input = testing::conv_graph(8, 8, 3, "none", true);
  const ir::Graph candidate = testing::conv_graph(8, 8, 3, "relu", false);
  auto table = std::make_unique<TableProfiler>();
  if (measurable) table->graph_ms[cost::graph_signature(candidate, {})] = candidate_ms;
  table->graph_ms[cost::graph_signature(input, {})] = input_ms;
  cost::CostCache cache(table->header());
  pipeline::Measurer measurer(std::move(cache), "", std::move(table), {});
  return pipeline::guard(input, candidate, measurer, pipeline::GuardOptions{});
}

TEST_CASE("the guard keeps the input when the candidate measured slower", "[pipeline]") {
  const pipeline::GuardVerdict slower = verdict(10, 11);
  CHECK_FALSE(slower.keep_candidate);
  CHECK(slower.before->median_ms == 10);
  CHECK(slower.after->median_ms == 11);
  CHECK_THAT(slower.reason, Catch::Contains("input is kept"));
}

TEST_CASE("the guard keeps the input when the gain is within the noise margin", "[pipeline]") {
  CHECK_FALSE(verdict(10, 9.95).keep_candidate);
  CHECK_FALSE(verdict(10, 10).keep_candidate);
}

TEST_CASE("the guard keeps a candidate that measured clearly faster", "[pipeline]") {
  const pipeline::GuardVerdict faster = verdict(10, 8);
  CHECK(faster.keep_candidate);
  CHECK_THAT(faster.reason, Catch::Contains("measured faster"));
}

TEST_CASE("the guard keeps the input when the candidate cannot be measured", "[pipeline]") {
  const pipeline::GuardVerdict failed = verdict(10, 1, false);
  CHECK_FALSE(failed.keep_candidate);
  CHECK_FALSE(failed.after.has_value());
  CHECK_THAT(failed.reason, Catch::Contains("could not run"));
}

TEST_CASE("a gain within the noise of the runs is no gain", "[pipeline]") {
  const profile::Timing original = profile::summarize({10, 9, 11, 10, 9, 11, 10, 9, 11});
  const profile::Timing noisy = profile::summarize({9.5, 8.5, 10.5, 9.5, 8.5, 10.5, 9.5, 8.5, 10.5});
  CHECK(pipeline::noise_gain(noisy, original) > 0.05);
  CHECK_FALSE(pipeline::clearly_faster(noisy, original, 0.01));
  const profile::Timing steady = profile::summarize({9.5, 9.5, 9.5, 9.5});
  CHECK(pipeline::clearly_faster(steady, profile::summarize({10, 10, 10, 10}), 0.01));
}

TEST_CASE("clearly faster compares medians with the margin", "[pipeline]") {
  CHECK(pipeline::clearly_faster(profile::summarize({9.8}), profile::summarize({10}), 0.01));
  CHECK_FALSE(pipeline::clearly_faster(profile::summarize({9.95}), profile::summarize({10}), 0.01));
  CHECK(pipeline::clearly_faster(profile::summarize({9.95}), profile::summarize({10}), 0));
}

}  // namespace
}  // namespace graphsub
