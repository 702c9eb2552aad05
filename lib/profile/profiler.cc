// What every profiler shares: the default pooling of prior runs, and a node's cache entry.
#include "profile/profiler.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/log.h"
#include "search/subgraph.h"

namespace graphsub::profile {

std::vector<Timing> Profiler::time_models(const std::vector<Model>& models, const cost::DimSizes& sizes,
                                          const TimingLimits& limits) {
  std::vector<const ir::Graph*> graphs;
  for (const Model& model : models) graphs.push_back(model.graph);
  std::vector<Timing> timings = time_graphs(graphs, sizes, limits);
  for (std::size_t i = 0; i < models.size() && i < timings.size(); ++i) {
    if (models[i].prior_ms.empty()) continue;
    std::vector<double> pooled = models[i].prior_ms;
    pooled.insert(pooled.end(), timings[i].samples_ms.begin(), timings[i].samples_ms.end());
    timings[i] = summarize(std::move(pooled));
  }
  return timings;
}

std::vector<std::vector<double>> prior_runs(const std::vector<Profiler::Model>& models) {
  std::vector<std::vector<double>> prior;
  for (const Profiler::Model& model : models) prior.push_back(model.prior_ms);
  if (std::all_of(prior.begin(), prior.end(), [](const std::vector<double>& runs) { return runs.empty(); })) {
    prior.clear();
  }
  return prior;
}

cost::CacheEntry node_entry(const cost::Miss& miss, const std::string& backend,
                            const std::function<Timing(const ir::Graph&)>& time_node) {
  cost::CacheEntry entry{miss.signature, backend, 0, 0, 0, {}};
  try {
    const search::Subgraph node = search::extract(miss.graph, {miss.node});
    const Timing timing = time_node(node.graph);
    entry.median_ms = timing.median_ms;
    entry.spread_ms = timing.spread_ms;
    entry.runs = timing.runs;
  } catch (const Error& error) {
    entry.error = error.what();
    logger("profile")->debug("cannot measure {}: {}", miss.signature, entry.error);
  }
  return entry;
}

}  // namespace graphsub::profile
