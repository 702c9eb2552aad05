// Tests of parse_rules: each feature of the format to its structure, and each error with its line.
#include <catch2/catch.hpp>

#include <string>

#include "ir/error.h"
#include "rules/expr_parser.h"
#include "rules/parser.h"
#include "rules/printer.h"

namespace graphsub {
namespace {

using rules::Expr;
using rules::parse_rules;
using rules::Rule;

const char* const kFuseConvRelu = R"(# Fuse a ReLU into the convolution that feeds it.
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
)";

/// The message parse_rules throws for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_rules(text, "t.rules");
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST_CASE("the README's example parses to its structure", "[rules]") {
  const std::vector<Rule> rules = parse_rules(kFuseConvRelu, "fusion.rules");
  REQUIRE(rules.size() == 1);
  const Rule& rule = rules[0];
  CHECK(rule.name == "fuse-conv-relu");
  CHECK(rule.line == 3);
  CHECK(rule.file == "fusion.rules");
  CHECK(rule.comment == std::vector<std::string>{"Fuse a ReLU into the convolution that feeds it.",
                                                 "  relu(conv(x, w)) → conv[activation=relu](x, w)"});
  CHECK(rule.origin == rules::Origin::kHand);
  CHECK(rule.proof == rules::ProofStatus::kUnverified);
  REQUIRE(rule.source.size() == 2);
  CHECK(rule.source[0].op == ir::OpKind::kConv);
  CHECK(rule.source[0].outputs == std::vector<std::string>{"y"});
  CHECK(rule.source[0].inputs == std::vector<std::string>{"x", "w"});
  CHECK(rule.source[0].attrs[0].name == "activation");
  CHECK(rule.source[0].attrs[0].value == Expr::string("none"));
  CHECK(rule.source[1].op == ir::OpKind::kRelu);
  REQUIRE(rule.target.size() == 1);
  CHECK(rule.target[0].copy_from == "y");
  CHECK(rule.target[0].attrs[0].value == Expr::string("relu"));
  CHECK(rule.outputs.size() == 1);
  CHECK(rule.outputs[0].source == "z");
  CHECK(rule.outputs[0].target == "z2");
  CHECK(rule.inputs() == std::vector<std::string>{"x", "w"});
  CHECK(parse_rules(rules::print_rules(rules), "again.rules") == rules);
}

TEST_CASE("variables, where, const, several outputs and defaults parse", "[rules]") {
  const std::vector<Rule> rules = parse_rules(R"(
rule merge-matmuls
  source
    a = MatMul(x, w1) # trailing comment
    b = MatMul(x, w2)
    c = Conv(x, w1) [strides = ?s, kernel_shape = ?k, pads = ?k / 2 ++ ?k / 2]
  where shape(w1)[0] == shape(w2)[0]
  where weight(w1)
  target
    const scale = [1.5, -2, 3e-2]
    w = Concat(w1, w2) [axis = 1]
    m = MatMul(x, w)
    a2, b2 = Split(m) [axis = -1, split = [shape(w1)[1], shape(w2)[-1]]]
    c2 = Conv(x, w1) [@c, strides = ?s * 2 - (1 + rank(x))]
  map a -> a2, b -> b2
  map c -> c2
end
)",
                                              "m.rules");
  REQUIRE(rules.size() == 1);
  const Rule& rule = rules[0];
  CHECK(rule.origin == rules::Origin::kHand);
  CHECK(rule.proof == rules::ProofStatus::kUnverified);
  REQUIRE(rule.conditions.size() == 2);
  CHECK(rule.conditions[0] ==
        Expr::binary("==", Expr::index(Expr::call(Expr::Kind::kShape, "w1"), Expr::integer(0)),
                     Expr::index(Expr::call(Expr::Kind::kShape, "w2"), Expr::integer(0))));
  CHECK(rule.conditions[1] == Expr::call(Expr::Kind::kWeight, "w1"));
  REQUIRE(rule.constants.size() == 1);
  CHECK(rule.constants[0].value ==
        Expr::list({Expr::floating(1.5), Expr::integer(-2), Expr::floating(0.03)}));
  CHECK(rule.target[2].outputs == std::vector<std::string>{"a2", "b2"});
  CHECK(rule.target[2].attrs[0].value == Expr::integer(-1));
  const Expr half = Expr::binary("/", Expr::variable("k"), Expr::integer(2));
  CHECK(rule.source[2].attrs[2].value == Expr::binary("++", half, half));
  CHECK(rule.target[3].attrs[0].value ==
        Expr::binary("-", Expr::binary("*", Expr::variable("s"), Expr::integer(2)),
                     Expr::binary("+", Expr::integer(1), Expr::call(Expr::Kind::kRank, "x"))));
  CHECK(rule.outputs.size() == 3);
  CHECK(rule.inputs() == std::vector<std::string>{"x", "w1", "w2"});
  CHECK(parse_rules(rules::print_rules(rules), "again.rules") == rules);
}

