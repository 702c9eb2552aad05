// Every rule of rules/algebra.rules, applied where it matches, computes what the graph did; the
// rules refuse where they would not be exact (broadcasts, element types, sizes, ranks); wrong
// variants fail the same check; the search finds MetaFlow's SRU simplification, folds BERT's
// attention scale, and pools DenseNet's transitions and a ConvNeXt block before their pointwise
// projections; the file survives a print/parse round trip.
#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cost/analytical_model.h"
#include "cost/device.h"
#include "ops/folding.h"
#include "ops/registry.h"
#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "runtime/equivalence.h"
#include "search/backtracking.h"
#include "test_util.h"

namespace graphsub {
namespace {

using ir::DataType;
using ir::OpKind;
using ir::ValueId;

const std::vector<rules::Rule>& algebra_rules() {
  static const std::vector<rules::Rule> rules =
      rules::read_rules_file(GRAPHSUB_SOURCE_DIR "/rules/algebra.rules");
  return rules;
}

const rules::Rule& rule_named(const std::string& name) {
  for (const rules::Rule& rule : algebra_rules()) {
    if (rule.name == name) return rule;
  }
  throw std::runtime_error("no rule " + name);
}

using testing::attributes;

ir::Attributes axis(int64_t a) { return attributes({{"axis", a}}); }
ir::Attributes split(int64_t a, std::vector<int64_t> sizes) {
  return attributes({{"axis", a}, {"split", std::move(sizes)}});
}
ir::Attributes perm(std::vector<int64_t> p) { return attributes({{"perm", std::move(p)}}); }

/// Builds a small graph as import would: each node's attributes completed to canonical form (at
/// the rewriter's opset) and its output types inferred. Inputs are named x0, x1, ..., outputs y0,
/// y1, ...
class Builder {
 public:
  ValueId input(const std::vector<int64_t>& dims, DataType dtype = DataType::kFloat) {
    const std::string name = "x" + std::to_string(graph_.inputs().size());
    return graph_.add_input(name, ir::TensorType{dtype, ir::Shape::of(dims)});
  }

  /// A weight of seeded random floats in [-1, 1).
  ValueId weight(const std::vector<int64_t>& dims) {
    return graph_.add_weight({}, ir::share(testing::random_tensor(dims, seed_++)));
  }

  /// A float weight whose every element is `value`.
  ValueId filled(const std::vector<int64_t>& dims, float value) {
    const auto count = static_cast<std::size_t>(ir::num_elements(dims));
    return graph_.add_weight({}, ir::share(ir::Tensor::from_floats(dims, std::vector<float>(count, value))));
  }

  /// An int64 weight with the given elements and sizes.
  ValueId ints(const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
    return graph_.add_weight({}, ir::share(ir::Tensor::from_int64s(dims, values)));
  }

  /// Adds a canonical node; throws when the op refuses the attributes or the input types.
  std::vector<ValueId> node(OpKind op, std::vector<ValueId> inputs, ir::Attributes attrs = {},
                            int outputs = 1) {
    std::vector<ir::TensorType> types;
    for (ValueId input : inputs) types.push_back(graph_.value(input).type);
    const ops::OpDef& def = ops::op_def(op);
    ops::ImportContext context{attrs, types, outputs, rewrite::kTargetOpset};
    if (std::string reason = def.canonicalize(context); !reason.empty()) throw std::runtime_error(reason);
    ir::Node probe;
    probe.op = op;
    probe.attrs = attrs;
    probe.inputs = inputs;
    const ops::InferResult inferred = def.infer(probe, types);
    if (!inferred.ok()) throw std::runtime_error(inferred.error);
    std::vector<ir::OutputSpec> specs;
    for (const ir::TensorType& type : inferred.outputs) specs.push_back({type, {}});
    return graph_.node(graph_.add_node(op, std::move(inputs), specs, std::move(attrs))).outputs;
  }

  ValueId op(OpKind op, std::vector<ValueId> inputs, ir::Attributes attrs = {}) {
    return node(op, std::move(inputs), std::move(attrs))[0];
  }

  /// The graph with these outputs.
  ir::Graph finish(const std::vector<ValueId>& outputs) {
    for (std::size_t i = 0; i < outputs.size(); ++i) graph_.set_name(outputs[i], "y" + std::to_string(i));
    graph_.set_outputs(outputs);
    return graph_;
  }

  ir::Graph& graph() { return graph_; }

 private:
  ir::Graph graph_;
  uint32_t seed_ = 1;
};

/// One rule applied to one graph: how many matches, and how many live nodes each result keeps.
struct Case {
  std::string rule;
  std::string graph;  ///< What the graph is, for the section name.
  std::function<ir::Graph()> build;
  std::size_t matches;
  std::size_t nodes_after;
};

/// Applies the rule at every match (each to the original graph) and checks each result.
void check_case(const Case& c) {
  const ir::Graph before = c.build();
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(before, rule_named(c.rule));
  REQUIRE(matches.size() == c.matches);
  for (const rewrite::Match& match : matches) {
    std::string why;
    const std::optional<ir::Graph> after = rewrite::apply(before, match, &why);
    INFO(why);
    REQUIRE(after);
    CHECK(after->output_names() == before.output_names());
    CHECK(after->node_ids().size() == c.nodes_after);
    CHECK(runtime::check_equivalent(before, *after).passed());
  }
}

void check_cases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.rule << ": " << c.graph) { check_case(c); }
  }
}

/// Why applying `rule` at its first match does not keep what `graph` computes: the rewriter's
/// refusal, or the numeric check's failure; empty when it does keep it.
std::string rewrite_error(const ir::Graph& graph, const rules::Rule& rule) {
  const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule);
  if (matches.empty()) return "no match";
  std::string why;
  const std::optional<ir::Graph> after = rewrite::apply(graph, matches[0], &why);
  if (!after) return why;
  return runtime::check_equivalent(graph, *after).passed() ? "" : "the outputs differ";
}

// ---- Graphs shared by several cases.

/// op(op(a, b), c) on inputs of the given sizes (broadcasting), with `inner` the first operand of
/// the outer op when `inner_first`, else the second.
ir::Graph nested(OpKind inner, OpKind outer, bool inner_first, const std::vector<int64_t>& a,
                 const std::vector<int64_t>& b, const std::vector<int64_t>& c,
                 DataType dtype = DataType::kFloat) {
  Builder g;
  const ValueId x = g.input(a, dtype);
  const ValueId y = g.input(b, dtype);
  const ValueId z = g.input(c, dtype);
  const ValueId t = g.op(inner, {x, y});
  return g.finish({inner_first ? g.op(outer, {t, z}) : g.op(outer, {z, t})});
}

/// outer(p * q, r * s) where the operands of the products are picked from inputs a, b, c by index.
ir::Graph two_products(OpKind outer, std::pair<int, int> first, std::pair<int, int> second,
                       const std::vector<std::vector<int64_t>>& dims) {
  Builder g;
  std::vector<ValueId> v;
  for (const std::vector<int64_t>& d : dims) v.push_back(g.input(d));
  const ValueId p = g.op(OpKind::kMul, {v[first.first], v[first.second]});
  const ValueId q = g.op(OpKind::kMul, {v[second.first], v[second.second]});
  return g.finish({g.op(outer, {p, q})});
}

/// Two unary ops of one kind concatenated on axis 1, or one applied to a concatenation.
ir::Graph unary_and_concat(OpKind unary, bool unary_first) {
  Builder g;
  const ValueId a = g.input({2, 3});
  const ValueId b = g.input({2, 4});
  if (unary_first) {
    return g.finish({g.op(OpKind::kConcat, {g.op(unary, {a}), g.op(unary, {b})}, axis(1))});
  }
  return g.finish({g.op(unary, {g.op(OpKind::kConcat, {a, b}, axis(1))})});
}

/// concat(a op c, b op d) (`op_first`) or concat(a, b) op concat(c, d), parts a, c [2, 3] and
/// b, d [2, 4] on axis 1.
ir::Graph binary_and_concat(OpKind op, bool op_first) {
  Builder g;
  const ValueId a = g.input({2, 3});
  const ValueId b = g.input({2, 4});
  const ValueId c = g.input({2, 3});
  const ValueId d = g.input({2, 4});
  if (op_first) return g.finish({g.op(OpKind::kConcat, {g.op(op, {a, c}), g.op(op, {b, d})}, axis(1))});
  return g.finish({g.op(op, {g.op(OpKind::kConcat, {a, b}, axis(1)), g.op(OpKind::kConcat, {c, d}, axis(1))})});
}

