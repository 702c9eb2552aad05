// Translating a rule at one instance into an equation of terms over uninterpreted tensors.
#include "verify/term_translator.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <variant>

#include "ops/registry.h"
#include "verify/semantics.h"

namespace graphsub::verify {
namespace {

using rules::Expr;
using rules::is_list_name;

/// The kind of a symbolic expression value.
enum class Kind { kInt, kReal, kBool };

/// A symbolic expression value: one item, or a list of them.
struct SymValue {
  std::vector<z3::expr> items;
  bool list = false;
  Kind kind = Kind::kInt;
};

/// Everything one translation binds: terms of values, variables, and the attributes of each
/// source node by its outputs.
struct Scope {
  std::map<std::string, z3::expr> terms;
  std::map<std::string, std::vector<z3::expr>> lists;
  std::map<std::string, SymValue> variables;
  std::map<std::string, std::map<std::string, SymValue>> source_attrs;  ///< By output name.
  Equation equation;
};

/// Element-wise ops of two tensors: the result's rank is the larger of theirs (broadcasting).
const std::set<std::string> kBroadcastingOps = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};

/// Ops whose result has the rank of their first tensor input.
/// Ops whose first result has the rank of their first tensor input, besides those that keep
/// its dims (Expand is not one: it may add leading dims).
const std::set<std::string> kRankKeepingOps = {"Concat", "Split", "Conv", "AveragePool", "MaxPool", "Enlarge"};

/// Ops of several tensors whose result has the first one's dims.
const std::set<std::string> kFirstShapeOps = {"BatchNormalization", "Dropout", "Cast", "Softmax", "Clip", "LeakyRelu"};

/// Ops of one tensor whose result has the input's dims (element-wise functions).
const std::set<std::string> kShapeKeepingOps = {"Abs",  "Ceil", "Erf",  "Exp",     "Floor",      "Identity",
                                                "Log",  "Neg",  "Relu", "Sigmoid", "Reciprocal", "Sign",
                                                "Sqrt", "Tanh", "Softplus"};

[[noreturn]] void unsupported(const std::string& what) { throw NoSemantics("axiom path: " + what); }

/// The translation of one rule at one instance.
class Translation {
 public:
  Translation(TermTranslator& translator, const rules::Rule& rule, const Instance& instance)
      : t_(translator), context_(translator.context()), rule_(rule), instance_(instance) {}

  Equation run() {
    bind_inputs();
    for (std::size_t j : source_order()) add_source_node(j);
    for (const Expr& condition : rule_.conditions) scope_.equation.hypotheses.push_back(as_bool(eval(condition)));
    for (const rules::ConstDef& constant : rule_.constants) add_constant(constant);
    add_target_nodes();
    add_sides();
    add_ranks();
    return scope_.equation;
  }

 private:
  // ---- Values and terms.

  z3::expr fresh_tensor(const std::string& name, ir::ValueId value) {
    z3::expr term = context_.constant(("t!" + name).c_str(), t_.tensor_sort());
    scope_.equation.bound.push_back(term);
    note_rank(term, instance_.source, value);
    return term;
  }

  void bind_inputs() {
    for (const std::string& name : rule_.inputs()) {
      if (!is_list_name(name)) {
        scope_.terms.emplace(name, fresh_tensor(name, instance_.match.values.at(name)));
        continue;
      }
      std::vector<z3::expr>& list = scope_.lists[name];
      const std::vector<ir::ValueId>& values = instance_.match.lists.at(name);
      for (std::size_t i = 0; i < values.size(); ++i) list.push_back(fresh_tensor(name + "." + std::to_string(i), values[i]));
    }
  }

  // ---- Ranks. Tensors of every rank share one sort, so an equation that depends on the ranks
  // of its instance (a condition on shape(x), size(x) or rank(x), a negative axis) holds only
  // at those ranks and must say so: rank(t) = r for each term whose rank it consulted. A rule's
  // own terms all have known ranks, stated for the axioms to use.

  void note_rank(const z3::expr& term, const ir::Graph& graph, ir::ValueId value) {
    if (value == ir::kNoValue || !graph.value(value).type.shape.rank_known) return;
    ranks_.emplace(term.id(), std::make_pair(term, static_cast<int64_t>(graph.value(value).type.shape.rank())));
  }

  /// The rank of `term` in the instance.
  int64_t known_rank(const z3::expr& term) const {
    const auto it = ranks_.find(term.id());
    if (it == ranks_.end()) unsupported("the rank of a term the instance does not type");
    return it->second.second;
  }

  /// The rank of `term` in the instance, which the equation now depends on.
  int64_t consult_rank(const z3::expr& term) {
    const int64_t rank = known_rank(term);
    consulted_.insert(term.id());
    return rank;
  }

  void add_ranks() {
    const bool axiom = rule_.origin == rules::Origin::kAxiom;
    for (const auto& [id, known] : ranks_) {
      if (axiom && !consulted_.count(id)) continue;
      scope_.equation.hypotheses.push_back(t_.rank()(known.first) == context_.int_val(known.second));
    }
  }

  std::vector<z3::expr> terms_of(const std::vector<std::string>& names) const {
    std::vector<z3::expr> terms;
    for (const std::string& name : names) {
      if (is_list_name(name)) {
        const std::vector<z3::expr>& list = scope_.lists.at(name);
        terms.insert(terms.end(), list.begin(), list.end());
      } else {
        terms.push_back(scope_.terms.at(name));
      }
    }
    return terms;
  }

