// Narrowing (rules/narrow.rules and pipeline::narrow): each rule moves a Gather of one entry above
// one op and the graph computes what it did; a transformer's last layer read at one token is
// computed at that token alone, Gathers of one value merged on the way; nothing moves where the
// gathered value is read elsewhere or the Gather picks more than one entry; and the rules' proofs
// are current.
#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/layout_forms.h"
#include "pipeline/narrowing.h"
#include "rules/shipped_rules.h"
#include "runtime/equivalence.h"
#include "test_util.h"
#include "verify/proof_records.h"

namespace graphsub {
namespace {

using testing::add_inferred;
using testing::count_of;

/// [N, S, 4] with the batch N and the sequence S symbolic, as exports of transformers write them.
ir::TensorType tokens_type() {
  return ir::TensorType{ir::DataType::kFloat,
                        ir::Shape{true, {ir::Dim::named("N"), ir::Dim::named("S"), ir::Dim::known(4)}}};
}

struct Builder {
  ir::Graph graph;
  uint32_t seed = 1;

  ir::ValueId input(const std::string& name) { return graph.add_input(name, tokens_type()); }
  ir::ValueId weight(const std::string& name, const std::vector<int64_t>& dims) {
    return graph.add_weight(name, ir::share(testing::random_tensor(dims, seed++, 0.5f, 1.5f)));
  }
  ir::ValueId constant(const std::string& name, float value) {
    return graph.add_weight(name, ir::share(ir::Tensor::from_floats({}, {value})));
  }
  /// The mean over the last axis, kept as a dim of 1 (as a decomposed layer norm takes it).
  ir::ValueId reduce_mean(ir::ValueId x) {
    ir::Attributes attrs;
    attrs.set("axes", std::vector<int64_t>{2});
    attrs.set("keepdims", int64_t{1});
    return op(ir::OpKind::kReduceMean, {x}, attrs);
  }
  ir::ValueId indices(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    return graph.add_weight(name, ir::share(ir::Tensor::from_int64s(dims, values)));
  }
  ir::ValueId op(ir::OpKind kind, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {}) {
    return graph.node(add_inferred(graph, kind, std::move(inputs), std::move(attrs))).outputs[0];
  }
  ir::ValueId mat_mul(ir::ValueId x, ir::ValueId w) {
    ir::Attributes attrs;
    attrs.set("activation", std::string("none"));
    return op(ir::OpKind::kMatMul, {x, w}, attrs);
  }
  ir::ValueId layer_norm(ir::ValueId x, ir::ValueId g, ir::ValueId b) {
    ir::Attributes attrs;
    attrs.set("axis", int64_t{2});
    attrs.set("epsilon", 1e-5f);
    attrs.set("stash_type", int64_t{1});
    return op(ir::OpKind::kLayerNormalization, {x, g, b}, attrs);
  }
  /// Token 0 of `x` (a scalar index, as ViT's class token), or the tokens `picks` (a list).
  ir::ValueId gather(ir::ValueId x, const std::vector<int64_t>& picks = {}) {
    ir::Attributes attrs;
    attrs.set("axis", int64_t{1});
    const ir::ValueId index = picks.empty() ? indices("token", {}, {0})
                                            : indices("tokens", {static_cast<int64_t>(picks.size())}, picks);
    return op(ir::OpKind::kGather, {x, index}, attrs);
  }
  ir::Graph done(std::vector<ir::ValueId> outputs) {
    for (std::size_t i = 0; i < outputs.size(); ++i) graph.set_name(outputs[i], "y" + std::to_string(i));
    graph.set_outputs(std::move(outputs));
    return graph;
  }
};

std::vector<rules::Rule> narrow_rules_named(const std::string& name) {
  std::vector<rules::Rule> picked;
  for (rules::Rule& rule : rules::shipped_narrow_rules()) {
    if (rule.name == name) picked.push_back(std::move(rule));
  }
  return picked;
}

bool computes_alike(const ir::Graph& before, const ir::Graph& after) {
  runtime::CheckOptions check;
  check.dims = {{"N", 2}, {"S", 5}};
  return runtime::check_equivalent(before, after, check).passed();
}

/// True when every Gather of `graph` reads a graph input, and every other node's result has
/// rank 2 (the token axis gone): the whole computation runs on the token read.
bool narrowed_to_the_token(const ir::Graph& graph) {
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    const bool ok = node.op == ir::OpKind::kGather ? graph.value(node.inputs[0]).kind == ir::ValueKind::kInput
                                                   : graph.value(node.outputs[0]).type.shape.rank() == 2;
    if (!ok) return false;
  }
  return true;
}

/// Where each rule applies: gather(op(...)) with the operands the rule's conditions describe.
struct RuleCase {
  const char* rule;
  std::function<ir::ValueId(Builder&)> make;  ///< The value the Gather reads.
};

const std::vector<RuleCase>& rule_cases() {
  static const std::vector<RuleCase> cases = {
      {"gather-of-add", [](Builder& b) { return b.op(ir::OpKind::kAdd, {b.input("x"), b.input("z")}); }},
      {"gather-of-add-trailing",
       [](Builder& b) { return b.op(ir::OpKind::kAdd, {b.weight("bias", {4}), b.input("x")}); }},
      {"gather-of-mul", [](Builder& b) { return b.op(ir::OpKind::kMul, {b.input("x"), b.input("z")}); }},
      {"gather-of-mul-trailing",
       [](Builder& b) { return b.op(ir::OpKind::kMul, {b.input("x"), b.weight("scale", {})}); }},
      {"gather-of-div-trailing",
       [](Builder& b) { return b.op(ir::OpKind::kDiv, {b.input("x"), b.weight("divisor", {4})}); }},
      {"gather-of-erf", [](Builder& b) { return b.op(ir::OpKind::kErf, {b.input("x")}); }},
      {"gather-of-gelu", [](Builder& b) { return b.op(ir::OpKind::kGelu, {b.input("x")}); }},
      {"gather-of-relu", [](Builder& b) { return b.op(ir::OpKind::kRelu, {b.input("x")}); }},
      {"gather-of-tanh", [](Builder& b) { return b.op(ir::OpKind::kTanh, {b.input("x")}); }},
      {"gather-of-sigmoid", [](Builder& b) { return b.op(ir::OpKind::kSigmoid, {b.input("x")}); }},
      {"gather-of-matmul", [](Builder& b) { return b.mat_mul(b.input("x"), b.weight("w", {4, 6})); }},
      {"gather-of-layer-norm",
       [](Builder& b) { return b.layer_norm(b.input("x"), b.weight("g", {4}), b.weight("b", {4})); }},
      {"gather-of-sub", [](Builder& b) { return b.op(ir::OpKind::kSub, {b.input("x"), b.input("z")}); }},
      {"gather-of-sub-trailing",
       [](Builder& b) { return b.op(ir::OpKind::kSub, {b.input("x"), b.weight("mean", {4})}); }},
      {"gather-of-div", [](Builder& b) { return b.op(ir::OpKind::kDiv, {b.input("x"), b.input("z")}); }},
      {"gather-of-sqrt", [](Builder& b) { return b.op(ir::OpKind::kSqrt, {b.input("x")}); }},
      {"gather-of-square", [](Builder& b) { return b.op(ir::OpKind::kPow, {b.input("x"), b.constant("two", 2.0f)}); }},
      {"gather-of-reduce-mean", [](Builder& b) { return b.reduce_mean(b.input("x")); }},
  };
  return cases;
}

}  // namespace

