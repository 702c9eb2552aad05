// A deterministic cost source for the measured checks: a profiler that answers from a table.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_cache.h"
#include "ir/error.h"
#include "profile/profiler.h"

namespace graphsub::testing {

/// A Profiler whose "measurements" are looked up in tables the test fills, so that the logic
/// built on measurements (cache, judge, guard) can be checked exactly. It counts what it was
/// asked; a graph or node without a table entry fails as a real target would.
class TableProfiler : public profile::Profiler {
 public:
  explicit TableProfiler(std::string device = "Table CPU")
      : header_{"onnxruntime-cpu", std::move(device), "", {{"onnxruntime", "0.0-test"}},
                {{"graph_optimization_level", "all"}, {"intra_op_threads", "1"}}} {}

  std::map<std::string, double> graph_ms;  ///< graph_signature → median time.
  std::map<std::string, double> node_ms;   ///< op_signature → time.
  std::function<double(const ir::Graph&)> graph_rule;  ///< The time of a graph not in graph_ms, if set.
  std::function<double(const cost::Miss&)> node_rule;  ///< The time of a node not in node_ms, if set.
  /// The runs of a graph timed at `ms`, if set (else three runs of `ms`): a noisy machine.
  std::function<std::vector<double>(const ir::Graph&, double ms)> graph_samples;
  int graph_calls = 0;   ///< Graphs timed.
  int graph_requests = 0;  ///< Calls of time_graphs (each times its graphs together).
  int node_calls = 0;
  /// What a run of a measuring instance computes, if set (else the profiler does not run
  /// instances, and the measurer falls back to the reference executor).
  std::function<profile::Observed(const ir::Graph&, const std::vector<ir::ValueId>&)> observation;
  int observe_calls = 0;

  const cost::CacheHeader& header() const override { return header_; }
  int64_t measurements() const override { return graph_calls + node_calls; }

  std::vector<profile::Timing> time_graphs(const std::vector<const ir::Graph*>& graphs, const cost::DimSizes& sizes,
                                           const profile::TimingLimits&) override {
    std::vector<profile::Timing> timings;
    ++graph_requests;
    for (const ir::Graph* graph : graphs) {
      ++graph_calls;
      const auto it = graph_ms.find(cost::graph_signature(*graph, sizes));
      if (it == graph_ms.end() && !graph_rule) throw Error("the table has no time for this graph");
      const double ms = it == graph_ms.end() ? graph_rule(*graph) : it->second;
      timings.push_back(profile::summarize(graph_samples ? graph_samples(*graph, ms) : std::vector<double>{ms, ms, ms}));
    }
    return timings;
  }

  std::optional<profile::Observed> observe(const ir::Graph& graph, const std::vector<ir::ValueId>& values,
                                          const cost::DimSizes&) override {
    if (!observation) return std::nullopt;
    ++observe_calls;
    return observation(graph, values);
  }

  cost::CacheEntry measure_node(const cost::Miss& miss, const cost::DimSizes&) override {
    ++node_calls;
    const auto it = node_ms.find(miss.signature);
    if (it != node_ms.end()) return {miss.signature, backend(), it->second, 0, 3, {}};
    if (node_rule) return {miss.signature, backend(), node_rule(miss), 0, 3, {}};
    return {miss.signature, backend(), 0, 0, 0, "not in the table"};
  }

 private:
  cost::CacheHeader header_;
};

}  // namespace graphsub::testing
