// The measured half of a target: its cost cache, the profiler that fills it, and what both did.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cost/cached_model.h"
#include "cost/cost_cache.h"
#include "pipeline/measure_sizes.h"
#include "profile/profiler.h"

namespace graphsub::pipeline {

/// What a run asked of the cache and the profiler.
struct MeasureStats {
  int64_t nodes_measured = 0;          ///< Node signatures timed in this run.
  int64_t nodes_failed = 0;            ///< Of those, the ones the target could not run (estimated).
  int64_t comparisons_measured = 0;    ///< Pairs of graphs (parts, whole graphs) timed in this run.
  int64_t comparison_hits = 0;         ///< Pairs whose comparison the cache held.
  /// Pairs that time as a pair compared earlier in this run does (another layer's part: other
  /// weights, other input names), given that comparison; also in the cache from then on.
  int64_t comparisons_reused = 0;
  int64_t comparisons_unmeasured = 0;  ///< Pairs neither cached nor measurable (measuring is off).
  /// Pairs of candidates timed in one request against each other, from the rounds both ran
  /// (compare_all's `between`): the layout forms' check of the result, without a request of its own.
  int64_t comparisons_derived = 0;
  int64_t observations_cached = 0;     ///< Runs of a measuring instance read from the cache.
  double seconds = 0;                  ///< Time spent measuring.
};

/// A target's cost cache and, when this machine can run the target, its profiler. Node
/// signatures the search missed and graphs the checks compare are looked up in the cache first
/// and measured only when missing; every measurement goes into the cache, which save() writes
/// back, so the next run on this machine measures nothing it measured before.
class Measurer {
 public:
  /// `profiler` may be null: the cache is then only read (a pinned cache, or no runtime).
  Measurer(cost::CostCache cache, std::string cache_path, std::unique_ptr<profile::Profiler> profiler,
           cost::DimSizes sizes);

  const cost::CostCache& cache() const { return cache_; }
  const std::string& cache_path() const { return cache_path_; }
  const cost::DimSizes& sizes() const { return sizes_; }
  /// Measures parts at `instance` (its sizes replace the given ones) from now on.
  void set_instance(MeasuringInstance instance) {
    sizes_ = std::move(instance.sizes);
    integers_ = std::move(instance.integers);
    instance_run_ = std::move(instance.run);
  }
  /// What the measuring instance set last could not work out, and what its run told.
  const InstanceRun& instance_run() const { return instance_run_; }
  /// Why the target cannot run `file` (the user's model, whose graph is `graph`) at this run's
  /// sizes: its error after one run, or nullopt when it ran. That it ran goes into the cache
  /// (an observation of no values, keyed by the file's signature), so a warm run runs nothing;
  /// a failure is not cached. Without a profiler nothing is run: nullopt unless the cache says.
  std::optional<std::string> run_error(const ir::Graph& graph, const std::string& file);
  /// The backend of the cache's entries.
  const std::string& backend() const { return backend_; }
  bool can_measure() const { return profiler_ != nullptr; }
  /// Timings of several graphs the profiler made one session at a time (they did not fit in
  /// memory together): Profiler::timings_one_at_a_time.
  int64_t timings_one_at_a_time() const { return profiler_ ? profiler_->timings_one_at_a_time() : 0; }
  const MeasureStats& stats() const { return stats_; }

  /// Forgets what this run compared (the pairs timed alike, the runs compare_again goes on
  /// from), keeping the cache and the stats: what follows looks things up as a new process
  /// reading this cache would, so it decides as a rerun with the saved cache will.
  void start_run() {
    alike_.clear();
    measured_now_.clear();
  }

  /// Runs a measuring instance once in the target (profile::Profiler::observe; without a
  /// profiler, in the observer's target), or on graphsub's reference executor when neither runs
  /// graphs for that: the Observer of measuring_instance. The run is looked up in the cache
  /// first (by the instance's graph_signature and the values' names) and, with a profiler,
  /// cached: a warm run does not run the instance again (1.4-2.4 s of BERT-base's), and a
  /// pinned cache sizes the parts as the run that filled it, runtime installed or not.
  profile::Observed observe(const ir::Graph& instance, const std::vector<ir::ValueId>& values,
                            const cost::DimSizes& sizes);

  /// A profiler that only observes (a pinned cache is only read, but the measuring instance
  /// should be what the runs that filled it observed, in the same runtime).
  void set_observer(std::unique_ptr<profile::Profiler> observer) { observer_ = std::move(observer); }

  /// Measures each missed node signature (those the profiler cannot run are recorded as
  /// failures, so they are not tried again). Returns how many it measured.
  std::size_t measure(const std::vector<cost::Miss>& misses);

