// Looking measurements up in the cost cache, taking the missing ones, and saving the cache.
#include "pipeline/measurer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <utility>

#include "ir/clock.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/log.h"

namespace graphsub::pipeline {
namespace {


/// An exclusive lock on `path` (created if needed), released on destruction.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) throw Error("cannot lock '" + path + "'");
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};


}  // namespace

Measurer::Measurer(cost::CostCache cache, std::string cache_path, std::unique_ptr<profile::Profiler> profiler,
                   cost::DimSizes sizes)
    : cache_(std::move(cache)), cache_path_(std::move(cache_path)), profiler_(std::move(profiler)),
      sizes_(std::move(sizes)), backend_(profiler_ ? profiler_->backend() : cache_.header().target) {}

std::size_t Measurer::measure(const std::vector<cost::Miss>& misses) {
  if (!profiler_ || misses.empty()) return 0;
  const Clock::time_point start = Clock::now();
  for (const cost::Miss& miss : misses) {
    cost::CacheEntry entry = profiler_->measure_node(miss, sizes_);
    logger("profile")->debug("{}: {}", entry.signature,
                             entry.failed() ? "failed: " + entry.error : std::to_string(entry.median_ms) + " ms");
    stats_.nodes_failed += entry.failed();
    cache_.insert(std::move(entry));
  }
  stats_.nodes_measured += static_cast<int64_t>(misses.size());
  stats_.seconds += seconds_since(start);
  changed_ = true;
  return misses.size();
}

profile::Observed Measurer::observe(const ir::Graph& instance, const std::vector<ir::ValueId>& values,
                                    const cost::DimSizes& sizes) {
  std::vector<std::string> names;
  for (ir::ValueId id : values) names.push_back(instance.value(id).name);
  const std::string key = cost::observation_signature(instance, std::move(names), sizes);
  if (const cost::Observation* known = cache_.find_observation(key)) {
    ++stats_.observations_cached;
    logger("pipeline")->info("measuring instance: its run is in the cost cache (run by {})", known->backend);
    return known->values;
  }
  const Clock::time_point start = Clock::now();
  std::optional<profile::Observed> observed;
  std::string backend = "reference";
  if (profile::Profiler* runner = profiler_ ? profiler_.get() : observer_.get()) {
    observed = runner->observe(instance, values, sizes);
    if (observed) backend = runner->backend();
  }
  if (!observed) observed = observe_with_reference(instance, values, sizes);
  stats_.seconds += seconds_since(start);
  if (profiler_) {  // a pinned cache (no profiler) is only read
    cache_.insert(cost::Observation{key, backend, *observed});
    changed_ = true;
  }
  return std::move(*observed);
}

ir::Graph Measurer::with_integers(const ir::Graph& graph, std::vector<std::string>& unknown) const {
  ir::Graph bound = graph;
  for (ir::ValueId input : graph.inputs()) {
    const ir::Value& value = graph.value(input);
    const bool integer = value.type.dtype == ir::DataType::kInt64 || value.type.dtype == ir::DataType::kInt32;
    const auto known = integers_.find(value.name);
    if (known == integers_.end() || known->second->dtype() != value.type.dtype ||
        !value.type.shape.rank_known || value.type.shape.rank() != known->second->rank()) {
      if (integer) unknown.push_back(value.name);
      continue;
    }
    bound.replace_all_uses(input, bound.add_weight({}, known->second));
  }
  return bound;
}

std::string Measurer::signature(const ir::Graph& graph, const std::string& file) const {
  std::string key = cost::graph_signature(graph, sizes_);
  if (file.empty()) return key;
  // The file's own bytes: an export of `graph` is another model that may run differently.
  auto [known, fresh] = file_hashes_.try_emplace(file, 0);
  if (fresh) {
    // Read whole, at once (a character iterator took 2 s of a warm 10 s run on BERT-base's 440 MB).
    std::ifstream in(file, std::ios::binary | std::ios::ate);
    std::string bytes;
    if (in) {
      bytes.resize(static_cast<std::size_t>(in.tellg()));
      in.seekg(0);
      in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    if (!in) {
      file_hashes_.erase(known);
      throw Error("cannot read '" + file + "' to time it");
    }
    known->second = ir::hash_bytes(ir::kHashSeed, bytes.data(), bytes.size());
  }
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(known->second));
  return key + " as the file " + hash;
}