TEST_CASE("origin and proof lines set the rule's status", "[rules]") {
  const std::vector<Rule> rules = parse_rules(
      "rule r1\n  origin taso\n  proof refuted\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n"
      "\n# two\nrule r2\n  origin generated\n  proof proved\n  source\n    y = Relu(x)\n  target\n  map y -> "
      "x\nend\n",
      "s.rules");
  REQUIRE(rules.size() == 2);
  CHECK(rules[0].origin == rules::Origin::kTaso);
  CHECK(rules[0].proof == rules::ProofStatus::kRefuted);
  CHECK(rules[0].comment.empty());
  CHECK(rules[1].origin == rules::Origin::kGenerated);
  CHECK(rules[1].proof == rules::ProofStatus::kProved);
  CHECK(rules[1].comment == std::vector<std::string>{"two"});
  CHECK(rules[1].line == 11);
}

TEST_CASE("an axiom may be closed, and prints back so", "[rules]") {
  const std::string text =
      "rule a\n  origin axiom closed\n  proof unverified\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n";
  const std::vector<Rule> rules = parse_rules(text, "s.rules");
  REQUIRE(rules.size() == 1);
  CHECK(rules[0].origin == rules::Origin::kAxiom);
  CHECK(rules[0].closed);
  CHECK(rules::print_rule(rules[0]) == text);
  CHECK_FALSE(parse_rules("rule a\n  origin axiom\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n", "s.rules")
                  .at(0)
                  .closed);
  CHECK_THROWS_WITH(parse_rules("rule a\n  origin axiom open\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n", "s.rules"),
                    Catch::Contains("may be followed only by 'closed'"));
  CHECK_THROWS(parse_rules("rule a\n  origin hand closed\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n", "s.rules"));
}

TEST_CASE("a rule may name its kind, and prints back so", "[rules]") {
  const std::string text = "rule a\n  origin hand\n  proof unverified\n  kind split-silu\n  source\n    y = Relu(x)\n"
                           "  target\n  map y -> x\nend\n";
  const std::vector<Rule> rules = parse_rules(text, "s.rules");
  REQUIRE(rules.size() == 1);
  CHECK(rules[0].kind == "split-silu");
  CHECK(rules::print_rule(rules[0]) == text);
  const std::string body = "  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n";
  CHECK(parse_rules("rule a\n" + body, "s.rules").at(0).kind.empty());
  CHECK(parse_rules("rule a\n  kind split-silu  # the C2f blocks\n" + body, "s.rules").at(0).kind == "split-silu");
  CHECK(parse_rules("rule a\n" + body, "s.rules").at(0) != rules[0]);
  CHECK_THROWS_WITH(parse_rules("rule a\n  kind Split_Silu\n" + body, "s.rules"),
                    Catch::Contains("kind 'Split_Silu' is not kebab-case"));
  CHECK_THROWS_WITH(parse_rules("rule a\n  kind a\n  kind b\n" + body, "s.rules"), Catch::Contains("one 'kind'"));
  CHECK_THROWS_WITH(parse_rules("rule a\n  source\n    y = Relu(x)\n  kind a\n  target\n  map y -> x\nend\n", "s.rules"),
                    Catch::Contains("'kind' must come before 'source'"));
}

TEST_CASE("a comment separated from its rule by a blank line is not the rule's", "[rules]") {
  const std::vector<Rule> rules = parse_rules(
      "# file header\n\nrule r\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n", "s.rules");
  CHECK(rules[0].comment.empty());
}

