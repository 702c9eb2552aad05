// `graphsub bench`: time one model, or compare two, in the target, as onnxruntime_perf_test would.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/report_file.h"
#include "ir/error.h"
#include "profile/ort_worker.h"

namespace graphsub::cmd {
namespace {

/// Options of `bench`.
struct BenchOptions {
  std::vector<std::string> models;
  std::string target = "onnxruntime-cpu";
  profile::OrtSettings ort;
  profile::TimingLimits limits = {5, 20, 1000, 30.0, 0.005, 5e-4, true};
  std::vector<std::string> dims;
  uint32_t seed = 0;
  std::string json;
};

nlohmann::json timing_json(const std::string& path, const profile::Timing& timing) {
  return {{"model", path},           {"median_ms", timing.median_ms}, {"p10_ms", timing.p10_ms},
          {"p90_ms", timing.p90_ms}, {"mean_ms", timing.mean_ms},     {"std_ms", timing.std_ms},
          {"spread_ms", timing.spread_ms},
          {"runs", timing.runs}};
}

void print(const BenchOptions& options, const profile::OrtInfo& info, const std::vector<profile::Timing>& timings) {
  std::printf("onnxruntime %s on %s: %d intra-op thread(s), graph optimization level %s; %d warm-up runs%s\n",
              info.onnxruntime.c_str(), info.cpu.c_str(), options.ort.threads, options.ort.level.c_str(),
              options.limits.warmup, timings.size() > 1 ? ", models alternated run by run" : "");
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const profile::Timing& t = timings[i];
    std::printf("%c  %-40s median %10.4f ms  p90 %10.4f ms  p10 %10.4f ms  %lld runs\n", static_cast<char>('A' + i),
                options.models[i].c_str(), t.median_ms, t.p90_ms, t.p10_ms, static_cast<long long>(t.runs));
  }
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

void run_bench(const BenchOptions& options) {
  if (options.models.size() > 2) throw Error("bench takes one model, or two to compare");
  profile::OrtWorker worker;
  const std::vector<profile::Timing> timings =
      worker.time_files(options.models, options.ort, parse_dims(options.dims), options.limits, options.seed);
  print(options, worker.info(), timings);
  if (options.json.empty()) return;
  nlohmann::json report = {{"target", options.target},
                           {"onnxruntime", worker.info().onnxruntime},
                           {"cpu", worker.info().cpu},
                           {"intra_op_threads", options.ort.threads},
                           {"graph_optimization_level", options.ort.level},
                           {"warmup_runs", options.limits.warmup},
                           {"models", nlohmann::json::array()}};
  for (std::size_t i = 0; i < timings.size(); ++i) report["models"].push_back(timing_json(options.models[i], timings[i]));
  if (timings.size() == 2) {
    const profile::Ratio ratio = profile::paired_ratio(timings[0].samples_ms, timings[1].samples_ms);
    report["paired_ratio"] = {{"median", ratio.median}, {"spread", ratio.spread}, {"runs", ratio.runs}};
    report["speedup"] = 1 / ratio.median;
    report["ratio_of_medians"] = timings[1].median_ms / timings[0].median_ms;
  }
  write_report(options.json, report);
}

}  // namespace

Command setup_bench(CLI::App& app) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Time a model, or compare two (A then B), in the target");
  sub->add_option("models", options->models, "One model, or two to compare (A B)")->required()->expected(1, 2);
  sub->add_option("--target", options->target, "Where to time: onnxruntime-cpu (the measured target)")
      ->capture_default_str()->check(CLI::IsMember({"onnxruntime-cpu"}));
  add_runtime_options(sub, options->ort);
  sub->add_option("--warmup", options->limits.warmup, "Untimed runs of each model first")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--runs", options->limits.min_runs, "Timed runs of each model at least")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--max-runs", options->limits.max_runs, "Timed runs of each model at most")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--max-seconds", options->limits.max_seconds,
                  "Stop adding runs after this long (once each model ran 3 times)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--dim", options->dims, "Size of a symbolic dim, NAME=SIZE (default 1)");
  sub->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option("--json", options->json, "Also write the figures as JSON to this file");
  return {sub, [options] { run_bench(*options); }};
}

}  // namespace graphsub::cmd