  bool defined(const std::vector<std::string>& names) const {
    return std::all_of(names.begin(), names.end(), [this](const std::string& name) {
      return scope_.terms.count(name) != 0 || scope_.lists.count(name) != 0;
    });
  }

  /// Source node indices with each after the nodes its inputs come from.
  std::vector<std::size_t> source_order() const {
    std::vector<std::size_t> order;
    std::set<std::string> known;
    for (const std::string& name : rule_.inputs()) known.insert(name);
    while (order.size() < rule_.source.size()) {
      const std::size_t before = order.size();
      for (std::size_t j = 0; j < rule_.source.size(); ++j) {
        const rules::PatternNode& node = rule_.source[j];
        if (std::find(order.begin(), order.end(), j) != order.end()) continue;
        if (!std::all_of(node.inputs.begin(), node.inputs.end(), [&](const std::string& in) { return known.count(in); })) continue;
        order.push_back(j);
        known.insert(node.outputs.begin(), node.outputs.end());
      }
      if (order.size() == before) unsupported("the source pattern has a cycle");
    }
    return order;
  }

  // ---- Attributes.

  /// An attribute value as symbolic constants (fresh) or numbers (given).
  SymValue attr_value(const ir::AttrValue& value, const std::string& fresh_name, bool fresh) {
    SymValue result;
    auto item = [&](z3::expr number, bool real, std::size_t i) {
      if (!fresh) return number;
      const std::string name = fresh_name + "." + std::to_string(i);
      z3::expr constant = real ? context_.real_const(name.c_str()) : context_.int_const(name.c_str());
      scope_.equation.bound.push_back(constant);
      return constant;
    };
    if (const auto* i = std::get_if<int64_t>(&value)) {
      result.items.push_back(item(context_.int_val(*i), false, 0));
    } else if (const auto* f = std::get_if<float>(&value)) {
      result.kind = Kind::kReal;
      result.items.push_back(item(real_number(*f), true, 0));
    } else if (const auto* s = std::get_if<std::string>(&value)) {
      result.items.push_back(item(context_.int_val(t_.string_code(*s)), false, 0));
    } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
      result.list = true;
      for (std::size_t k = 0; k < is->size(); ++k) result.items.push_back(item(context_.int_val((*is)[k]), false, k));
    } else if (const auto* fs = std::get_if<std::vector<float>>(&value)) {
      result.list = true;
      result.kind = Kind::kReal;
      for (std::size_t k = 0; k < fs->size(); ++k) result.items.push_back(item(real_number((*fs)[k]), true, k));
    } else {
      unsupported("an attribute of strings or a tensor");
    }
    return result;
  }

  z3::expr real_number(double value) { return exact_number(context_, value); }

  const rules::AttrSetting* setting(const rules::PatternNode& node, const std::string& name) const {
    for (const rules::AttrSetting& attr : node.attrs) {
      if (attr.name == name) return &attr;
    }
    return nullptr;
  }

  /// The symbolic attributes of a source node: bare `?var`s bound first, then expressions, and
  /// every attribute the rule does not mention open.
  std::map<std::string, SymValue> source_attributes(const rules::PatternNode& node, const ir::Node& graph_node,
                                                    const std::string& tag, const z3::expr* first_input) {
    std::map<std::string, SymValue> attrs;
    for (const auto& [name, value] : graph_node.attrs.items()) {
      const rules::AttrSetting* set = setting(node, name);
      if (!set) {
        attrs[name] = attr_value(value, tag + "." + name, true);
      } else if (set->value.kind == Expr::Kind::kVariable) {
        attrs[name] = bind_variable(set->value.text, value);
      }
    }
    for (const auto& [name, value] : graph_node.attrs.items()) {
      const rules::AttrSetting* set = setting(node, name);
      if (set && set->value.kind != Expr::Kind::kVariable) attrs[name] = eval(set->value);
    }
    if (attrs.count("activation")) restrict_activation(attrs.at("activation"));
    canonical_axis(attrs, first_input);
    return attrs;
  }

  /// A negative literal `axis` counts from the end of the node's first input (as every op with
  /// an axis defines it), so -1 and rank - 1 name one function argument; an open axis is one of
  /// 0 .. rank - 1 (import makes axes non-negative), so a case split can reach dims at numbers.
  void canonical_axis(std::map<std::string, SymValue>& attrs, const z3::expr* first_input) {
    const auto it = attrs.find("axis");
    if (it == attrs.end() || it->second.items.size() != 1 || !first_input) return;
    z3::expr& axis = it->second.items[0];
    if (axis.is_numeral() && axis.get_numeral_int64() >= 0) return;
    if (!axis.is_numeral()) {
      // Restricting an open axis assumes nothing about the tensor: a property of concatenation
      // along a valid axis holds alike at every rank.
      const int64_t rank = known_rank(*first_input);
      z3::expr any = context_.bool_val(false);
      for (int64_t i = 0; i < rank; ++i) any = any || axis == context_.int_val(i);
      scope_.equation.hypotheses.push_back(any);
      return;
    }
    axis = context_.int_val(axis.get_numeral_int64() + consult_rank(*first_input));
  }

  /// An open fused activation is one of the four graphsub has (ops::Activation), so a rule
  /// stated for any of them is proved by the case of each.
  void restrict_activation(const SymValue& activation) {
    const z3::expr& code = activation.items.at(0);
    if (code.is_numeral()) return;
    z3::expr any = context_.bool_val(false);
    std::vector<z3::expr> cases;
    for (const char* name : {"none", "relu", "sigmoid", "tanh"}) {
      cases.push_back(code == t_.string_code(name));
      any = any || cases.back();
    }
    scope_.equation.hypotheses.push_back(any);
    scope_.equation.activation_cases.push_back(std::move(cases));
  }

