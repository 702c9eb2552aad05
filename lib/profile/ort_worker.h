// onnxruntime, driven from C++ through a Python worker process that speaks JSON lines.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_cache.h"
#include "profile/profiler.h"
#include "profile/subprocess.h"
#include "profile/timing.h"

namespace graphsub::profile {

/// The session settings of onnxruntime that change its speed; a run is only comparable with
/// runs of the same settings.
struct OrtSettings {
  int threads = 1;            ///< intra_op_num_threads (inter-op: 1, sequential execution).
  std::string level = "all";  ///< Graph optimization level: disabled, basic, extended, all.
};

/// The optimization levels onnxruntime names, for option checks.
const std::vector<std::string>& ort_levels();

/// What the worker found on this machine.
struct OrtInfo {
  std::string onnxruntime;  ///< onnxruntime's version.
  std::string cpu;          ///< The CPU model (/proc/cpuinfo's model name).
  std::string python;       ///< The Python version running it.
};

/// The kernel time of one operator type of onnxruntime's optimized graph.
struct OpTime {
  double ms_per_run = 0;  ///< Summed over its nodes, the mean of the profiled runs.
  int nodes = 0;
  double flops = 0;       ///< Of one run, for convolutions and matrix products (0 for the rest).
};

/// Kernel time per operator type of one model, by type name (Conv, FusedConv, ReorderInput...).
using OpTimes = std::map<std::string, OpTime>;

/// How far one output of a candidate model is from the reference's, over every compared sample.
struct OutputComparison {
  std::string name;
  double max_abs_error = 0;
  double max_rel_error = 0;
  bool passed = true;
  /// With compare_files's variation_level: the most the reference's own output at the two
  /// levels differs by over the samples (onnxruntime's own variation); -1 without it.
  double runtime_variation = -1;
  /// With variation_level: on every sample where this output failed, the candidate's differed
  /// from the reference's by at most the reference's own variation on that sample.
  bool within_runtime_variation = false;
};

/// A timing whose models did not fit in memory together, so that its sessions were made one at
/// a time (ort_worker.py, "Memory"): what decided it.
struct OneAtATime {
  int64_t session_bytes = 0;  ///< The largest resident growth a session's creation caused.
  int64_t free_bytes = 0;     ///< The memory free beside it when a second one was due.
};

/// "a session took 3.85 GiB; 3.12 GiB were free beside it": why, for bench's header and the
/// measured target's warning.
std::string describe(const OneAtATime& alone);

/// The Python interpreter that runs the worker: $GRAPHSUB_PYTHON, else python3.
std::string default_python();

/// A running onnxruntime worker (lib/profile/ort_worker.py, compiled into graphsub). Why a worker
/// process and not onnxruntime's C API: the PyPI wheel, which is how onnxruntime reaches a
/// Debian machine, ships its shared library without headers, and Python's onnxruntime API is
/// the one most users time their models with; timing happens inside the worker, so the pipe
/// costs nothing measured. One request at a time. A worker that ended (onnxruntime crashed on a
/// model, or it was stopped after a timeout) fails its request with how it ended ("killed by
/// signal 11 (Segmentation fault)"), and the next request starts a new one: one model that
/// crashes onnxruntime costs its own measurement, not every one after it.
class OrtWorker {
 public:
  /// Starts the worker and asks what it runs. Throws graphsub::Error naming the cause
  /// ("onnxruntime is not available: No module named 'onnxruntime'") when it cannot start.
  explicit OrtWorker(const std::string& python = default_python());
  OrtWorker(const OrtWorker&) = delete;
  OrtWorker& operator=(const OrtWorker&) = delete;

  const OrtInfo& info() const { return info_; }

  /// The worker process's id (-1 once it ended); a new one after a restart.
  pid_t pid() const { return process_->pid(); }
  /// Workers started after one ended.
  int restarts() const { return restarts_; }
  /// Why the last failed request failed ("onnxruntime's worker ... killed by signal 9 ..."), for
  /// the warning when a new worker replaces one that ended; empty when none failed.
  const std::string& last_failure() const { return last_failure_; }

