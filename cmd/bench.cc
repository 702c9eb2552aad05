// `graphsub bench`: time one model, or compare two, in the target, as onnxruntime_perf_test would.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/report_file.h"
#include "ir/error.h"
#include "onnx_io/onnx_io.h"
#include "pipeline/pipeline.h"
#include "profile/ort_worker.h"
#ifdef GRAPHSUB_HAVE_CUDA
#include "profile/cuda_profiler.h"
#endif

namespace graphsub::cmd {
namespace {

/// Options of `bench`.
struct BenchOptions {
  std::vector<std::string> models;
  std::string target = "onnxruntime-cpu";
  profile::OrtSettings ort;
  profile::TimingLimits limits = {5, 0, 20, 1000, 30.0, 0.005, 5e-4, true, 4, 0, true};
  std::vector<std::string> dims;
  uint32_t seed = 0;
  std::string json;
  bool by_op = false;
};

nlohmann::json timing_json(const std::string& path, const profile::Timing& timing) {
  return {{"model", path},           {"median_ms", timing.median_ms}, {"p10_ms", timing.p10_ms},
          {"p90_ms", timing.p90_ms}, {"mean_ms", timing.mean_ms},     {"std_ms", timing.std_ms},
          {"spread_ms", timing.spread_ms},
          {"runs", timing.runs}};
}

/// The line comparing two timings: B's speedup over A, from the run-by-run ratios.
void print_ratio(const std::vector<profile::Timing>& timings) {
  if (timings.size() == 2) {
    const profile::Ratio ratio = profile::paired_ratio(timings[0].samples_ms, timings[1].samples_ms);
    const double speedup = 1 / ratio.median;
    std::printf("B/A: B is %.3fx %s: median of the %lld run-by-run ratios B/A %.4f (spread %.1f %%); "
                "ratio of the medians %.4f\n",
                speedup >= 1 ? speedup : 1 / speedup, speedup >= 1 ? "faster" : "slower",
                static_cast<long long>(ratio.runs), ratio.median, 100 * ratio.spread,
                timings[1].median_ms / timings[0].median_ms);
  }
}

/// The models as graphsub reads them, for the sizes their symbolic input dims are timed at
/// (nullopt for a model graphsub cannot read though onnxruntime may run it). Warns about a --dim
/// that none of them names.
std::vector<std::optional<ir::Graph>> read_models(const BenchOptions& options,
                                                  const std::map<std::string, int64_t>& dims) {
  std::vector<std::optional<ir::Graph>> graphs;
  std::vector<const ir::Graph*> read;
  std::vector<std::string> paths;
  for (const std::string& path : options.models) {
    try {
      graphs.emplace_back(onnx_io::import_model(path));
    } catch (const Error&) {
      graphs.emplace_back();
    }
  }
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    if (!graphs[i]) continue;
    read.push_back(&*graphs[i]);
    paths.push_back(options.models[i]);
  }
  if (!read.empty()) pipeline::warn_unnamed_dims(read, paths, dims);
  return graphs;
}

/// The size each model's symbolic input dims were timed at (empty for a model without any, or
/// one graphsub cannot read).
std::vector<pipeline::InputSizes> sizes_timed(const std::vector<std::optional<ir::Graph>>& graphs,
                                              const std::map<std::string, int64_t>& dims) {
  std::vector<pipeline::InputSizes> sizes;
  for (const std::optional<ir::Graph>& graph : graphs) {
    sizes.push_back(graph ? pipeline::input_sizes(*graph, dims) : pipeline::InputSizes{});
  }
  return sizes;
}

void print(const BenchOptions& options, const profile::OrtInfo& info, const std::vector<profile::Timing>& timings,
           const std::vector<pipeline::InputSizes>& sizes, const std::optional<profile::OneAtATime>& alone) {
  std::string order = timings.size() > 1 ? ", models alternated run by run" : "";
  if (alone) {
    order = ", one session at a time (" + profile::describe(*alone) + "), models alternated block by block";
  }
  std::printf("onnxruntime %s on %s: %d intra-op thread(s)%s, graph optimization level %s; %d warm-up runs%s; "
              "%d block(s) of fresh sessions\n",
              info.onnxruntime.c_str(), info.cpu.c_str(), options.ort.threads,
              options.ort.threads > 1 ? " (one pool shared by the sessions)" : "", options.ort.level.c_str(),
              options.limits.warmup, order.c_str(), options.limits.sessions);
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const profile::Timing& t = timings[i];
    const std::string at = pipeline::sizes_text(sizes[i]);
    std::printf("%c  %-40s median %10.4f ms  p90 %10.4f ms  p10 %10.4f ms  %lld runs%s\n", static_cast<char>('A' + i),
                options.models[i].c_str(), t.median_ms, t.p90_ms, t.p10_ms, static_cast<long long>(t.runs),
                at.empty() ? "" : ("  at " + at).c_str());
  }
  print_ratio(timings);
}

/// `op`'s entry in `times`, or zero time and no nodes.
profile::OpTime time_of(const profile::OpTimes& times, const std::string& op) {
  const auto found = times.find(op);
  return found == times.end() ? profile::OpTime{} : found->second;
}