TEST_CASE("each narrowing rule moves a Gather above its op, which then computes what it did", "[pipeline]") {
  CHECK(rule_cases().size() == rules::shipped_narrow_rules().size());
  for (const RuleCase& rule_case : rule_cases()) {
    for (const std::vector<int64_t>& picks : {std::vector<int64_t>{}, std::vector<int64_t>{3}}) {
      INFO(rule_case.rule << (picks.empty() ? ", a scalar index" : ", a list of one index"));
      Builder builder;
      const ir::ValueId gathered = builder.gather(rule_case.make(builder), picks);
      const ir::Graph before = builder.done({gathered});
      int applied = 0;
      const std::optional<ir::Graph> after = pipeline::apply_everywhere(before, narrow_rules_named(rule_case.rule), &applied);
      REQUIRE(after);
      CHECK(applied == 1);
      // The Gather now reads a graph input (or both do): the op runs on the picked tokens.
      for (ir::NodeId id : after->node_ids()) {
        if (after->node(id).op == ir::OpKind::kGather) {
          CHECK(after->value(after->node(id).inputs[0]).kind == ir::ValueKind::kInput);
        }
      }
      CHECK(after->value(after->outputs()[0]).type == before.value(before.outputs()[0]).type);
      CHECK(computes_alike(before, *after));
    }
  }
}

TEST_CASE("a transformer layer read at one token is computed at that token alone", "[pipeline]") {
  // ViT's last layer and head, as torch exports them: h = x + attention; the MLP with an erf
  // GELU reads h twice (its layer norm and the residual), the GELU reads its input twice.
  Builder b;
  const ir::ValueId h = b.op(ir::OpKind::kAdd, {b.input("x"), b.input("attention")});
  const ir::ValueId n = b.layer_norm(h, b.weight("g1", {4}), b.weight("b1", {4}));
  const ir::ValueId a = b.op(ir::OpKind::kAdd, {b.weight("bias1", {6}), b.mat_mul(n, b.weight("w1", {4, 6}))});
  const ir::ValueId erf = b.op(ir::OpKind::kErf, {b.op(ir::OpKind::kDiv, {a, b.weight("root2", {})})});
  const ir::ValueId gelu = b.op(ir::OpKind::kMul, {b.op(ir::OpKind::kMul, {a, b.op(ir::OpKind::kAdd, {erf, b.weight("one", {})})}),
                                                   b.weight("half", {})});
  const ir::ValueId mlp = b.op(ir::OpKind::kAdd, {b.weight("bias2", {4}), b.mat_mul(gelu, b.weight("w2", {6, 4}))});
  const ir::ValueId z = b.op(ir::OpKind::kAdd, {h, mlp});
  const ir::ValueId f = b.layer_norm(z, b.weight("g2", {4}), b.weight("b2", {4}));
  const ir::Graph before = b.done({b.gather(f)});

  int rewrites = 0;
  const std::optional<ir::Graph> after = pipeline::narrow(before, rules::shipped_narrow_rules(), &rewrites);
  REQUIRE(after);
  CHECK(rewrites == 13);
  // One Gather of each graph input is left, and no op but the Gathers sees all the tokens.
  CHECK(count_of(*after, ir::OpKind::kGather) == 2);
  CHECK(narrowed_to_the_token(*after));
  CHECK(computes_alike(before, *after));
}