std::optional<std::string> Measurer::run_error(const ir::Graph& graph, const std::string& file) {
  const std::string key = signature(graph, file) + ";runs";
  if (!profiler_ || cache_.find_observation(key)) return std::nullopt;
  profile::TimingLimits once;
  once.warmup = 1;
  once.min_runs = 1;
  once.max_runs = 1;
  const Clock::time_point start = Clock::now();
  try {
    profiler_->time_models({{&graph, file, {}}}, sizes_, once);
  } catch (const Error& failure) {
    return std::string(failure.what());
  }
  stats_.seconds += seconds_since(start);
  cache_.insert(cost::Observation{key, backend_, {}});
  changed_ = true;
  return std::nullopt;
}

std::optional<cost::Comparison> Measurer::compare(const ir::Graph& original, const ir::Graph& candidate,
                                                  const profile::TimingLimits& limits, const std::string& original_file) {
  return compare_all(original, {&candidate}, limits, original_file)[0];
}

std::optional<cost::Comparison> Measurer::cached_comparison(const ir::Graph& original, const ir::Graph& candidate,
                                                            const std::string& original_file) const {
  const cost::Comparison* cached = cache_.find_comparison(signature(original, original_file),
                                                          cost::graph_signature(candidate, sizes_), backend_);
  if (!cached || cached->failed()) return std::nullopt;
  return *cached;
}

/// A candidate of compare_all not found in the cache: its key, the graph as timed, the integer
/// inputs fed zeros, and the key of what it times like.
struct Measurer::Pending {
  std::size_t index;
  std::string signature;
  ir::Graph run;
  std::vector<std::string> unknown;
  std::string alike;
};