/// The kernel time per operator type of each model, the types in order of their larger time in
/// either model, with the difference where two models are compared.
void print_by_op(const BenchOptions& options, const std::vector<profile::OpTimes>& by_op) {
  std::map<std::string, double> largest;
  for (const profile::OpTimes& times : by_op) {
    for (const auto& [op, time] : times) largest[op] = std::max(largest[op], time.ms_per_run);
  }
  std::vector<std::string> ops;
  for (const auto& entry : largest) ops.push_back(entry.first);
  std::stable_sort(ops.begin(), ops.end(), [&](const std::string& a, const std::string& b) { return largest[a] > largest[b]; });
  std::printf("\nkernel time by operator of onnxruntime's optimized graph (profiled sessions, %d runs after the "
              "warm-up; the profiler slows a run, so read the shares; GFLOP/s of convolutions and matrix products):\n%-24s",
              options.limits.min_runs, "operator");
  for (std::size_t i = 0; i < by_op.size(); ++i) std::printf("  %c ms/run  share nodes GFLOP/s", static_cast<char>('A' + i));
  std::printf("%s\n", by_op.size() == 2 ? "   B-A ms" : "");
  std::vector<double> totals(by_op.size(), 0);
  for (std::size_t i = 0; i < by_op.size(); ++i) {
    for (const auto& entry : by_op[i]) totals[i] += entry.second.ms_per_run;
  }
  for (const std::string& op : ops) {
    std::printf("%-24s", op.c_str());
    for (std::size_t i = 0; i < by_op.size(); ++i) {
      const profile::OpTime time = time_of(by_op[i], op);
      std::printf("  %9.4f %5.1f%% %5d", time.ms_per_run, totals[i] > 0 ? 100 * time.ms_per_run / totals[i] : 0.0,
                  time.nodes);
      if (time.flops > 0 && time.ms_per_run > 0) {
        std::printf(" %7.1f", time.flops / time.ms_per_run / 1e6);
      } else {
        std::printf("        ");
      }
    }
    if (by_op.size() == 2) {
      std::printf("  %+8.4f", time_of(by_op[1], op).ms_per_run - time_of(by_op[0], op).ms_per_run);
    }
    std::printf("\n");
  }
  std::printf("%-24s", "total");
  for (double total : totals) std::printf("  %9.4f 100.0%%              ", total);
  std::printf("\n");
}

nlohmann::json by_op_json(const profile::OpTimes& times) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [op, time] : times) {
    json[op] = {{"ms_per_run", time.ms_per_run}, {"nodes", time.nodes}, {"flops", time.flops}};
  }
  return json;
}

/// The ratio lines and JSON fields of two timings, shared by both targets.
void add_ratio(const std::vector<profile::Timing>& timings, nlohmann::json& report) {
  if (timings.size() != 2) return;
  const profile::Ratio ratio = profile::paired_ratio(timings[0].samples_ms, timings[1].samples_ms);
  report["paired_ratio"] = {{"median", ratio.median}, {"spread", ratio.spread}, {"runs", ratio.runs}};
  report["speedup"] = 1 / ratio.median;
  report["ratio_of_medians"] = timings[1].median_ms / timings[0].median_ms;
}

/// Where each model's nodes ran on the GPU, e.g. "cudnn 53, cublas 1, graphsub 70, host 0".
std::string placement_text(const std::map<std::string, int>& placement) {
  std::string text;
  for (const auto& [where, count] : placement) text += (text.empty() ? "" : ", ") + where + " " + std::to_string(count);
  return text;
}

/// `bench --target cuda`: the models on this machine's GPU through the CUDA executor.
void run_bench_cuda(const BenchOptions& options) {
#ifdef GRAPHSUB_HAVE_CUDA
  if (options.by_op) throw Error("--by-op profiles onnxruntime sessions; it has no cuda form");
  profile::CudaProfiler profiler(options.seed);
  std::vector<ir::Graph> graphs;
  graphs.reserve(options.models.size());
  std::vector<const ir::Graph*> pointers;
  for (const std::string& path : options.models) {
    graphs.push_back(onnx_io::import_model(path));
    pointers.push_back(&graphs.back());
  }
  const std::map<std::string, int64_t> dims = parse_dims(options.dims);
  pipeline::warn_unnamed_dims(pointers, options.models, dims);
  const std::vector<profile::Timing> timings = profiler.time_graphs(pointers, dims, options.limits);
  std::printf("cuda on %s (%s): graphsub's CUDA executor, fp32, CUDA events; %d warm-up runs%s\n",
              profiler.header().device.c_str(), cost::describe(profiler.header()).c_str(), options.limits.warmup,
              timings.size() > 1 ? ", models alternated run by run" : "");
  std::vector<pipeline::InputSizes> sizes;
  for (const ir::Graph& graph : graphs) sizes.push_back(pipeline::input_sizes(graph, dims));
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const profile::Timing& t = timings[i];
    const std::string at = pipeline::sizes_text(sizes[i]);
    std::printf("%c  %-40s median %10.4f ms  p90 %10.4f ms  p10 %10.4f ms  %lld runs%s\n   nodes on: %s\n",
                static_cast<char>('A' + i), options.models[i].c_str(), t.median_ms, t.p90_ms, t.p10_ms,
                static_cast<long long>(t.runs), at.empty() ? "" : ("  at " + at).c_str(),
                placement_text(profiler.placements()[i]).c_str());
  }
  print_ratio(timings);
  if (options.json.empty()) return;
  nlohmann::json report = {{"target", options.target}, {"device", profiler.header().device},
                           {"driver", profiler.header().driver}, {"libraries", profiler.header().libraries},
                           {"warmup_runs", options.limits.warmup}, {"models", nlohmann::json::array()}};
  for (std::size_t i = 0; i < timings.size(); ++i) {
    report["models"].push_back(timing_json(options.models[i], timings[i]));
    report["models"].back()["placement"] = profiler.placements()[i];
    report["models"].back()["measured_at"] = pipeline::sizes_json(sizes[i]);
  }
  add_ratio(timings, report);
  write_report(options.json, report);
