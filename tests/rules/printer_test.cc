// Tests of print_rule: the canonical layout, and parse(print(r)) == r for every rule form.
#include <catch2/catch.hpp>

#include <string>

#include "rules/parser.h"
#include "rules/printer.h"

namespace graphsub {
namespace {

using rules::Expr;
using rules::parse_rules;
using rules::print_rules;
using rules::Rule;

const char* const kCanonical = R"(# Fuse a ReLU into the convolution that feeds it.
#   relu(conv(x, w)) → conv[activation=relu](x, w)
rule fuse-conv-relu
  origin hand
  proof unverified
  source
    y = Conv(x, w) [activation = "none"]
    z = Relu(y)
  target
    z2 = Conv(x, w) [@y, activation = "relu"]
  map z -> z2
end

rule merge-matmuls
  origin generated
  proof proved
  source
    a = MatMul(x, w1)
    b = MatMul(x, w2)
    c = Conv(x, w1) [strides = ?s, kernel_shape = ?k, pads = ?k / 2 ++ ?k / 2]
  where shape(w1)[0] == shape(w2)[0]
  where weight(w1)
  where dtype(x) == 1
  where -rank(x) + 2 * (3 - 1) < -(1) / (2 + ?s[0])
  target
    const scale = [1.5, -2, 0.029999999999999999, 1e+20, -0.0, "text \"quoted\""]
    w = Concat(w1, w2) [axis = 1]
    m = MatMul(x, w)
    a2, b2 = Split(m) [axis = -1, split = [shape(w1)[1], shape(w2)[-1]]]
    c2 = Conv(x, w1) [@c, strides = ?s * 2 - (1 + rank(x)), pads = (-1)[0] ++ ?k - ?k - (?k - ?k)]
  map a -> a2, b -> b2, c -> c2
end
)";

TEST_CASE("canonical text prints back unchanged", "[rules]") {
  const std::vector<Rule> rules = parse_rules(kCanonical, "c.rules");
  CHECK(print_rules(rules) == kCanonical);
  CHECK(parse_rules(print_rules(rules), "again.rules") == rules);
}

TEST_CASE("rules printed on several threads give the same text", "[rules]") {
  const std::vector<Rule> two = parse_rules(kCanonical, "c.rules");
  std::vector<Rule> rules;
  for (int copy = 0; copy < 4; ++copy) rules.insert(rules.end(), two.begin(), two.end());
  CHECK(print_rules(rules, 3) == print_rules(rules));
  CHECK(print_rules({}, 2).empty());
}

TEST_CASE("a rule written loosely prints in canonical layout", "[rules]") {
  const std::vector<Rule> rules = parse_rules(
      "#no space\nrule r\n source\n  y=Relu( x )  # why\n target\n  z=Relu(x)[ ]\n map y->z\nend\n",
      "l.rules");
  CHECK(print_rules(rules) ==
        "# no space\nrule r\n  origin hand\n  proof unverified\n  source\n    y = Relu(x)\n  target\n"
        "    z = Relu(x)\n  map y -> z\nend\n");
}

TEST_CASE("expressions print with the parentheses they need and no more", "[rules]") {
  const Expr a = Expr::variable("a");
  const Expr b = Expr::variable("b");
  const Expr c = Expr::variable("c");
  CHECK(to_string(Expr::binary("-", a, Expr::binary("-", b, c))) == "?a - (?b - ?c)");
  CHECK(to_string(Expr::binary("-", Expr::binary("-", a, b), c)) == "?a - ?b - ?c");
  CHECK(to_string(Expr::binary("*", Expr::binary("+", a, b), c)) == "(?a + ?b) * ?c");
  CHECK(to_string(Expr::negate(Expr::integer(1))) == "-(1)");
  CHECK(to_string(Expr::integer(-1)) == "-1");
  CHECK(to_string(Expr::floating(2)) == "2.0");
  CHECK(to_string(Expr::floating(0.1)) == "0.10000000000000001");
  CHECK(to_string(Expr::index(Expr::integer(-1), Expr::integer(0))) == "(-1)[0]");
  CHECK(to_string(Expr::binary("==", Expr::binary("<", a, b), c)) == "(?a < ?b) == ?c");
}

TEST_CASE("every expression form survives print and parse", "[rules]") {
  const Expr a = Expr::variable("a");
  const std::vector<Expr> forms = {
      Expr::floating(1e-300),
      Expr::floating(-2.5),
      Expr::floating(123456789.0),
      Expr::integer(0),
      Expr::negate(Expr::negate(a)),
      Expr::negate(Expr::floating(1.5)),
      Expr::list({}),
      Expr::index(Expr::negate(Expr::integer(3)), Expr::integer(0)),
      Expr::negate(Expr::index(Expr::integer(3), Expr::integer(0))),
      Expr::binary("++", Expr::list({a}), Expr::binary("/", a, Expr::integer(-2))),
      Expr::binary("!=", Expr::binary("-", a, Expr::integer(-1)), Expr::binary(">=", a, a)),
      Expr::index(Expr::binary("+", a, a), Expr::call(Expr::Kind::kRank, "x")),
  };
  for (const Expr& form : forms) {
    const std::string text = "rule r\n  source\n    y = Conv(x, w) [a = ?a]\n  where " + to_string(form) +
                             "\n  target\n  map y -> x\nend\n";
    CAPTURE(text);
    CHECK(parse_rules(text, "e.rules")[0].conditions[0] == form);
  }
}

}  // namespace
}  // namespace graphsub
