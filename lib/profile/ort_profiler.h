// The onnxruntime CPU target's profiler: graphs and single nodes timed as ONNX models.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "onnx_io/shared_weights.h"
#include "profile/ort_worker.h"
#include "profile/profiler.h"

namespace graphsub::profile {

/// A folder under $TMPDIR (or /tmp) that is removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Measures in onnxruntime on this machine's CPU, with the session settings the user's run will
/// have. A graph is exported as an ONNX model (weights as initializers, so the runtime prepacks
/// them as it would in the whole model; those of 64 KiB or more as external data in one file
/// of the profiler's folder, each written once for all the models timed: onnx_io::SharedWeights)
/// and timed by the worker; a node is timed as a one-node
/// model, less the run overhead of a one-Identity model measured once per profiler (the cost of a
/// session run call, which a node inside a whole model does not pay).
class OrtProfiler : public Profiler {
 public:
  /// Starts the worker. Throws graphsub::Error when onnxruntime is not available.
  explicit OrtProfiler(OrtSettings settings, const std::string& python = default_python());

  const cost::CacheHeader& header() const override { return header_; }
  std::vector<Timing> time_graphs(const std::vector<const ir::Graph*>& graphs, const cost::DimSizes& sizes,
                                  const TimingLimits& limits) override;
  std::vector<Timing> time_models(const std::vector<Model>& models, const cost::DimSizes& sizes,
                                  const TimingLimits& limits) override;
  cost::CacheEntry measure_node(const cost::Miss& miss, const cost::DimSizes& sizes) override;
  int64_t measurements() const override { return measurements_; }
  int64_t timings_one_at_a_time() const override { return one_at_a_time_; }
  /// Runs the graph in onnxruntime with `values` as its outputs, at the graph optimization
  /// level "disabled" (every value computed as the graph says), with this profiler's threads.
  std::optional<Observed> observe(const ir::Graph& graph, const std::vector<ir::ValueId>& values,
                                  const cost::DimSizes& sizes) override;

  /// The limits of a node's measurement: at least 5 runs after one warm-up, until stable to 3 %
  /// or 1 µs, at most 0.2 s. Node times only guide the search; the parts and the whole graph
  /// are checked with longer timings.
  static TimingLimits node_limits();

 private:
  double run_overhead_ms();

  OrtSettings settings_;
  OrtWorker worker_;
  int64_t one_at_a_time_ = 0;
  cost::CacheHeader header_;
  TempDir dir_;
  onnx_io::SharedWeights weights_{dir_.path()};
  std::optional<double> overhead_ms_;
  int64_t measurements_ = 0;
  int64_t files_ = 0;
};

/// The cache header of onnxruntime on the CPU with these settings, as the worker reports it.
cost::CacheHeader ort_header(const OrtInfo& info, const OrtSettings& settings);

}  // namespace graphsub::profile
