// Node costs from measured times, with the analytical estimate on a miss.
#include "cost/cached_model.h"

namespace graphsub::cost {

Cost CachedModel::node_cost(const ir::Graph& graph, ir::NodeId id) const {
  const CacheEntry* entry = cache_.find(op_signature(graph, id), backend_);
  if (!entry) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return fallback_.node_cost(graph, id);
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  Cost cost = node_work(graph, id);
  cost.time_ms = entry->mean_ms;
  return cost;
}

}  // namespace graphsub::cost
