// Every shipped rule passes the bounded check: a rule file edited wrong fails here.
#include <catch2/catch.hpp>

#include <vector>

#include "rules/shipped_rules.h"
#include "verify/verifier.h"

namespace graphsub {

// The axiom path is left out here (see axiom_prover_test.cc): its verdicts depend on how far
// E-matching gets within a timeout, which a loaded machine shortens.
TEST_CASE("every shipped rule holds on its small instances and none is refuted", "[verify]") {
  const std::vector<rules::Rule> rules = rules::default_rules();
  REQUIRE(rules.size() >= 120);
  verify::VerifyOptions options;
  options.jobs = 2;
  const std::vector<verify::RuleVerdict> verdicts = verify::verify_rules(rules, options);
  for (const verify::RuleVerdict& verdict : verdicts) {
    INFO(verdict.file << ": " << verdict.name << ": " << verdict.detail);
    CHECK(verdict.status != rules::ProofStatus::kRefuted);
    CHECK(verdict.bounded.verdict == verify::BoundedVerdict::kHolds);
  }
}

}  // namespace graphsub