  /// `candidate` timed against `original` (alternately, run by run), from the cache or measured
  /// now; nullopt when it is not in the cache and cannot be measured (no profiler), or when the
  /// target fails on one of them (that failure is cached too). Measuring also caches each
  /// graph's own time (graph_time).
  /// With `original_file`, the original is timed as that ONNX file as it is (the user's input),
  /// not as an export of `original`, and is cached under a key of its own. Without it, a pair
  /// not in the cache that times as a pair this run compared before (cost::timing_signature of
  /// both, as measured: with the instance's integers bound) gets that pair's comparison, which
  /// is cached under its own keys too: the parts of a model's repeated layers are timed once.
  std::optional<cost::Comparison> compare(const ir::Graph& original, const ir::Graph& candidate,
                                          const profile::TimingLimits& limits, const std::string& original_file = {});
  /// The comparison of `candidate` against `original` (timed as `original_file` where given) that
  /// the cache holds, as compare would find it there, without measuring or counting anything in
  /// the stats; nullopt when the cache holds none, or a failure.
  std::optional<cost::Comparison> cached_comparison(const ir::Graph& original, const ir::Graph& candidate,
                                                    const std::string& original_file = {}) const;
  /// compare for several candidates of one original: those not in the cache are timed in one
  /// request, alternated with the original round by round (each against the original's run of
  /// the same round), so the original is timed once for all, within max_seconds × (models / 2),
  /// the time per model of a pair; if that fails, each is timed alone. For each (i, j) of
  /// `between` whose two candidates were both timed in that request, candidate j against
  /// candidate i is cached too, paired over the rounds both ran (as compare would have timed it,
  /// alternated round by round): a later compare of that pair reads it, and compare_again may
  /// time it again.
  std::vector<std::optional<cost::Comparison>> compare_all(
      const ir::Graph& original, const std::vector<const ir::Graph*>& candidates, const profile::TimingLimits& limits,
      const std::string& original_file = {}, const std::vector<std::pair<std::size_t, std::size_t>>& between = {});

  /// The comparison of a pair that compare or compare_all measured in this run (not one read
  /// from the cache or reused), timed again within `limits`, going on from the runs this run
  /// already made of the pair (Profiler::Model::prior_ms: they count towards the stopping rule
  /// and are pooled into the result; `limits` bound the new rounds), and cached in its place;
  /// nullopt (the first kept) for any other pair, without a profiler, or when the target fails
  /// this time. A warm run reads the second comparison and is not timed again, so it takes the
  /// decision the cold run took.
  std::optional<cost::Comparison> compare_again(const ir::Graph& original, const ir::Graph& candidate,
                                                const profile::TimingLimits& limits,
                                                const std::string& original_file = {});

  /// A graph's measured time as a comparison left it in the cache (with `file`: the time of
  /// that file, timed for `graph`), or nullopt.
  std::optional<profile::Timing> graph_time(const ir::Graph& graph, const std::string& file = {}) const;

  /// Writes the cache back to its file if this run added entries, merged with what other runs
  /// wrote there meanwhile (under a lock file). A failure to write is logged, not thrown: the
  /// model the run wrote is still right.
  void save() const;

 private:
  struct Pending;
  /// The comparison of `candidate`'s timing with the original's (and the candidate's own time,
  /// cached under `second`); the runs of the pair are kept in measured_now_.
  cost::Comparison comparison_of(const std::string& first, const std::string& second,
                                 const profile::Timing& original, const profile::Timing& candidate);
  /// One pending candidate timed against the original alone; a failure is the comparison's error.
  cost::Comparison measure_pair(const std::string& first, const ir::Graph& first_run, const std::string& original_file,
                                const Pending& candidate, const profile::TimingLimits& limits,
                                const std::vector<std::vector<double>>& prior = {});
  /// `comparison` kept under `alike` (when not empty) for pairs that time like it; what
  /// compare answers for it.
  std::optional<cost::Comparison> remember(const std::string& alike, const cost::Comparison& comparison);

  /// The cache key of `graph`'s time, or of `file`'s as the file timed for `graph`.
  std::string signature(const ir::Graph& graph, const std::string& file) const;

  /// The hash of each file timed as it is, by path, read once (the guard asks for the input's
  /// several times per run, and a model file may be hundreds of megabytes).
  mutable std::map<std::string, uint64_t> file_hashes_;
  /// The comparisons of this run (found in the cache or measured) by the timing signatures of
  /// the pair: "original -> candidate".
  std::map<std::string, cost::Comparison> alike_;
  /// The pairs timed in this run by their (original, candidate) keys, which compare_again may
  /// time again: the original's and the candidate's runs of the rounds both ran.
  std::map<std::pair<std::string, std::string>, std::vector<std::vector<double>>> measured_now_;

  cost::CostCache cache_;
  std::string cache_path_;
  std::unique_ptr<profile::Profiler> profiler_;
  std::unique_ptr<profile::Profiler> observer_;
  /// `graph` with each input that holds an integer value of the measuring instance (a Reshape
  /// target computed outside a part) reading that value as a weight instead: random or zero
  /// data there would make the part fail or run at another shape. The names of the int32/int64
  /// inputs whose value is not known (made by a rewrite) go to `unknown`: they are fed zeros.
  ir::Graph with_integers(const ir::Graph& graph, std::vector<std::string>& unknown) const;

  cost::DimSizes sizes_;
  rewrite::KnownValues integers_;  ///< Integer values of the measuring instance, fed to parts.
  InstanceRun instance_run_;
  std::string backend_;
  MeasureStats stats_;
  bool changed_ = false;
};

}  // namespace graphsub::pipeline
