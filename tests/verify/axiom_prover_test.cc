// The axiom path: true rules derived from the shipped axioms, wrong ones never.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rules/parser.h"
#include "rules/shipped_rules.h"
#include "verify/axiom_prover.h"
#include "verify/verifier.h"
#include "verify/wrong_rules.h"

namespace graphsub {
namespace {

const verify::AxiomSet& shipped_axioms() {
  static const verify::AxiomSet axioms = verify::prepare_axioms(rules::shipped_axioms(), {});
  return axioms;
}

/// The consistency check of the axioms written in `text` (rule syntax), within `timeout_ms`.
verify::ConsistencyResult consistency_of(const char* text, unsigned timeout_ms) {
  return verify::check_consistency(verify::prepare_axioms(rules::parse_rules(text, "axioms.rules"), {}), timeout_ms);
}

const rules::Rule& shipped_rule(const std::vector<rules::Rule>& rules, const std::string& name) {
  for (const rules::Rule& rule : rules) {
    if (rule.name == name) return rule;
  }
  FAIL("no shipped rule " << name);
  return rules.front();
}

}  // namespace

TEST_CASE("the axioms derive no wrong rule", "[verify]") {
  for (const rules::Rule& rule : rules::parse_rules(testing::kWrongRules, "wrong.rules")) {
    INFO(rule.name);
    const std::vector<verify::Instance> instances = verify::make_instances(rule, {});
    REQUIRE_FALSE(instances.empty());
    const verify::AxiomResult result = verify::prove_from_axioms(rule, instances, shipped_axioms(), 2000);
    INFO(result.detail);
    CHECK_FALSE(result.proved);
  }
}

TEST_CASE("the axioms derive shipped rules of every family, and verify_rules then says proved", "[verify]") {
  const std::vector<rules::Rule> shipped = rules::default_rules();
  std::vector<rules::Rule> chosen;
  for (const char* name : {"fuse-conv-relu", "merge-convs", "split-conv-of-concats", "associate-add-left",
                           "distribute-mul-over-add", "compose-transposes-rank3", "enlarge-conv-1x1-to-3x3",
                           "average-pool-to-depthwise-conv", "eliminate-mul-by-one", "push-relu-into-concat",
                           // An open fused activation (each of the four), a negative axis, 2 * g,
                           // an element type, and TASO's concat of a split.
                           "pull-transposes-out-of-matmul", "merge-matmuls", "concat-grouped-convs-of-one-input",
                           "eliminate-identity-cast", "eliminate-concat-of-split"}) {
    chosen.push_back(shipped_rule(shipped, name));
  }
  verify::VerifyOptions options;
  options.axioms = &shipped_axioms();
  options.axiom_timeout_ms = 10000;  // Generous: each is derived in milliseconds when alone.
  options.jobs = 2;
  for (const verify::RuleVerdict& verdict : verify::verify_rules(chosen, options)) {
    INFO(verdict.name << ": " << verdict.detail);
    CHECK(verdict.status == rules::ProofStatus::kProved);
  }
}

}  // namespace graphsub

namespace graphsub {

TEST_CASE("an axiom set that equates every two tensors is found contradictory, naming its axioms", "[verify]") {
  // Each alone is merely wrong; together they make x = x + y = y for every x and y.
  const char* contradictory = R"AXIOMS(
rule sum-is-left
  origin axiom
  source
    r = Add(x, y)
  target
  map r -> x
end
rule sum-is-right
  origin axiom
  source
    r = Add(x, y)
  target
  map r -> y
end
)AXIOMS";
  const verify::ConsistencyResult result = consistency_of(contradictory, 10000);
  INFO(result.detail);
  CHECK(result.verdict == verify::Consistency::kContradictory);
  CHECK(result.detail.find("sum-is-left") != std::string::npos);
  CHECK(result.detail.find("sum-is-right") != std::string::npos);
  const char* fine = R"AXIOMS(
rule add-commutative
  origin axiom
  source
    r = Add(x, y)
  target
    r2 = Add(y, x)
  map r -> r2
end
)AXIOMS";
  CHECK(consistency_of(fine, 10000).verdict == verify::Consistency::kConsistent);
}

TEST_CASE("the dims of reshapes no valid graph has do not make an axiom set contradictory", "[verify]") {
  // Reshape functions of one and of two sizes: the dim facts of the second once said that a
  // -1 times the other size is the input's element count for every input, also a 5-element
  // vector reshaped to [-1, 2] (dim * 2 == 5: no integer), and so contradicted each other
  // wherever both functions took part (found by --check-axioms in the twenty-third session).
  const char* reshapes = R"AXIOMS(
rule reshape-of-flat
  origin axiom
  source
    a = Reshape(x) [shape = [-1]]
    r = Reshape(a) [shape = [-1, 2]]
  target
    r2 = Reshape(x) [shape = [-1, 2]]
  map r -> r2
end
)AXIOMS";
  const verify::ConsistencyResult result = consistency_of(reshapes, 5000);
  INFO(result.detail);
  CHECK(result.verdict != verify::Consistency::kContradictory);
}

}  // namespace graphsub