std::vector<std::optional<cost::Comparison>> Measurer::compare_all(
    const ir::Graph& original, const std::vector<const ir::Graph*>& candidates, const profile::TimingLimits& limits,
    const std::string& original_file, const std::vector<std::pair<std::size_t, std::size_t>>& between) {
  const std::string first = signature(original, original_file);
  std::vector<std::string> unknown;
  const ir::Graph first_run = with_integers(original, unknown);
  const std::string first_timing = original_file.empty() ? cost::timing_signature(first_run, sizes_) : std::string{};
  std::vector<std::optional<cost::Comparison>> results(candidates.size());
  std::vector<Pending> pending;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Pending candidate{i, cost::graph_signature(*candidates[i], sizes_), {}, unknown, {}};
    candidate.run = with_integers(*candidates[i], candidate.unknown);
    if (!first_timing.empty()) candidate.alike = first_timing + " -> " + cost::timing_signature(candidate.run, sizes_);
    if (const cost::Comparison* cached = cache_.find_comparison(first, candidate.signature, backend_)) {
      ++stats_.comparison_hits;
      results[i] = remember(candidate.alike, *cached);
    } else if (const auto earlier = alike_.find(candidate.alike);
               !candidate.alike.empty() && earlier != alike_.end()) {
      cost::Comparison reused = earlier->second;
      reused.original = first;
      reused.candidate = candidate.signature;
      ++stats_.comparisons_reused;
      if (profiler_) {  // a pinned cache (no profiler) is only read
        cache_.insert(reused);
        changed_ = true;
      }
      results[i] = remember(candidate.alike, reused);
    } else if (!profiler_) {
      ++stats_.comparisons_unmeasured;
    } else {
      pending.push_back(std::move(candidate));
    }
  }
  if (pending.empty()) return results;
  const Clock::time_point start = Clock::now();
  std::vector<cost::Comparison> measured;
  if (pending.size() > 1) {
    // (Only the guard asks for several at once: worth a line, as large models take a while.)
    logger("profile")->info("timing {} graphs against their original, alternated run by run", pending.size());
    // All in one request, alternated with the original: one set of its runs for all of them.
    std::vector<profile::Profiler::Model> models = {{&first_run, original_file, {}}};
    for (const Pending& candidate : pending) models.push_back({&candidate.run, {}, {}});
    // A round runs every model once: the time a pair had, per model, so that each comparison
    // gets as many rounds as it would alone.
    profile::TimingLimits together = limits;
    together.max_seconds *= static_cast<double>(models.size()) / 2;
    try {
      const std::vector<profile::Timing> timings = profiler_->time_models(models, sizes_, together);
      cache_.insert({first, backend_, timings[0].median_ms, timings[0].spread_ms, timings[0].runs, {}});
      for (std::size_t k = 0; k < pending.size(); ++k) {
        measured.push_back(comparison_of(first, pending[k].signature, timings[0], timings[k + 1]));
      }
      // Candidates against each other where asked: their runs of the same rounds pair up too.
      std::map<std::size_t, std::size_t> timed;  // candidate index -> its place in `pending`
      for (std::size_t k = 0; k < pending.size(); ++k) timed[pending[k].index] = k;
      for (const auto& [i, j] : between) {
        const auto base = timed.find(i), other = timed.find(j);
        if (base == timed.end() || other == timed.end()) continue;
        const cost::Comparison derived = comparison_of(pending[base->second].signature, pending[other->second].signature,
                                                       timings[base->second + 1], timings[other->second + 1]);
        cache_.insert(derived);
        ++stats_.comparisons_derived;
      }
    } catch (const Error& failure) {
      // One of them fails in the target, or they do not fit in memory together: time each
      // alone, to know which (a pair fits where a second session did).
      const bool memory = std::string(failure.what()).find("do not fit in the memory free") != std::string::npos;
      logger("profile")->log(memory ? spdlog::level::info : spdlog::level::debug,
                             "timing {} candidates together failed ({}); timing each alone", pending.size(),
                             failure.what());
    }
  }
  for (std::size_t k = measured.size(); k < pending.size(); ++k) {
    measured.push_back(measure_pair(first, first_run, original_file, pending[k], limits));
  }
  stats_.seconds += seconds_since(start);
  logger("profile")->debug("{} graph(s) timed against their original in {:.1f} s", pending.size(), seconds_since(start));
  for (std::size_t k = 0; k < pending.size(); ++k) {
    ++stats_.comparisons_measured;
    cache_.insert(measured[k]);
    results[pending[k].index] = remember(pending[k].alike, measured[k]);
  }
  changed_ = true;
  return results;
}

std::optional<cost::Comparison> Measurer::compare_again(const ir::Graph& original, const ir::Graph& candidate,
                                                        const profile::TimingLimits& limits,
                                                        const std::string& original_file) {
  if (!profiler_) return std::nullopt;
  const std::string first = signature(original, original_file);
  std::vector<std::string> unknown;
  Pending pending{0, cost::graph_signature(candidate, sizes_), {}, {}, {}};
  const auto runs = measured_now_.find({first, pending.signature});
  if (runs == measured_now_.end()) return std::nullopt;
  logger("profile")->info("a gain within the noise: timing the pair again, going on from its {} runs (at most {} or "
                          "{:.0f} s)",
                          runs->second.empty() ? 0 : runs->second.front().size(), limits.max_runs, limits.max_seconds);
  const std::vector<std::vector<double>> prior = runs->second;
  const ir::Graph first_run = with_integers(original, unknown);
  pending.unknown = unknown;
  pending.run = with_integers(candidate, pending.unknown);
  const Clock::time_point start = Clock::now();
  const cost::Comparison measured = measure_pair(first, first_run, original_file, pending, limits, prior);
  stats_.seconds += seconds_since(start);
  ++stats_.comparisons_measured;
  if (!measured.error.empty()) return std::nullopt;
  cache_.insert(measured);
  changed_ = true;
  return measured;
}

