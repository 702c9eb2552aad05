// The cuda target's profiler: graphs and single nodes timed on the GPU by graphsub's CUDA executor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "profile/profiler.h"
#include "runtime/cuda/cuda_executor.h"

namespace graphsub::profile {

/// Measures on this machine's GPU (device 0) with runtime::cuda::CudaExecutor: each graph is
/// planned once (weights uploaded, convolution algorithms found), run `warmup` times, then timed
/// run by run with CUDA events, alternating between graphs as the onnxruntime profiler does. A
/// node is timed as a one-node graph; its time is the node's kernels (and, for an op that runs on
/// the host here, its transfers), with no session overhead to take out.
class CudaProfiler : public Profiler {
 public:
  /// Opens the GPU. Throws graphsub::Error when there is none.
  explicit CudaProfiler(uint32_t seed = 0);

  const cost::CacheHeader& header() const override { return header_; }
  std::vector<Timing> time_graphs(const std::vector<const ir::Graph*>& graphs, const cost::DimSizes& sizes,
                                  const TimingLimits& limits) override;
  std::vector<Timing> time_models(const std::vector<Model>& models, const cost::DimSizes& sizes,
                                  const TimingLimits& limits) override;
  cost::CacheEntry measure_node(const cost::Miss& miss, const cost::DimSizes& sizes) override;
  int64_t measurements() const override { return measurements_; }

  /// The limits of a node's measurement: TASO's 8 warm-up runs, then at least 16 timed runs until
  /// stable to 2 % or 1 µs, at most 64 runs or 0.2 s.
  static TimingLimits node_limits();

  /// Where the nodes of the graphs timed last ran (runtime::cuda::Placement), one per graph.
  const std::vector<runtime::cuda::Placement>& placements() const { return placements_; }
  /// The cuDNN algorithms of the convolutions of the graphs timed last, one list per graph.
  const std::vector<std::vector<std::string>>& algorithms() const { return algorithms_; }

 private:
  /// time_graphs, going on from `prior` (time_alternately's).
  std::vector<Timing> time_with_prior(const std::vector<const ir::Graph*>& graphs, const cost::DimSizes& sizes,
                                      const TimingLimits& limits, const std::vector<std::vector<double>>& prior);

  uint32_t seed_;
  cost::CacheHeader header_;
  int64_t measurements_ = 0;
  std::vector<runtime::cuda::Placement> placements_;
  std::vector<std::vector<std::string>> algorithms_;
};

/// The cache header of the cuda target on this device: its name, the driver, and the CUDA
/// runtime, cuDNN and cuBLAS versions, with the arithmetic (fp32, no TF32) and the timer.
cost::CacheHeader cuda_header(const runtime::cuda::DeviceInfo& info);

}  // namespace graphsub::profile
