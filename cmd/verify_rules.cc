// `graphsub verify-rules`: check substitution rules with Z3 and say, per rule, what was shown.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/report_file.h"
#include "ir/error.h"
#include "pipeline/pipeline.h"
#include "verify/verifier.h"

namespace graphsub::cmd {
namespace {

/// Options of `verify-rules`.
struct VerifyRulesOptions {
  std::vector<std::string> files;  ///< Empty: the shipped rules.
  double timeout_s = 10;
  int jobs = 0;                    ///< 0: one per hardware thread.
  int instances = 6;
  std::string json;
};

/// The rule files' rules (text or TASO's .pb), or the shipped set.
std::vector<rules::Rule> load(const std::vector<std::string>& files) {
  pipeline::OptimizeRequest request;
  request.rule_files = files;
  return pipeline::load_rules(request);
}

/// Prints one line per rule, then the counts per status.
void print_table(const std::vector<verify::RuleVerdict>& verdicts) {
  std::map<std::string, int> counts;
  double seconds = 0;
  std::printf("%-8s %7s  %-38s %s\n", "status", "seconds", "rule", "detail");
  for (const verify::RuleVerdict& verdict : verdicts) {
    const char* status = rules::to_string(verdict.status);
    counts[status] += 1;
    seconds += verdict.seconds;
    std::printf("%-8s %7.2f  %-38s %s\n", status, verdict.seconds, verdict.name.c_str(), verdict.detail.c_str());
  }
  std::printf("%zu rules: %d proved, %d refuted, %d unknown (%.1f s of checks)\n", verdicts.size(),
              counts["proved"], counts["refuted"], counts["unknown"], seconds);
}

nlohmann::json verdicts_json(const std::vector<verify::RuleVerdict>& verdicts) {
  nlohmann::json rules = nlohmann::json::array();
  for (const verify::RuleVerdict& verdict : verdicts) {
    rules.push_back({{"file", verdict.file},
                     {"name", verdict.name},
                     {"status", rules::to_string(verdict.status)},
                     {"seconds", verdict.seconds},
                     {"detail", verdict.detail}});
  }
  return {{"rules", rules}};
}

/// Verifies, prints, writes the JSON; a refuted rule makes the command fail.
void run_verify_rules(const VerifyRulesOptions& options) {
  const std::vector<rules::Rule> rules = load(options.files);
  verify::VerifyOptions verify;
  verify.jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  verify.bounded.timeout_ms = static_cast<unsigned>(options.timeout_s * 1000);
  verify.bounded.instances.count = options.instances;
  const std::vector<verify::RuleVerdict> verdicts = verify::verify_rules(rules, verify);
  print_table(verdicts);
  if (!options.json.empty()) write_report(options.json, verdicts_json(verdicts));
  const auto refuted = std::count_if(verdicts.begin(), verdicts.end(), [](const verify::RuleVerdict& verdict) {
    return verdict.status == rules::ProofStatus::kRefuted;
  });
  if (refuted > 0) throw Error(std::to_string(refuted) + " rule(s) refuted");
}

}  // namespace

Command setup_verify_rules(CLI::App& app) {
  auto options = std::make_shared<VerifyRulesOptions>();
  CLI::App* sub = app.add_subcommand("verify-rules", "Check substitution rules with the Z3 prover");
  sub->add_option("files", options->files, "Rule files, or TASO's binary rules (.pb) (default: the shipped set)")
      ->check(CLI::ExistingFile);
  sub->add_option("--timeout", options->timeout_s, "Seconds per Z3 query")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--jobs", options->jobs, "Rules checked at once (default: one per core)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--instances", options->instances, "Small instances each rule is checked on")
      ->check(CLI::Range(1, 64))->capture_default_str();
  sub->add_option("--json", options->json, "Write the verdicts as JSON to FILE")->type_name("FILE");
  return {sub, [options] { run_verify_rules(*options); }};
}

}  // namespace graphsub::cmd