  SymValue bind_variable(const std::string& name, const ir::AttrValue& value) {
    const auto it = scope_.variables.find(name);
    if (it != scope_.variables.end()) return it->second;
    SymValue symbolic = attr_value(value, "?" + name, true);
    scope_.variables.emplace(name, symbolic);
    return symbolic;
  }

  // ---- Nodes.

  /// The function name and argument list of a node: op, output index, inputs and attributes.
  std::vector<z3::expr> apply_node(ir::OpKind op, std::map<std::string, SymValue> attrs,
                                   const std::vector<z3::expr>& inputs, std::size_t outputs) {
    // allowzero only says what a 0 in Reshape's shape means: without one, it is 0 (one function
    // argument for every reshape to those sizes).
    if (op == ir::OpKind::kReshape && attrs.count("allowzero") && attrs.count("shape")) {
      const std::vector<z3::expr>& sizes = attrs.at("shape").items;
      const bool no_zero = std::all_of(sizes.begin(), sizes.end(), [](const z3::expr& size) {
        return size.is_numeral() && size.get_numeral_int64() != 0;
      });
      if (no_zero) attrs["allowzero"].items = {context_.int_val(0)};
    }
    std::string layout = std::string(ops::kind_name(op)) + "/" + std::to_string(inputs.size()) + "(";
    std::vector<z3::expr> args;
    std::vector<z3::sort> domain;
    for (const auto& [name, value] : attrs) {
      layout += name + (value.kind == Kind::kReal ? ":r" : ":i") + std::to_string(value.items.size()) + ",";
      for (const z3::expr& item : value.items) {
        args.push_back(item.simplify());  // 2 * g and g + g: one argument.
        domain.push_back(item.get_sort());
      }
    }
    for (const z3::expr& input : inputs) {
      args.push_back(input);
      domain.push_back(t_.tensor_sort());
    }
    std::vector<z3::expr> results;
    z3::expr_vector arguments(context_);
    for (const z3::expr& arg : args) arguments.push_back(arg);
    for (std::size_t k = 0; k < outputs; ++k) {
      results.push_back(t_.function(layout + ")#" + std::to_string(k), domain)(arguments));
    }
    // What a Cast makes is of the type it names.
    if (op == ir::OpKind::kCast) scope_.equation.hypotheses.push_back(t_.dtype()(results[0]) == attrs.at("to").items.at(0));
    const bool rule_reshape = op == ir::OpKind::kReshape && rule_.origin != rules::Origin::kAxiom;
    if (rule_reshape && attrs.count("shape") && inputs.size() == 1) {
      add_reshape_count(attrs.at("shape").items, inputs[0], results[0]);
    }
    return results;
  }

