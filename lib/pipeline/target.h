// Targets: the runtime a written model is for, and what ranks the candidate graphs for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cost/cost_cache.h"
#include "pipeline/measurer.h"
#include "profile/ort_worker.h"

namespace graphsub::pipeline {

/// A target graphsub can optimize for.
struct TargetSpec {
  std::string name;         ///< What --target takes.
  bool measured = false;    ///< Ranked by times measured on this machine; else an analytical estimate.
  std::string device;       ///< The analytical device: the estimate itself, or the fallback for what
                            ///< cannot be measured.
  std::string description;  ///< One line for --help and the report.
  /// The runtime's own fusions depend on the value_info written with the model, so a result is
  /// measured exported with and without it (onnxruntime; the CUDA executor reads none).
  bool reads_value_info = false;
  /// The runtime has layout forms (rules/layout.rules, onnxruntime's NCHWc transformer), tried
  /// on the graph about to be written.
  bool layout_forms = false;
  /// The target times the ONNX file graphsub writes (onnxruntime), where a fused Conv or MatMul
  /// is the chain of nodes export writes it as: the two are priced alike (cost/written_chains.h).
  /// The CUDA executor runs graphsub's own graph, where a fused form need not run as its chain.
  bool times_written_model = false;
};

/// Every target, the measured ones first: onnxruntime-cpu, cuda; the estimates v100, a100, h100, cpu.
const std::vector<TargetSpec>& target_specs();

/// The target of that name. Throws graphsub::Error listing the names for another.
const TargetSpec& target_by_name(const std::string& name);

/// What the command line says about the target.
struct TargetOptions {
  std::string name;         ///< Empty: onnxruntime-cpu where onnxruntime runs, else the cpu estimate.
  std::string cost_cache;   ///< The cache file; empty: default_cache_path of the setup.
  bool no_measure = false;  ///< Rank with the cache file as it is; never run the target.
  profile::OrtSettings ort; ///< onnxruntime's session settings, as the user will run the model.
  cost::DimSizes sizes;     ///< Sizes of symbolic dims for measuring.
  std::string python = profile::default_python();
};

/// A target ready to rank graphs.
struct Target {
  TargetSpec spec;
  std::unique_ptr<Measurer> measurer;  ///< Null for an estimate.
  std::string note;  ///< Set when the default target fell back to an estimate: why.
};

/// Opens the target: starts its profiler and reads its cost cache (or starts an empty one).
/// Throws graphsub::Error when the named target cannot run here (onnxruntime missing), when the
/// cache file is corrupt or was measured on another setup (another CPU, runtime version, or
/// session settings), or when options contradict each other. The default target falls back to
/// the cpu estimate with a note instead of failing.
Target open_target(const TargetOptions& options);

/// Where caches live by default: $GRAPHSUB_CACHE_DIR, else $XDG_CACHE_HOME/graphsub, else
/// ~/.cache/graphsub.
std::string default_cache_dir();

/// The default cache file of a setup: `<default_cache_dir>/<target>-<16 hex digits of the setup>.json`,
/// so each machine, runtime version and session setting gets a file of its own.
std::string default_cache_path(const cost::CacheHeader& header);

}  // namespace graphsub::pipeline
