// `graphsub optimize`: read a model, optimize it, write it, and optionally check it numerically.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/report_file.h"
#include "cost/analytical_model.h"
#include "cost/cached_model.h"
#include "cost/cost_cache.h"
#include "cost/device.h"
#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/onnx_io.h"
#include "rewrite/matcher.h"
#include "rules/parser.h"
#include "rules/shipped_rules.h"
#include "rules/taso_reader.h"
#include "runtime/equivalence.h"
#include "search/optimizer.h"

namespace graphsub::cmd {
namespace {

namespace fs = std::filesystem;

/// Options of `optimize`.
struct OptimizeOptions {
  std::string input;
  std::string output;
  std::string report;
  std::vector<std::string> rule_files;
  std::vector<std::string> disabled_rules;
  std::string device = "v100";
  std::string cost_cache;
  std::string search_mode = "backtrack";
  search::OptimizerOptions optimizer;
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

std::vector<rules::Rule> all_rules(const OptimizeOptions& options) {
  std::vector<rules::Rule> rules;
  auto append = [&rules](std::vector<rules::Rule> more) {
    for (rules::Rule& rule : more) rules.push_back(std::move(rule));
  };
  if (options.rule_files.empty()) append(rules::default_rules());
  for (const std::string& path : options.rule_files) {
    if (fs::path(path).extension() != ".pb") {
      append(rules::read_rules_file(path));
      continue;
    }
    rules::TasoRules taso = rules::read_taso_rules(path);
    logger("cli")->info("{}: {} TASO rules read, {} skipped", path, taso.rules.size(), taso.skipped.size());
    append(std::move(taso.rules));
  }
  return rules;
}

/// The rules to search with: the shipped set, or exactly the --rules files, less --disable-rule.
std::vector<rules::Rule> load_rules(const OptimizeOptions& options) {
  std::vector<rules::Rule> rules = all_rules(options);
  for (const std::string& name : options.disabled_rules) {
    auto it = std::find_if(rules.begin(), rules.end(), [&](const rules::Rule& r) { return r.name == name; });
    if (it == rules.end()) throw Error("--disable-rule: no rule named '" + name + "'");
  }
  rules.erase(std::remove_if(rules.begin(), rules.end(),
                             [&](const rules::Rule& r) {
                               return std::count(options.disabled_rules.begin(), options.disabled_rules.end(),
                                                 r.name) > 0;
                             }),
              rules.end());
  return rules;
}

/// The analytical model of --device, or measured costs from --cost-cache with it as fallback.
std::unique_ptr<cost::CostModel> make_cost_model(const OptimizeOptions& options) {
  cost::DeviceSpec device = cost::device_by_name(options.device);
  if (options.cost_cache.empty()) return std::make_unique<cost::AnalyticalModel>(device);
  cost::CostCache cache = cost::CostCache::read(options.cost_cache);
  const std::string backend = options.device == "cpu" ? "onnxruntime-cpu" : "cudnn";
  return std::make_unique<cost::CachedModel>(std::move(cache), backend, device);
}

nlohmann::json cost_json(const cost::Cost& cost) {
  return {{"time_ms", cost.time_ms}, {"flops", cost.flops}, {"bytes", cost.bytes}, {"launches", cost.launches}};
}

nlohmann::json split_json(const search::SplitStats& split, std::size_t threshold) {
  return {{"threshold", threshold},
          {"parts", split.parts},
          {"largest_part", split.largest_part},
          {"disabled_matches", split.disabled_matches},
          {"resplit_parts", split.resplit_parts},
          {"seam_regions", split.seam_regions},
          {"seam_substitutions", split.seam_steps},
          {"seconds", {{"split", split.split_seconds}, {"parts", split.parts_seconds}, {"seams", split.seam_seconds}}}};
}

nlohmann::json search_json(const search::SearchResult& result, std::size_t rule_count) {
  nlohmann::json steps = nlohmann::json::array();
  for (const search::AppliedStep& step : result.steps) steps.push_back({{"rule", step.rule}, {"where", step.where}});
  return {{"rules", rule_count},
          {"cost_before", cost_json(result.initial_cost)},
          {"cost_after", cost_json(result.best_cost)},
          {"substitutions", steps},
          {"stop_reason", search::to_string(result.stop)},
          {"expanded", result.expanded},
          {"generated", result.generated},
          {"duplicates", result.duplicates},
          {"rejected", result.rejected}};
}

nlohmann::json import_json(const onnx_io::ImportStats& stats) {
  return {{"opset", stats.opset},
          {"modelled_nodes", stats.modelled_nodes},
          {"opaque_nodes", stats.opaque_nodes},
          {"opaque_reasons", stats.opaque_reasons}};
}

/// Runs --check on the written output; a failed or impossible check removes the output.
void check_output(const ir::Graph& original, const OptimizeOptions& options, PhaseTimer& timer,
                  nlohmann::json& report) {
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

void run_optimize(const OptimizeOptions& options) {
  auto log = logger("cli");
  ensure_distinct(options.input, options.output);
  PhaseTimer timer;
  onnx_io::ImportStats stats;
  timer.start();
  ir::Graph original = onnx_io::import_model(options.input, {}, &stats);
  timer.stop("import");
  log->info("read {}: {} nodes ({} opaque)", options.input, original.node_count(), stats.opaque_nodes);
  const std::vector<rules::Rule> rules = load_rules(options);
  const rewrite::Matcher matcher(rules);
  const std::unique_ptr<cost::CostModel> model = make_cost_model(options);
  search::OptimizerOptions optimizer = options.optimizer;
  optimizer.mode = search::search_mode_by_name(options.search_mode);
  timer.start();
  const ir::Graph folded = onnx_io::fold_weight_nodes(original);
  timer.stop("fold");
  log->info("{} weight-only nodes computed before the search", original.node_count() - folded.node_count());
  timer.start();
  const search::OptimizeResult optimized = search::optimize(folded, matcher, *model, optimizer);
  timer.stop("search");
  const search::SearchResult& result = optimized.search;
  log->info("{} substitutions, estimated {:.6g} ms -> {:.6g} ms on {} ({})", result.steps.size(),
            result.initial_cost.time_ms, result.best_cost.time_ms, options.device, search::to_string(result.stop));
  timer.start();
  onnx_io::export_model(result.best, options.output);
  timer.stop("export");
  nlohmann::json report = {{"input", options.input},          {"output", options.output},
                           {"import", import_json(stats)},    {"device", options.device},
                           {"nodes_before", original.node_count()},
                           {"search", search_json(result, rules.size())}};
  report["search"]["mode"] = options.search_mode;
  report["search"]["split"] = split_json(optimized.split, optimizer.split_threshold);
  if (options.check_samples > 0) check_output(original, options, timer, report);
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
  sub->add_option("--rules", options->rule_files, "Rule file to search with, or TASO's binary rules (.pb) (repeatable; default: the shipped set)");
  sub->add_option("--disable-rule", options->disabled_rules, "Leave out the rule of this name (repeatable)");
  sub->add_option("--device", options->device, "Device whose cost model ranks graphs: v100, a100, h100, cpu")
      ->capture_default_str();
  sub->add_option("--cost-cache", options->cost_cache, "Measured costs (a cost cache file) to rank graphs with");
  sub->add_option("--search", options->search_mode, "Search on each part: backtrack, sampling or exhaustive")
      ->capture_default_str()->check(CLI::IsMember({"backtrack", "sampling", "exhaustive"}));
  sub->add_option("--split-threshold", options->optimizer.split_threshold,
                  "Split the graph into parts of at most N nodes (MetaFlow); 0: search it whole")
      ->capture_default_str();
  sub->add_option("--part-budget", options->optimizer.part_budget,
                  "Graphs a part's search may expand before the part is split again (0: never)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--threads", options->optimizer.threads, "Parts searched at once (0: one per core)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--sample-size", options->optimizer.search.sample_size, "Sampling: Q, sequences kept per round")
      ->capture_default_str()->check(CLI::Range(2, 100000));
  sub->add_option("--exploration-depth", options->optimizer.search.exploration_depth,
                  "Sampling: eta, most successive cost-increasing steps")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  sub->add_option("--max-length", options->optimizer.search.max_length,
                  "Sampling: K, most substitutions from the input to a result")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--alpha", options->optimizer.search.alpha, "Keep candidates costing under alpha x the best")
      ->capture_default_str()->check(CLI::Range(1.0, 100.0));
  sub->add_option("--budget", options->optimizer.search.budget, "Most candidate graphs to expand")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--time-limit", options->optimizer.search.time_limit_s, "Search time limit in seconds")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  return {sub, [options] { run_optimize(*options); }};
}

}  // namespace graphsub::cmd
