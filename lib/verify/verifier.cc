// Verifying rules on a pool of threads, one Z3 context per rule.
#include "verify/verifier.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <string>

#include "ir/parallel.h"

namespace graphsub::verify {
namespace {

/// The status and detail of both paths together.
RuleVerdict combine(const BoundedResult& bounded, const std::optional<AxiomResult>& derived) {
  RuleVerdict verdict;
  verdict.bounded = bounded;
  const std::string axioms = !derived ? "no axioms given" : "axioms: " + derived->detail;
  const bool proved = derived && derived->proved;
  if (bounded.verdict == BoundedVerdict::kRefuted) {
    verdict.status = rules::ProofStatus::kRefuted;
    verdict.detail = bounded.detail;
    if (proved) verdict.detail += "; yet the axioms derive it: an axiom or an operator's semantics is wrong";
  } else if (bounded.verdict == BoundedVerdict::kHolds) {
    verdict.status = proved ? rules::ProofStatus::kProved : rules::ProofStatus::kUnknown;
    verdict.detail = axioms + "; bounded check: " + bounded.detail;
  } else {
    verdict.detail = "bounded check: " + bounded.detail + "; " + axioms;
  }
  return verdict;
}

/// Both paths on one rule.
RuleVerdict check_rule(const rules::Rule& rule, const VerifyOptions& options) {
  std::string why_none;
  const std::vector<Instance> instances = make_instances(rule, options.bounded.instances, &why_none);
  const BoundedResult bounded = check_bounded(instances, why_none, options.bounded);
  std::optional<AxiomResult> derived;
  // A refuted rule goes to the prover too: the axioms deriving a rule that a counterexample
  // refutes is a bug in an axiom or an operator's semantics, and is reported as one.
  if (options.axioms && !instances.empty()) {
    derived = prove_from_axioms(rule, instances, *options.axioms, options.axiom_timeout_ms, options.axiom_rlimit);
  }
  return combine(bounded, derived);
}

/// Verifies one rule, turning any failure into an unknown verdict that names it.
RuleVerdict verify_one(const rules::Rule& rule, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RuleVerdict verdict;
  try {
    verdict = check_rule(rule, options);
  } catch (const std::exception& e) {
    verdict.detail = std::string("verifier error: ") + e.what();
  }
  verdict.file = rule.file;
  verdict.name = rule.name;
  verdict.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return verdict;
}

}  // namespace

std::vector<RuleVerdict> verify_rules(const std::vector<rules::Rule>& rules, const VerifyOptions& options) {
  std::vector<RuleVerdict> verdicts(rules.size());
  run_parallel(rules.size(), options.jobs, [&](std::size_t i) { verdicts[i] = verify_one(rules[i], options); });
  return verdicts;
}

}  // namespace graphsub::verify
