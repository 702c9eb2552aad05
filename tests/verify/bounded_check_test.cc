// The bounded check refutes rules that look right and are not, and lets true rules hold.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rules/parser.h"
#include "verify/bounded_check.h"
#include "verify/verifier.h"
#include "verify/wrong_rules.h"

namespace graphsub {
namespace {

/// True rules: the bounded check must not refute them.
const char* const kTrueRules = R"RULES(
# a - b -> a + (-b).
rule sub-as-add-neg
  source
    z = Sub(a, b)
  target
    n = Neg(b)
    z2 = Add(a, n)
  map z -> z2
end

# relu(relu(x)) -> relu(x): true, but only relu's idempotence shows it, which no term equality does.
rule relu-idempotent
  source
    y = Relu(x)
    z = Relu(y)
  target
    z2 = Relu(x)
  map z -> z2
end
)RULES";

std::vector<rules::Rule> parse(const char* text) { return rules::parse_rules(text, "test.rules"); }

}  // namespace

TEST_CASE("rules that look right and are not are refuted with a counterexample", "[verify]") {
  for (const rules::Rule& rule : parse(testing::kWrongRules)) {
    INFO(rule.name);
    const verify::BoundedResult result = verify::check_bounded(rule, {});
    INFO(result.detail);
    CHECK(result.verdict == verify::BoundedVerdict::kRefuted);
    CHECK(result.detail.rfind("on ", 0) == 0);  // Names the instance, then where it differs.
  }
}

TEST_CASE("true rules hold, or stay unknown where only a function's properties show them", "[verify]") {
  const std::vector<rules::Rule> rules = parse(kTrueRules);
  const verify::BoundedResult sub = verify::check_bounded(rules[0], {});
  INFO(sub.detail);
  CHECK(sub.verdict == verify::BoundedVerdict::kHolds);
  CHECK(sub.instances > 0);
  const verify::BoundedResult relu = verify::check_bounded(rules[1], {});
  INFO(relu.detail);
  CHECK(relu.verdict == verify::BoundedVerdict::kUnknown);
  CHECK(relu.detail.find("uninterpreted") != std::string::npos);
}

TEST_CASE("verify_rules gives a verdict per rule in order, on several threads", "[verify]") {
  std::vector<rules::Rule> rules = parse(testing::kWrongRules);
  for (rules::Rule& rule : parse(kTrueRules)) rules.push_back(rule);
  verify::VerifyOptions options;
  options.jobs = 2;
  const std::vector<verify::RuleVerdict> verdicts = verify::verify_rules(rules, options);
  REQUIRE(verdicts.size() == rules.size());
  for (std::size_t i = 0; i < rules.size(); ++i) {
    INFO(verdicts[i].detail);
    CHECK(verdicts[i].name == rules[i].name);
    CHECK(verdicts[i].file == "test.rules");
    CHECK(verdicts[i].status != rules::ProofStatus::kProved);
  }
  CHECK(verdicts[0].status == rules::ProofStatus::kRefuted);
  CHECK(verdicts.back().status == rules::ProofStatus::kUnknown);
}

}  // namespace graphsub