cost::Comparison Measurer::comparison_of(const std::string& first, const std::string& second,
                                         const profile::Timing& original, const profile::Timing& candidate) {
  const profile::Ratio ratio = profile::paired_ratio(original.samples_ms, candidate.samples_ms);
  const std::size_t rounds = std::min(original.samples_ms.size(), candidate.samples_ms.size());
  measured_now_[{first, second}] = {
      std::vector<double>(original.samples_ms.begin(), original.samples_ms.begin() + static_cast<std::ptrdiff_t>(rounds)),
      std::vector<double>(candidate.samples_ms.begin(), candidate.samples_ms.begin() + static_cast<std::ptrdiff_t>(rounds))};
  cache_.insert({second, backend_, candidate.median_ms, candidate.spread_ms, candidate.runs, {}});
  cost::Comparison comparison{first, second, backend_, ratio.median, ratio.spread, ratio.runs, {}};
  comparison.original_ms = original.median_ms;
  comparison.original_spread_ms = original.spread_ms;
  comparison.candidate_ms = candidate.median_ms;
  comparison.candidate_spread_ms = candidate.spread_ms;
  return comparison;
}

cost::Comparison Measurer::measure_pair(const std::string& first, const ir::Graph& first_run,
                                        const std::string& original_file, const Pending& candidate,
                                        const profile::TimingLimits& limits,
                                        const std::vector<std::vector<double>>& prior) {
  try {
    std::vector<profile::Profiler::Model> models = {{&first_run, original_file, {}}, {&candidate.run, {}, {}}};
    if (prior.size() == 2) {
      models[0].prior_ms = prior[0];
      models[1].prior_ms = prior[1];
    }
    const std::vector<profile::Timing> timings = profiler_->time_models(models, sizes_, limits);
    cache_.insert({first, backend_, timings[0].median_ms, timings[0].spread_ms, timings[0].runs, {}});
    return comparison_of(first, candidate.signature, timings[0], timings[1]);
  } catch (const Error& failure) {
    cost::Comparison comparison{first, candidate.signature, backend_, 1, 0, 0, failure.what()};
    if (candidate.unknown.empty()) {
      logger("profile")->warn("the target cannot run a candidate graph: {}", comparison.error);
    } else {
      // Not a fault of the candidate: an integer input (a shape a rewrite computes) has no value
      // at the measuring sizes, and zeros are no valid shape there. The candidate is not taken.
      std::string names;
      for (const std::string& name : candidate.unknown) names += (names.empty() ? "" : ", ") + name;
      comparison.error += " (integer inputs with no known value, fed zeros: " + names + ")";
      logger("profile")->info("a candidate part could not be timed, so it is not taken: {}", comparison.error);
    }
    return comparison;
  }
}

std::optional<cost::Comparison> Measurer::remember(const std::string& alike, const cost::Comparison& comparison) {
  if (!alike.empty()) alike_.emplace(alike, comparison);
  return comparison.failed() ? std::nullopt : std::optional<cost::Comparison>(comparison);
}

std::optional<profile::Timing> Measurer::graph_time(const ir::Graph& graph, const std::string& file) const {
  const cost::CacheEntry* entry = cache_.find(signature(graph, file), backend_);
  if (!entry || entry->failed()) return std::nullopt;
  return profile::timing_of(entry->median_ms, entry->spread_ms, entry->runs);
}

void Measurer::save() const {
  if (!changed_ || cache_path_.empty()) return;
  try {
    const std::filesystem::path path(cache_path_);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    const FileLock lock(cache_path_ + ".lock");
    cost::CostCache merged = cache_;
    if (std::filesystem::exists(path)) {
      const cost::CostCache on_disk = cost::CostCache::read(cache_path_);
      if (on_disk.header() == cache_.header()) merged.merge(on_disk);
    }
    merged.write(cache_path_);
    logger("profile")->info("cost cache {}: {} entries", cache_path_, merged.size());
  } catch (const std::exception& error) {
    logger("profile")->warn("the cost cache was not saved: {}", error.what());
  }
}

}  // namespace graphsub::pipeline