#else
  (void)options;
  throw Error("this graphsub was built without CUDA (GRAPHSUB_WITH_CUDA): bench --target cuda needs it and a GPU");
#endif
}

void run_bench(const BenchOptions& options) {
  if (options.models.size() > 2) throw Error("bench takes one model, or two to compare");
  if (options.target == "cuda") return run_bench_cuda(options);
  const std::map<std::string, int64_t> dims = parse_dims(options.dims);
  const std::vector<std::optional<ir::Graph>> graphs = read_models(options, dims);
  profile::OrtWorker worker;
  std::vector<profile::Timing> timings;
  try {
    timings = worker.time_files(options.models, options.ort, dims, options.limits, options.seed);
  } catch (const Error& failure) {
    // The model that failed is named in the message: the sizes its symbolic dims ran with, and
    // what to give, from its graph.
    for (std::size_t i = 0; i < options.models.size(); ++i) {
      if (!graphs[i] || std::string(failure.what()).find("'" + options.models[i] + "'") == std::string::npos) continue;
      throw Error(failure.what() + pipeline::sizes_hint(*graphs[i], dims, failure.what()));
    }
    throw;
  }
  const std::vector<pipeline::InputSizes> sizes = sizes_timed(graphs, dims);
  print(options, worker.info(), timings, sizes, worker.last_one_at_a_time());
  std::vector<profile::OpTimes> by_op;
  if (options.by_op) {
    by_op = worker.profile_files(options.models, options.ort, dims, options.limits.warmup,
                                 options.limits.min_runs, options.seed);
    print_by_op(options, by_op);
  }
  if (options.json.empty()) return;
  nlohmann::json report = {{"target", options.target},
                           {"onnxruntime", worker.info().onnxruntime},
                           {"cpu", worker.info().cpu},
                           {"intra_op_threads", options.ort.threads},
                           {"graph_optimization_level", options.ort.level},
                           {"warmup_runs", options.limits.warmup},
                           {"session_blocks", options.limits.sessions},
                           {"models", nlohmann::json::array()}};
  if (const std::optional<profile::OneAtATime>& alone = worker.last_one_at_a_time()) {
    report["one_session_at_a_time"] = {{"session_bytes", alone->session_bytes}, {"free_bytes", alone->free_bytes}};
  }
  for (std::size_t i = 0; i < timings.size(); ++i) {
    report["models"].push_back(timing_json(options.models[i], timings[i]));
    report["models"].back()["measured_at"] = pipeline::sizes_json(sizes[i]);
    if (options.by_op) report["models"].back()["by_op"] = by_op_json(by_op[i]);
  }
  add_ratio(timings, report);
  write_report(options.json, report);
}

}  // namespace

Command setup_bench(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Time a model, or compare two (A then B), in the target");
  sub->add_option("models", options->models, "One model, or two to compare (A B)")->required()->expected(1, 2);
  sub->add_option("--target", options->target,
                  "Where to time: onnxruntime-cpu, or cuda (this machine's GPU through graphsub's CUDA executor)")
      ->capture_default_str()->check(CLI::IsMember({"onnxruntime-cpu", "cuda"}));
  add_runtime_options(sub, options->ort);
  sub->add_option("--warmup", options->limits.warmup, "Untimed runs of each model first")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--runs", options->limits.min_runs, "Timed runs of each model at least")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--max-runs", options->limits.max_runs, "Timed runs of each model at most")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--max-seconds", options->limits.max_seconds,
                  "Stop adding runs once the timed runs took this long (once each model ran 3 times; creating and "
                  "warming up sessions not counted)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--sessions", options->limits.sessions,
                  "Blocks of fresh onnxruntime sessions the runs are spread over, created in alternating order")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--dim", options->dims, "Size of a symbolic dim, NAME=SIZE (default 1)");
  sub->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option("--json", options->json, "Also write the figures as JSON to this file");
  sub->add_flag("--by-op", options->by_op,
                "Then profile each model and print its kernel time per operator type of onnxruntime's optimized graph");
  return {sub, [options] { run_bench(*options); }};
}

}  // namespace graphsub::cmd