/// transpose(transpose(x, p), q).
ir::Graph two_transposes(const std::vector<int64_t>& dims, std::vector<int64_t> p, std::vector<int64_t> q) {
  Builder g;
  const ValueId x = g.input(dims);
  return g.finish(
      {g.op(OpKind::kTranspose, {g.op(OpKind::kTranspose, {x}, perm(std::move(p)))}, perm(std::move(q)))});
}

/// op(x, c) (or op(c, x) when `constant_first`), c a weight of `value` everywhere.
ir::Graph with_constant(OpKind op, const std::vector<int64_t>& x_dims, const std::vector<int64_t>& c_dims,
                        float value, bool constant_first = false) {
  Builder g;
  const ValueId x = g.input(x_dims);
  const ValueId c = g.filled(c_dims, value);
  return g.finish({g.op(op, constant_first ? std::vector<ValueId>{c, x} : std::vector<ValueId>{x, c})});
}

/// (1 - x) * z, or z * (1 - x) when `one_minus_first` is false; `one` has sizes `one_dims`.
ir::Graph one_minus_times(bool one_minus_first, const std::vector<int64_t>& one_dims) {
  Builder g;
  const ValueId x = g.input({2, 3});
  const ValueId z = g.input({2, 3});
  const ValueId d = g.op(OpKind::kSub, {g.filled(one_dims, 1.0f), x});
  return g.finish(
      {g.op(OpKind::kMul, one_minus_first ? std::vector<ValueId>{d, z} : std::vector<ValueId>{z, d})});
}

/// Canonical Conv attributes with pads 1 (kernel_shape and the rest come from canonicalize).
ir::Attributes padded_conv() { return attributes({{"pads", std::vector<int64_t>{1, 1, 1, 1}}}); }

/// conv(x * s, w[, b]) or conv(x, w[, b]) * s, x [1, 3, 6, 6], w [4, 3, 3, 3], s a scalar weight.
ir::Graph scaled_conv(bool scale_input, bool bias, const std::vector<int64_t>& scale = {}) {
  Builder g;
  const ValueId x = g.input({1, 3, 6, 6});
  const ValueId s = g.weight(scale);
  std::vector<ValueId> inputs = {scale_input ? g.op(OpKind::kMul, {x, s}) : x, g.weight({4, 3, 3, 3})};
  if (bias) inputs.push_back(g.weight({4}));
  const ValueId c = g.op(OpKind::kConv, inputs, padded_conv());
  return g.finish({scale_input ? c : g.op(OpKind::kMul, {c, s})});
}

/// averagepool(conv(x, w[, b])) with x [1, 4, 6, 6], w [3, 4, k, k], the pooling's attributes
/// `pool` and the convolution's `conv`; with `also_read`, the convolution is a graph output too.
ir::Graph pooled_conv(ir::Attributes pool, int64_t k = 1, bool bias = false, ir::Attributes conv = {},
                      bool also_read = false) {
  Builder g;
  std::vector<ValueId> inputs = {g.input({1, 4, 6, 6}), g.weight({3, 4, k, k})};
  if (bias) inputs.push_back(g.weight({3}));
  const ValueId c = g.op(OpKind::kConv, inputs, std::move(conv));
  const ValueId r = g.op(OpKind::kAveragePool, {c}, std::move(pool));
  return also_read ? g.finish({r, c}) : g.finish({r});
}

/// AveragePool's attributes, pads 0 unless given.
ir::Attributes pooling(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                       const std::vector<int64_t>& pads = {0, 0, 0, 0}, int64_t ceil_mode = 0,
                       int64_t count_include_pad = 0) {
  return testing::pool_attributes(kernel, strides, pads, ceil_mode, count_include_pad);
}

/// globalaveragepool(op(x, y)) with x [1, 4, 3, 3] and y of `y_dims` (a weight when `weight`).
ir::Graph pooled_binary(OpKind op, const std::vector<int64_t>& y_dims, bool weight = false) {
  Builder g;
  const ValueId x = g.input({1, 4, 3, 3});
  const ValueId y = weight ? g.weight(y_dims) : g.input(y_dims);
  return g.finish({g.op(OpKind::kGlobalAveragePool, {g.op(op, {x, y})})});
}

/// globalaveragepool(conv(x, w[, b])) with x [1, 4, 3, 3], w [3, 4 / group, k, k], Conv attributes `conv`.
ir::Graph globally_pooled_conv(bool bias, int64_t k = 1, ir::Attributes conv = {}, int64_t group = 1) {
  Builder g;
  std::vector<ValueId> inputs = {g.input({1, 4, 3, 3}), g.weight({group * 3, 4 / group, k, k})};
  if (bias) inputs.push_back(g.weight({group * 3}));
  return g.finish({g.op(OpKind::kGlobalAveragePool, {g.op(OpKind::kConv, inputs, std::move(conv))})});
}

/// ReduceMean attributes.
ir::Attributes mean_over(std::vector<int64_t> axes, int64_t keepdims = 1) {
  return attributes({{"axes", std::move(axes)}, {"keepdims", keepdims}});
}

/// mean(op(y, c), axes) with y [1, 3, 3, 4] and the weight c of `c_dims`.
ir::Graph mean_of_binary(OpKind op, const std::vector<int64_t>& c_dims, std::vector<int64_t> axes) {
  Builder g;
  const ValueId y = g.op(op, {g.input({1, 3, 3, 4}), g.weight(c_dims)});
  return g.finish({g.op(OpKind::kReduceMean, {y}, mean_over(std::move(axes)))});
}

/// mean(x, axes) with x of `dims`.
ir::Graph spatial_mean(const std::vector<int64_t>& dims, std::vector<int64_t> axes, int64_t keepdims) {
  Builder g;
  return g.finish({g.op(OpKind::kReduceMean, {g.input(dims)}, mean_over(std::move(axes), keepdims))});
}

/// mean(matmul(g, w[, c]), axes) with g [2, 3, 3, 4], w [4, 5], c [5].
ir::Graph mean_of_matmul(bool summand, std::vector<int64_t> axes, int64_t keepdims = 1) {
  Builder g;
  std::vector<ValueId> inputs = {g.input({2, 3, 3, 4}), g.weight({4, 5})};
  if (summand) inputs.push_back(g.weight({5}));
  const ValueId p = g.op(OpKind::kMatMul, inputs);
  return g.finish({g.op(OpKind::kReduceMean, {p}, mean_over(std::move(axes), keepdims))});
}

// ---- The cases, one family each.

/// An operator and the name the rules give it.
using NamedOp = std::pair<OpKind, const char*>;

