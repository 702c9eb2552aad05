// The profiler interface: what a measured target can time, whatever runs it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cost/cached_model.h"
#include "cost/cost_cache.h"
#include "ir/graph.h"
#include "profile/timing.h"

namespace graphsub::profile {

/// A value as one run of a whole graph computed it (cost::ObservedValue, kept in the cost cache).
using ObservedValue = cost::ObservedValue;
/// Observed values by name.
using Observed = cost::Observed;
/// The most elements of an integer value whose elements an observation returns.
constexpr int64_t kObservedElements = 64;

/// A target that runs graphs and times them on this machine: onnxruntime on the CPU
/// (OrtProfiler); cuDNN/cuBLAS later, behind the same interface. Not thread-safe: one caller at
/// a time (measurements on a shared machine would disturb each other anyway).
class Profiler {
 public:
  virtual ~Profiler() = default;

  /// Where and how this profiler measures: the header of the cost cache its numbers go to.
  virtual const cost::CacheHeader& header() const = 0;
  /// The backend named in its cache entries: its header's target ("onnxruntime-cpu").
  const std::string& backend() const { return header().target; }

  /// Times whole graphs alternately (a round runs each once), on the same seeded inputs with
  /// symbolic dims at `sizes`: one Timing per graph, in order. Throws graphsub::Error when the
  /// target cannot load or run one of them.
  virtual std::vector<Timing> time_graphs(const std::vector<const ir::Graph*>& graphs, const cost::DimSizes& sizes,
                                          const TimingLimits& limits) = 0;

  /// A model to time: exported from `graph`, or, when `file` is set, that ONNX file as it is.
  struct Model {
    const ir::Graph* graph = nullptr;
    std::string file;
    /// Runs of this model an earlier timing in this process made, round by round with the other
    /// models' (all of one length, or all empty): the timing goes on from them, its stopping
    /// rule counting them, and its Timing includes them.
    std::vector<double> prior_ms;
  };

  /// time_graphs, where a model with a file is timed as that file rather than as an export of its
  /// graph: the user's input as they run it (an export of its graph may run differently: the
  /// value_info it writes lets onnxruntime apply fusions it could not apply to the bare input).
  /// A profiler that times graphs only (a test's table) times each model's graph, and pools the
  /// prior runs with what it timed afterwards.
  virtual std::vector<Timing> time_models(const std::vector<Model>& models, const cost::DimSizes& sizes,
                                          const TimingLimits& limits);

  /// Measures the node of `miss` on its own: the cache entry of its signature, whose time is
  /// what the node adds to a graph's run (the profiler's fixed per-run overhead taken out), or
  /// whose error says why the target could not run it.
  virtual cost::CacheEntry measure_node(const cost::Miss& miss, const cost::DimSizes& sizes) = 0;

  /// Runs `graph` once in the target, symbolic dims at `sizes` (1 where not given), on the
  /// inputs its timings feed (floats random, integers zero), and returns the named `values` as computed there: how
  /// the measuring instance sizes what depends on data (pipeline/measure_sizes.h). nullopt
  /// when this profiler does not run graphs for that (its caller then uses graphsub's reference
  /// executor). Throws graphsub::Error when the target cannot run the graph.
  virtual std::optional<Observed> observe(const ir::Graph& /*graph*/, const std::vector<ir::ValueId>& /*values*/,
                                          const cost::DimSizes& /*sizes*/) {
    return std::nullopt;
  }

  /// How many graphs and nodes this profiler has timed so far.
  virtual int64_t measurements() const = 0;
  /// How many of its timings of several graphs made their sessions one at a time, in blocks,
  /// because they did not fit in memory together (the onnxruntime worker), instead of running
  /// them alternately round by round.
  virtual int64_t timings_one_at_a_time() const { return 0; }
};

/// The prior runs of `models` (Profiler::Model::prior_ms), one list per model, or none at all
/// when no model has any: what a profiler's timing goes on from.
std::vector<std::vector<double>> prior_runs(const std::vector<Profiler::Model>& models);

/// The cache entry of `miss` on `backend`: the Timing `time_node` gives for the node's one-node
/// graph (`search::extract`; its median already less any per-run overhead), or the error that
/// stopped it. What every profiler's measure_node does around its own timing.
cost::CacheEntry node_entry(const cost::Miss& miss, const std::string& backend,
                            const std::function<Timing(const ir::Graph&)>& time_node);

}  // namespace graphsub::profile
