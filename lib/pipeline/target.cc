// Resolving --target: the profiler, the cache file, and the fallback when the runtime is missing.
#include "pipeline/target.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "ir/error.h"
#include "ir/hash.h"
#include "ir/log.h"
#include "profile/ort_profiler.h"
#ifdef GRAPHSUB_HAVE_CUDA
#include "profile/cuda_profiler.h"
#endif

namespace graphsub::pipeline {
namespace {

constexpr const char* kOrtTarget = "onnxruntime-cpu";
constexpr const char* kCudaTarget = "cuda";

/// The cache of `path` checked against the profiler's setup, or a new one for it.
cost::CostCache load_cache(const std::string& path, const profile::Profiler* profiler, const std::string& target) {
  if (!std::filesystem::exists(path)) {
    if (!profiler) throw Error("ranking without measuring needs an existing cost cache; '" + path + "' does not exist");
    return cost::CostCache(profiler->header());
  }
  cost::CostCache cache = cost::CostCache::read(path);
  if (profiler && cache.header() != profiler->header()) {
    throw Error("cost cache '" + path + "' was measured for " + cost::describe(cache.header()) + ", not for " +
                cost::describe(profiler->header()) + "; use another cache file, or --no-measure to rank with it "
                "as it is");
  }
  if (cache.header().target != target) {
    throw Error("cost cache '" + path + "' holds times of target '" + cache.header().target + "', not " + target);
  }
  return cache;
}

/// The onnxruntime target, or (as the default only) the cpu estimate when onnxruntime cannot run.
Target open_onnxruntime(const TargetOptions& options, bool named) {
  std::unique_ptr<profile::Profiler> profiler;
  if (options.no_measure) {
    if (options.cost_cache.empty()) throw Error("--no-measure needs --cost-cache FILE");
  } else {
    try {
      profiler = std::make_unique<profile::OrtProfiler>(options.ort, options.python);
    } catch (const Error& error) {
      if (named) throw Error(std::string(error.what()) + "; install it (pip install onnxruntime) or choose an "
                                                         "estimate, e.g. --target cpu");
      Target fallback{target_by_name("cpu"), nullptr, error.what()};
      logger("cli")->warn("{}: ranking graphs by the analytical cpu estimate instead", error.what());
      return fallback;
    }
  }
  const std::string path = options.cost_cache.empty() ? default_cache_path(profiler->header()) : options.cost_cache;
  cost::CostCache cache = load_cache(path, profiler.get(), kOrtTarget);
  logger("cli")->info("cost cache {}: {} entries", path, cache.size());
  auto measurer = std::make_unique<Measurer>(std::move(cache), path, std::move(profiler), options.sizes);
  if (options.no_measure) {
    // Nothing is timed, but what depends on data is sized as the runs that filled the cache sized
    // it, in onnxruntime, where it is installed.
    try {
      measurer->set_observer(std::make_unique<profile::OrtProfiler>(options.ort, options.python));
    } catch (const Error& error) {
      logger("cli")->info("{}: values whose shapes depend on data are sized by graphsub's reference executor",
                          error.what());
    }
  }
  return Target{target_by_name(kOrtTarget), std::move(measurer), {}};
}

/// The GPU's profiler, or null (with a warning) when there is no GPU but a cache to rank with.
std::unique_ptr<profile::Profiler> open_cuda_profiler(const TargetOptions& options) {
  std::string why = "this graphsub was built without CUDA (GRAPHSUB_WITH_CUDA)";
#ifdef GRAPHSUB_HAVE_CUDA
  try {
    return std::make_unique<profile::CudaProfiler>();
  } catch (const Error& error) {
    why = error.what();
  }
#endif
  if (options.cost_cache.empty()) {
    throw Error(why + "; without a GPU, rank with a cache measured on one: --cost-cache FILE (e.g. "
                      "models/costs/h200.json)");
  }
  logger("cli")->warn("{}: ranking with the cost cache as it is, misses estimated", why);
  return nullptr;
}

/// The cuda target: measured on this machine's GPU, or ranked with a committed cache without one.
Target open_cuda(const TargetOptions& options) {
  std::unique_ptr<profile::Profiler> profiler;
  if (options.no_measure) {
    if (options.cost_cache.empty()) throw Error("--no-measure needs --cost-cache FILE");
  } else {
    profiler = open_cuda_profiler(options);
  }
  const std::string path = options.cost_cache.empty() ? default_cache_path(profiler->header()) : options.cost_cache;
  cost::CostCache cache = load_cache(path, profiler.get(), kCudaTarget);
  logger("cli")->info("cost cache {}: {} entries", path, cache.size());
  return Target{target_by_name(kCudaTarget), std::make_unique<Measurer>(std::move(cache), path, std::move(profiler),
                                                                       options.sizes), {}};
}

}  // namespace

const std::vector<TargetSpec>& target_specs() {
  static const std::vector<TargetSpec> specs = {
      {kOrtTarget, true, "cpu", "onnxruntime's CPU execution provider on this machine, measured", true, true,
       true},
      {kCudaTarget, true, "h100",
       "this machine's NVIDIA GPU through graphsub's CUDA executor (cuDNN, cuBLAS), measured; without a GPU, "
       "ranked by a cache measured on one (--cost-cache)"},
      {"v100", false, "v100", "NVIDIA V100, estimated by the analytical model"},
      {"a100", false, "a100", "NVIDIA A100, estimated by the analytical model"},
      {"h100", false, "h100", "NVIDIA H100, estimated by the analytical model"},
      {"cpu", false, "cpu", "a generic 2-core AVX2 CPU, estimated by the analytical model"},
  };
  return specs;
}

const TargetSpec& target_by_name(const std::string& name) {
  std::string names;
  for (const TargetSpec& spec : target_specs()) {
    if (spec.name == name) return spec;
    names += (names.empty() ? "" : ", ") + spec.name;
  }
  throw Error("unknown target '" + name + "'; expected one of " + names);
}

Target open_target(const TargetOptions& options) {
  const TargetSpec& spec = target_by_name(options.name.empty() ? kOrtTarget : options.name);
  if (spec.name == kCudaTarget) return open_cuda(options);
  if (spec.measured) return open_onnxruntime(options, !options.name.empty());
  if (!options.cost_cache.empty() || options.no_measure) {
    throw Error("target '" + spec.name + "' is an estimate: --cost-cache and --no-measure apply to measured targets");
  }
  return Target{spec, nullptr, {}};
}

std::string default_cache_dir() {
  if (const char* dir = std::getenv("GRAPHSUB_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/graphsub";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/graphsub";
}

std::string default_cache_path(const cost::CacheHeader& header) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(ir::hash_string(ir::kHashSeed, cost::describe(header))));
  return default_cache_dir() + "/" + header.target + "-" + hex + ".json";
}

}  // namespace graphsub::pipeline