std::vector<Case> concat_split_cases() {
  return {
      {"eliminate-single-concat", "concat(x) read by a Relu",
       [] {
         Builder g;
         return g.finish({g.op(OpKind::kRelu, {g.op(OpKind::kConcat, {g.input({2, 3})}, axis(1))})});
       },
       1, 1},
      {"eliminate-single-split", "split(x) into one part",
       [] {
         Builder g;
         return g.finish(
             {g.op(OpKind::kRelu, {g.node(OpKind::kSplit, {g.input({2, 3})}, split(0, {2}), 1)[0]})});
       },
       1, 1},
      {"eliminate-split-of-concat", "two parts on axis 1",
       [] {
         Builder g;
         const ValueId c = g.op(OpKind::kConcat, {g.input({2, 3}), g.input({2, 5})}, axis(1));
         return g.finish(g.node(OpKind::kSplit, {c}, split(1, {3, 5}), 2));
       },
       1, 0},
      {"eliminate-split-of-concat", "three parts on axis 0, read by a Relu",
       [] {
         Builder g;
         const ValueId c = g.op(OpKind::kConcat, {g.input({1, 4}), g.input({2, 4}), g.input({3, 4})}, axis(0));
         const std::vector<ValueId> parts = g.node(OpKind::kSplit, {c}, split(0, {1, 2, 3}), 3);
         return g.finish({parts[0], g.op(OpKind::kRelu, {parts[1]}), parts[2]});
       },
       1, 1},
      {"merge-split-pair-in-concat", "split [1, 2, 3], concat(w, s0, s1)",
       [] {
         Builder g;
         const ValueId w = g.input({2, 4});
         const std::vector<ValueId> s = g.node(OpKind::kSplit, {g.input({2, 6})}, split(1, {1, 2, 3}), 3);
         return g.finish({g.op(OpKind::kConcat, {w, s[0], s[1]}, axis(1)), s[2]});
       },
       1, 2},
      {"merge-split-pair-in-concat", "split [2, 2, 2] on axis 0, concat(s1, s2)",
       [] {
         Builder g;
         const std::vector<ValueId> s = g.node(OpKind::kSplit, {g.input({6, 3})}, split(0, {2, 2, 2}), 3);
         return g.finish({s[0], g.op(OpKind::kConcat, {s[1], s[2]}, axis(0))});
       },
       1, 2},
      {"eliminate-split-pair-in-concat", "concat(w, s0, s1, v) on axis 1",
       [] {
         Builder g;
         const ValueId w = g.input({2, 1});
         const ValueId v = g.input({2, 2});
         const std::vector<ValueId> s = g.node(OpKind::kSplit, {g.input({2, 5})}, split(1, {2, 3}), 2);
         return g.finish({g.op(OpKind::kConcat, {w, s[0], s[1], v}, axis(1))});
       },
       1, 1},
      {"eliminate-concat-of-split", "three parts on axis 0",
       [] {
         Builder g;
         const ValueId x = g.input({6, 2});
         const std::vector<ValueId> s = g.node(OpKind::kSplit, {x}, split(0, {1, 2, 3}), 3);
         return g.finish({g.op(OpKind::kRelu, {g.op(OpKind::kConcat, s, axis(0))})});
       },
       1, 1},
      {"flatten-concat-of-first-concat", "concat(concat(a, b, c), v) on axis 1",
       [] {
         Builder g;
         const ValueId inner = g.op(OpKind::kConcat, {g.input({2, 1}), g.input({2, 2}), g.input({2, 3})}, axis(1));
         return g.finish({g.op(OpKind::kConcat, {inner, g.input({2, 4})}, axis(1))});
       },
       1, 1},
      {"flatten-concat-of-last-concat", "concat(w, v, concat(a, b)) on axis 0",
       [] {
         Builder g;
         const ValueId inner = g.op(OpKind::kConcat, {g.input({1, 3}), g.input({2, 3})}, axis(0));
         return g.finish({g.op(OpKind::kConcat, {g.input({2, 3}), g.input({1, 3}), inner}, axis(0))});
       },
       1, 1},
      {"flatten-split-of-last-part", "split [1, 5] on axis 1, its last part split [2, 3]",
       [] {
         Builder g;
         const std::vector<ValueId> outer = g.node(OpKind::kSplit, {g.input({2, 6})}, split(1, {1, 5}), 2);
         const std::vector<ValueId> inner = g.node(OpKind::kSplit, {outer[1]}, split(1, {2, 3}), 2);
         return g.finish({g.op(OpKind::kRelu, {outer[0]}), inner[0], inner[1]});
       },
       1, 2},
      {"flatten-split-of-first-part", "split [3, 1, 2] on axis 0, its first part split [1, 2]",
       [] {
         Builder g;
         const std::vector<ValueId> outer = g.node(OpKind::kSplit, {g.input({6, 2})}, split(0, {3, 1, 2}), 3);
         const std::vector<ValueId> inner = g.node(OpKind::kSplit, {outer[0]}, split(0, {1, 2}), 2);
         return g.finish({inner[1], outer[1], inner[0], g.op(OpKind::kRelu, {outer[2]})});
       },
       1, 2},
  };
}

std::vector<Case> concat_commuting_cases() {
  std::vector<Case> cases;
  for (const auto& [op, name] :
       std::vector<NamedOp>{{OpKind::kRelu, "relu"}, {OpKind::kSigmoid, "sigmoid"}, {OpKind::kTanh, "tanh"}}) {
    const OpKind unary = op;
    cases.push_back({std::string("pull-") + name + "-out-of-concat", "parts [2, 3] and [2, 4]",
                     [unary] { return unary_and_concat(unary, true); }, 1, 2});
    cases.push_back({std::string("push-") + name + "-into-concat", "parts [2, 3] and [2, 4]",
                     [unary] { return unary_and_concat(unary, false); }, 1, 3});
  }
  for (const auto& [op, name] : std::vector<NamedOp>{{OpKind::kAdd, "add"}, {OpKind::kMul, "mul"}}) {
    const OpKind binary = op;
    cases.push_back({std::string("pull-") + name + "-out-of-concat", "parts [2, 3] and [2, 4]",
                     [binary] { return binary_and_concat(binary, true); }, 1, 3});
    cases.push_back({std::string("push-") + name + "-into-concat", "parts [2, 3] and [2, 4]",
                     [binary] { return binary_and_concat(binary, false); }, 1, 3});
  }
  return cases;
}

std::vector<Case> transpose_cases() {
  return {
      {"compose-transposes-rank2", "[1, 0] twice",
       [] {
         return two_transposes({2, 3}, {1, 0}, {1, 0});
       },
       1, 1},
      {"compose-transposes-rank3", "[1, 2, 0] then [0, 2, 1]",
       [] {
         return two_transposes({2, 3, 4}, {1, 2, 0}, {0, 2, 1});
       },
       1, 1},
      {"compose-transposes-rank4", "BERT's [0, 2, 1, 3] then [0, 1, 3, 2]",
       [] {
         return two_transposes({2, 3, 4, 5}, {0, 2, 1, 3}, {0, 1, 3, 2});
       },
       1, 1},
      {"compose-transposes-rank5", "[2, 0, 3, 1, 4] then [1, 3, 0, 2, 4]",
       [] {
         return two_transposes({2, 3, 2, 4, 5}, {2, 0, 3, 1, 4}, {1, 3, 0, 2, 4});
       },
       1, 1},
      {"pull-transposes-out-of-matmul", "a [3, 4], b [5, 3]",
       [] {
         Builder g;
         const ValueId at = g.op(OpKind::kTranspose, {g.input({3, 4})}, perm({1, 0}));
         const ValueId bt = g.op(OpKind::kTranspose, {g.input({5, 3})}, perm({1, 0}));
         return g.finish({g.op(OpKind::kMatMul, {at, bt})});
       },
       1, 2},
      {"pull-transposes-out-of-matmul", "with a fused relu",
       [] {
         Builder g;
         const ValueId at = g.op(OpKind::kTranspose, {g.input({3, 4})}, perm({1, 0}));
         const ValueId bt = g.op(OpKind::kTranspose, {g.input({5, 3})}, perm({1, 0}));
         return g.finish({g.op(OpKind::kMatMul, {at, bt}, attributes({{"activation", std::string("relu")}}))});
       },
       1, 2},
      {"push-transpose-into-matmul", "a [4, 3] input, b [3, 5] weight",
       [] {
         Builder g;
         const ValueId p = g.op(OpKind::kMatMul, {g.input({4, 3}), g.weight({3, 5})});
         return g.finish({g.op(OpKind::kTranspose, {p}, perm({1, 0}))});
       },
       1, 3},
  };
}

