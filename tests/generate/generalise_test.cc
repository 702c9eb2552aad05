// Opening fixed parameters: which groups may be opened, and the opening with its check.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "generate/generalise.h"
#include "rules/parser.h"
#include "rules/printer.h"

namespace graphsub::generate {
namespace {

rules::Rule parse_one(const std::string& text) {
  std::vector<rules::Rule> parsed = rules::parse_rules(text, "test");
  REQUIRE(parsed.size() == 1);
  return parsed.front();
}

const char* const kPoolSum = R"(#   add(avgpool3(x), avgpool3(y)) -> avgpool3(add(x, y))
rule pool-sum
  origin generated
  source
    a = AveragePool(x) [kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], ceil_mode = 0, count_include_pad = 1]
    b = AveragePool(y) [kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], ceil_mode = 0, count_include_pad = 1]
    r = Add(a, b)
  target
    c = Add(x, y)
    r2 = AveragePool(c) [kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], ceil_mode = 0, count_include_pad = 1]
  map r -> r2
end
)";

// The enlarged kernel's convolution has other pads and kernel than the source's: those stay.
const char* const kEnlarge = R"(#   conv(x, v) -> conv(x, enlarge3(v))
rule enlarge
  origin generated
  source
    r = Conv(x, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
  target
    e = Enlarge(v) [kernel_shape = [3, 3]]
    r2 = Conv(x, e) [kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], dilations = [1, 1], group = 1, activation = "none"]
  map r -> r2
end
)";

std::vector<std::string> attributes(const std::vector<ParameterGroup>& groups) {
  std::vector<std::string> names;
  for (const ParameterGroup& group : groups) names.push_back(group.attribute);
  return names;
}

}  // namespace

TEST_CASE("a parameter may be opened where every node of its kind has one literal for it", "[generate]") {
  CHECK(attributes(open_groups(parse_one(kPoolSum))) ==
        std::vector<std::string>{"kernel_shape", "strides", "pads", "ceil_mode", "count_include_pad"});
  // Group and activation are never opened; kernel_shape and pads differ between the two convolutions.
  CHECK(attributes(open_groups(parse_one(kEnlarge))) == std::vector<std::string>{"strides", "dilations"});
}

TEST_CASE("opening replaces the literals by one variable in source and target", "[generate]") {
  const rules::Rule rule = parse_one(kPoolSum);
  const rules::Rule opened = open_parameters(rule, {open_groups(rule)[1]});
  const std::string text = rules::print_rule(opened);
  INFO(text);
  CHECK(opened.source[0].attrs[1].value.kind == rules::Expr::Kind::kVariable);
  CHECK(opened.source[1].attrs[1].value.text == "avgpool_strides");
  CHECK(opened.target[1].attrs[1].value.text == "avgpool_strides");
  CHECK(opened.source[0].attrs[0].value.kind == rules::Expr::Kind::kList);  // kernel_shape stays
  // What is printed parses back to the same rule.
  CHECK(parse_one(text) == opened);
}