  /// For a rule's Reshape to literal sizes with one -1: that dim times the other sizes is the
  /// input's element count, stated for this term. dim_facts says the same for every Reshape,
  /// quantified, as a product of dims that Z3 did not use: the first dim of
  /// reshape(f, [-1, 1, 1, 1]) of a vector f stayed unknown (conv-per-channel-scale asks for
  /// it). Only for an input of rank 0 or 1, where the fact is linear. Not for an axiom, whose
  /// hypotheses are its conditions.
  void add_reshape_count(const std::vector<z3::expr>& sizes, const z3::expr& input, const z3::expr& result) {
    const auto known = ranks_.find(input.id());
    if (known == ranks_.end() || known->second.second > 1) return;  // a product of dims: nonlinear again
    std::optional<std::size_t> open;
    int64_t others = 1;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!sizes[i].is_numeral()) return;
      const int64_t size = sizes[i].get_numeral_int64();
      if (size == -1 && !open) {
        open = i;
      } else if (size >= 1) {
        others *= size;
      } else {
        return;  // a second -1, or a 0 that copies the input's dim
      }
    }
    if (!open) return;
    z3::expr count = context_.int_val(1);
    for (int64_t i = 0; i < known->second.second; ++i) {
      count = count * t_.dim()(input, context_.int_val(static_cast<int>(i)));
    }
    const z3::expr dim = t_.dim()(result, context_.int_val(static_cast<int>(*open)));
    scope_.equation.hypotheses.push_back(dim * context_.int_val(static_cast<int64_t>(others)) == count);
  }

  void define_outputs(const std::vector<std::string>& names, const std::vector<z3::expr>& results,
                      const std::vector<std::size_t>& counts, const ir::Graph& graph, const ir::Node& graph_node) {
    for (std::size_t k = 0; k < results.size() && k < graph_node.outputs.size(); ++k) {
      note_rank(results[k], graph, graph_node.outputs[k]);
    }
    std::size_t next = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (is_list_name(names[i])) {
        scope_.lists[names[i]].assign(results.begin() + static_cast<long>(next),
                                      results.begin() + static_cast<long>(next + counts[i]));
      } else {
        scope_.terms.emplace(names[i], results[next]);
      }
      next += counts[i];
    }
  }

  void add_source_node(std::size_t j) {
    const rules::PatternNode& node = rule_.source[j];
    const ir::Node& graph_node = instance_.source.node(instance_.match.nodes[j]);
    const std::vector<z3::expr> inputs = terms_of(node.inputs);
    const std::map<std::string, SymValue> attrs =
        source_attributes(node, graph_node, "n" + std::to_string(j), inputs.empty() ? nullptr : &inputs[0]);
    std::vector<std::size_t> counts;
    for (const std::string& name : node.outputs) {
      counts.push_back(is_list_name(name) ? instance_.match.lists.at(name).size() : 1);
    }
    std::size_t total = 0;
    for (std::size_t count : counts) total += count;
    const std::vector<z3::expr> results = apply_node(node.op, attrs, inputs, total);
    define_outputs(node.outputs, results, counts, instance_.source, graph_node);
    for (const std::string& output : node.outputs) scope_.source_attrs[output] = attrs;
    // The source is a valid graph: a split's sizes add up to its input's extent along the axis.
    // (Only here: a target split's sizes are the rule's to get right.)
    if (node.op == ir::OpKind::kSplit && attrs.count("split") && attrs.count("axis") && inputs.size() == 1) {
      z3::expr sum = context_.int_val(0);
      for (const z3::expr& size : attrs.at("split").items) sum = sum + size;
      scope_.equation.hypotheses.push_back(sum == t_.dim()(inputs[0], attrs.at("axis").items.at(0)));
      // A rule's split is also its parts concatenated back (the axiom concat-of-split, stated
      // here for the parts at hand: E-matching cannot make that concatenation from the parts).
      if (rule_.origin != rules::Origin::kAxiom && results.size() > 1) {
        const std::vector<z3::expr> whole = apply_node(ir::OpKind::kConcat, {{"axis", attrs.at("axis")}}, results, 1);
        scope_.equation.hypotheses.push_back(whole[0] == inputs[0]);
      }
    }
    // A convolution's kernel has the spatial dims its kernel_shape names (Conv's shape inference
    // fills kernel_shape from the kernel and rejects one it contradicts): what lets an axiom
    // asking for equal kernel shapes (conv-bias-sum) apply to a kernel and another enlarged to
    // its size. Not for an axiom, which it would only weaken.
    if (rule_.origin != rules::Origin::kAxiom && node.op == ir::OpKind::kConv && attrs.count("kernel_shape") &&
        inputs.size() >= 2) {
      const std::vector<z3::expr>& sizes = attrs.at("kernel_shape").items;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const z3::expr at = context_.int_val(static_cast<int>(2 + i));
        scope_.equation.hypotheses.push_back(t_.dim()(inputs[1], at) == sizes[i]);
      }
      // And as many input channels per group as the input has channels in all, over the groups.
      if (attrs.count("group")) {
        const z3::expr one = context_.int_val(1);
        scope_.equation.hypotheses.push_back(t_.dim()(inputs[1], one) * attrs.at("group").items.at(0) ==
                                             t_.dim()(inputs[0], one));
      }
      // A bias has one entry per filter.
      if (inputs.size() >= 3) {
        const z3::expr zero = context_.int_val(0);
        scope_.equation.hypotheses.push_back(t_.dim()(inputs[2], zero) == t_.dim()(inputs[1], zero));
      }
    }
  }

  void add_constant(const rules::ConstDef& constant) {
    const SymValue value = eval(constant.value);
    std::string layout = std::string("const/") + (value.kind == Kind::kReal ? "r" : "i") +
                         std::to_string(value.items.size()) + (value.list ? "l" : "s");
    std::vector<z3::sort> domain;
    z3::expr_vector arguments(context_);
    for (const z3::expr& item : value.items) {
      domain.push_back(item.get_sort());
      arguments.push_back(item);
    }
    const z3::expr term = t_.function(layout, domain)(arguments);
    ranks_.emplace(term.id(), std::make_pair(term, int64_t{value.list ? 1 : 0}));
    scope_.terms.emplace(constant.name, term);
  }

  /// Target graph nodes in the order the rewriter added them: one per target pattern node.
  std::vector<ir::NodeId> target_graph_nodes() const {
    std::vector<ir::NodeId> added;
    for (ir::NodeId id : instance_.target.node_ids()) {
      if (id >= instance_.source.node_capacity()) added.push_back(id);
    }
    std::sort(added.begin(), added.end());
    if (added.size() != rule_.target.size()) unsupported("target nodes the rewriter removed or merged");
    return added;
  }

  std::map<std::string, SymValue> target_attributes(const rules::PatternNode& node, const ir::Node& graph_node,
                                                    const z3::expr* first_input) {
    std::map<std::string, SymValue> attrs;
    const std::map<std::string, SymValue>* copied =
        node.copy_from.empty() ? nullptr : &scope_.source_attrs.at(node.copy_from);
    for (const auto& [name, value] : graph_node.attrs.items()) {
      if (const rules::AttrSetting* set = setting(node, name)) {
        attrs[name] = eval(set->value);
      } else if (copied && copied->count(name)) {
        attrs[name] = copied->at(name);
      } else {
        attrs[name] = attr_value(value, "", false);
      }
    }
    canonical_axis(attrs, first_input);
    return attrs;
  }

  std::size_t list_length(const std::string& target_list) const {
    for (const rules::OutputMap& map : rule_.outputs) {
      if (map.target == target_list) return instance_.match.lists.at(map.source).size();
    }
    unsupported("a target list no map gives a length");
  }

  void add_target_nodes() {
    const std::vector<ir::NodeId> graph_nodes = target_graph_nodes();
    for (std::size_t k = 0; k < rule_.target.size(); ++k) {
      const rules::PatternNode& node = rule_.target[k];
      const ir::Node& graph_node = instance_.target.node(graph_nodes[k]);
      if (graph_node.op != node.op) unsupported("target nodes out of order");
      std::vector<std::size_t> counts;
      for (const std::string& name : node.outputs) counts.push_back(is_list_name(name) ? list_length(name) : 1);
      std::size_t total = 0;
      for (std::size_t count : counts) total += count;
      const std::vector<z3::expr> inputs = terms_of(node.inputs);
      const std::map<std::string, SymValue> attrs =
          target_attributes(node, graph_node, inputs.empty() ? nullptr : &inputs[0]);
      define_outputs(node.outputs, apply_node(node.op, attrs, inputs, total), counts, instance_.target, graph_node);
    }
  }

  /// The graph values a source name (or list) stands for.
  std::vector<ir::ValueId> source_values(const std::string& name) const {
    if (is_list_name(name)) return instance_.match.lists.at(name);
    return {instance_.match.values.at(name)};
  }

  /// Each mapped pair, and what the rewriter checked before applying: equal shapes.
  void add_sides() {
    for (const rules::OutputMap& map : rule_.outputs) {
      const std::vector<z3::expr> before = terms_of({map.source});
      const std::vector<z3::expr> after = terms_of({map.target});
      const std::vector<ir::ValueId> values = source_values(map.source);
      for (std::size_t i = 0; i < before.size(); ++i) {
        scope_.equation.sides.emplace_back(before[i], after[i]);
        // An axiom's equal tensors have equal dims already; stated, they would only block it.
        if (rule_.origin == rules::Origin::kAxiom) continue;
        const std::size_t rank = instance_.source.value(values[i]).type.shape.rank();
        for (std::size_t axis = 0; axis < rank; ++axis) {
          const z3::expr index = context_.int_val(static_cast<int64_t>(axis));
          scope_.equation.hypotheses.push_back(t_.dim()(before[i], index) == t_.dim()(after[i], index));
        }
        scope_.equation.hypotheses.push_back(t_.dtype()(before[i]) == t_.dtype()(after[i]));
      }
    }
  }

  // ---- Expressions.

  int64_t rank_of(const std::string& name) {
    const auto it = instance_.match.values.find(name);
    if (it == instance_.match.values.end()) unsupported("shape of an unbound value " + name);
    const int64_t rank = static_cast<int64_t>(instance_.source.value(it->second).type.shape.rank());
    if (consult_rank(scope_.terms.at(name)) != rank) unsupported("two ranks for " + name);
    return rank;
  }

  SymValue shape_of(const std::string& name) {
    SymValue result;
    result.list = true;
    const z3::expr term = scope_.terms.at(name);
    const int64_t rank = rank_of(name);
    for (int64_t i = 0; i < rank; ++i) result.items.push_back(t_.dim()(term, context_.int_val(i)));
    return result;
  }

  static SymValue scalar(z3::expr item, Kind kind) { return SymValue{{item}, false, kind}; }

  SymValue eval(const Expr& expr) {
    switch (expr.kind) {
      case Expr::Kind::kInt: return scalar(context_.int_val(expr.int_value), Kind::kInt);
      case Expr::Kind::kFloat: return scalar(real_number(expr.float_value), Kind::kReal);
      case Expr::Kind::kString: return scalar(context_.int_val(t_.string_code(expr.text)), Kind::kInt);
      case Expr::Kind::kList: return eval_list(expr);
      case Expr::Kind::kVariable: return variable(expr.text);
      case Expr::Kind::kShape: return shape_of(expr.text);
      case Expr::Kind::kRank: return scalar(context_.int_val(rank_of(expr.text)), Kind::kInt);
      case Expr::Kind::kWeight: return scalar(t_.weight()(scope_.terms.at(expr.text)), Kind::kInt);
      case Expr::Kind::kValue: return scalar(t_.value()(scope_.terms.at(expr.text)), Kind::kReal);
      case Expr::Kind::kSize: return size_of(expr.text);
      case Expr::Kind::kDtype: return scalar(t_.dtype()(scope_.terms.at(expr.text)), Kind::kInt);
      case Expr::Kind::kSizes: return sizes_of(expr);
      case Expr::Kind::kIndex: return indexed(expr);
      case Expr::Kind::kNegate: return map_items(eval(expr.operands[0]), [](const z3::expr& x) { return -x; });
      case Expr::Kind::kBinary: return binary(expr.text, eval(expr.operands[0]), eval(expr.operands[1]));
    }
    unsupported("an expression form");
  }

  SymValue variable(const std::string& name) const {
    const auto it = scope_.variables.find(name);
    if (it == scope_.variables.end()) unsupported("?" + name + " used before it is bound");
    return it->second;
  }

  SymValue eval_list(const Expr& expr) {
    SymValue result;
    result.list = true;
    for (const Expr& element : expr.operands) {
      SymValue item = eval(element);
      if (item.kind == Kind::kReal) result.kind = Kind::kReal;
      result.items.insert(result.items.end(), item.items.begin(), item.items.end());
    }
    if (result.kind == Kind::kReal) result = to_real(result);
    return result;
  }

  SymValue size_of(const std::string& name) {
    const SymValue dims = shape_of(name);
    z3::expr product = context_.int_val(1);
    for (const z3::expr& dim : dims.items) product = product * dim;
    return scalar(product, Kind::kInt);
  }

  SymValue sizes_of(const Expr& expr) {
    const z3::expr axis = eval(expr.operands[0]).items[0];
    SymValue result;
    result.list = true;
    const std::vector<ir::ValueId>& values = instance_.match.lists.at(expr.text);
    const std::vector<z3::expr>& terms = scope_.lists.at(expr.text);
    for (std::size_t i = 0; i < terms.size(); ++i) {
      z3::expr at = axis;  // A symbolic axis is a canonical one (import makes axes non-negative).
      if (axis.is_numeral() && axis.get_numeral_int64() < 0) {
        if (consult_rank(terms[i]) != static_cast<int64_t>(instance_.source.value(values[i]).type.shape.rank())) {
          unsupported("two ranks for a list item");
        }
        at = context_.int_val(axis.get_numeral_int64() +
                              static_cast<int64_t>(instance_.source.value(values[i]).type.shape.rank()));
      }
      result.items.push_back(t_.dim()(terms[i], at));
    }
    return result;
  }

  /// `e[i]`; `shape(x)[i]` at a symbolic i is dim(x, i) itself (an axis variable is canonical,
  /// non-negative), not a choice among the dims, so E-matching can use it in a pattern.
  SymValue indexed(const Expr& expr) {
    const SymValue position = eval(expr.operands[1]);
    const Expr& list = expr.operands[0];
    if (list.kind == Expr::Kind::kShape && !position.items.at(0).is_numeral()) {
      return scalar(t_.dim()(scope_.terms.at(list.text), position.items[0]), Kind::kInt);
    }
    return index(eval(list), position);
  }

  SymValue index(const SymValue& list, const SymValue& position) {
    if (list.items.empty()) unsupported("an index into an empty list");
    const z3::expr& at = position.items[0];
    const int64_t size = static_cast<int64_t>(list.items.size());
    if (at.is_numeral()) {
      int64_t i = at.get_numeral_int64();
      if (i < 0) i += size;
      if (i < 0 || i >= size) unsupported("an index out of range");
      return scalar(list.items[static_cast<std::size_t>(i)], list.kind);
    }
    z3::expr chosen = list.items.back();
    for (int64_t i = size - 2; i >= 0; --i) chosen = z3::ite(at == context_.int_val(i), list.items[static_cast<std::size_t>(i)], chosen);
    return scalar(chosen, list.kind);
  }

  template <class F>
  static SymValue map_items(SymValue value, F f) {
    for (z3::expr& item : value.items) item = f(item);
    return value;
  }

  static SymValue to_real(SymValue value) {
    for (z3::expr& item : value.items) {
      if (item.is_int()) item = z3::to_real(item);
    }
    value.kind = Kind::kReal;
    return value;
  }

  SymValue binary(const std::string& op, SymValue a, SymValue b) {
    if (op == "++") {
      a.list = true;
      a.items.insert(a.items.end(), b.items.begin(), b.items.end());
      return a;
    }
    if (op == "==" || op == "!=") return compare_equal(op == "==", a, b);
    if (a.kind == Kind::kReal || b.kind == Kind::kReal) {
      a = to_real(a);
      b = to_real(b);
    }
    if (a.items.size() != b.items.size() && a.items.size() != 1 && b.items.size() != 1) {
      unsupported("lists of different lengths in " + op);
    }
    const std::size_t n = std::max(a.items.size(), b.items.size());
    SymValue result;
    result.list = a.list || b.list;
    result.kind = a.kind;
    for (std::size_t i = 0; i < n; ++i) {
      const z3::expr& x = a.items[a.items.size() == 1 ? 0 : i];
      const z3::expr& y = b.items[b.items.size() == 1 ? 0 : i];
      result.items.push_back(arithmetic(op, x, y, result.kind));
    }
    if (op == "<" || op == "<=" || op == ">" || op == ">=") result.kind = Kind::kBool;
    return result;
  }

  static z3::expr arithmetic(const std::string& op, const z3::expr& x, const z3::expr& y, Kind) {
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "/") return x / y;
    if (op == "<") return x < y;
    if (op == "<=") return x <= y;
    if (op == ">") return x > y;
    if (op == ">=") return x >= y;
    unsupported("the operator " + op);
  }

  SymValue compare_equal(bool equal, SymValue a, SymValue b) {
    if (a.kind == Kind::kReal || b.kind == Kind::kReal) {
      a = to_real(a);
      b = to_real(b);
    }
    z3::expr all = context_.bool_val(a.items.size() == b.items.size());
    if (a.items.size() == b.items.size()) {
      for (std::size_t i = 0; i < a.items.size(); ++i) all = all && a.items[i] == b.items[i];
    }
    return scalar(equal ? all : !all, Kind::kBool);
  }

  z3::expr as_bool(const SymValue& value) {
    z3::expr all = context_.bool_val(true);
    for (const z3::expr& item : value.items) all = all && (item.is_bool() ? item : item != 0);
    return all;
  }

  TermTranslator& t_;
  z3::context& context_;
  const rules::Rule& rule_;
  const Instance& instance_;
  Scope scope_;
  std::map<unsigned, std::pair<z3::expr, int64_t>> ranks_;  ///< By term id: each typed term's rank.
  std::set<unsigned> consulted_;                            ///< Term ids whose rank was used.
};

}  // namespace