std::vector<Case> arithmetic_cases() {
  const std::vector<std::vector<int64_t>> same = {{2, 3}, {2, 3}, {2, 3}};
  const std::vector<std::vector<int64_t>> broadcast = {{1, 3}, {2, 3}, {2, 1}};
  std::vector<Case> cases = {
      {"associate-add-right", "a [2, 3], b [3], c [2, 1]",
       [] {
         return nested(OpKind::kAdd, OpKind::kAdd, true, {2, 3}, {3}, {2, 1});
       },
       1, 2},
      {"associate-add-right", "int64",
       [] {
         return nested(OpKind::kAdd, OpKind::kAdd, true, {2, 3}, {2, 3}, {2, 3}, DataType::kInt64);
       },
       1, 2},
      {"associate-add-left", "a [2, 1], b [2, 3], c [3]",
       [] {
         return nested(OpKind::kAdd, OpKind::kAdd, false, {2, 3}, {3}, {2, 1});
       },
       1, 2},
      {"associate-mul-right", "a [2, 3], b [3], c [2, 1]",
       [] {
         return nested(OpKind::kMul, OpKind::kMul, true, {2, 3}, {3}, {2, 1});
       },
       1, 2},
      {"associate-mul-left", "int64",
       [] {
         return nested(OpKind::kMul, OpKind::kMul, false, {2, 3}, {2, 3}, {2, 3}, DataType::kInt64);
       },
       1, 2},
      {"distribute-mul-over-add", "a * (b + c), broadcast",
       [] {
         return nested(OpKind::kAdd, OpKind::kMul, false, {2, 3}, {1, 3}, {2, 1});
       },
       1, 3},
      {"distribute-mul-over-add", "(a + b) * c, operands swapped",
       [] {
         return nested(OpKind::kAdd, OpKind::kMul, true, {2, 3}, {3}, {2, 3});
       },
       1, 3},
      {"distribute-mul-over-sub", "a * (b - c)",
       [] {
         return nested(OpKind::kSub, OpKind::kMul, false, {2, 3}, {2, 3}, {3});
       },
       1, 3},
      {"distribute-mul-over-sub", "(a - b) * c, int64, operands swapped",
       [] {
         return nested(OpKind::kSub, OpKind::kMul, true, {2, 3}, {2, 3}, {2, 3}, DataType::kInt64);
       },
       1, 3},
      {"reassociate-add-of-sub", "a + (b - c)",
       [] {
         return nested(OpKind::kSub, OpKind::kAdd, false, {2, 3}, {3}, {2, 1});
       },
       1, 2},
      {"reassociate-add-of-sub", "(b - c) + a, operands swapped",
       [] {
         return nested(OpKind::kSub, OpKind::kAdd, true, {2, 3}, {2, 3}, {2, 3});
       },
       1, 2},
      {"distribute-one-minus", "(1 - x) * z, ones [2, 3]",
       [] {
         return one_minus_times(true, {2, 3});
       },
       1, 2},
      {"distribute-scalar-one-minus", "(1 - x) * z, scalar 1", [] { return one_minus_times(true, {}); }, 1, 2},
      {"distribute-one-minus", "z * (1 - x), ones [2, 3], operands swapped",
       [] {
         return one_minus_times(false, {2, 3});
       },
       1, 2},
      {"distribute-scalar-one-minus", "z * (1 - x), ones [1], operands swapped", [] { return one_minus_times(false, {1}); }, 1, 2},
  };
  // The factorings: (first product's operands, second's) over inputs a = 0, b = 1, c = 2. The rules
  // are written as a * b + a * c; the matcher takes the products' operands either way round.
  const std::pair<const char*, std::pair<std::pair<int, int>, std::pair<int, int>>> shapes[] = {
      {"left", {{0, 1}, {0, 2}}},
      {"right", {{1, 0}, {2, 0}}},
      {"left-right", {{0, 1}, {2, 0}}},
      {"right-left", {{1, 0}, {0, 2}}},
  };
  for (const auto& [suffix, operands] : shapes) {
    for (const auto& [op, name] : std::vector<NamedOp>{{OpKind::kAdd, "add"}, {OpKind::kSub, "sub"}}) {
      const OpKind outer = op;
      const auto products = operands;
      cases.push_back({std::string("factor-") + name + "-left", std::string(suffix) + ", same shapes",
                       [=] { return two_products(outer, products.first, products.second, same); }, 1, 2});
      cases.push_back({std::string("factor-") + name + "-left", std::string(suffix) + ", broadcast",
                       [=] { return two_products(outer, products.first, products.second, broadcast); }, 1, 2});
    }
  }
  cases.push_back({"factor-add-left", "x * s + y * s, s a scalar",
                   [] {
                     Builder g;
                     const ValueId s = g.weight({});
                     const ValueId xs = g.op(OpKind::kMul, {g.input({2, 3}), s});
                     const ValueId ys = g.op(OpKind::kMul, {g.input({2, 3}), s});
                     return g.finish({g.op(OpKind::kAdd, {xs, ys})});
                   },
                   1, 2});
  return cases;
}

std::vector<Case> softmax_cases() {
  return {
      {"softmax-as-reductions", "softmax of x [2, 4, 3] along axis 1",
       [] {
         Builder g;
         return g.finish({g.op(OpKind::kSoftmax, {g.input({2, 4, 3})}, attributes({{"axis", int64_t{1}}}))});
       },
       1, 5},
      {"softmax-as-reductions", "YOLOv8's box distributions, [1, 16, 4, 6] along axis 1 after a transpose",
       [] {
         Builder g;
         const ValueId t = g.op(OpKind::kTranspose, {g.input({1, 4, 16, 6})}, perm({0, 2, 1, 3}));
         return g.finish({g.op(OpKind::kSoftmax, {t}, attributes({{"axis", int64_t{1}}}))});
       },
       1, 6},
  };
}

std::vector<Case> scalar_cases() {
  return {
      {"fold-scalar-muls", "x [2, 3] * s [] * t [1, 1]",
       [] {
         Builder g;
         const ValueId xs = g.op(OpKind::kMul, {g.input({2, 3}), g.weight({})});
         return g.finish({g.op(OpKind::kMul, {xs, g.weight({1, 1})})});
       },
       1, 2},
      {"fold-scalar-into-matmul-weight", "x [4, 3] * s, w [3, 5]",
       [] {
         Builder g;
         const ValueId xs = g.op(OpKind::kMul, {g.input({4, 3}), g.weight({1})});
         return g.finish({g.op(OpKind::kMatMul, {xs, g.weight({3, 5})})});
       },
       1, 2},
      {"fold-product-scale-into-matmul-weight", "matmul(x [2, 4, 3], w [3, 5]) * s",
       [] {
         Builder g;
         const ValueId p = g.op(OpKind::kMatMul, {g.input({2, 4, 3}), g.weight({3, 5})});
         return g.finish({g.op(OpKind::kMul, {p, g.weight({})})});
       },
       1, 2},
      {"fold-scalar-into-conv-weight", "pads 1", [] { return scaled_conv(true, false); }, 1, 2},
      {"fold-scalar-into-conv-bias-weight", "pads 1", [] { return scaled_conv(true, true); }, 1, 2},
      {"fold-output-scale-into-conv-weight", "pads 1", [] { return scaled_conv(false, false); }, 1, 2},
      {"fold-output-scale-into-conv-bias-weight", "pads 1", [] { return scaled_conv(false, true); }, 1, 3},
      // One factor per output channel, as [C, 1, 1] only; not without a bias.
      {"fold-output-channel-scale-into-conv-bias-weight", "s [4, 1, 1]",
       [] { return scaled_conv(false, true, {4, 1, 1}); }, 1, 5},
      {"fold-output-channel-scale-into-conv-bias-weight", "s [1, 4, 1, 1]",
       [] { return scaled_conv(false, true, {1, 4, 1, 1}); }, 0, 0},
      {"fold-output-channel-scale-into-conv-bias-weight", "s [4, 6, 6]",
       [] { return scaled_conv(false, true, {4, 6, 6}); }, 0, 0},
      {"fold-output-channel-scale-into-conv-bias-weight", "no bias",
       [] { return scaled_conv(false, false, {4, 1, 1}); }, 0, 0},
      {"div-by-scalar-to-mul", "x [2, 3] / 4",
       [] {
         return with_constant(OpKind::kDiv, {2, 3}, {1}, 4.0f);
       },
       1, 2},
      {"pull-scalar-mul-out-of-concat", "a [2, 3] * s, b [2, 4] * s",
       [] {
         Builder g;
         const ValueId s = g.input({});
         const ValueId as = g.op(OpKind::kMul, {g.input({2, 3}), s});
         const ValueId bs = g.op(OpKind::kMul, {g.input({2, 4}), s});
         return g.finish({g.op(OpKind::kConcat, {as, bs}, axis(1))});
       },
       1, 2},
  };
}