TEST_CASE("errors name the file and line", "[rules]") {
  const std::string head = "rule r\n  source\n";  // lines 1-2
  CHECK(error_of(head + "    y = Cnov(x, w)\n  target\n  map y -> x\nend\n") ==
        "t.rules:3: unknown operator 'Cnov'");
  CHECK(error_of(head + "    y = Relu(x)\n  target\n    z = Add(x, q)\n  map y -> z\nend\n") ==
        "t.rules:5: target reads 'q', which is neither a pattern input nor defined earlier in the target");
  CHECK(error_of(head + "    y = Relu(x)\n    z = Relu(y)\n  target\n    t = Relu(y)\n  map z -> t\nend\n") ==
        "t.rules:6: target reads 'y', which is neither a pattern input nor defined earlier in the target");
  CHECK(error_of(head + "    y = Relu(x)\n  target\n    t = Relu(x)\n  map q -> t\nend\n") ==
        "t.rules:6: map names 'q', which no source node defines");
  CHECK(error_of(head + "    y = Relu(x)\n  target\n    t = Relu(x)\n  map y -> u\nend\n") ==
        "t.rules:6: map names 'u', which is neither a target value nor a pattern input");
  CHECK(error_of("rule Bad_name\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n") ==
        "t.rules:1: rule name 'Bad_name' is not kebab-case");
  CHECK(error_of(head + "    y = Conv(x, w) [strides = ?s]\n  target\n    t = Conv(x, w) [pads = ?p]\n"
                        "  map y -> t\nend\n") == "t.rules:5: '?p' is never bound in the source");
  CHECK(
      error_of(head + "    y = Conv(x, w) [strides = ?s]\n  where ?q == 1\n  target\n  map y -> x\nend\n") ==
      "t.rules:4: '?q' is never bound in the source");
  CHECK(error_of(head + "    y = Conv(x, w)\n  target\n    t = Conv(x, w) [@w]\n  map y -> t\nend\n") ==
        "t.rules:5: '@w' names a value no source node defines");
  CHECK(error_of(head + "    y = Relu(x)\n    z = Relu(u)\n  target\n  map y -> x\nend\n") ==
        "t.rules:4: the source is not connected: this node shares no value with the first");
  CHECK(error_of(head + "    y = Relu(x)\n  target\n  map y -> x\n") == "t.rules:1: rule 'r' has no 'end'");
  CHECK(error_of(head + "    y = Relu(x)\n  where shape(q)[0] == 1\n  target\n  map y -> x\nend\n") ==
        "t.rules:4: 'q' is not a value of the source");
  CHECK(error_of(head + "    y = Relu(x [\n") == "t.rules:3: expected ')', found '['");
  CHECK(error_of(head + "    y = Relu(x)\n  target\n  map y -> x\n\nrule s\n") ==
        "t.rules:1: rule 'r' has no 'end'");
  CHECK(error_of(head + "    y = Relu(x)\n  origin hand\n") ==
        "t.rules:4: 'origin' must come before 'source'");
  CHECK(error_of(head + "    y = Relu(x)\n  map y -> x\nend\n") == "t.rules:4: 'map' must follow the target");
  CHECK(error_of(head + "    y = Relu(x)\n  target\nend\n") ==
        "t.rules:5: rule 'r' ends before its target and map");
  CHECK(error_of("rule r\n  proof maybe\n") ==
        "t.rules:2: unknown proof status 'maybe' (expected unverified, proved, refuted or unknown)");
  CHECK(error_of(head + "    y = Relu(x)\n  where ?\n") == "t.rules:4: '?' must start a variable name");
  CHECK(error_of(head + "    y = Relu(x)\n  where \"open\n") == "t.rules:4: unterminated string");
  CHECK(error_of(head + "    y = Relu(x)\n  where length(x) == 1\n") ==
        "t.rules:4: unknown function 'length' (expected shape, rank, weight, value, size, sizes or dtype)");
  CHECK(error_of(head + "    y = Relu(x)\n  target\n    x = Relu(y)\n") ==
        "t.rules:5: target reads 'y', which is neither a pattern input nor defined earlier in the target");
  CHECK(error_of(head + "    y = Relu(x)\n  target\n    x = Relu(x)\n") ==
        "t.rules:5: 'x' is a pattern input and cannot be redefined");
  CHECK(error_of(head + "    y = Relu(x)\n    y = Relu(x)\n") == "t.rules:4: 'y' is defined twice");
  CHECK(error_of("  y = Relu(x)\n") == "t.rules:1: expected 'rule', found 'y = Relu(x)'");
}

TEST_CASE("a variable bound anywhere in the source may be used before its binding", "[rules]") {
  const std::vector<Rule> rules = parse_rules(
      "rule r\n  source\n    y = Conv(x, w) [pads = ?k ++ ?k]\n    z = Conv(y, w) [kernel_shape = ?k]\n"
      "  target\n  map z -> x\nend\n",
      "t.rules");
  CHECK(rules[0].source[0].attrs[0].value == Expr::binary("++", Expr::variable("k"), Expr::variable("k")));
  CHECK(error_of("rule r\n  source\n    y = Conv(x, w) [pads = ?k ++ ?k]\n  target\n  map y -> x\nend\n") ==
        "t.rules:3: '?k' is never bound in the source");
}

TEST_CASE("duplicate rule names are rejected at the second", "[rules]") {
  const std::string rule = "rule same\n  source\n    y = Relu(x)\n  target\n  map y -> x\nend\n";
  CHECK(error_of(rule + "\n" + rule) == "t.rules:8: duplicate rule name 'same' (first at line 1)");
}

