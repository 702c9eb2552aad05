// The measured cost model: node times from a cost cache, the analytical model where it has none.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "cost/analytical_model.h"
#include "cost/cost_cache.h"

namespace graphsub::cost {

/// Looks each node's op_signature up in a CostCache for one backend. A hit takes time_ms from the
/// cache (the measured mean) and FLOPs, bytes and launches from node_work; a miss is estimated by
/// an AnalyticalModel of the fallback device and counted. Collage and TASO (§5) cost a graph the
/// same way, as the sum of measured operator times.
class CachedModel : public CostModel {
 public:
  CachedModel(CostCache cache, std::string backend, DeviceSpec fallback)
      : cache_(std::move(cache)), backend_(std::move(backend)), fallback_(std::move(fallback)) {}

  Cost node_cost(const ir::Graph& graph, ir::NodeId id) const override;

  const CostCache& cache() const { return cache_; }
  const std::string& backend() const { return backend_; }
  const AnalyticalModel& fallback() const { return fallback_; }
  /// Lookups answered by the cache, and lookups that fell back, since construction. Atomic
  /// counters: node_cost runs in the search's threads; the report shows both.
  int64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  int64_t misses() const { return misses_.load(std::memory_order_relaxed); }

 private:
  CostCache cache_;
  std::string backend_;
  AnalyticalModel fallback_;
  mutable std::atomic<int64_t> hits_{0};
  mutable std::atomic<int64_t> misses_{0};
};

}  // namespace graphsub::cost
