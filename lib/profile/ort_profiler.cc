// Timing graphs and nodes in onnxruntime through exported models.
#include "profile/ort_profiler.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/onnx_io.h"

namespace graphsub::profile {
namespace {

/// A graph of one Identity on a one-element float tensor: what a session run costs by itself.
ir::Graph identity_graph() {
  ir::Graph graph;
  const ir::TensorType type{ir::DataType::kFloat, ir::Shape::of({1})};
  const ir::ValueId x = graph.add_input("x", type);
  const ir::NodeId node = graph.add_node(ir::OpKind::kIdentity, {x}, {{type, "y"}});
  graph.set_outputs({graph.node(node).outputs[0]});
  return graph;
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/graphsub-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw Error("cannot create a temporary folder like " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

cost::CacheHeader ort_header(const OrtInfo& info, const OrtSettings& settings) {
  cost::CacheHeader header{"onnxruntime-cpu",
                           info.cpu,
                           "",
                           {{"onnxruntime", info.onnxruntime}},
                           {{"graph_optimization_level", settings.level},
                            {"intra_op_threads", std::to_string(settings.threads)}}};
  // At more than one thread the worker's sessions share one thread pool (ort_worker.py,
  // "Threads"). Caches timed before that, with a pool per session, hold times disturbed by the
  // other sessions' spinning threads: without this entry their header differs, so they are
  // refused or measured again, never mixed in.
  if (settings.threads > 1) header.settings["intra_op_thread_pool"] = "shared";
  return header;
}

OrtProfiler::OrtProfiler(OrtSettings settings, const std::string& python)
    : settings_(std::move(settings)), worker_(python), header_(ort_header(worker_.info(), settings_)) {}

TimingLimits OrtProfiler::node_limits() {
  TimingLimits limits;
  limits.warmup = 1;
  limits.min_runs = 5;
  limits.max_runs = 100;
  limits.max_seconds = 0.2;
  limits.rel_error = 0.03;
  limits.abs_error_ms = 1e-3;
  return limits;
}

std::vector<Timing> OrtProfiler::time_graphs(const std::vector<const ir::Graph*>& graphs,
                                             const cost::DimSizes& sizes, const TimingLimits& limits) {
  std::vector<Model> models;
  for (const ir::Graph* graph : graphs) models.push_back({graph, {}, {}});
  return time_models(models, sizes, limits);
}

std::vector<Timing> OrtProfiler::time_models(const std::vector<Model>& models, const cost::DimSizes& sizes,
                                             const TimingLimits& limits) {
  std::vector<std::string> paths, exported;
  for (const Model& model : models) {
    if (!model.file.empty()) {
      paths.push_back(model.file);
      continue;
    }
    paths.push_back(dir_.path() + "/model" + std::to_string(files_++) + ".onnx");
    exported.push_back(paths.back());
    onnx_io::ExportOptions options;
    options.shared_weights = &weights_;
    onnx_io::export_model(*model.graph, paths.back(), options);
  }
  std::vector<Timing> timings;
  try {
    timings = worker_.time_files(paths, settings_, sizes, limits, 0, prior_runs(models));
  } catch (const Error&) {
    for (const std::string& path : exported) std::filesystem::remove(path);
    throw;
  }
  for (const std::string& path : exported) std::filesystem::remove(path);
  measurements_ += static_cast<int64_t>(models.size());
  if (const std::optional<OneAtATime>& alone = worker_.last_one_at_a_time()) {
    // Said once: every later timing of graphs this large goes the same way.
    if (one_at_a_time_++ == 0) {
      logger("profile")->warn(
          "{} graphs do not fit in memory side by side ({}): timing them one session at a time, in blocks of "
          "alternating order, instead of run by run",
          models.size(), describe(*alone));
    }
  }
  return timings;
}

std::optional<Observed> OrtProfiler::observe(const ir::Graph& graph, const std::vector<ir::ValueId>& values,
                                             const cost::DimSizes& sizes) {
  ir::Graph outputs = graph;
  // ONNX's checker wants a shape on every output of a model. A value of unknown rank (the output
  // of an If, of an operator ONNX cannot infer) is observed through its Shape, whose rank is 1.
  std::vector<ir::ValueId> wanted;
  std::map<std::string, std::string> shape_of;  // the Shape output's name -> the value's name
  for (ir::ValueId id : values) {
    const ir::Value& value = outputs.value(id);
    if (value.type.shape.rank_known) {
      wanted.push_back(id);
      continue;
    }
    ir::Shape rank_one;
    rank_one.rank_known = true;
    rank_one.dims = {ir::Dim{}};
    const std::string name = "gs_observed_shape_" + std::to_string(shape_of.size());
    const ir::NodeId node = outputs.add_node(ir::OpKind::kShape, {id}, {{{ir::DataType::kInt64, rank_one}, name}});
    wanted.push_back(outputs.node(node).outputs[0]);
    shape_of.emplace(name, value.name);
  }
  outputs.set_outputs(wanted);
  outputs.remove_dead_nodes();
  const std::string path = dir_.path() + "/observe" + std::to_string(files_++) + ".onnx";
  onnx_io::ExportOptions options;
  options.shared_weights = &weights_;
  onnx_io::export_model(outputs, path, options);
  OrtSettings settings = settings_;
  settings.level = "disabled";
  Observed observed;
  try {
    observed = worker_.observe_file(path, settings, sizes, kObservedElements);
  } catch (const Error&) {
    std::filesystem::remove(path);
    throw;
  }
  std::filesystem::remove(path);
  for (const auto& [name, value] : shape_of) {
    const auto found = observed.find(name);
    if (found == observed.end()) continue;
    if (found->second.integers) observed[value].shape = *found->second.integers;
    observed.erase(name);
  }
  return observed;
}

double OrtProfiler::run_overhead_ms() {
  if (!overhead_ms_) {
    const ir::Graph identity = identity_graph();
    overhead_ms_ = time_graphs({&identity}, {}, node_limits()).front().median_ms;
    logger("profile")->debug("a session run costs {:.4f} ms by itself", *overhead_ms_);
  }
  return *overhead_ms_;
}

cost::CacheEntry OrtProfiler::measure_node(const cost::Miss& miss, const cost::DimSizes& sizes) {
  return node_entry(miss, backend(), [&](const ir::Graph& node) {
    const double overhead = run_overhead_ms();
    Timing timing = time_graphs({&node}, sizes, node_limits()).front();
    timing.median_ms = std::max(0.0, timing.median_ms - overhead);
    return timing;
  });
}

}  // namespace graphsub::profile