  /// Times the model files alternately (lib/profile/ort_worker.py says how), symbolic dims at
  /// `sizes`, inputs from `seed`: one Timing per file. With `prior_ms` (one list per file, of one
  /// length), the timing goes on from those runs and includes them. Throws graphsub::Error with
  /// onnxruntime's message when a model cannot be loaded or run.
  /// Models that do not fit in memory together are timed one session at a time (last_timing
  /// says so); where pairs fit but not all of them, the request fails, saying so, and the caller
  /// times them in pairs.
  std::vector<Timing> time_files(const std::vector<std::string>& paths, const OrtSettings& settings,
                                 const cost::DimSizes& sizes, const TimingLimits& limits, uint32_t seed = 0,
                                 const std::vector<std::vector<double>>& prior_ms = {});
  /// Whether the last time_files made its sessions one at a time, and why; nullopt when it
  /// alternated them run by run.
  const std::optional<OneAtATime>& last_one_at_a_time() const { return last_one_at_a_time_; }

  /// Runs `reference` and `candidate` in onnxruntime on `samples` sets of seeded random inputs
  /// (set i from seed + i, drawn as graphsub's reference check draws them) and compares their
  /// outputs by position, within atol + rtol × |reference|: the check of models the reference
  /// executor cannot run. Throws graphsub::Error with onnxruntime's message when a model cannot
  /// be loaded or run, or when the outputs' shapes differ. With `reference_level`, the reference
  /// runs at that graph optimization level instead of the settings' (a model against itself at
  /// "disabled": how much onnxruntime's own optimizations change its outputs). With
  /// `variation_level`, each output also tells how much the reference's own output moves at that
  /// level, and whether the candidate's failures stay within it (OutputComparison); outputs of
  /// differing shapes are then infinitely apart rather than an error. Integer inputs named in
  /// `index_bounds` are drawn below their bound where it is under 4 (runtime::index_bounds).
  std::vector<OutputComparison> compare_files(const std::string& reference, const std::string& candidate,
                                              const OrtSettings& settings, const cost::DimSizes& sizes,
                                              int samples, uint32_t seed, double atol, double rtol,
                                              const std::string& reference_level = {},
                                              const std::string& variation_level = {},
                                              const std::map<std::string, int64_t>& index_bounds = {});

  /// Runs `path` once on the inputs time_files feeds (symbolic dims at `sizes`, inputs from
  /// `seed`) and returns every output's shape, and the elements of the integer outputs of at
  /// most `max_elements` elements. Throws graphsub::Error with onnxruntime's message when the
  /// model cannot be loaded or run.
  Observed observe_file(const std::string& path, const OrtSettings& settings, const cost::DimSizes& sizes,
                        int64_t max_elements, uint32_t seed = 0);

  /// Runs each file `warmup` + `runs` times in its own session with onnxruntime's profiler on:
  /// the kernel time per operator type of onnxruntime's optimized graph, one map per file.
  /// Profiled sessions run slower than timed ones; the shares are what to read. Throws
  /// graphsub::Error with onnxruntime's message when a model cannot be loaded or run.
  std::vector<OpTimes> profile_files(const std::vector<std::string>& paths, const OrtSettings& settings,
                                     const cost::DimSizes& sizes, int warmup, int runs, uint32_t seed = 0);

 private:
  /// Starts a worker process and asks what it runs.
  void start();
  /// Sends one request of sessions of `threads` intra-op threads and reads its answer: in a new
  /// worker when this one ended, or when it served another thread count (its sessions share one
  /// thread pool, made once per process).
  std::string request(const std::string& line, double timeout_s, int threads);

  std::string python_;
  std::unique_ptr<Subprocess> process_;
  OrtInfo info_;
  int restarts_ = 0;
  int threads_ = 0;  ///< The thread count the running worker serves (0: none asked yet).
  std::string last_failure_;  ///< Why the last request failed (how the worker ended, if it did).
  std::optional<OneAtATime> last_one_at_a_time_;
};

}  // namespace graphsub::profile
