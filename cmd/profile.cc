// `graphsub profile`: measure every operator signature of models into the target's cost cache.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "cost/cached_model.h"
#include "cost/device.h"
#include "ir/error.h"
#include "onnx_io/onnx_io.h"
#include "pipeline/pipeline.h"
#include "pipeline/target.h"

namespace graphsub::cmd {
namespace {

/// Options of `profile`.
struct ProfileOptions {
  std::vector<std::string> models;
  pipeline::TargetOptions target;
  std::vector<std::string> dims;
};

/// Measures the signatures of one model the cache lacks; prints what it did.
void profile_model(const std::string& path, pipeline::Target& target) {
  pipeline::Measurer& measurer = *target.measurer;
  const ir::Graph graph = onnx_io::fold_weight_nodes(onnx_io::import_model(path));
  pipeline::warn_unnamed_dims({&graph}, {path}, measurer.sizes());
  cost::CachedModel model(measurer.cache(), measurer.backend(), cost::device_by_name(target.spec.device),
                          measurer.sizes());
  model.graph_cost(graph);
  const std::size_t measured = measurer.measure(model.take_misses());
  const int64_t hits = model.hits();
  cost::CachedModel again(measurer.cache(), measurer.backend(), cost::device_by_name(target.spec.device),
                          measurer.sizes());
  const cost::Cost total = again.graph_cost(graph);
  // The sizes the symbolic dims of its inputs were measured at (1 where --dim gives none).
  const std::string at = pipeline::sizes_text(pipeline::input_sizes(graph, measurer.sizes()));
  std::printf("%s%s: %zu nodes, %zu signatures measured now, %lld node lookups already cached; sum of the measured "
              "node times %.4f ms (%lld nodes the target could not run, estimated)\n",
              path.c_str(), at.empty() ? "" : (" at " + at).c_str(), graph.node_count(), measured,
              static_cast<long long>(hits), total.time_ms, static_cast<long long>(again.misses()));
}

void run_profile(ProfileOptions options) {
  options.target.sizes = parse_dims(options.dims);
  if (options.target.name.empty()) options.target.name = "onnxruntime-cpu";
  pipeline::Target target = pipeline::open_target(options.target);
  if (!target.measurer || !target.measurer->can_measure()) {
    throw Error("target '" + target.spec.name + "' cannot measure on this machine");
  }
  for (const std::string& path : options.models) profile_model(path, target);
  target.measurer->save();
  std::printf("cost cache %s: %zu entries (%s)\n", target.measurer->cache_path().c_str(),
              target.measurer->cache().size(), cost::describe(target.measurer->cache().header()).c_str());
}

}  // namespace

Command setup_profile(CLI::App& app) {
  auto options = std::make_shared<ProfileOptions>();
  CLI::App* sub = app.add_subcommand(
      "profile", "Measure every operator signature of models in a measured target, into its cost cache");
  sub->add_option("models", options->models, "ONNX models")->required();
  sub->add_option("--target", options->target.name, "The measured target: onnxruntime-cpu (default) or cuda")
      ->check(CLI::IsMember({"onnxruntime-cpu", "cuda"}));
  add_runtime_options(sub, options->target.ort);
  sub->add_option("--cost-cache", options->target.cost_cache,
                  "Cost cache file to fill (default: one per machine and setting under ~/.cache/graphsub)");
  sub->add_option("--dim", options->dims, "Size of a symbolic dim, NAME=SIZE (default 1)");
  return {sub, [options] { run_profile(*options); }};
}

}  // namespace graphsub::cmd
