// `graphsub verify-rules`: check substitution rules with Z3 and say, per rule, what was shown.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmd/commands.h"
#include "cmd/options.h"
#include "cmd/report_file.h"
#include "ir/error.h"
#include "pipeline/pipeline.h"
#include "rules/parser.h"
#include "rules/shipped_rules.h"
#include "verify/proof_records.h"
#include "verify/verifier.h"

namespace graphsub::cmd {
namespace {

/// Options of `verify-rules`.
struct VerifyRulesOptions {
  std::vector<std::string> files;  ///< Empty: the shipped rules.
  double timeout_s = 10;
  double axiom_timeout_s = 30;
  uint64_t axiom_effort = verify::kAxiomRlimit;
  int jobs = 0;                    ///< 0: one per hardware thread.
  int instances = 6;
  std::string json;
  bool check_axioms = false;
  bool write = false;
  bool bounded_only = false;       ///< Skip the axiom path: counterexamples only, nothing proved.
  std::string shard;               ///< "I/K": every K-th rule from the I-th; empty: all.
  std::string axioms;              ///< Empty: the shipped rules/axioms.rules.
};

/// What the table's status column shows: a rule's proof status, or the bounded check's verdict
/// alone (an axiom's whole answer, or every rule's under --bounded-only).
enum class View { kRules, kAxioms, kBounded };

/// Every `shard.count`-th rule from the `shard.index`-th: balanced slices whose verdicts together
/// cover each rule once.
std::vector<rules::Rule> slice(std::vector<rules::Rule> rules, const Shard& shard) {
  if (shard.count == 1) return rules;
  std::vector<rules::Rule> kept;
  for (std::size_t i = static_cast<std::size_t>(shard.index); i < rules.size(); i += static_cast<std::size_t>(shard.count)) {
    kept.push_back(std::move(rules[i]));
  }
  return kept;
}

/// The rule files' rules (text or TASO's .pb), or the shipped set.
std::vector<rules::Rule> load(const std::vector<std::string>& files) {
  pipeline::OptimizeRequest request;
  request.rule_files = files;
  return pipeline::load_rules(request);
}

/// The axioms of `path`, or the shipped ones.
std::vector<rules::Rule> load_axioms(const std::string& path) {
  return path.empty() ? rules::shipped_axioms() : rules::read_rules_file(path);
}

/// The text of the axioms file (`path`, or the shipped one), which their hash is of.
std::string axioms_text(const std::string& path) {
  if (path.empty()) return rules::shipped_axiom_file().text;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Records each rule's status and the axioms' hash in the `proof` line of its file.
void write_proofs(const std::vector<verify::RuleVerdict>& verdicts, const std::string& hash) {
  std::map<std::string, std::map<std::string, rules::ProofStatus>> by_file;
  for (const verify::RuleVerdict& verdict : verdicts) by_file[verdict.file][verdict.name] = verdict.status;
  for (const auto& [file, statuses] : by_file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw Error("cannot read rule file '" + file + "' to record proofs in");
    write_text_file(file, verify::with_proof_lines(text.str(), statuses, hash), "rule file");
    std::printf("recorded %zu proof line(s) in %s\n", statuses.size(), file.c_str());
  }
}

/// The status column: the proof status of a rule, or the bounded check's verdict.
std::string status_of(const verify::RuleVerdict& verdict, View view) {
  return view == View::kRules ? rules::to_string(verdict.status) : verify::to_string(verdict.bounded.verdict);
}

/// The detail column: what the bounded check found, where that is the whole answer.
const std::string& detail_of(const verify::RuleVerdict& verdict, View view) {
  return view == View::kRules ? verdict.detail : verdict.bounded.detail;
}

/// Prints one line per rule, then the counts per status.
void print_table(const std::vector<verify::RuleVerdict>& verdicts, View view) {
  std::map<std::string, int> counts;
  double seconds = 0;
  std::printf("%-8s %7s  %-38s %s\n", "status", "seconds", view == View::kAxioms ? "axiom" : "rule", "detail");
  for (const verify::RuleVerdict& verdict : verdicts) {
    const std::string status = status_of(verdict, view);
    counts[status] += 1;
    seconds += verdict.seconds;
    std::printf("%-8s %7.2f  %-38s %s\n", status.c_str(), verdict.seconds, verdict.name.c_str(),
                detail_of(verdict, view).c_str());
  }
  if (view == View::kAxioms) {
    std::printf("%zu axioms: %d hold, %d refuted, %d unknown (%.1f s of checks)\n", verdicts.size(),
                counts["holds"], counts["refuted"], counts["unknown"], seconds);
  } else if (view == View::kBounded) {
    std::printf("%zu rules, bounded check only (nothing proved): %d hold on every instance, %d refuted, %d unknown "
                "(%.1f s of checks)\n",
                verdicts.size(), counts["holds"], counts["refuted"], counts["unknown"], seconds);
  } else {
    std::printf("%zu rules: %d proved, %d refuted, %d unknown (%.1f s of checks)\n", verdicts.size(),
                counts["proved"], counts["refuted"], counts["unknown"], seconds);
  }
}

nlohmann::json verdicts_json(const std::vector<verify::RuleVerdict>& verdicts, View view) {
  nlohmann::json entries = nlohmann::json::array();
  for (const verify::RuleVerdict& verdict : verdicts) {
    entries.push_back({{"file", verdict.file},
                       {"name", verdict.name},
                       {"status", status_of(verdict, view)},
                       {"seconds", verdict.seconds},
                       {"detail", detail_of(verdict, view)}});
  }
  return {{view == View::kAxioms ? "axioms" : "rules", entries}};
}

/// Verifies, prints, writes the JSON; a refuted rule, or an axiom that does not hold, makes the
/// command fail.
void run_verify_rules(const VerifyRulesOptions& options) {
  const bool axioms = options.check_axioms;
  const View view = axioms ? View::kAxioms : options.bounded_only ? View::kBounded : View::kRules;
  const Shard shard = options.shard.empty() ? Shard{} : parse_shard(options.shard);
  if (options.write && (options.bounded_only || shard.count > 1)) {
    throw Error("--write records proofs of every rule of a file: it takes neither --bounded-only nor --shard");
  }
  const std::vector<rules::Rule> rules = slice(axioms ? load_axioms(options.axioms) : load(options.files), shard);
  verify::VerifyOptions verify;
  verify.jobs = options.jobs > 0 ? options.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  verify.bounded.timeout_ms = static_cast<unsigned>(options.timeout_s * 1000);
  verify.axiom_timeout_ms = static_cast<unsigned>(options.axiom_timeout_s * 1000);
  verify.axiom_rlimit = options.axiom_effort;
  verify.bounded.instances.count = options.instances;
  if (options.write && (axioms || options.files.empty())) {
    throw Error("--write records proofs in the rule files named on the command line: name them");
  }
  for (const std::string& file : options.files) {
    if (options.write && std::filesystem::path(file).extension() == ".pb") {
      throw Error("--write cannot record proofs in TASO's binary file '" + file + "'");
    }
  }
  const bool has_axioms = std::any_of(rules.begin(), rules.end(), [](const rules::Rule& rule) {
    return rule.origin == rules::Origin::kAxiom;
  });
  if (options.write && has_axioms) throw Error("--write does not record proofs in an axioms file");
  const std::string hash = verify::axioms_hash(axioms_text(options.axioms));
  verify::AxiomSet axiom_set;
  if (view == View::kRules) {
    axiom_set = verify::prepare_axioms(load_axioms(options.axioms), verify.bounded.instances);
    verify.axioms = &axiom_set;
  }
  const std::vector<verify::RuleVerdict> verdicts = verify::verify_rules(rules, verify);
  print_table(verdicts, view);
  std::optional<verify::ConsistencyResult> consistency;
  if (axioms) {
    // The set as a whole: each axiom holding on its instances does not rule out a contradiction.
    consistency = verify::check_consistency(verify::prepare_axioms(rules, verify.bounded.instances),
                                            static_cast<unsigned>(options.timeout_s * 1000));
    std::printf("axiom set: %s\n", consistency->detail.c_str());
  }
  if (!options.json.empty()) {
    nlohmann::json json = verdicts_json(verdicts, view);
    if (view == View::kBounded) json["check"] = "bounded only: the axiom path was not run, no rule is proved";
    if (shard.count > 1) json["shard"] = {{"index", shard.index}, {"count", shard.count}};
    if (consistency) {
      json["consistency"] = {{"status", consistency->verdict == verify::Consistency::kConsistent      ? "consistent"
                                        : consistency->verdict == verify::Consistency::kContradictory ? "contradictory"
                                                                                                      : "unknown"},
                             {"detail", consistency->detail}};
    }
    json["axioms"] = {{"file", options.axioms.empty() ? rules::shipped_axiom_file().path : options.axioms},
                      {"sha256", hash.substr(7)},
                      {"count", axioms ? rules.size() : axiom_set.axioms.size()}};
    write_report(options.json, json);
  }
  if (options.write) write_proofs(verdicts, hash);
  const auto failed = std::count_if(verdicts.begin(), verdicts.end(), [axioms](const verify::RuleVerdict& verdict) {
    return axioms ? verdict.bounded.verdict != verify::BoundedVerdict::kHolds
                  : verdict.status == rules::ProofStatus::kRefuted;
  });
  if (failed > 0) throw Error(std::to_string(failed) + (axioms ? " axiom(s) do not hold" : " rule(s) refuted"));
  if (consistency && consistency->verdict == verify::Consistency::kContradictory) {
    throw Error("the axioms contradict each other");
  }
}

}  // namespace

Command setup_verify_rules(CLI::App& app) {
  auto options = std::make_shared<VerifyRulesOptions>();
  CLI::App* sub = app.add_subcommand("verify-rules", "Check substitution rules with the Z3 prover");
  sub->add_option("files", options->files, "Rule files, or TASO's binary rules (.pb) (default: the shipped set)")
      ->check(CLI::ExistingFile);
  sub->add_option("--timeout", options->timeout_s, "Seconds per Z3 query of the bounded check")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--axiom-effort", options->axiom_effort,
                  "Z3 resource units per attempt (four seeds per query) at deriving a rule from the axioms (deterministic bound)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--axiom-timeout", options->axiom_timeout_s,
                  "Seconds per query deriving a rule from the axioms, a safety net behind --axiom-effort")
      ->check(CLI::PositiveNumber)->capture_default_str();
  sub->add_option("--jobs", options->jobs, "Rules checked at once (default: one per core)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--instances", options->instances, "Small instances each rule is checked on")
      ->check(CLI::Range(1, 64))->capture_default_str();
  sub->add_option("--json", options->json, "Write the verdicts as JSON to FILE")->type_name("FILE");
  sub->add_flag("--write", options->write,
                "Record each rule's status and the axioms' sha256 in its file's proof line");
  sub->add_flag("--check-axioms", options->check_axioms,
                "Check the operator axioms on small instances instead of rules");
  sub->add_flag("--bounded-only", options->bounded_only,
                "Only look for counterexamples on small instances (fast; finds refuted rules, proves none)")
      ->excludes("--check-axioms");
  sub->add_option("--shard", options->shard,
                  "Check every K-th rule from the I-th (I/K, e.g. 0/4): slices for several machines")
      ->type_name("I/K");
  sub->add_option("--axioms", options->axioms, "Axioms file to prove from, or to check (default: rules/axioms.rules)")
      ->check(CLI::ExistingFile)->type_name("FILE");
  return {sub, [options] { run_verify_rules(*options); }};
}

}  // namespace graphsub::cmd
