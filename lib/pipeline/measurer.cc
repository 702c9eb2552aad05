// Looking measurements up in the cost cache, taking the missing ones, and saving the cache.
#include "pipeline/measurer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <utility>

#include "ir/error.h"
#include "ir/log.h"

namespace graphsub::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

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

profile::Timing timing_of(const cost::CacheEntry& entry) {
  profile::Timing timing;
  timing.median_ms = entry.median_ms;
  timing.spread_ms = entry.spread_ms;
  timing.runs = entry.runs;
  return timing;
}

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

std::vector<std::optional<profile::Timing>> Measurer::graph_times(const std::vector<const ir::Graph*>& graphs,
                                                                  const profile::TimingLimits& limits) {
  std::vector<std::optional<profile::Timing>> times(graphs.size());
  std::vector<std::string> signatures;
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    signatures.push_back(cost::graph_signature(*graphs[i], sizes_));
    const cost::CacheEntry* entry = cache_.find(signatures.back(), backend_);
    if (entry) {
      ++stats_.graph_hits;
      if (!entry->failed()) times[i] = timing_of(*entry);
    } else {
      missing.push_back(i);
    }
  }
  if (missing.empty()) return times;
  if (!profiler_) {
    stats_.graphs_unmeasured += static_cast<int64_t>(missing.size());
    return times;
  }
  std::vector<const ir::Graph*> to_time;
  for (std::size_t i : missing) to_time.push_back(graphs[i]);
  const Clock::time_point start = Clock::now();
  std::vector<profile::Timing> measured;
  std::string error;
  try {
    measured = profiler_->time_graphs(to_time, sizes_, limits);
  } catch (const Error& failure) {
    error = failure.what();
    logger("profile")->warn("the target cannot run a candidate graph: {}", error);
  }
  stats_.seconds += seconds_since(start);
  stats_.graphs_measured += static_cast<int64_t>(missing.size());
  for (std::size_t k = 0; k < missing.size(); ++k) {
    const std::size_t i = missing[k];
    cost::CacheEntry entry{signatures[i], backend_, 0, 0, 0, error};
    if (error.empty()) {
      entry = {signatures[i], backend_, measured[k].median_ms, measured[k].spread_ms, measured[k].runs, {}};
      times[i] = measured[k];
    }
    cache_.insert(std::move(entry));
  }
  changed_ = true;
  return times;
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