std::vector<Case> pooling_cases() {
  return {
      {"average-pool-before-pointwise-conv", "2 x 2 pooling with strides 2 (DenseNet's transition)",
       [] { return pooled_conv(pooling({2, 2}, {2, 2})); }, 1, 2},
      {"average-pool-before-pointwise-conv", "3 x 3 pooling, pads 1, padding counted",
       [] { return pooled_conv(pooling({3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 1)); }, 1, 2},
      {"average-pool-before-pointwise-conv", "3 x 3 pooling, strides 2, pads 1, ceil mode",
       [] { return pooled_conv(pooling({3, 3}, {2, 2}, {1, 1, 1, 1}, 1, 0)); }, 1, 2},
      // The convolution read elsewhere too (it would run twice); a bias, averaged too where padding
      // counts; a wider kernel, which reads neighbours; strides, which skip pixels.
      {"average-pool-before-pointwise-conv", "the convolution read elsewhere too",
       [] { return pooled_conv(pooling({2, 2}, {2, 2}), 1, false, {}, true); }, 0, 0},
      {"average-pool-before-pointwise-conv", "with a bias",
       [] { return pooled_conv(pooling({2, 2}, {2, 2}), 1, true); }, 0, 0},
      {"average-pool-before-pointwise-conv", "a 3 x 3 convolution",
       [] { return pooled_conv(pooling({2, 2}, {2, 2}), 3); }, 0, 0},
      {"average-pool-before-pointwise-conv", "a 1 x 1 convolution with strides 2",
       [] {
         return pooled_conv(pooling({2, 2}, {1, 1}), 1, false, attributes({{"strides", std::vector<int64_t>{2, 2}}}));
       },
       0, 0},
      // Global means: each step of a pooled last block (ConvNeXt, PoolFormer).
      {"global-average-pool-linear", "x + y, one shape",
       [] { return pooled_binary(OpKind::kAdd, {1, 4, 3, 3}); }, 1, 3},
      {"global-average-pool-linear", "x + y, y broadcast over rows",
       [] { return pooled_binary(OpKind::kAdd, {1, 4, 1, 3}); }, 1, 3},
      {"global-average-pool-linear", "x + y, y of rank 3",
       [] { return pooled_binary(OpKind::kAdd, {4, 3, 3}); }, 0, 0},
      {"global-average-pool-of-scale", "s [4, 1, 1]",
       [] { return pooled_binary(OpKind::kMul, {4, 1, 1}, true); }, 1, 2},
      {"global-average-pool-of-scale", "s [1, 4, 1, 1] computed",
       [] { return pooled_binary(OpKind::kMul, {1, 4, 1, 1}); }, 1, 2},
      {"global-average-pool-of-scale", "s [4, 3, 1] varies over rows",
       [] { return pooled_binary(OpKind::kMul, {4, 3, 1}, true); }, 0, 0},
      {"global-average-pool-of-pointwise-conv", "no bias", [] { return globally_pooled_conv(false); }, 1, 2},
      {"global-average-pool-of-pointwise-conv", "two groups",
       [] { return globally_pooled_conv(false, 1, attributes({{"group", int64_t{2}}}), 2); }, 1, 2},
      {"global-average-pool-of-pointwise-conv-bias", "with a bias", [] { return globally_pooled_conv(true); }, 1, 2},
      {"global-average-pool-of-pointwise-conv-bias", "a 3 x 3 kernel",
       [] { return globally_pooled_conv(true, 3); }, 0, 0},
      {"global-average-pool-of-pointwise-conv-bias", "strides 2",
       [] { return globally_pooled_conv(true, 1, attributes({{"strides", std::vector<int64_t>{2, 2}}})); }, 0, 0},
      {"global-average-pool-of-channels-last", "transpose [0, 3, 1, 2]",
       [] {
         Builder g;
         const ValueId t = g.op(OpKind::kTranspose, {g.input({1, 3, 3, 4})}, perm({0, 3, 1, 2}));
         return g.finish({g.op(OpKind::kGlobalAveragePool, {t})});
       },
       1, 2},
      {"global-average-pool-of-channels-last", "transpose [0, 1, 3, 2]",
       [] {
         Builder g;
         const ValueId t = g.op(OpKind::kTranspose, {g.input({1, 4, 3, 3})}, perm({0, 1, 3, 2}));
         return g.finish({g.op(OpKind::kGlobalAveragePool, {t})});
       },
       0, 0},
      {"reduce-mean-of-bias", "b [4], mean over rows and columns",
       [] { return mean_of_binary(OpKind::kAdd, {4}, {1, 2}); }, 1, 2},
      {"reduce-mean-of-bias", "b [4], mean over the last axis", [] { return mean_of_binary(OpKind::kAdd, {4}, {3}); },
       0, 0},
      {"reduce-mean-of-bias", "b [3, 4], mean over rows and columns",
       [] { return mean_of_binary(OpKind::kAdd, {3, 4}, {1, 2}); }, 0, 0},
      {"reduce-mean-of-scale", "s [4], mean over rows and columns",
       [] { return mean_of_binary(OpKind::kMul, {4}, {1, 2}); }, 1, 2},
      {"reduce-mean-of-scale", "a scalar, mean over every axis",
       [] { return mean_of_binary(OpKind::kMul, {}, {0, 1, 2, 3}); }, 1, 2},
      {"reduce-mean-of-matmul", "mean over rows and columns", [] { return mean_of_matmul(false, {1, 2}); }, 1, 2},
      {"reduce-mean-of-matmul", "mean over the batch", [] { return mean_of_matmul(false, {0}); }, 1, 2},
      {"reduce-mean-of-matmul", "mean over the last axis", [] { return mean_of_matmul(false, {3}); }, 0, 0},
      {"reduce-mean-of-matmul", "keepdims 0", [] { return mean_of_matmul(false, {1, 2}, 0); }, 0, 0},
      {"reduce-mean-of-matmul-bias", "mean over rows and columns", [] { return mean_of_matmul(true, {1, 2}); }, 1, 2},
      {"reduce-mean-of-matmul-bias", "mean over the last axis", [] { return mean_of_matmul(true, {3}); }, 0, 0},
      {"reduce-mean-spatial-is-global-average-pool", "mean over [2, 3] of an image",
       [] { return spatial_mean({1, 4, 3, 3}, {2, 3}, 1); }, 1, 1},
      {"reduce-mean-spatial-is-global-average-pool", "mean over [1, 2]",
       [] { return spatial_mean({1, 4, 3, 3}, {1, 2}, 1); }, 0, 0},
      {"reduce-mean-spatial-is-global-average-pool", "rank 5", [] { return spatial_mean({1, 4, 3, 3, 2}, {2, 3}, 1); },
       0, 0},
      {"reduce-mean-spatial-is-flat-global-average-pool", "keepdims 0",
       [] { return spatial_mean({2, 4, 3, 3}, {2, 3}, 0); }, 1, 2},
  };
}

std::vector<Case> identity_cases() {
  std::vector<Case> cases = {
      {"eliminate-identity", "read by a Relu",
       [] {
         Builder g;
         return g.finish({g.op(OpKind::kRelu, {g.op(OpKind::kIdentity, {g.input({2, 3})})})});
       },
       1, 1},
      {"eliminate-identity", "a graph output",
       [] {
         Builder g;
         return g.finish({g.op(OpKind::kIdentity, {g.input({2, 3})})});
       },
       1, 0},
      {"eliminate-dropout", "without mask",
       [] {
         Builder g;
         return g.finish({g.op(OpKind::kRelu, {g.op(OpKind::kDropout, {g.input({2, 3})})})});
       },
       1, 1},
      {"eliminate-dropout", "with an unused mask",
       [] {
         Builder g;
         const std::vector<ValueId> out = g.node(OpKind::kDropout, {g.input({2, 3})}, {}, 2);
         return g.finish({g.op(OpKind::kRelu, {out[0]})});
       },
       1, 1},
      {"eliminate-mul-by-one", "x * ones [2, 3]",
       [] {
         return with_constant(OpKind::kMul, {2, 3}, {2, 3}, 1.0f);
       },
       1, 0},
      {"eliminate-mul-by-one", "x * 1 (scalar)",
       [] {
         return with_constant(OpKind::kMul, {2, 3}, {}, 1.0f);
       },
       1, 0},
      {"eliminate-mul-by-one", "ones [1, 3] * x",
       [] {
         return with_constant(OpKind::kMul, {2, 3}, {1, 3}, 1.0f, true);
       },
       1, 0},
      {"eliminate-add-zero", "x + zeros [3]",
       [] {
         return with_constant(OpKind::kAdd, {2, 3}, {3}, 0.0f);
       },
       1, 0},
      {"eliminate-add-zero", "int64 x + int64 0",
       [] {
         Builder g;
         const ValueId x = g.input({2, 3}, DataType::kInt64);
         return g.finish({g.op(OpKind::kAdd, {x, g.ints({}, {0})})});
       },
       1, 0},
      {"eliminate-add-zero", "-0.0 + x",
       [] {
         return with_constant(OpKind::kAdd, {2, 3}, {}, -0.0f, true);
       },
       1, 0},
      {"eliminate-sub-zero", "x - zeros [2, 3]",
       [] {
         return with_constant(OpKind::kSub, {2, 3}, {2, 3}, 0.0f);
       },
       1, 0},
      {"eliminate-div-by-one", "x / 1",
       [] {
         return with_constant(OpKind::kDiv, {2, 3}, {1}, 1.0f);
       },
       1, 0},
      {"eliminate-identity-reshape", "shape [0, -1, 4]",
       [] {
         Builder g;
         const ValueId x = g.input({2, 3, 4});
         return g.finish(
             {g.op(OpKind::kRelu,
                   {g.op(OpKind::kReshape, {x}, attributes({{"shape", std::vector<int64_t>{0, -1, 4}}}))})});
       },
       1, 1},
      {"eliminate-identity-cast", "float to float",
       [] {
         Builder g;
         return g.finish(
             {g.op(OpKind::kRelu, {g.op(OpKind::kCast, {g.input({2, 3})}, attributes({{"to", int64_t{1}}}))})});
       },
       1, 1},
      {"eliminate-identity-expand", "[2, 4] to [1, 4]",
       [] {
         Builder g;
         const ValueId x = g.input({2, 4});
         return g.finish({g.op(OpKind::kRelu, {g.op(OpKind::kExpand, {x, g.ints({2}, {1, 4})})})});
       },
       1, 1},
  };
  for (int64_t rank = 1; rank <= 5; ++rank) {
    std::vector<int64_t> dims;
    std::vector<int64_t> identity;
    for (int64_t i = 0; i < rank; ++i) {
      dims.push_back(i + 2);
      identity.push_back(i);
    }
    cases.push_back({"eliminate-identity-transpose-rank" + std::to_string(rank), "read by a Relu",
                     [=] {
                       Builder g;
                       const ValueId t = g.op(OpKind::kTranspose, {g.input(dims)}, perm(identity));
                       return g.finish({g.op(OpKind::kRelu, {t})});
                     },
                     1, 1});
  }
  return cases;
}

/// The nodes that run: those export does not fold into weights.
std::vector<ir::NodeId> running_nodes(const ir::Graph& graph) {
  const std::vector<bool> folded = ops::folded_nodes(graph);
  std::vector<ir::NodeId> running;
  for (ir::NodeId id : graph.node_ids()) {
    if (!folded[id]) running.push_back(id);
  }
  return running;
}

std::multiset<OpKind> running_ops(const ir::Graph& graph) {
  std::multiset<OpKind> ops;
  for (ir::NodeId id : running_nodes(graph)) ops.insert(graph.node(id).op);
  return ops;
}

/// The cost of `graph` and of what each rule, applied in turn at its only match, leaves.
std::vector<double> step_costs(const ir::Graph& graph, const std::vector<std::string>& names,
                               const cost::CostModel& model) {
  std::vector<double> costs = {model.graph_cost(graph).time_ms};
  std::optional<ir::Graph> current = graph;
  for (const std::string& name : names) {
    const std::vector<rewrite::Match> matches = rewrite::Matcher::find(*current, rule_named(name));
    REQUIRE(matches.size() == 1);
    current = rewrite::apply(*current, matches[0]);
    REQUIRE(current);
    costs.push_back(model.graph_cost(*current).time_ms);
  }
  return costs;
}

/// MetaFlow's SRU step x * y + (1 - x) * z on [1, 1024] inputs, `one` of sizes `one_dims`.
ir::Graph sru(const std::vector<int64_t>& one_dims) {
  Builder g;
  const ValueId x = g.input({1, 1024});
  const ValueId y = g.input({1, 1024});
  const ValueId z = g.input({1, 1024});
  const ValueId xy = g.op(OpKind::kMul, {x, y});
  const ValueId d = g.op(OpKind::kSub, {g.filled(one_dims, 1.0f), x});
  return g.finish({g.op(OpKind::kAdd, {xy, g.op(OpKind::kMul, {d, z})})});
}

}  // namespace

