// Timing graphs and nodes on the GPU.
#include "profile/cuda_profiler.h"

#include <memory>

#include "ir/error.h"
#include "onnx_io/onnx_io.h"
#include "runtime/equivalence.h"

namespace graphsub::profile {

cost::CacheHeader cuda_header(const runtime::cuda::DeviceInfo& info) {
  return cost::CacheHeader{"cuda",
                           info.name,
                           info.driver,
                           {{"cublas", info.cublas}, {"cuda_runtime", info.runtime}, {"cudnn", info.cudnn}},
                           {{"math", "fp32"}, {"timer", "cuda-events"}}};
}

namespace {

runtime::cuda::DeviceInfo open_device() {
  std::string why;
  const std::optional<runtime::cuda::DeviceInfo> info = runtime::cuda::device_info(&why);
  if (!info) throw Error("the cuda target needs a GPU: " + why);
  return *info;
}

}  // namespace

CudaProfiler::CudaProfiler(uint32_t seed) : seed_(seed), header_(cuda_header(open_device())) {}

TimingLimits CudaProfiler::node_limits() {
  TimingLimits limits;
  limits.warmup = 8;
  limits.min_runs = 16;
  limits.max_runs = 64;
  limits.max_seconds = 0.2;
  limits.rel_error = 0.02;
  limits.abs_error_ms = 1e-3;
  return limits;
}

std::vector<Timing> CudaProfiler::time_graphs(const std::vector<const ir::Graph*>& graphs,
                                              const cost::DimSizes& sizes, const TimingLimits& limits) {
  return time_with_prior(graphs, sizes, limits, {});
}

std::vector<Timing> CudaProfiler::time_with_prior(const std::vector<const ir::Graph*>& graphs,
                                                  const cost::DimSizes& sizes, const TimingLimits& limits,
                                                  const std::vector<std::vector<double>>& prior) {
  runtime::CheckOptions options;
  options.dims = sizes;
  std::vector<std::unique_ptr<runtime::cuda::CudaExecutor>> executors;
  std::vector<TimedRun> runs;
  placements_.clear();
  algorithms_.clear();
  for (const ir::Graph* graph : graphs) {
    executors.push_back(
        std::make_unique<runtime::cuda::CudaExecutor>(*graph, runtime::random_inputs(*graph, seed_, options)));
    placements_.push_back(executors.back()->placement());
    algorithms_.push_back(executors.back()->algorithms());
    runtime::cuda::CudaExecutor* executor = executors.back().get();
    runs.push_back([executor] { return executor->timed_run(); });
  }
  std::vector<Timing> timings;
  for (std::vector<double>& samples : time_alternately(runs, limits, prior)) timings.push_back(summarize(std::move(samples)));
  measurements_ += static_cast<int64_t>(graphs.size());
  return timings;
}

std::vector<Timing> CudaProfiler::time_models(const std::vector<Model>& models, const cost::DimSizes& sizes,
                                              const TimingLimits& limits) {
  std::vector<ir::Graph> imported;
  imported.reserve(models.size());
  std::vector<const ir::Graph*> graphs;
  for (const Model& model : models) {
    if (model.file.empty()) {
      graphs.push_back(model.graph);
      continue;
    }
    imported.push_back(onnx_io::import_model(model.file));
    graphs.push_back(&imported.back());
  }
  return time_with_prior(graphs, sizes, limits, prior_runs(models));
}

cost::CacheEntry CudaProfiler::measure_node(const cost::Miss& miss, const cost::DimSizes& sizes) {
  cost::CacheEntry entry = node_entry(
      miss, backend(), [&](const ir::Graph& node) { return time_graphs({&node}, sizes, node_limits()).front(); });
  if (!entry.failed() && algorithms_.size() == 1 && algorithms_.front().size() == 1) {
    entry.algorithm = algorithms_.front().front();  // a convolution: the algorithm cuDNN's search chose
  }
  return entry;
}

}  // namespace graphsub::profile
