// Verifying a set of rules: every proof path run on each rule, in parallel, with a verdict each.
#pragma once

#include <string>
#include <vector>

#include "rules/rule.h"
#include "verify/axiom_prover.h"
#include "verify/bounded_check.h"

namespace graphsub::verify {

/// What verify-rules concluded about one rule.
struct RuleVerdict {
  std::string file;
  std::string name;
  rules::ProofStatus status = rules::ProofStatus::kUnknown;  ///< kProved, kRefuted or kUnknown.
  BoundedResult bounded;  ///< What the bounded check alone found (for axioms, the whole answer).
  double seconds = 0;   ///< Wall time spent on this rule.
  std::string detail;   ///< The reason, or the counterexample, in words.
};

/// How to verify.
struct VerifyOptions {
  BoundedOptions bounded;
  int jobs = 1;  ///< Rules verified at once, each on its own thread and Z3 context.
  /// The axioms rules are derived from; null: the axiom path is not run (axioms themselves are
  /// checked that way, by the bounded check alone).
  const AxiomSet* axioms = nullptr;
  /// Per Z3 query of the axiom path. Derivations E-matching finds take milliseconds; a rule the
  /// axioms do not derive makes Z3 instantiate until this runs out.
  unsigned axiom_timeout_ms = 30000;  ///< A safety net: axiom_rlimit bounds each query first.
  uint64_t axiom_rlimit = kAxiomRlimit;
};

/// Verifies every rule, in the order given, by both paths. A rule is proved when the axioms
/// derive it at the layout of each instance and the bounded check finds it equal on every
/// instance; refuted when the bounded check finds a counterexample the reference kernels confirm
/// (the detail says so if the axioms derive it too: an axiom or an op's meaning is then wrong);
/// unknown otherwise, with what each path found.
std::vector<RuleVerdict> verify_rules(const std::vector<rules::Rule>& rules, const VerifyOptions& options);

}  // namespace graphsub::verify