z3::expr named_forall(z3::context& context, const std::string& name, const std::vector<z3::expr>& bound,
                      const z3::expr& body, const z3::expr* pattern) {
  std::string id = name;  // A plain SMT-LIB symbol, so the printed query parses back.
  for (char& c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  std::vector<Z3_app> constants;
  for (const z3::expr& constant : bound) constants.push_back(Z3_to_app(context, constant));
  Z3_pattern trigger = nullptr;
  if (pattern) {
    Z3_ast term = *pattern;
    trigger = Z3_mk_pattern(context, 1, &term);
  }
  const Z3_ast quantifier = Z3_mk_quantifier_const_ex(
      context, true, 0, Z3_mk_string_symbol(context, id.c_str()), Z3_mk_string_symbol(context, ""),
      static_cast<unsigned>(constants.size()), constants.data(), trigger ? 1 : 0, trigger ? &trigger : nullptr, 0,
      nullptr, body);
  context.check_error();
  return z3::expr(context, quantifier);
}

TermTranslator::TermTranslator(z3::context& context)
    : context_(context),
      tensor_(context.uninterpreted_sort("Tensor")),
      dim_(context.function("dim", tensor_, context.int_sort(), context.int_sort())),
      value_(context.function("value", tensor_, context.real_sort())),
      weight_(context.function("weight", tensor_, context.int_sort())),
      dtype_(context.function("dtype", tensor_, context.int_sort())),
      rank_(context.function("rank", tensor_, context.int_sort())) {}

Equation TermTranslator::translate(const rules::Rule& rule, const Instance& instance) {
  return Translation(*this, rule, instance).run();
}

z3::func_decl TermTranslator::function(const std::string& name, const std::vector<z3::sort>& domain) {
  const auto it = functions_.find(name);
  if (it != functions_.end()) return it->second;
  z3::sort_vector sorts(context_);
  for (const z3::sort& sort : domain) sorts.push_back(sort);
  z3::func_decl declared = context_.function(name.c_str(), sorts, tensor_);
  functions_.emplace(name, declared);
  return declared;
}

/// The rank of what `function` (named `name`) makes, from its arguments `args`: the larger rank
/// of a broadcasting op's inputs, its first tensor input's for ops that keep it, the length of
/// Reshape's shape and Transpose's perm; none (false) for the rest.
std::optional<z3::expr> TermTranslator::result_rank(const std::string& name, const z3::func_decl& function,
                                                    const std::vector<z3::expr>& args) {
  const std::string op = name.substr(0, name.find('/'));
  std::vector<z3::expr> tensors;
  for (const z3::expr& arg : args) {
    if (arg.get_sort().sort_kind() == Z3_UNINTERPRETED_SORT) tensors.push_back(arg);
  }
  if (tensors.empty() || function.range().sort_kind() != Z3_UNINTERPRETED_SORT) return std::nullopt;
  if (kBroadcastingOps.count(op) && tensors.size() == 2) {
    return z3::ite(rank_(tensors[0]) >= rank_(tensors[1]), rank_(tensors[0]), rank_(tensors[1]));
  }
  // Only the first result (every part of a Split): batch norm's other results are 1-D.
  const bool first = name.find(")#0") != std::string::npos || op == "Split";
  if (first && (kRankKeepingOps.count(op) || kShapeKeepingOps.count(op) || kFirstShapeOps.count(op))) {
    return rank_(tensors[0]);
  }
  for (const char* list : {"shape:i", "perm:i"}) {
    const std::string key = std::string("(") + list;
    const std::string other = std::string(",") + list;
    std::size_t at = name.find(key);
    if (at == std::string::npos) at = name.find(other);
    if ((op == "Reshape" || op == "Transpose") && at != std::string::npos) {
      return context_.int_val(std::stoi(name.substr(at + key.size())));
    }
  }
  return std::nullopt;
}

namespace {

/// Fresh constants for each argument of `function`, to quantify a fact about it over.
std::vector<z3::expr> fresh_arguments(z3::context& context, const z3::func_decl& function) {
  std::vector<z3::expr> args;
  for (unsigned i = 0; i < function.arity(); ++i) {
    args.push_back(context.constant(("d!" + std::to_string(i)).c_str(), function.domain(i)));
  }
  return args;
}

z3::expr apply(const z3::func_decl& function, const std::vector<z3::expr>& args) {
  z3::expr_vector arguments(function.ctx());
  for (const z3::expr& arg : args) arguments.push_back(arg);
  return function(arguments);
}

}  // namespace

std::vector<z3::expr> TermTranslator::dim_facts(const std::set<std::string>& names) {
  std::vector<z3::expr> facts;
  for (const auto& [name, function] : functions_) {
    if (!names.count(name)) continue;
    const std::vector<z3::expr> args = fresh_arguments(context_, function);
    const z3::expr result = apply(function, args);
    // What rank the result has, where the op says.
    if (const std::optional<z3::expr> rank = result_rank(name, function, args)) {
      facts.push_back(named_forall(context_, "rank:" + name, args, rank_(result) == *rank));
    }
    const bool split = name.rfind("Split/1(axis:i1,split:i", 0) == 0;
    const bool concat = name.rfind("Concat/", 0) == 0 && name.find("(axis:i1,)#0") != std::string::npos;
    const std::string op = name.substr(0, name.find('/'));
    std::vector<z3::expr> tensors;
    for (const z3::expr& arg : args) {
      if (arg.get_sort().sort_kind() == Z3_UNINTERPRETED_SORT) tensors.push_back(arg);
    }
    const z3::expr i = context_.int_const("d!i");
    std::vector<z3::expr> over = args;
    over.push_back(i);
    if (!tensors.empty() && name.find(")#0") != std::string::npos &&
        (kShapeKeepingOps.count(op) || kFirstShapeOps.count(op))) {
      // An element-wise function keeps its (first) input's dims.
      facts.push_back(named_forall(context_, "dims:" + name, over, dim_(result, i) == dim_(tensors[0], i)));
      continue;
    }
    if (kBroadcastingOps.count(op) && tensors.size() == 2) {
      // Operands of one rank: where one's dim is 1 or the other's, the result has the other's.
      const z3::expr& x = tensors[0];
      const z3::expr& y = tensors[1];
      const z3::expr same = rank_(x) == rank_(y);
      facts.push_back(named_forall(context_, "dims:" + name, over,
                                   z3::implies(same && (dim_(y, i) == 1 || dim_(y, i) == dim_(x, i)), dim_(result, i) == dim_(x, i))));
      facts.push_back(named_forall(context_, "dims:" + name + ":right", over,
                                   z3::implies(same && dim_(x, i) == 1, dim_(result, i) == dim_(y, i))));
      // A scalar operand leaves the other's dims.
      facts.push_back(named_forall(context_, "dims:" + name + ":scalar", over,
                                   z3::implies(rank_(y) == 0, dim_(result, i) == dim_(x, i))));
      facts.push_back(named_forall(context_, "dims:" + name + ":scalar-left", over,
                                   z3::implies(rank_(x) == 0, dim_(result, i) == dim_(y, i))));
      continue;
    }
    if (name.rfind("Reshape/1(allowzero:i1,shape:i", 0) == 0) {
      reshape_dim_facts(function, facts);
      continue;
    }
    // The dims of a kernel an op makes, where it fixes them (each function's arguments: its
    // attributes' values in name order, then its tensors). Without them no axiom asking for
    // equal kernel shapes (conv-bias-sum) applies to a kernel enlarged to match another, or to
    // an identity kernel beside a convolution's own.
    std::vector<z3::expr> kernel;
    const bool single = name.find(",)#0") != std::string::npos;
    const bool identity_conv = name.rfind("ConstIdentityConv/0(channels:i1,kernel_shape:i", 0) == 0;
    if (single && name.rfind("Enlarge/1(kernel_shape:i", 0) == 0) {
      // The enlarged kernel's filter and channel dims, then kernel_shape (the sizes, then the kernel).
      kernel = {dim_(args.back(), context_.int_val(0)), dim_(args.back(), context_.int_val(1))};
      kernel.insert(kernel.end(), args.begin(), args.end() - 1);
    } else if (single && (identity_conv || name.rfind("ConstPool/0(channels:i1,kernel_shape:i", 0) == 0)) {
      // [C, C, k...] (the identity) and [C, 1, k...] (the pool): channels, then the sizes.
      kernel = {args[0], identity_conv ? args[0] : context_.int_val(1)};
      kernel.insert(kernel.end(), args.begin() + 1, args.end());
    }
    if (!kernel.empty()) {
      for (std::size_t k = 0; k < kernel.size(); ++k) {
        const z3::expr at = context_.int_val(static_cast<int>(k));
        facts.push_back(named_forall(context_, "dims:" + name + ":" + std::to_string(k), args, dim_(result, at) == kernel[k]));
      }
      continue;
    }
    if (!split && !concat) continue;
    const z3::expr& axis = args.front();
    z3::expr fact = context_.bool_val(true);
    if (split) {
      // split#k's extent along the axis is the k-th size: arguments axis, sizes..., input.
      const std::size_t k = std::stoul(name.substr(name.rfind('#') + 1));
      fact = dim_(result, axis) == args.at(1 + k);
    } else {
      // A concatenation's extent along its axis is the sum of its inputs'.
      z3::expr sum = context_.int_val(0);
      for (std::size_t i = 1; i < args.size(); ++i) sum = sum + dim_(args[i], axis);
      fact = dim_(result, axis) == sum;
    }
    facts.push_back(named_forall(context_, "dims:" + name, args, fact));
  }
  return facts;
}

void TermTranslator::reshape_dim_facts(const z3::func_decl& function, std::vector<z3::expr>& facts) {
  // Arguments: allowzero, the shape's K entries, the input.
  const unsigned entries = function.arity() - 2;
  const std::vector<z3::expr> args = fresh_arguments(context_, function);
  const z3::expr result = apply(function, args);
  const z3::expr& allowzero = args[0];
  const z3::expr& input = args.back();
  for (unsigned j = 0; j < entries; ++j) {
    const z3::expr& size = args[1 + j];
    const z3::expr at = context_.int_val(static_cast<int>(j));
    // A size is the dim; 0 without allowzero copies the input's dim at the same place.
    const std::string tag = "dims:" + function.name().str() + ":" + std::to_string(j);
    facts.push_back(named_forall(context_, tag, args, z3::implies(size >= 1 || (size == 0 && allowzero != 0), dim_(result, at) == size)));
    facts.push_back(named_forall(context_, tag + ":copy", args, z3::implies(size == 0 && allowzero == 0, dim_(result, at) == dim_(input, at))));
    // A -1 is the input's element count over the other dims, at each rank the input may have,
    // where the other dims divide that count. Every term is a tensor, also a reshape no valid
    // graph has (a 5-element vector to [-1, 2]); stated for those too, the facts contradicted
    // each other (dim * 2 == 5 has no integer solution), and the axiom set with them, which the
    // consistency check of --check-axioms found (twenty-third session).
    for (int rank = 0; rank <= 6; ++rank) {
      z3::expr count = context_.int_val(1);
      for (int i = 0; i < rank; ++i) count = count * dim_(input, context_.int_val(i));
      z3::expr others = context_.int_val(1);
      for (unsigned i = 0; i < entries; ++i) {
        if (i != j) others = others * dim_(result, context_.int_val(static_cast<int>(i)));
      }
      const z3::expr divides = others != 0 && z3::mod(count, others) == 0;
      facts.push_back(named_forall(context_, tag + ":rank" + std::to_string(rank), args,
                                   z3::implies(size == -1 && rank_(input) == rank && divides,
                                               dim_(result, at) * others == count)));
    }
  }
}

int TermTranslator::string_code(const std::string& text) {
  return strings_.emplace(text, static_cast<int>(strings_.size())).first->second;
}

}  // namespace graphsub::verify