TEST_CASE("algebra: the concat and split inverses keep what the graph computes", "[rules]") {
  check_cases(concat_split_cases());
}

TEST_CASE("algebra: concatenation commutes with element-wise operators", "[rules]") {
  check_cases(concat_commuting_cases());
}

TEST_CASE("algebra: the transposition rules keep what the graph computes", "[rules]") {
  check_cases(transpose_cases());
}

TEST_CASE("algebra: the element-wise arithmetic rules keep what the graph computes", "[rules]") {
  check_cases(arithmetic_cases());
}

TEST_CASE("algebra: the scalar-multiply rules keep what the graph computes", "[rules]") {
  check_cases(scalar_cases());
}

TEST_CASE("algebra: pooling and means moved before what is linear keep what the graph computes", "[rules]") {
  check_cases(pooling_cases());
}

TEST_CASE("algebra: the identity eliminations keep what the graph computes", "[rules]") {
  check_cases(identity_cases());
}

TEST_CASE("algebra: a softmax written as its reductions keeps what the graph computes", "[rules]") {
  check_cases(softmax_cases());
}

TEST_CASE("algebra: every rule has a numeric case", "[rules]") {
  std::set<std::string> tested;
  for (const auto& cases : {concat_split_cases(), concat_commuting_cases(), transpose_cases(),
                            arithmetic_cases(), scalar_cases(), pooling_cases(), identity_cases(),
                            softmax_cases()}) {
    for (const Case& c : cases) tested.insert(c.rule);
  }
  std::set<std::string> shipped;
  for (const rules::Rule& rule : algebra_rules()) shipped.insert(rule.name);
  CHECK(tested == shipped);
}

TEST_CASE("algebra: a concatenation or split of one tensor is that tensor", "[rules]") {
  // What merge-split-pair-in-concat leaves when the pair was the whole split and the whole concat.
  Builder g;
  const ValueId x = g.input({2, 6});
  const std::vector<ValueId> s = g.node(OpKind::kSplit, {x}, split(1, {2, 4}), 2);
  const ir::Graph before = g.finish({g.op(OpKind::kRelu, {g.op(OpKind::kConcat, s, axis(1))})});
  std::vector<rewrite::Match> matches =
      rewrite::Matcher::find(before, rule_named("merge-split-pair-in-concat"));
  REQUIRE(matches.size() == 1);
  std::optional<ir::Graph> graph = rewrite::apply(before, matches[0]);
  REQUIRE(graph);
  for (const char* name : {"eliminate-single-split", "eliminate-single-concat"}) {
    INFO(name);
    matches = rewrite::Matcher::find(*graph, rule_named(name));
    REQUIRE(matches.size() == 1);
    graph = rewrite::apply(*graph, matches[0]);
    REQUIRE(graph);
  }
  CHECK(running_ops(*graph) == std::multiset<OpKind>{OpKind::kRelu});
  CHECK(runtime::check_equivalent(before, *graph).passed());
}

TEST_CASE("algebra: two transpositions that compose to the identity cancel", "[rules]") {
  using Dims = std::vector<int64_t>;
  const std::vector<std::tuple<Dims, Dims, Dims>> cases = {
      {{2, 3}, {1, 0}, {1, 0}}, {{2, 3, 4, 5}, {0, 2, 1, 3}, {0, 2, 1, 3}}, {{2, 3, 4}, {1, 2, 0}, {2, 0, 1}}};
  for (const auto& [dims, p, q] : cases) {
    const ir::Graph before = two_transposes(dims, p, q);
    const std::string rank = std::to_string(dims.size());
    std::optional<ir::Graph> graph = before;
    for (const std::string& name :
         {"compose-transposes-rank" + rank, "eliminate-identity-transpose-rank" + rank}) {
      INFO(name);
      const std::vector<rewrite::Match> matches = rewrite::Matcher::find(*graph, rule_named(name));
      REQUIRE(matches.size() == 1);
      graph = rewrite::apply(*graph, matches[0]);
      REQUIRE(graph);
    }
    CHECK(graph->node_count() == 0);
    CHECK(runtime::check_equivalent(before, *graph).passed());
  }
}

