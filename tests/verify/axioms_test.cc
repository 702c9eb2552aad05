// The shipped operator axioms (rules/axioms.rules) parse as axioms and hold on small instances.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rules/parser.h"
#include "rules/printer.h"
#include "rules/shipped_rules.h"
#include "verify/proof_records.h"
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

TEST_CASE("every shipped rule records its proof status under the current axioms", "[verify]") {
  // Edit rules/axioms.rules, and this fails until `graphsub verify-rules rules/<file>.rules --write`
  // has recorded every rule file's proofs again under the new axioms.
  const std::string hash = verify::axioms_hash(rules::shipped_axiom_file().text);
  CHECK(rules::shipped_axioms_hash() == hash);  // The one `optimize` compares with, made by CMake.
  int proved = 0;
  for (const rules::Rule& rule : rules::default_rules()) {
    INFO(rule.file << ": " << rule.name);
    CHECK(rule.proof_axioms == hash);
    CHECK(rule.proof != rules::ProofStatus::kRefuted);
    proved += rule.proof == rules::ProofStatus::kProved;
    CHECK(rules::proved_under_shipped_axioms(rule) == (rule.proof == rules::ProofStatus::kProved));
  }
  CHECK(proved > 0);
}

TEST_CASE("proof lines are rewritten in place, comments kept", "[verify]") {
  const std::string text = "# about the file\n\n# a rule\nrule a\n  origin hand\n  source\n    y = Relu(x)\n"
                           "  target\n    y2 = Relu(x)\n  map y -> y2\nend\n\nrule b\n  proof unknown \"sha256:00\"\n"
                           "  source\n    y = Relu(x)\n  target\n    y2 = Relu(x)\n  map y -> y2\nend\n";
  const std::string written = verify::with_proof_lines(
      text, {{"a", rules::ProofStatus::kProved}, {"b", rules::ProofStatus::kProved}}, "sha256:ab");
  CHECK(written.rfind("# about the file\n\n# a rule\nrule a\n  origin hand\n  proof proved \"sha256:ab\"\n", 0) == 0);
  const std::vector<rules::Rule> parsed = rules::parse_rules(written, "x.rules");
  REQUIRE(parsed.size() == 2);
  for (const rules::Rule& rule : parsed) {
    CHECK(rule.proof == rules::ProofStatus::kProved);
    CHECK(rule.proof_axioms == "sha256:ab");
  }
  CHECK(rules::parse_rules(rules::print_rules(parsed), "x.rules") == parsed);
  CHECK(verify::axioms_hash("abc") ==
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
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
