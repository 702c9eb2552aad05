// `graphsub optimize`: read a model, optimize it, write it, and optionally check it numerically.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/report_file.h"
#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/onnx_io.h"
#include "runtime/equivalence.h"

namespace graphsub::cmd {
namespace {

namespace fs = std::filesystem;

/// Options of `optimize`.
struct OptimizeOptions {
  std::string input;
  std::string output;
  std::string report;
  int check_samples = 0;
  uint32_t check_seed = 0;
  double atol = 1e-5;
  double rtol = 1e-4;
  std::vector<std::string> dims;
};

/// Seconds spent in each phase.
class PhaseTimer {
 public:
  void start() { begin_ = std::chrono::steady_clock::now(); }
  void stop(const std::string& phase) {
    times_[phase] = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }
  const std::map<std::string, double>& times() const { return times_; }

 private:
  std::chrono::steady_clock::time_point begin_;
  std::map<std::string, double> times_;
};

void ensure_distinct(const std::string& input, const std::string& output) {
  std::error_code error;
  bool same = fs::exists(output, error) && fs::equivalent(input, output, error);
  same = same || fs::weakly_canonical(input, error) == fs::weakly_canonical(output, error);
  if (same) throw Error("refusing to overwrite the input model '" + input + "'; choose another -o");
}

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const std::string& spec : specs) {
    auto eq = spec.find('=');
    try {
      if (eq == std::string::npos || eq == 0) throw std::invalid_argument(spec);
      dims[spec.substr(0, eq)] = std::stoll(spec.substr(eq + 1));
    } catch (const std::exception&) {
      throw Error("--dim expects NAME=SIZE, got '" + spec + "'");
    }
  }
  return dims;
}

nlohmann::json check_json(const runtime::CheckReport& report) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const runtime::OutputCheck& output : report.outputs) {
    outputs.push_back({{"name", output.name},
                       {"max_abs_error", output.max_abs_error},
                       {"max_rel_error", output.max_rel_error},
                       {"passed", output.passed}});
  }
  return {{"passed", report.passed()}, {"outputs", outputs}};
}

void print_check(const runtime::CheckReport& report, int samples) {
  std::printf("check: %d random input set(s), reference executor\n", samples);
  for (const runtime::OutputCheck& output : report.outputs) {
    std::printf("  %-32s max abs error %.3g  max rel error %.3g  %s\n", output.name.c_str(),
                output.max_abs_error, output.max_rel_error, output.passed ? "ok" : "FAILED");
  }
}

runtime::CheckReport run_check(const ir::Graph& original, const OptimizeOptions& options) {
  runtime::CheckOptions check;
  check.samples = options.check_samples;
  check.seed = options.check_seed;
  check.atol = options.atol;
  check.rtol = options.rtol;
  check.dims = parse_dims(options.dims);
  ir::Graph written = onnx_io::import_model(options.output);
  return runtime::check_equivalent(original, written, check);
}

nlohmann::json import_json(const onnx_io::ImportStats& stats) {
  return {{"opset", stats.opset},
          {"modelled_nodes", stats.modelled_nodes},
          {"opaque_nodes", stats.opaque_nodes},
          {"opaque_reasons", stats.opaque_reasons}};
}

void run_optimize(const OptimizeOptions& options) {
  auto log = logger("cli");
  ensure_distinct(options.input, options.output);
  PhaseTimer timer;
  onnx_io::ImportStats stats;
  timer.start();
  ir::Graph original = onnx_io::import_model(options.input, {}, &stats);
  timer.stop("import");
  log->info("read {}: {} nodes ({} opaque)", options.input, original.node_count(), stats.opaque_nodes);
  timer.start();
  onnx_io::export_model(original, options.output);
  timer.stop("export");
  nlohmann::json report = {{"input", options.input}, {"output", options.output},
                           {"import", import_json(stats)}, {"nodes_before", original.node_count()}};
  if (options.check_samples > 0) {
    timer.start();
    runtime::CheckReport check;
    try {
      check = run_check(original, options);
    } catch (const Error& e) {
      fs::remove(options.output);
      throw Error(std::string("cannot check the output, so it was not kept: ") + e.what());
    }
    timer.stop("check");
    print_check(check, options.check_samples);
    report["check"] = check_json(check);
    if (!check.passed()) {
      fs::remove(options.output);
      throw Error("the output differs from the input beyond tolerance; it was not kept");
    }
  }
  report["seconds"] = timer.times();
  if (!options.report.empty()) write_report(options.report, report);
}

}  // namespace

Command setup_optimize(CLI::App& app) {
  auto options = std::make_shared<OptimizeOptions>();
  CLI::App* sub = app.add_subcommand("optimize", "Optimize an ONNX model and write the result");
  sub->add_option("input", options->input, "Input ONNX model")->required();
  sub->add_option("-o,--output", options->output, "Output ONNX model (never the input)")->required();
  sub->add_option("--check", options->check_samples,
                  "Run input and output on N seeded random inputs and compare")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--check-seed", options->check_seed, "Seed of the first random input set");
  sub->add_option("--atol", options->atol, "Absolute tolerance of --check")
      ->capture_default_str();
  sub->add_option("--rtol", options->rtol, "Relative tolerance of --check")
      ->capture_default_str();
  sub->add_option("--dim", options->dims, "Size of a symbolic dim for --check, NAME=SIZE (default 1)");
  sub->add_option("--report", options->report, "Write a JSON report of what was done");
  return {sub, [options] { run_optimize(*options); }};
}

}  // namespace graphsub::cmd
