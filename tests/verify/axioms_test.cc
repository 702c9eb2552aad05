// The shipped operator axioms (rules/axioms.rules) parse as axioms and hold on small instances.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rules/parser.h"
#include "rules/printer.h"
#include "rules/shipped_rules.h"
#include "verify/verifier.h"

namespace graphsub {

TEST_CASE("every shipped axiom is an axiom and holds on its small instances", "[verify]") {
  const std::vector<rules::Rule> axioms = rules::shipped_axioms();
  REQUIRE(axioms.size() >= 37);
  CHECK(rules::parse_rules(rules::print_rules(axioms), "axioms.rules") == axioms);
  verify::VerifyOptions options;
  options.jobs = 2;
  for (const verify::RuleVerdict& verdict : verify::verify_rules(axioms, options)) {
    INFO(verdict.name << ": " << verdict.bounded.detail);
    CHECK(verdict.file == "rules/axioms.rules");
    CHECK(verdict.bounded.verdict == verify::BoundedVerdict::kHolds);
  }
  for (const rules::Rule& axiom : axioms) CHECK(axiom.origin == rules::Origin::kAxiom);
}

TEST_CASE("a wrong axiom does not hold", "[verify]") {
  // Conv is not linear in its weights once a relu is fused into it.
  const std::vector<rules::Rule> wrong = rules::parse_rules(R"AXIOM(
rule conv-relu-linear-in-weights
  origin axiom
  source
    s = Add(y, z)
    r = Conv(x, s) [activation = "relu"]
  where shape(y) == shape(z)
  target
    a = Conv(x, y) [@r]
    b = Conv(x, z) [@r]
    r2 = Add(a, b)
  map r -> r2
end
)AXIOM", "wrong.rules");
  const std::vector<verify::RuleVerdict> verdicts = verify::verify_rules(wrong, {});
  REQUIRE(verdicts.size() == 1);
  INFO(verdicts[0].bounded.detail);
  CHECK(verdicts[0].bounded.verdict == verify::BoundedVerdict::kRefuted);
}

}  // namespace graphsub
