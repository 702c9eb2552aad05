// Tests of read_taso_rules on TASO's shipped collection: counts, round trips, and known rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "rules/taso_reader.h"
#include "cost/analytical_model.h"
#include "cost/device.h"
#include "rewrite/matcher.h"
#include "runtime/equivalence.h"
#include "search/backtracking.h"
#include "test_util.h"
#include "verify/verifier.h"

namespace graphsub {
namespace {

using rules::Expr;
using rules::Rule;

const std::string kTasoFile = GRAPHSUB_TASO_RULES;

const rules::TasoRules& taso() {
  static const rules::TasoRules loaded = rules::read_taso_rules(kTasoFile);
  return loaded;
}

const Rule& rule_named(const std::string& name) {
  const auto& all = taso().rules;
  const auto it = std::find_if(all.begin(), all.end(), [&](const Rule& rule) { return rule.name == name; });
  REQUIRE(it != all.end());
  return *it;
}

TEST_CASE("127 of TASO's 133 rules load, the 6 with disconnected sources are skipped", "[rules]") {
  CHECK(taso().rules.size() == 127);
  REQUIRE(taso().skipped.size() == 6);
  for (const std::string& reason : taso().skipped) {
    CAPTURE(reason);
    CHECK(reason.find("the source is not connected") != std::string::npos);
  }
  CHECK(taso().skipped[0].rfind("taso-63: ", 0) == 0);
}

TEST_CASE("every loaded TASO rule survives print and parse", "[rules]") {
  const std::vector<Rule> reparsed = rules::parse_rules(rules::print_rules(taso().rules), "taso.rules");
  REQUIRE(reparsed.size() == taso().rules.size());
  for (std::size_t i = 0; i < reparsed.size(); ++i) {
    CAPTURE(taso().rules[i].name);
    CHECK(reparsed[i] == taso().rules[i]);
    CHECK(reparsed[i].origin == rules::Origin::kTaso);
  }
}

TEST_CASE("TASO rule 0 is matmul associativity", "[rules]") {
  const Rule& rule = rule_named("taso-0");
  REQUIRE(rule.source.size() == 2);
  CHECK(rule.source[0].op == ir::OpKind::kMatMul);
  CHECK(rule.source[0].inputs == std::vector<std::string>{"in1", "in4"});
  CHECK(rule.source[1].inputs == std::vector<std::string>{"s0_0", "in5"});
  // A plain MatMul only: graphsub's MatMul may carry a fused activation, which this rule must not see.
  REQUIRE(rule.source[0].attrs.size() == 1);
  CHECK(rule.source[0].attrs[0].name == "activation");
  CHECK(to_string(rule.source[0].attrs[0].value) == "\"none\"");
  REQUIRE(rule.target.size() == 2);
  CHECK(rule.target[0].inputs == std::vector<std::string>{"in4", "in5"});
  CHECK(rule.target[1].inputs == std::vector<std::string>{"in1", "t0_0"});
  CHECK(rule.outputs.size() == 1);
  CHECK(rule.outputs[0].source == "s1_0");
  CHECK(rule.outputs[0].target == "t1_0");
  CHECK(rule.comment ==
        std::vector<std::string>{"MatMul(MatMul(in1, in4), in5) → MatMul(in1, MatMul(in4, in5))"});
}

TEST_CASE("a TASO split gets the sizes of the concat it undoes", "[rules]") {
  // matmul(x, w1), matmul(x, w2) → split(matmul(x, concat(w1, w2, axis=1)), axis=1)
  const Rule& rule = rule_named("taso-77");
  REQUIRE(rule.target.size() == 3);
  CHECK(rule.target[0].op == ir::OpKind::kConcat);
  CHECK(rule.target[1].op == ir::OpKind::kMatMul);
  const rules::PatternNode& split = rule.target[2];
  CHECK(split.op == ir::OpKind::kSplit);
  CHECK(split.outputs == std::vector<std::string>{"t2_0", "t2_1"});
  REQUIRE(split.attrs.size() == 2);
  CHECK(to_string(split.attrs[0].value) == "1");
  CHECK(to_string(split.attrs[1].value) == "[shape(in4)[1], shape(in5)[1]]");
  CHECK(rule.conditions.size() == 3);
  CHECK(to_string(rule.conditions[0]) == "rank(in1) == 2");
}

TEST_CASE("a TASO conv binds one kernel and pads SAME as kernel / 2", "[rules]") {
  // conv(x1, w) + relu, conv[relu](x2, w) → split(conv[relu](concat(x1, x2, axis=0), w), axis=0)
  const Rule& rule = rule_named("taso-118");
  REQUIRE(rule.source.size() == 3);
  const rules::PatternNode& conv = rule.source[0];
  CHECK(conv.op == ir::OpKind::kConv);
  std::string attrs;
  for (const auto& attr : conv.attrs) attrs += attr.name + "=" + to_string(attr.value) + ";";
  CHECK(attrs ==
        "kernel_shape=?k;strides=[1, 1];pads=?k / 2 ++ ?k / 2;dilations=[1, 1];group=1;activation=\"none\";");
  CHECK(to_string(rule.source[2].attrs[5].value) == "\"relu\"");
  CHECK(rule.target[1].copy_from == "s2_0");
  CHECK(to_string(rule.target[2].attrs[1].value) == "[shape(in7)[0], shape(in8)[0]]");
}

TEST_CASE("a missing or undecodable TASO file is an error", "[rules]") {
  CHECK_THROWS_AS(rules::read_taso_rules("/nonexistent/graph_subst.pb"), Error);
  CHECK_THROWS_AS(rules::parse_taso_rules("\x0a\xff", "bad.pb"), Error);
}

// A minimal protobuf writer for hand-made TASO rules (the wire format: varints and length-delimited
// nested messages), so the reader's rarer paths are tested without TASO's generator.
std::string varint(uint64_t value) {
  std::string bytes;
  do {
    bytes += static_cast<char>((value & 0x7f) | (value > 0x7f ? 0x80 : 0));
    value >>= 7;
  } while (value != 0);
  return bytes;
}

std::string int_field(int field, int64_t value) {
  return varint(static_cast<uint64_t>(field) << 3) + varint(static_cast<uint64_t>(value));
}

std::string message_field(int field, const std::string& bytes) {
  return varint((static_cast<uint64_t>(field) << 3) | 2) + varint(bytes.size()) + bytes;
}

struct TasoOp {
  int type;
  std::vector<std::pair<int, int>> inputs;  ///< (opId, tsId)
  std::map<int, int> params;
};

std::string op_bytes(const TasoOp& op) {
  std::string bytes = int_field(1, op.type);
  for (const auto& [op_id, ts_id] : op.inputs)
    bytes += message_field(2, int_field(1, op_id) + int_field(2, ts_id));
  for (const auto& [key, value] : op.params)
    bytes += message_field(3, int_field(1, key) + int_field(2, value));
  return bytes;
}

/// A collection of one rule whose first output of the last source op maps to the last target op's.
std::string collection(const std::vector<TasoOp>& source, const std::vector<TasoOp>& target) {
  std::string rule;
  for (const TasoOp& op : source) rule += message_field(1, op_bytes(op));
  for (const TasoOp& op : target) rule += message_field(2, op_bytes(op));
  rule += message_field(3, int_field(1, static_cast<int>(source.size()) - 1) +
                               int_field(2, static_cast<int>(target.size()) - 1) + int_field(3, 0) +
                               int_field(4, 0));
  return message_field(1, rule);
}

TEST_CASE("TASO's scalar multiply, sigmoid and enlarge translate", "[rules]") {
  // smul(sigmoid(x), s), enlarge(w1, w2) → sigmoid(smul(x, s)) (not an identity: only the mapping is tested)
  const rules::TasoRules loaded = rules::parse_taso_rules(
      collection({{9, {{-1, 0}}, {}}, {19, {{0, 0}, {-2, 0}}, {}}, {20, {{1, 0}, {-2, 0}}, {}}},
                 {{20, {{-1, 0}, {-2, 0}}, {}}}),
      "made.pb");
  REQUIRE(loaded.skipped.empty());
  const Rule& rule = loaded.rules.at(0);
  CHECK(rule.source[0].op == ir::OpKind::kSigmoid);
  CHECK(rule.source[1].op == ir::OpKind::kSMul);
  CHECK(rule.source[2].op == ir::OpKind::kEnlarge);
  CHECK(rule.source[2].inputs == std::vector<std::string>{"s1_0"});
  CHECK(to_string(rule.source[2].attrs[0].value) == "[shape(in2)[2], shape(in2)[3]]");
  CHECK(to_string(rule.conditions[0]) == "rank(in1) == 4");
}

TEST_CASE("TASO rules that cannot be translated exactly are skipped with a reason", "[rules]") {
  const auto reason = [](const std::vector<TasoOp>& source, const std::vector<TasoOp>& target) {
    const rules::TasoRules loaded = rules::parse_taso_rules(collection(source, target), "made.pb");
    REQUIRE(loaded.rules.empty());
    REQUIRE(loaded.skipped.size() == 1);
    return loaded.skipped[0];
  };
  const TasoOp relu{8, {{-1, 0}}, {}};
  CHECK(reason({{6, {{-1, 0}}, {}}}, {relu}) == "taso-0: operator POOL2D_MAX has no translation");
  CHECK(reason({{18, {{-1, 0}, {-2, 0}}, {{9, 7}}}}, {relu}) == "taso-0: MATMUL with activation 7");
  CHECK(reason({relu}, {{8, {{-3, 0}}, {}}}) ==
        "taso-0: target reads 'in3', which is neither a pattern input nor defined earlier in the target");
  CHECK(reason({relu}, {{8, {{0, 0}}, {}}, relu}) == "taso-0: operator 0 reads a later operator");
  CHECK(reason({{8, {{-1, 0}}, {{11, 1}}}}, {relu}) == "taso-0: RELU has untranslated parameter 11");
  CHECK(reason({relu}, {{13, {{-1, 0}}, {{2, 2}, {11, 0}}}}) ==
        "taso-0: SPLIT whose concat cannot be traced");
  CHECK(reason({relu}, {{3, {{-1, 0}, {-2, 0}}, {{4, 3}, {5, 3}, {6, 1}, {7, 1}, {8, 0}, {9, 0}}}}) ==
        "taso-0: a target CONV2D without a source CONV2D to take its kernel from");
}

}  // namespace
TEST_CASE("graphsub's search runs TASO's rules: x*w1 + x*w2 becomes x*(w1 + w2)", "[rules][taso]") {
  const rules::TasoRules taso = rules::read_taso_rules(kTasoFile);
  const rewrite::Matcher matcher(taso.rules);
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({8, 16}));
  const ir::ValueId w1 = graph.add_weight("w1", ir::share(testing::random_tensor({16, 32}, 1)));
  const ir::ValueId w2 = graph.add_weight("w2", ir::share(testing::random_tensor({16, 32}, 2)));
  ir::Attributes plain;
  plain.set("activation", std::string("none"));
  const ir::NodeId a = testing::add_inferred(graph, ir::OpKind::kMatMul, {x, w1}, plain);
  const ir::NodeId b = testing::add_inferred(graph, ir::OpKind::kMatMul, {x, w2}, plain);
  const ir::NodeId y = testing::add_inferred(graph, ir::OpKind::kAdd, {graph.node(a).outputs[0], graph.node(b).outputs[0]});
  graph.set_name(graph.node(y).outputs[0], "y");
  graph.set_outputs({graph.node(y).outputs[0]});
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  const search::SearchResult result = search::backtracking_search(graph, matcher, model, {});
  REQUIRE_FALSE(result.steps.empty());
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(runtime::check_equivalent(graph, result.best).passed());
}

TEST_CASE("every loaded TASO rule holds on small instances, grouped target convolutions included",
          "[rules][verify]") {
  // taso-99 and its kin concatenate two convolutions' inputs and kernels: TASO infers group 2.
  CHECK(rules::print_rules({rule_named("taso-99")}).find("group = ") != std::string::npos);
  verify::VerifyOptions options;
  options.jobs = 2;
  for (const verify::RuleVerdict& verdict : verify::verify_rules(taso().rules, options)) {
    INFO(verdict.name << ": " << verdict.detail);
    CHECK(verdict.bounded.verdict == verify::BoundedVerdict::kHolds);
  }
}

}  // namespace graphsub
