// Verifying a set of rules: every proof path run on each rule, in parallel, with a verdict each.
#pragma once

#include <string>
#include <vector>

#include "rules/rule.h"
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
};

/// Verifies every rule, in the order given. A rule is refuted when the bounded check finds a
/// counterexample the reference kernels confirm; until the axiom path exists nothing is proved,
/// so a rule that holds on every instance is unknown with the bounded result as its detail.
std::vector<RuleVerdict> verify_rules(const std::vector<rules::Rule>& rules, const VerifyOptions& options);

}  // namespace graphsub::verify