TEST_CASE("hostile lines are errors, not stack overflows", "[rules]") {
  // Found by tests/fuzz/rules_fuzzer: std::regex_match recursed once per character of a rule name,
  // and the expression parser (and every walk of the tree it builds) once per operator or bracket.
  CHECK(error_of("rule " + std::string(1000000, 'a') + "\n").find("has no 'end'") != std::string::npos);
  CHECK(error_of("rule a--b\n") == "t.rules:1: rule name 'a--b' is not kebab-case");
  CHECK(error_of("rule a-b-\n") == "t.rules:1: rule name 'a-b-' is not kebab-case");
  const std::string head = "rule r\n  source\n    y = Relu(x)\n  where ";
  const std::string tail = "\n  target\n  map y -> x\nend\n";
  std::string chain = "1";
  for (int i = 1; i < rules::kMaxOperatorsPerLine; ++i) chain += " + 1";
  CHECK(error_of(head + chain + " == 1000" + tail).empty());
  const std::string too_many = "t.rules:4: more than 1000 operators, brackets and calls on one line";
  CHECK(error_of(head + chain + " + 1 == 1001" + tail) == too_many);
  const std::size_t n = 1000000;
  CHECK(error_of(head + std::string(n, '(') + "1" + std::string(n, ')') + tail) == too_many);
  std::string negations;
  std::string indexes = "[0]";
  for (std::size_t i = 0; i < n; ++i) negations += "- ";
  for (std::size_t i = 0; i < n; ++i) indexes += "[0]";
  CHECK(error_of(head + negations + "1" + tail) == too_many);
  CHECK(error_of(head + indexes + tail) == too_many);
}

TEST_CASE("read_rules_file reports a missing file", "[rules]") {
  CHECK_THROWS_AS(rules::read_rules_file("/nonexistent/x.rules"), Error);
}

}  // namespace
}  // namespace graphsub

namespace graphsub {

TEST_CASE("value lists, value(), size() and sizes() parse and print back", "[rules]") {
  const char* const text = R"(# Merge two adjacent parts of a split.
rule merge-adjacent-parts
  origin hand
  proof unverified
  source
    pre..., a, b, post... = Split(x) [axis = ?ax]
    y = Concat(a, b) [axis = ?ax]
  where value(x) == 1
  where size(a) > 0
  target
    pre2..., ab, post2... = Split(x) [axis = ?ax, split = sizes(pre..., ?ax) ++ [shape(a)[?ax] + shape(b)[?ax]] ++ sizes(post..., ?ax)]
  map pre... -> pre2..., post... -> post2..., y -> ab
end
)";
  const std::vector<Rule> parsed = parse_rules(text, "t.rules");
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0].source[0].outputs == std::vector<std::string>{"pre...", "a", "b", "post..."});
  CHECK(parsed[0].inputs() == std::vector<std::string>{"x"});
  CHECK(parsed[0].conditions[0].operands[0].kind == Expr::Kind::kValue);
  CHECK(parsed[0].conditions[1].operands[0].kind == Expr::Kind::kSize);
  CHECK(rules::print_rules(parsed) == text);
  CHECK(parse_rules(rules::print_rules(parsed), "t.rules") == parsed);
}

TEST_CASE("value lists stand only at the ends and pair with lists", "[rules]") {
  const std::string head = "rule r\n  source\n";  // lines 1-2
  CHECK(error_of(head + "    y = Concat(a, xs..., b)\n") == "t.rules:3: 'xs...' must be first or last of the inputs");
  CHECK(error_of(head + "    xs..., y = Split(x)\n  target\n    t = Relu(x)\n  map xs... -> t\nend\n") ==
        "t.rules:6: map pairs a value with a value list: xs... -> t");
  CHECK(error_of(head + "    y = Concat(xs...)\n  target\n    ys..., t = Split(x)\n  map y -> t\nend\n") ==
        "t.rules:5: target reads 'x', which is neither a pattern input nor defined earlier in the target");
  CHECK(error_of(head + "    y = Concat(xs..., x)\n  target\n    ys..., t = Split(x)\n  map y -> t\nend\n") ==
        "t.rules:5: the target list 'ys...' is not mapped from a source list, so its length is unknown");
  CHECK(error_of(head + "    y = Concat(xs..., x)\n  where sizes(x, 1) == [1]\n") ==
        "t.rules:4: sizes() takes a value list ('x...')");
  CHECK(error_of(head + "    y = Concat(xs..., x)\n  where shape(xs...) == [1]\n") ==
        "t.rules:4: 'xs...' is a value list; shape() takes one value");
}

}  // namespace graphsub
