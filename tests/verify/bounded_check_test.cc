// The bounded check refutes rules that look right and are not, and lets true rules hold.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "rules/parser.h"
#include "verify/bounded_check.h"
#include "verify/verifier.h"

namespace graphsub {
namespace {

/// Rules that look right and are not (issue 14's list), each with the mistake in its comment.
const char* const kWrongRules = R"RULES(
# relu(a + b) -> relu(a) + relu(b): relu is not additive.
rule relu-over-add
  source
    s = Add(a, b)
    z = Relu(s)
  target
    ra = Relu(a)
    rb = Relu(b)
    z2 = Add(ra, rb)
  map z -> z2
end

# (a b)^T -> a^T b^T: the factors must swap.
rule transpose-of-product-unswapped
  source
    p = MatMul(a, b)
    z = Transpose(p) [perm = [1, 0]]
  target
    ta = Transpose(a) [perm = [1, 0]]
    tb = Transpose(b) [perm = [1, 0]]
    z2 = MatMul(ta, tb)
  map z -> z2
end

# concat(a, b) -> concat(b, a): the order of a concatenation matters.
rule concat-swapped
  source
    z = Concat(a, b) [axis = ?ax]
  target
    z2 = Concat(b, a) [axis = ?ax]
  map z -> z2
end

# relu(conv(x, w1)) + relu(conv(x, w2)) -> relu(conv(x, w1 + w2)): only the linear parts add.
rule merge-relu-convs-by-sum
  source
    y1 = Conv(x, w1) [activation = "relu", kernel_shape = ?k, strides = ?s, pads = ?p, group = 1]
    y2 = Conv(x, w2) [activation = "relu", kernel_shape = ?k, strides = ?s, pads = ?p, group = 1]
    z = Add(y1, y2)
  where weight(w1)
  where weight(w2)
  target
    w = Add(w1, w2)
    z2 = Conv(x, w) [@y1]
  map z -> z2
end

# transpose(transpose(x, [1,2,0]), [1,2,0]) -> transpose(x, [1,2,0]): composes to [2,0,1].
rule compose-permutation-wrong
  source
    y = Transpose(x) [perm = [1, 2, 0]]
    z = Transpose(y) [perm = [1, 2, 0]]
  target
    z2 = Transpose(x) [perm = [1, 2, 0]]
  map z -> z2
end

# a - b -> b - a: subtraction does not commute.
rule sub-commuted
  source
    z = Sub(a, b)
  target
    z2 = Sub(b, a)
  map z -> z2
end

# conv[1x1, pads 0](x, w) -> conv[3x3, pads [0,0,2,2]](x, enlarge(w)): the right size, shifted.
rule enlarge-wrong-padding
  source
    y = Conv(x, w) [kernel_shape = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], strides = [1, 1]]
  where weight(w)
  target
    w3 = Enlarge(w) [kernel_shape = [3, 3]]
    y2 = Conv(x, w3) [@y, kernel_shape = [3, 3], pads = [0, 0, 2, 2]]
  map y -> y2
end
)RULES";

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
  for (const rules::Rule& rule : parse(kWrongRules)) {
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
  std::vector<rules::Rule> rules = parse(kWrongRules);
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