TEST_CASE("a layer norm as older exports decompose it is computed at the token read", "[pipeline]") {
  // (x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) * g + b, as torch writes LayerNorm below
  // opset 17: x and the deviation are each read twice.
  Builder b;
  const ir::ValueId x = b.input("x");
  const ir::ValueId deviation = b.op(ir::OpKind::kSub, {x, b.reduce_mean(x)});
  const ir::ValueId variance = b.reduce_mean(b.op(ir::OpKind::kPow, {deviation, b.constant("two", 2.0f)}));
  const ir::ValueId root = b.op(ir::OpKind::kSqrt, {b.op(ir::OpKind::kAdd, {variance, b.constant("eps", 1e-5f)})});
  const ir::ValueId normalized = b.op(ir::OpKind::kDiv, {deviation, root});
  const ir::ValueId y = b.op(ir::OpKind::kAdd, {b.op(ir::OpKind::kMul, {normalized, b.weight("g", {4})}), b.weight("b", {4})});
  const ir::Graph before = b.done({b.gather(y)});
  int rewrites = 0;
  const std::optional<ir::Graph> after = pipeline::narrow(before, rules::shipped_narrow_rules(), &rewrites);
  REQUIRE(after);
  CHECK(rewrites == 9);
  CHECK(count_of(*after, ir::OpKind::kGather) == 1);
  CHECK(narrowed_to_the_token(*after));
  CHECK(computes_alike(before, *after));
}

TEST_CASE("no narrowing where the gathered value is read elsewhere or more than one entry is picked", "[pipeline]") {
  {
    Builder b;
    const ir::ValueId r = b.op(ir::OpKind::kRelu, {b.input("x")});
    const ir::Graph graph = b.done({b.gather(r), r});
    CHECK_FALSE(pipeline::narrow(graph, rules::shipped_narrow_rules()));
  }
  {
    Builder b;
    const ir::Graph graph = b.done({b.gather(b.op(ir::OpKind::kRelu, {b.input("x")}), {0, 2})});
    CHECK_FALSE(pipeline::narrow(graph, rules::shipped_narrow_rules()));
  }
  {
    // Two alike Gathers of an input: nothing to narrow, so they are not merged either.
    Builder b;
    const ir::ValueId x = b.input("x");
    int rewrites = -1;
    CHECK_FALSE(pipeline::narrow(b.done({b.gather(x), b.gather(x)}), rules::shipped_narrow_rules(), &rewrites));
    CHECK(rewrites == 0);
  }
}

TEST_CASE("Gathers of one value that pick the same entries are merged, others kept", "[pipeline]") {
  Builder b;
  const ir::ValueId x = b.input("x");
  ir::Attributes axis1;
  axis1.set("axis", int64_t{1});
  ir::Attributes axis2;
  axis2.set("axis", int64_t{2});
  const ir::ValueId first = b.op(ir::OpKind::kGather, {x, b.indices("i1", {}, {2})}, axis1);
  const ir::ValueId same = b.op(ir::OpKind::kGather, {x, b.indices("i2", {}, {2})}, axis1);
  const ir::ValueId other_entry = b.op(ir::OpKind::kGather, {x, b.indices("i3", {}, {1})}, axis1);
  const ir::ValueId other_axis = b.op(ir::OpKind::kGather, {x, b.indices("i4", {}, {2})}, axis2);
  ir::Graph graph = b.done({first, same, other_entry, other_axis});
  const ir::Graph before = graph;
  CHECK(pipeline::merge_alike_gathers(graph) == 1);
  CHECK(count_of(graph, ir::OpKind::kGather) == 3);
  CHECK(graph.outputs()[0] == graph.outputs()[1]);
  CHECK(computes_alike(before, graph));
}

TEST_CASE("the narrowing rules record proofs under the current axioms", "[pipeline]") {
  // Edit rules/axioms.rules, and this fails until `graphsub verify-rules rules/narrow.rules
  // --write` has recorded the proofs again; optimize uses only proved ones.
  const std::string hash = verify::axioms_hash(rules::shipped_axiom_file().text);
  for (const rules::Rule& rule : rules::shipped_narrow_rules()) {
    INFO(rule.name);
    CHECK(rule.proof == rules::ProofStatus::kProved);
    CHECK(rule.proof_axioms == hash);
  }
}

}  // namespace graphsub
