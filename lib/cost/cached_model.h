// The measured cost model: node times from a cost cache, the analytical model where it has none.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "cost/analytical_model.h"
#include "cost/cost_cache.h"

namespace graphsub::cost {

/// A node the cache held no time for, as the search met it: the graph it was in (a copy costs
/// two vectors of pointers) and its id, so that a profiler can measure it later.
struct Miss {
  std::string signature;
  ir::Graph graph;
  ir::NodeId node = 0;
};

/// Looks each node's op_signature (symbolic dims at the given sizes) up in a CostCache for one
/// backend. A hit takes time_ms from the cache (the measured median) and FLOPs, bytes and
/// launches from node_work; a miss, or an entry that records a failed measurement, is estimated by
/// an AnalyticalModel of the fallback device. Collage and TASO (§5) cost a graph the same way, as
/// the sum of measured operator times.
///
/// The cache is referenced, not copied: its owner adds measurements between searches (never
/// during one). Misses of modelled nodes are remembered once per signature, so that the caller
/// can measure them and search again (take_misses); opaque nodes are always estimated, as they
/// pass through every candidate unchanged. A node whose output aliases its input
/// (ops::aliases_input: Reshape, Squeeze, ...) costs nothing and is neither looked up nor
/// measured: timed alone it would time the copy of a graph output, which no model containing it
/// makes.
class CachedModel : public CostModel {
 public:
  CachedModel(const CostCache& cache, std::string backend, DeviceSpec fallback, DimSizes sizes = {})
      : cache_(cache), backend_(std::move(backend)), fallback_(std::move(fallback)), sizes_(std::move(sizes)) {}

  Cost node_cost(const ir::Graph& graph, ir::NodeId id) const override;
  /// Whether written_cost prices a chain export writes as a fused form as that form: for a target
  /// that times the written model, where the two are one. Off by default.
  bool prices_written_chains() const override { return written_chains_; }
  void set_prices_written_chains(bool on) { written_chains_ = on; }

  const CostCache& cache() const { return cache_; }
  const std::string& backend() const { return backend_; }
  const AnalyticalModel& fallback() const { return fallback_; }
  const DimSizes& sizes() const { return sizes_; }
  /// Lookups answered by the cache, and lookups that fell back to the estimate, since
  /// construction. Atomic counters: node_cost runs in the search's threads.
  int64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  int64_t misses() const { return misses_.load(std::memory_order_relaxed); }

  /// The misses of modelled nodes on the calling thread, counted over every CachedModel (a
  /// search runs on one thread with one model): their estimates stand until measured.
  int64_t provisional_answers() const override;

  /// True when some modelled signature missed since the last take_misses.
  bool pending_misses() const;

  /// The distinct modelled signatures that missed since the last call, sorted by signature, each
  /// with the first node met. Not safe alongside node_cost.
  std::vector<Miss> take_misses();

 private:
  void remember(const std::string& signature, const ir::Graph& graph, ir::NodeId id) const;

  const CostCache& cache_;
  std::string backend_;
  AnalyticalModel fallback_;
  DimSizes sizes_;
  bool written_chains_ = false;
  mutable std::atomic<int64_t> hits_{0};
  mutable std::atomic<int64_t> misses_{0};
  mutable std::mutex mutex_;
  mutable std::map<std::string, Miss> missed_;
  /// The costs of hits by node_key: the search costs every graph it makes, which differs from
  /// the one it came from by a rewrite, and building each node's signature to look it up again
  /// was a sixth of a warm search. Only hits are kept (a cache entry is never changed once
  /// added); misses take the signature's path, so they are remembered and counted as before.
  mutable std::mutex hits_mutex_;
  mutable std::unordered_map<uint64_t, Cost> hit_costs_;
};

}  // namespace graphsub::cost
