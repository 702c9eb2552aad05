// `graphsub optimize`: read a model, optimize it for a target, write it, and report what was done.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/report_file.h"
#include "pipeline/pipeline.h"

namespace graphsub::cmd {
namespace {

/// Options of `optimize`: the pipeline's request, and where its report goes.
struct OptimizeOptions {
  pipeline::OptimizeRequest request;
  std::string search_mode = "backtrack";
  std::vector<std::string> dims;
  std::vector<std::string> input_shapes;
  std::string report;
};

void print_check(const runtime::CheckReport& report, int samples) {
  std::printf("check: %d random input set(s), %s\n", samples, report.executor.c_str());
  for (const runtime::OutputCheck& output : report.outputs) {
    std::string verdict = output.passed ? "ok" : "FAILED";
    if (!output.passed && output.within_runtime_variation) {
      verdict = fmt::format("within onnxruntime's own variation ({:.3g})", output.runtime_variation);
    }
    std::printf("  %-32s max abs error %.3g  max rel error %.3g  %s\n", output.name.c_str(),
                output.max_abs_error, output.max_rel_error, verdict.c_str());
  }
}

void run_optimize(OptimizeOptions options) {
  pipeline::OptimizeRequest& request = options.request;
  request.optimizer.mode = search::search_mode_by_name(options.search_mode);
  request.check.dims = parse_dims(options.dims);
  request.input_shapes = parse_input_shapes(options.input_shapes);
  request.target.sizes = request.check.dims;
  const pipeline::OptimizeOutcome outcome = pipeline::optimize_model(request);
  if (outcome.check) print_check(*outcome.check, request.check.samples);
  std::printf("%s\n", outcome.summary.c_str());
  if (!options.report.empty()) write_report(options.report, outcome.report);
}

void add_search_options(CLI::App* sub, OptimizeOptions& options) {
  search::OptimizerOptions& optimizer = options.request.optimizer;
  sub->add_option("--rules", options.request.rule_files,
                  "Rule file to search with, or TASO's binary rules (.pb) (repeatable; default: the shipped set)");
  sub->add_option("--disable-rule", options.request.disabled_rules, "Leave out the rule of this name (repeatable)");
  sub->add_flag("--allow-unverified", options.request.allow_unverified,
                "Search with rules not proved under the current axioms too (the report lists those used)");
  sub->add_option("--search", options.search_mode, "Search on each part: backtrack, sampling or exhaustive")
      ->capture_default_str()->check(CLI::IsMember({"backtrack", "sampling", "exhaustive"}));
  sub->add_option("--split-threshold", optimizer.split_threshold,
                  "Split the graph into parts of at most N nodes (MetaFlow); 0: search it whole")
      ->capture_default_str();
  sub->add_option("--part-budget", optimizer.part_budget,
                  "Graphs a part's search may expand before the part is split again (0: never)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--threads", optimizer.threads, "Parts searched at once (0: one per core)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--sample-size", optimizer.search.sample_size, "Sampling: Q, sequences kept per round")
      ->capture_default_str()->check(CLI::Range(2, 100000));
  sub->add_option("--exploration-depth", optimizer.search.exploration_depth,
                  "Sampling: eta, most successive cost-increasing steps")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--max-length", optimizer.search.max_length,
                  "Sampling: K, most substitutions from the input to a result")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--alpha", optimizer.search.alpha, "Keep candidates costing under alpha x the best")
      ->capture_default_str()->check(CLI::Range(1.0, 100.0));
  sub->add_option("--budget", optimizer.search.budget, "Most candidate graphs to expand")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--time-limit", optimizer.search.time_limit_s, "Search time limit in seconds")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
}

void add_check_options(CLI::App* sub, OptimizeOptions& options) {
  runtime::CheckOptions& check = options.request.check;
  sub->add_option("--check", check.samples, "Run input and output on N seeded random inputs and compare")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--check-seed", check.seed, "Seed of the first random input set");
  sub->add_option("--atol", check.atol, "Absolute tolerance of --check")->capture_default_str();
  sub->add_option("--rtol", check.rtol, "Relative tolerance of --check")->capture_default_str();
  sub->add_option("--dim", options.dims,
                  "Size of a symbolic dim, NAME=SIZE, for measuring and --check (default 1)");
  sub->add_option("--input-shape", options.input_shapes,
                  "Shape to measure and --check an input at, NAME:D1,D2,... (onnxsim's syntax); sizes its "
                  "symbolic dims, the written model keeps them");
}

void add_target_options(CLI::App* sub, OptimizeOptions& options) {
  pipeline::TargetOptions& target = options.request.target;
  sub->add_option("--target", target.name, target_help())->check(CLI::IsMember(target_names()));
  add_runtime_options(sub, target.ort);
  sub->add_option("--cost-cache", target.cost_cache,
                  "Cost cache file of the measured target (default: one per machine and setting under "
                  "~/.cache/graphsub)");
  sub->add_flag("--no-measure", target.no_measure,
                "Never run the target: rank with --cost-cache as it is (misses estimated), e.g. a cache "
                "committed to pin CI results");
  sub->add_option("--min-gain", options.request.guard.min_gain,
                  "Write the optimized model only when it measures at least this fraction faster")
      ->capture_default_str()->check(CLI::Range(0.0, 0.5));
}

}  // namespace

Command setup_optimize(CLI::App& app) {
  auto options = std::make_shared<OptimizeOptions>();
  CLI::App* sub = app.add_subcommand("optimize", "Optimize an ONNX model for a target and write the result");
  sub->add_option("input", options->request.input, "Input ONNX model")->required();
  sub->add_option("-o,--output", options->request.output, "Output ONNX model (never the input)")->required();
  sub->add_option("--report", options->report, "Write a JSON report of what was done");
  add_target_options(sub, *options);
  add_check_options(sub, *options);
  add_search_options(sub, *options);
  return {sub, [options] { run_optimize(*options); }};
}

}  // namespace graphsub::cmd