TEST_CASE("algebra: the rules refuse where they would not be exact", "[rules]") {
  const auto no_match = [](const ir::Graph& graph, const std::string& rule) {
    INFO(rule);
    CHECK(rewrite::Matcher::find(graph, rule_named(rule)).empty());
  };
  const auto refused = [](const ir::Graph& graph, const std::string& rule, const std::string& reason) {
    INFO(rule);
    const std::vector<rewrite::Match> matches = rewrite::Matcher::find(graph, rule_named(rule));
    REQUIRE(matches.size() == 1);
    std::string why;
    CHECK_FALSE(rewrite::apply(graph, matches[0], &why));
    CHECK_THAT(why, Catch::Contains(reason));
  };
  SECTION("x * 1 that broadcasts x to a larger shape") {
    refused(with_constant(OpKind::kMul, {1, 3}, {2, 3}, 1.0f), "eliminate-mul-by-one", "types differ");
    refused(with_constant(OpKind::kAdd, {3}, {2, 1}, 0.0f, true), "eliminate-add-zero", "types differ");
  }
  SECTION("a constant that is not all ones or zeros, or not constant") {
    no_match(with_constant(OpKind::kMul, {2, 3}, {2, 3}, 2.0f), "eliminate-mul-by-one");
    no_match(with_constant(OpKind::kSub, {2, 3}, {}, 1.0f), "eliminate-sub-zero");
    Builder g;
    const ValueId x = g.input({2, 3});
    const ValueId mixed = g.ints({2}, {1, 0});
    const ValueId xi = g.input({2}, DataType::kInt64);
    no_match(g.finish({g.op(OpKind::kMul, {xi, mixed}), x}), "eliminate-mul-by-one");
    // An input with a default of ones may be fed other values.
    Builder h;
    const ValueId y = h.input({2, 3});
    const ValueId ones =
        h.graph().add_input("ones", testing::float_type({2, 3}),
                            ir::share(ir::Tensor::from_floats({2, 3}, std::vector<float>(6, 1.0f))));
    no_match(h.finish({h.op(OpKind::kMul, {y, ones})}), "eliminate-mul-by-one");
  }
  SECTION("x + 0 with x int64 and 0 float") {
    // Add refuses mixed element types; a node typed as its float operand is refused by the map.
    Builder g;
    const ValueId x = g.input({2, 3}, DataType::kInt64);
    const ValueId zero = g.filled({2, 3}, 0.0f);
    CHECK_THROWS(g.op(OpKind::kAdd, {x, zero}));
    const ir::NodeId add = g.graph().add_node(OpKind::kAdd, {x, zero}, {{testing::float_type({2, 3}), {}}});
    refused(g.finish({g.graph().node(add).outputs[0]}), "eliminate-add-zero", "types differ");
  }
  SECTION("a split into more parts than the two concatenated") {
    Builder g;
    const std::vector<ValueId> s = g.node(OpKind::kSplit, {g.input({2, 6})}, split(1, {2, 2, 2}), 3);
    const ir::Graph graph = g.finish({g.op(OpKind::kConcat, {s[0], s[1]}, axis(1))});
    no_match(graph, "eliminate-split-pair-in-concat");
    no_match(graph, "eliminate-concat-of-split");
  }
  SECTION("a concatenation split at other sizes, or concatenated out of order") {
    Builder g;
    const ValueId c = g.op(OpKind::kConcat, {g.input({2, 3}), g.input({2, 5})}, axis(1));
    no_match(g.finish(g.node(OpKind::kSplit, {c}, split(1, {4, 4}), 2)), "eliminate-split-of-concat");
    Builder h;
    const std::vector<ValueId> s = h.node(OpKind::kSplit, {h.input({6, 2})}, split(0, {1, 2, 3}), 3);
    no_match(h.finish({h.op(OpKind::kConcat, {s[1], s[0], s[2]}, axis(0))}), "eliminate-concat-of-split");
  }
  SECTION("concatenations whose parts differ in shape") {
    Builder g;
    const ValueId ab = g.op(OpKind::kConcat, {g.input({2, 3}), g.input({2, 5})}, axis(1));
    const ValueId cd = g.op(OpKind::kConcat, {g.input({2, 5}), g.input({2, 3})}, axis(1));
    no_match(g.finish({g.op(OpKind::kAdd, {ab, cd})}), "push-add-into-concat");
  }
  SECTION("a transposed product of a vector and a stack of matrices") {
    Builder g;
    const ValueId p = g.op(OpKind::kMatMul, {g.input({3}), g.input({2, 3, 5})});
    no_match(g.finish({g.op(OpKind::kTranspose, {p}, perm({1, 0}))}), "push-transpose-into-matmul");
  }
  SECTION("a scale that would broadcast, a weight that is not one, an activation") {
    Builder g;
    const ValueId xs = g.op(OpKind::kMul, {g.input({4, 3}), g.weight({1, 1, 1})});
    no_match(g.finish({g.op(OpKind::kMatMul, {xs, g.weight({3, 5})})}), "fold-scalar-into-matmul-weight");
    Builder h;
    const ValueId hs = h.op(OpKind::kMul, {h.input({4, 3}), h.weight({})});
    no_match(h.finish({h.op(OpKind::kMatMul, {hs, h.input({3, 5})})}), "fold-scalar-into-matmul-weight");
    Builder k;
    const ValueId p = k.op(OpKind::kMatMul, {k.input({4, 3}), k.weight({3, 5})},
                           attributes({{"activation", std::string("relu")}}));
    no_match(k.finish({k.op(OpKind::kMul, {p, k.weight({})})}), "fold-product-scale-into-matmul-weight");
  }
  SECTION("an integer division") {
    Builder g;
    const ValueId x = g.input({2, 3}, DataType::kInt64);
    refused(g.finish({g.op(OpKind::kDiv, {x, g.ints({}, {2})})}), "div-by-scalar-to-mul", "Reciprocal");
  }
  SECTION("reshapes, casts and expands that change the tensor") {
    Builder g;
    const ValueId x = g.input({2, 3, 4});
    refused(g.finish({g.op(OpKind::kReshape, {x}, attributes({{"shape", std::vector<int64_t>{3, 2, 4}}}))}),
            "eliminate-identity-reshape", "types differ");
    Builder h;
    refused(h.finish({h.op(OpKind::kCast, {h.input({2, 3})}, attributes({{"to", int64_t{11}}}))}),
            "eliminate-identity-cast", "types differ");
    Builder k;
    const ValueId e = k.op(OpKind::kExpand, {k.input({1, 4}), k.ints({2}, {3, 4})});
    no_match(k.finish({e}), "eliminate-identity-expand");
  }
  SECTION("a dropout whose mask is read") {
    Builder g;
    const std::vector<ValueId> out = g.node(OpKind::kDropout, {g.input({2, 3})}, {}, 2);
    no_match(g.finish(out), "eliminate-dropout");
  }
  SECTION("a softmax along the last axis, as attention's") {
    Builder g;
    no_match(g.finish({g.op(OpKind::kSoftmax, {g.input({2, 4, 3})}, attributes({{"axis", int64_t{-1}}}))}),
             "softmax-as-reductions");
  }
}

TEST_CASE("algebra: wrong variants of the rules fail the same check", "[rules]") {
  SECTION("a factoring with the operands of the difference swapped") {
    const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-factor-sub
  source
    ab = Mul(a, b)
    ac = Mul(a, c)
    y = Sub(ab, ac)
  target
    cb = Sub(c, b)
    y2 = Mul(a, cb)
  map y -> y2
end
)",
                                                              "wrong.rules");
    const ir::Graph graph = two_products(OpKind::kSub, {0, 1}, {0, 2}, {{2, 3}, {2, 3}, {2, 3}});
    CHECK(rewrite_error(graph, rule_named("factor-sub-left")).empty());
    CHECK(rewrite_error(graph, wrong[0]) == "the outputs differ");
  }
  SECTION("a pooling with padding counted moved before a convolution with a bias") {
    // The bias is averaged with the padding's zeros at the borders: why the rule takes no bias.
    const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-average-pool-before-pointwise-conv-bias
  source
    c = Conv(x, w, b) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], group = 1, activation = "none"]
    r = AveragePool(c)
  target
    a = AveragePool(x) [@r]
    r2 = Conv(a, w, b) [@c]
  map r -> r2