TEST_CASE("a window is not opened where an operand could then broadcast", "[generate]") {
  // 2 * conv(x + conv(x, v), v) = conv(2x, v) + conv(conv(2x, v), v) holds where conv(x, v) has
  // x's shape; with strides 2 and pads 1 on a 1 x 1 image, x broadcasts into conv(x, v) and it
  // does not (verify-rules refuted this --max-ops 4 rule, gen-conv-31449, before this).
  const rules::Rule rule = parse_one(R"(rule linear-chain
  origin generated
  source
    s5 = Conv(x, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
    s6 = Add(x, s5)
    s7 = Conv(s6, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
    s8 = Add(s7, s7)
  where shape(v)[0] == shape(x)[1]
  target
    t5 = Add(x, x)
    t6 = Conv(t5, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
    t7 = Conv(t6, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
    t8 = Add(t6, t7)
  map s8 -> t8
end
)");
  // Every step the check is asked about holds and moves off its literal: only the structure decides.
  std::vector<std::vector<std::string>> asked;
  const rules::Rule kept = generalise(rule, [&](const rules::Rule&, const std::vector<std::string>& variables,
                                                const std::vector<Opening>& step) {
    asked.push_back(variables);
    Trial trial{true, {}};
    for (const Opening& opening : step) trial.varied.push_back(opening.variable);
    return trial;
  });
  // x + conv(x, v): the operands went through 0 and 1 convolutions, so no size of it opens.
  CHECK(asked.empty());
  CHECK(kept == rule);
  // pool(x) + pool(y) went through one pooling each: its windows open.
  const rules::Rule pools = generalise(parse_one(kPoolSum), [&](const rules::Rule&, const std::vector<std::string>&,
                                                                const std::vector<Opening>& step) {
    Trial trial{true, {}};
    for (const Opening& opening : step) trial.varied.push_back(opening.variable);
    return trial;
  });
  CHECK(pools.source[0].attrs[1].value.kind == rules::Expr::Kind::kVariable);
}

TEST_CASE("generalising opens the groups the check accepts, one step after another", "[generate]") {
  const rules::Rule rule = parse_one(kPoolSum);
  std::vector<std::vector<std::string>> asked;
  std::vector<std::vector<Opening>> steps;
  const rules::Rule some = generalise(rule, [&](const rules::Rule&, const std::vector<std::string>& variables,
                                                   const std::vector<Opening>& step) {
    asked.push_back(variables);
    steps.push_back(step);
    const bool strides = std::find(variables.begin(), variables.end(), "avgpool_strides") != variables.end();
    return Trial{!strides, variables};
  });
  // Kernel and pads are one step; each later step is asked with the accepted ones still open.
  REQUIRE(asked.size() == 4);
  CHECK(asked[0] == std::vector<std::string>{"avgpool_kernel_shape", "avgpool_pads"});
  CHECK(asked[1] == std::vector<std::string>{"avgpool_kernel_shape", "avgpool_pads", "avgpool_strides"});
  CHECK(asked[2] == std::vector<std::string>{"avgpool_kernel_shape", "avgpool_pads", "avgpool_ceil_mode"});
  CHECK(asked[3] ==
        std::vector<std::string>{"avgpool_kernel_shape", "avgpool_pads", "avgpool_ceil_mode", "avgpool_count_include_pad"});
  // Each step names what it opens, the last of the variables asked, with the literal it replaces.
  REQUIRE(steps[0].size() == 2);
  CHECK(steps[0][0].variable == "avgpool_kernel_shape");
  CHECK(rules::to_string(steps[0][0].literal) == "[3, 3]");
  CHECK(steps[0][1].variable == "avgpool_pads");
  REQUIRE(steps[1].size() == 1);
  CHECK(steps[1][0].variable == "avgpool_strides");
  CHECK(rules::to_string(steps[1][0].literal) == "[1, 1]");
  const std::string text = rules::print_rule(some);
  INFO(text);
  CHECK(text.find("strides = [1, 1]") != std::string::npos);
  CHECK(text.find("pads = ?avgpool_pads") != std::string::npos);
  // The line naming what was opened comes above the before -> after line, which stays last.
  REQUIRE(some.comment.size() == 2);
  CHECK(some.comment[0] ==
        "  for every ?avgpool_kernel_shape, ?avgpool_pads, ?avgpool_ceil_mode, ?avgpool_count_include_pad");
  CHECK(some.comment[1] == rule.comment[0]);

  const rules::Rule none = generalise(rule, [](const rules::Rule&, const std::vector<std::string>&, const std::vector<Opening>&) {
    return Trial{};
  });
  CHECK(none == rule);
}

TEST_CASE("generalising keeps a group whose variable no instance varied closed", "[generate]") {
  const rules::Rule rule = parse_one(kPoolSum);
  const rules::Rule some = generalise(rule, [&](const rules::Rule&, const std::vector<std::string>& variables,
                                                const std::vector<Opening>&) {
    std::vector<std::string> varied;
    for (const std::string& variable : variables) {
      if (variable != "avgpool_ceil_mode") varied.push_back(variable);
    }
    return Trial{true, varied};
  });
  const std::string text = rules::print_rule(some);
  INFO(text);
  CHECK(text.find("ceil_mode = 0") != std::string::npos);
  CHECK(text.find("count_include_pad = ?avgpool_count_include_pad") != std::string::npos);
}

}  // namespace graphsub::generate