end
)",
                                                              "wrong.rules");
    const ir::Graph counted = pooled_conv(pooling({3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 1), 1, true);
    CHECK(rewrite_error(counted, wrong[0]) == "the outputs differ");
    // Without padding every window is whole, and the same rewrite holds.
    CHECK(rewrite_error(pooled_conv(pooling({2, 2}, {2, 2}), 1, true), wrong[0]).empty());
  }
  SECTION("two transpositions composed the wrong way round") {
    const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-compose-transposes
  source
    y = Transpose(x) [perm = ?p]
    z = Transpose(y) [perm = ?q]
  where rank(x) == 3
  target
    z2 = Transpose(x) [perm = [?q[?p[0]], ?q[?p[1]], ?q[?p[2]]]]
  map z -> z2
end
)",
                                                              "wrong.rules");
    // A cube keeps every type the same, so only the values tell the orders apart.
    const ir::Graph graph = two_transposes({3, 3, 3}, {1, 2, 0}, {0, 2, 1});
    CHECK(rewrite_error(graph, rule_named("compose-transposes-rank3")).empty());
    CHECK(rewrite_error(graph, wrong[0]) == "the outputs differ");
  }
  SECTION("a split on the wrong axis") {
    const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-eliminate-split-of-concat
  source
    c = Concat(a, b) [axis = 0]
    s1, s2 = Split(c) [axis = 1]
  target
  map s1 -> a, s2 -> b
end
)",
                                                              "wrong.rules");
    // Split on another axis, a part never has the shape of a concatenated tensor: the rewriter
    // refuses the map before the numbers are compared.
    Builder g;
    const ValueId c = g.op(OpKind::kConcat, {g.input({1, 2}), g.input({1, 2})}, axis(0));
    const ir::Graph graph = g.finish(g.node(OpKind::kSplit, {c}, split(1, {1, 1}), 2));
    CHECK_THAT(rewrite_error(graph, wrong[0]), Catch::Contains("types differ"));
    CHECK(rewrite_error(graph, rule_named("eliminate-split-of-concat")) == "no match");
  }
  SECTION("one minus a value that is not one") {
    const std::vector<rules::Rule> wrong = rules::parse_rules(R"(
rule wrong-distribute-one-minus
  source
    d = Sub(one, x)
    y = Mul(d, z)
  where weight(one)
  target
    xz = Mul(x, z)
    y2 = Sub(z, xz)
  map y -> y2
end
)",
                                                              "wrong.rules");
    Builder g;
    const ValueId x = g.input({2, 3});
    const ValueId z = g.input({2, 3});
    const ValueId d = g.op(OpKind::kSub, {g.filled({2, 3}, 2.0f), x});
    const ir::Graph graph = g.finish({g.op(OpKind::kMul, {d, z})});
    CHECK(rewrite_error(graph, rule_named("distribute-one-minus")) == "no match");
    CHECK(rewrite_error(graph, wrong[0]) == "the outputs differ");
  }
}

TEST_CASE("algebra: the search simplifies MetaFlow's SRU step with cost-non-increasing steps", "[rules]") {
  //   x * y + (1 - x) * z  =>  x * (y - z) + z   (4 element-wise operators to 3)
  // On the V100 model: 0.02129 ms (ones [1, 1024]) or 0.02118 ms (a scalar 1) to 0.01596 ms.
  const rewrite::Matcher matcher(algebra_rules());
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  for (const std::vector<int64_t>& one_dims : {std::vector<int64_t>{1, 1024}, std::vector<int64_t>{}}) {
    const std::vector<std::string> path = {one_dims.empty() ? "distribute-scalar-one-minus" : "distribute-one-minus",
                                           "reassociate-add-of-sub", "factor-sub-left"};
    DYNAMIC_SECTION("one of sizes " << ir::to_string(ir::Shape::of(one_dims))) {
      const ir::Graph input = sru(one_dims);
      const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
      CHECK(result.stop == search::StopReason::kExhausted);
      CHECK(running_ops(result.best) == std::multiset<OpKind>{OpKind::kMul, OpKind::kSub, OpKind::kAdd});
      CHECK(result.best_cost.launches == 3);
      CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
      std::vector<std::string> steps;
      for (const search::AppliedStep& step : result.steps) steps.push_back(step.rule);
      CHECK(steps == path);
      CHECK(runtime::check_equivalent(input, result.best).passed());
      // No step costs more than the one before, but for the scalar's broadcast: z - x * z reads
      // all of z where 1 - x read one element (within the search's 1.05).
      const std::vector<double> costs = step_costs(input, path, model);
      const double slack = one_dims.empty() ? 1.01 : 1.0;
      for (std::size_t i = 1; i < costs.size(); ++i) CHECK(costs[i] <= costs[i - 1] * slack);
    }
  }
}

TEST_CASE("algebra: the search folds a scale after a projection with bias into its weights", "[rules]") {
  //   (x w + b) * s  =>  x (w * s) + b * s, both products of weights folded
  Builder g;
  const ValueId p = g.op(OpKind::kMatMul, {g.input({2, 8, 16}), g.weight({16, 16})});
  const ValueId q = g.op(OpKind::kAdd, {p, g.weight({16})});
  const ir::Graph input = g.finish({g.op(OpKind::kMul, {q, g.filled({}, 0.125f)})});
  const rewrite::Matcher matcher(algebra_rules());
  const cost::AnalyticalModel model(cost::device_by_name("v100"));
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  CHECK(running_ops(result.best) == std::multiset<OpKind>{OpKind::kMatMul, OpKind::kAdd});
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(runtime::check_equivalent(input, result.best).passed());
}

TEST_CASE("algebra: the search pools a DenseNet transition before its pointwise convolution", "[rules]") {
  //   avgpool2x2(conv1x1(relu(x), w))  =>  conv1x1(avgpool2x2(relu(x)), w): a quarter of the pixels
  Builder g;
  const ValueId r = g.op(OpKind::kRelu, {g.input({1, 16, 8, 8})});
  const ValueId c = g.op(OpKind::kConv, {r, g.weight({8, 16, 1, 1})});
  const ir::Graph input = g.finish({g.op(OpKind::kAveragePool, {c}, pooling({2, 2}, {2, 2}))});
  const rewrite::Matcher matcher(algebra_rules());
  const cost::AnalyticalModel model(cost::device_by_name("cpu"));
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  const ir::Graph& best = result.best;
  const ir::Node& last = best.node(best.value(best.outputs()[0]).producer);
  REQUIRE(last.op == OpKind::kConv);
  CHECK(best.node(best.value(last.inputs[0]).producer).op == OpKind::kAveragePool);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(runtime::check_equivalent(input, best).passed());
}

TEST_CASE("algebra: the search pools a ConvNeXt block's result before its last projection", "[rules]") {
  //   gap(a + transpose(h w + b) * s)  =>  gap(a) + transpose(mean(h) w + b) * s: w on one pixel
  Builder g;
  const ValueId a = g.input({1, 192, 7, 7});
  const ValueId p = g.op(OpKind::kMatMul, {g.input({1, 7, 7, 768}), g.weight({768, 192})});
  const ValueId t = g.op(OpKind::kTranspose, {g.op(OpKind::kAdd, {p, g.weight({192})})}, perm({0, 3, 1, 2}));
  const ValueId sum = g.op(OpKind::kAdd, {a, g.op(OpKind::kMul, {t, g.weight({192, 1, 1})})});
  const ir::Graph input = g.finish({g.op(OpKind::kGlobalAveragePool, {sum})});
  const rewrite::Matcher matcher(algebra_rules());
  const cost::AnalyticalModel model(cost::device_by_name("cpu"));
  const search::SearchResult result = search::backtracking_search(input, matcher, model, {});
  const ir::Graph& best = result.best;
  bool projected_mean = false;
  for (ir::NodeId id : running_nodes(best)) {
    const ir::Node& node = best.node(id);
    const ir::NodeId producer = best.value(node.inputs[0]).producer;
    if (node.op == OpKind::kMatMul && producer >= 0) projected_mean = best.node(producer).op == OpKind::kReduceMean;
  }
  CHECK(projected_mean);
  CHECK(result.best_cost.time_ms < result.initial_cost.time_ms);
  CHECK(runtime::check_equivalent(input, best).passed());
}

TEST_CASE("algebra: the rules survive a print/parse round trip", "[rules]") {
  const std::vector<rules::Rule>& rules = algebra_rules();
  CHECK(rules.size() == 74);
  CHECK(rules::parse_rules(rules::print_rules(rules), "again.rules") == rules);
}

}  // namespace graphsub
