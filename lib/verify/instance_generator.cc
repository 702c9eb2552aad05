// Small concrete graphs a rule applies to: the source drawn with small random shapes, kept where
// the Matcher matches the whole graph and the rewriter rewrites it.
#include "verify/instance_generator.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ops/folding.h"
#include "ops/registry.h"
#include "rewrite/expr_eval.h"
#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"
#include "verify/instance_dims.h"
#include "verify/instance_shapes.h"

namespace graphsub::verify {
namespace {

using rules::Expr;
using rules::PatternNode;

/// A value name of the pattern (`x`, `pre...`) and a graph value it stands for (`x`, `pre.0`).
struct Key {
  std::string key;
  std::string name;
};

/// What a rule's source asks of every attempt, read once.
struct SourcePlan {
  std::vector<std::size_t> order;        ///< Source nodes, each after the producers of its inputs.
  std::map<std::string, int64_t> ranks;  ///< Pattern name → the rank its uses ask for.
  std::set<std::string> size_one;        ///< `size(x) == 1`.
  std::set<std::string> weights;         ///< `weight(x)`: a weight of random data.
  std::map<std::string, double> fills;   ///< `value(x) == V`: a constant, V in every element.
  std::set<std::string> whole_lists;     ///< Lists that are all of a node's inputs or outputs.
  DimEquations equations;                ///< The conditions' equalities of dims.
  /// Per source node and setting, the value of a setting that reads nothing the attempt binds
  /// (a literal): evaluated once, not on every attempt.
  std::vector<std::vector<std::optional<ir::AttrValue>>> literals;
};

// ---- Reading the rule.

/// The number a literal (perhaps negated) holds.
std::optional<double> number_of(const Expr& expr) {
  if (expr.kind == Expr::Kind::kInt) return static_cast<double>(expr.int_value);
  if (expr.kind == Expr::Kind::kFloat) return expr.float_value;
  if (expr.kind != Expr::Kind::kNegate) return std::nullopt;
  const std::optional<double> operand = number_of(expr.operands[0]);
  return operand ? std::optional<double>(-*operand) : std::nullopt;
}

/// Records what `call == literal` says of the value `call` names.
void read_equality(const Expr& call, const Expr& literal, SourcePlan& plan) {
  const std::optional<double> number = number_of(literal);
  if (!number) return;
  if (call.kind == Expr::Kind::kRank) plan.ranks.emplace(call.text, static_cast<int64_t>(*number));
  if (call.kind == Expr::Kind::kSize && *number == 1) plan.size_one.insert(call.text);
  if (call.kind == Expr::Kind::kValue) plan.fills.emplace(call.text, *number);
  if (call.kind == Expr::Kind::kWeight && *number != 0) plan.weights.insert(call.text);
}

/// Records what a `where` line says of one value: `weight(x)`, `rank(x) == 4`, `value(x) == 1`, ...
void read_condition(const Expr& condition, SourcePlan& plan) {
  if (condition.kind == Expr::Kind::kWeight) plan.weights.insert(condition.text);
  if (condition.kind != Expr::Kind::kBinary || condition.text != "==") return;
  read_equality(condition.operands[0], condition.operands[1], plan);
  read_equality(condition.operands[1], condition.operands[0], plan);
}

/// True when every input of `node` is a pattern input or an output of a placed node.
bool ready(const PatternNode& node, const std::map<std::string, std::size_t>& producers,
           const std::vector<char>& placed) {
  return std::all_of(node.inputs.begin(), node.inputs.end(), [&](const std::string& name) {
    const auto it = producers.find(name);
    return it == producers.end() || placed[it->second];
  });
}

/// The source nodes in dependency order (ties by position); shorter than the source on a cycle.
std::vector<std::size_t> dependency_order(const std::vector<PatternNode>& source) {
  std::map<std::string, std::size_t> producers;
  for (std::size_t i = 0; i < source.size(); ++i) {
    for (const std::string& output : source[i].outputs) producers.emplace(output, i);
  }
  std::vector<std::size_t> order;
  std::vector<char> placed(source.size(), 0);
  for (std::size_t i = 0; i < source.size();) {
    if (placed[i] || !ready(source[i], producers, placed)) {
      ++i;
      continue;
    }
    order.push_back(i);
    placed[i] = 1;
    i = 0;
  }
  return order;
}

/// Gives every value of a rank-keeping node the rank one of them has; true when one was new.
bool share_rank(const PatternNode& node, std::map<std::string, int64_t>& ranks) {
  std::vector<std::string> names = node.inputs;
  names.insert(names.end(), node.outputs.begin(), node.outputs.end());
  const auto known =
      std::find_if(names.begin(), names.end(), [&](const std::string& name) { return ranks.count(name) > 0; });
  if (known == names.end()) return false;
  const int64_t rank = ranks.at(*known);
  bool changed = false;
  for (const std::string& name : names) changed = ranks.emplace(name, rank).second || changed;
  return changed;
}

/// The ranks the ops ask of their values, spread through the ops that keep ranks.
void read_ranks(const std::vector<PatternNode>& source, SourcePlan& plan) {
  std::vector<RankFacts> facts;
  for (const PatternNode& node : source) {
    facts.push_back(rank_facts(node));
    const RankFacts& fact = facts.back();
    for (std::size_t i = 0; i < fact.inputs.size() && i < node.inputs.size(); ++i) {
      if (fact.inputs[i]) plan.ranks.emplace(node.inputs[i], *fact.inputs[i]);
    }
    for (const std::string& output : node.outputs) {
      if (fact.outputs) plan.ranks.emplace(output, *fact.outputs);
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < source.size(); ++i) {
      if (facts[i].keeps_rank) changed = share_rank(source[i], plan.ranks) || changed;
    }
  }
}

SourcePlan plan_source(const rules::Rule& rule) {
  SourcePlan plan;
  for (const PatternNode& node : rule.source) {
    plan.literals.emplace_back();
    for (const rules::AttrSetting& setting : node.attrs) plan.literals.back().push_back(rewrite::literal_attr(setting.value));
  }
  plan.order = dependency_order(rule.source);
  plan.equations = DimEquations(rule);
  for (const Expr& condition : rule.conditions) read_condition(condition, plan);
  read_ranks(rule.source, plan);
  for (const PatternNode& node : rule.source) {
    for (const std::vector<std::string>* names : {&node.inputs, &node.outputs}) {
      if (names->size() == 1 && rules::is_list_name(names->front())) plan.whole_lists.insert(names->front());
    }
  }
  return plan;
}

// ---- Values.

ir::TensorPtr filled(const ir::TensorType& type, double value) {
  const std::vector<int64_t> dims = type.shape.sizes().value_or(std::vector<int64_t>{});
  const auto count = static_cast<std::size_t>(ir::num_elements(dims));
  return ir::share(ir::Tensor::from_floats(dims, std::vector<float>(count, static_cast<float>(value))));
}

/// Uniform in [-1, 1), as the tests' random tensors.
ir::TensorPtr random_data(const ir::TensorType& type, std::mt19937& rng) {
  const std::vector<int64_t> dims = type.shape.sizes().value_or(std::vector<int64_t>{});
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<std::size_t>(ir::num_elements(dims)));
  for (float& value : values) value = uniform(rng);
  return ir::share(ir::Tensor::from_floats(dims, values));
}

/// A constant's elements for a description: the one number all hold, else the list.
std::string constant_text(const ir::Tensor& tensor) {
  std::ostringstream out;
  bool uniform = true;
  for (int64_t i = 1; i < tensor.num_elements(); ++i) {
    uniform = uniform && tensor.element_as_double(i) == tensor.element_as_double(0);
  }
  if (uniform && tensor.num_elements() > 0) {
    out << tensor.element_as_double(0);
    return out.str();
  }
  out << "[";
  for (int64_t i = 0; i < tensor.num_elements(); ++i) out << (i ? "," : "") << tensor.element_as_double(i);
  out << "]";
  return out.str();
}

// ---- One attempt.

/// Times a node that binds what an attempt must move off is drawn before the attempt fails.
constexpr int kMoveRedraws = 16;

/// A source graph an attempt built that the rule's source matches whole (and, with `other_than`,
/// that moves what it names): what any rule with this source rewrites into an instance.
struct Drawn {
  int attempt = 0;  ///< Its number in the search's sequence of attempts.
  ir::Graph source;
  std::vector<rewrite::Match> matches;
  std::set<std::string> free_weights;
  std::string description;
};

/// One random candidate: the source drawn and built as a graph, then matched and rewritten.
class Attempt {
 public:
  Attempt(const rules::Rule& rule, const rewrite::Matcher& matcher, const SourcePlan& plan, const DrawSettings& settings,
          const InstanceOptions& options)
      : rule_(rule),
        matcher_(matcher),
        plan_(plan),
        settings_(settings),
        max_elements_(options.max_elements),
        max_dim_(options.max_dim),
        other_than_(options.other_than),
        nodes_(rule.source.size(), -1) {}

  /// Builds the source graph, the inputs' dims drawn from the conditions' equalities first when
  /// `solve_dims`; returns why it could not, or an empty string.
  std::string build(bool solve_dims) {
    if (solve_dims) {
      std::optional<std::map<std::string, std::vector<int64_t>>> dims = plan_.equations.draw(plan_.ranks, settings_, max_dim_);
      if (!dims) return "no positive dims solve the sums of the conditions";
      solved_dims_ = std::move(*dims);
    }
    draw_list_lengths();
    for (std::size_t index : plan_.order) {
      const PatternNode& pattern = rule_.source[index];
      const std::string reason = add_node(index);
      if (!reason.empty()) {
        return std::string(ops::kind_name(pattern.op)) + " (source line " + std::to_string(pattern.line) +
               "): " + reason;
      }
    }
    set_outputs();
    return check_sizes();
  }

  /// The matches of the rule that bind every node of the graph.
  std::vector<rewrite::Match> whole_matches() const {
    std::vector<rewrite::Match> matches = matcher_.find_all(graph_);
    matches.erase(std::remove_if(matches.begin(), matches.end(),
                                 [this](const rewrite::Match& match) { return !binds_every_node(match); }),
                  matches.end());
    return matches;
  }

  /// Why the Matcher found no whole match: the first `where` that fails on the drawn binding.
  std::string unmatched_reason() const {
    const rewrite::EvalContext context = eval_context();
    for (const Expr& condition : rule_.conditions) {
      if (!rewrite::holds(condition, context)) return "where " + rules::to_string(condition) + " never held";
    }
    return "the Matcher finds no match of the whole source";
  }

  /// "x [1,2,3,3], w [2,2,1,1] weight; y: activation="none" ...": the inputs' shapes (and which
  /// are weights or constants) and the nodes' attributes, what tells candidates apart.
  std::string describe() const {
    std::vector<std::string> inputs;
    for (const std::string& name : rule_.inputs()) {
      for (const Key& key : keys_of(name)) inputs.push_back(describe_input(key.key));
    }
    std::string text = join(inputs, ", ");
    for (std::size_t i = 0; i < rule_.source.size(); ++i) {
      if (!graph_.node(nodes_[i]).attrs.empty()) text += "; " + describe_node(i);
    }
    return text;
  }

  /// The graph built, with its whole matches and description, as attempt number `number`.
  Drawn take(int number, std::vector<rewrite::Match> matches, std::string description) {
    return Drawn{number, std::move(graph_), std::move(matches), std::move(free_weights_), std::move(description)};
  }

 private:
  static std::string join(const std::vector<std::string>& parts, const std::string& separator) {
    std::string text;
    for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
    return text;
  }

  int64_t uniform(int64_t low, int64_t high) const {
    return std::uniform_int_distribution<int64_t>(low, high)(*settings_.rng);
  }

  /// A list that is all of a node's inputs or outputs holds one or two values, any other none or one.
  void draw_list_lengths() {
    for (const PatternNode& node : rule_.source) {
      for (const std::vector<std::string>* names : {&node.inputs, &node.outputs}) {
        for (const std::string& name : *names) {
          if (!rules::is_list_name(name) || list_lengths_.count(name)) continue;
          const bool whole = plan_.whole_lists.count(name) > 0;
          list_lengths_[name] = static_cast<std::size_t>(whole ? uniform(1, 2) : uniform(0, 1));
        }
      }
    }
  }

  /// The graph values a name stands for: itself, or a list's elements `pre.0`, `pre.1`, ...
  std::vector<Key> keys_of(const std::string& name) const {
    if (!rules::is_list_name(name)) return {Key{name, name}};
    const std::string base = name.substr(0, name.size() - 3);
    std::vector<Key> keys;
    for (std::size_t i = 0; i < list_lengths_.at(name); ++i) keys.push_back(Key{base + "." + std::to_string(i), name});
    return keys;
  }

  /// How many graph values `names` stand for.
  std::size_t count_keys(const std::vector<std::string>& names) const {
    std::size_t count = 0;
    for (const std::string& name : names) count += rules::is_list_name(name) ? list_lengths_.at(name) : 1;
    return count;
  }

  std::vector<Key> keys_of(const std::vector<std::string>& names) const {
    std::vector<Key> keys;
    keys.reserve(names.size());
    for (const std::string& name : names) {
      if (!rules::is_list_name(name)) {
        keys.push_back(Key{name, name});
        continue;
      }
      for (Key& key : keys_of(name)) keys.push_back(std::move(key));
    }
    return keys;
  }

  rewrite::EvalContext eval_context() const {
    return rewrite::EvalContext{graph_, ids_, variables_, [this](ir::ValueId id) { return is_weight(id); }, &lists_};
  }

  bool is_weight(ir::ValueId id) const {
    const ir::Value& value = graph_.value(id);
    if (value.kind != ir::ValueKind::kIntermediate) return value.kind == ir::ValueKind::kWeight;
    return ops::folded_nodes(graph_)[value.producer];
  }

  /// The settings the rule fixes before source node `index` is drawn: literals and bound variables.
  ir::Attributes fixed_attributes(std::size_t index) const {
    ir::Attributes fixed;
    const PatternNode& pattern = rule_.source[index];
    std::optional<rewrite::EvalContext> context;
    for (std::size_t i = 0; i < pattern.attrs.size(); ++i) {
      const rules::AttrSetting& setting = pattern.attrs[i];
      if (const std::optional<ir::AttrValue>& literal = plan_.literals[index][i]) {
        fixed.set(setting.name, *literal);
        continue;
      }
      if (!context) context.emplace(eval_context());
      const rewrite::EvalResult result = rewrite::evaluate(setting.value, *context);
      std::optional<ir::AttrValue> value = result.ok() ? rewrite::to_attr(result.value) : std::nullopt;
      if (value) fixed.set(setting.name, std::move(*value));
    }
    return fixed;
  }

  InputDraw input_draw(const Key& key) const {
    InputDraw input;
    if (const auto rank = plan_.ranks.find(key.name); rank != plan_.ranks.end()) input.rank = rank->second;
    input.size_one = plan_.size_one.count(key.name) > 0;
    if (const auto it = ids_.find(key.key); it != ids_.end()) {
      input.type = graph_.value(it->second).type;
    } else if (const auto solved = solved_dims_.find(key.key); solved != solved_dims_.end() && !input.size_one) {
      input.type = ir::TensorType{ir::DataType::kFloat, ir::Shape::of(solved->second)};
    }
    return input;
  }

  /// Draws a node's free inputs and attributes, adds the inputs, then the node. A draw that
  /// binds what `other_than` names to the values given, where nothing moved off them before, is
  /// drawn again (up to kMoveRedraws times): the search would drop the whole attempt for it,
  /// after building, describing and matching the rest.
  std::string add_node(std::size_t index) {
    const PatternNode& pattern = rule_.source[index];
    const std::vector<Key> inputs = keys_of(pattern.inputs);
    const int num_outputs = static_cast<int>(count_keys(pattern.outputs));
    const ir::Attributes fixed = fixed_attributes(index);
    for (int redraw = 1;; ++redraw) {
      NodeDraw draw{settings_, {}, num_outputs, fixed, {}};
      draw.inputs.reserve(inputs.size());
      for (const Key& key : inputs) {
        draw.inputs.push_back(input_draw(key));
        const std::optional<ir::TensorType>& type = draw.inputs.back().type;
        if (type && !type->shape.is_static()) return key.key + " has a shape with unknown dims";
      }
      std::string reason = propose_node(pattern.op, draw);
      if (!reason.empty()) return reason;
      for (const auto& [name, value] : draw.fixed.items()) draw.attrs.set(name, value);
      ir::Node node;
      node.op = pattern.op;
      node.attrs = std::move(draw.attrs);
      const ops::InferResult inferred = canonical_node(node, input_types(inputs, draw.inputs), num_outputs);
      if (!inferred.ok()) return inferred.error;
      if (keeps_given(pattern, node.attrs)) {
        if (redraw < kMoveRedraws) continue;
        return "binds what the search must move off to the values given";
      }
      node.inputs.reserve(inputs.size());
      for (std::size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(input_value(inputs[i], draw.inputs[i]));
      return add_inferred(index, std::move(node), inferred);
    }
  }

  /// The types of a node's inputs as drawn: a name the node reads twice is one value, of the
  /// type drawn for it first.
  static std::vector<ir::TensorType> input_types(const std::vector<Key>& keys, const std::vector<InputDraw>& draws) {
    std::vector<ir::TensorType> types;
    types.reserve(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      std::size_t first = 0;
      while (keys[first].key != keys[i].key) ++first;
      types.push_back(first == i ? *draws[i].type : types[first]);
    }
    return types;
  }

  /// Whether canonical `attrs` bind a variable of `other_than_` for the first time, each one they
  /// bind to the value given, while no variable bound before moved off it.
  bool keeps_given(const PatternNode& pattern, const ir::Attributes& attrs) const {
    bool binds = false;
    for (const auto& [variable, value] : other_than_) {
      if (const auto bound = variables_.find(variable); bound != variables_.end()) {
        if (!(bound->second == value)) return false;
        continue;
      }
      for (const rules::AttrSetting& setting : pattern.attrs) {
        if (setting.value.kind != Expr::Kind::kVariable || setting.value.text != variable) continue;
        const ir::AttrValue* actual = attrs.find(setting.name);
        if (!actual) continue;
        if (!(*actual == value)) return false;
        binds = true;
      }
    }
    return binds;
  }

  void record(const Key& key, ir::ValueId id) {
    ids_[key.key] = id;
    if (rules::is_list_name(key.name)) lists_[key.name].push_back(id);
  }

  ir::ValueId input_value(const Key& key, const InputDraw& input) {
    if (const auto it = ids_.find(key.key); it != ids_.end()) return it->second;
    const ir::ValueId id = add_pattern_input(key, input);
    record(key, id);
    return id;
  }

  /// A constant the proposer fixed or `value(x)` asks for, a weight `weight(x)` asks for, else a
  /// graph input.
  ir::ValueId add_pattern_input(const Key& key, const InputDraw& input) {
    const ir::TensorType& type = *input.type;
    if (input.data) return graph_.add_weight(key.key, input.data);
    if (const auto fill = plan_.fills.find(key.name); fill != plan_.fills.end()) {
      return graph_.add_weight(key.key, filled(type, fill->second));
    }
    if (plan_.weights.count(key.name) == 0) return graph_.add_input(key.key, type);
    free_weights_.insert(key.key);
    return graph_.add_weight(key.key, random_data(type, *settings_.rng));
  }

  /// Completes the attributes as import does (at the rewriter's opset) and infers the outputs.
  static ops::InferResult canonical_node(ir::Node& node, const std::vector<ir::TensorType>& types, int num_outputs) {
    const ops::OpDef& def = ops::op_def(node.op);
    if (def.is_onnx) {
      ops::ImportContext context{node.attrs, types, num_outputs, rewrite::target_opset(def)};
      if (std::string reason = def.canonicalize(context); !reason.empty()) return ops::InferResult::failure(reason);
    }
    return def.infer(node, types);
  }

  /// Adds `node` (canonical, its outputs `inferred`) as source node `index` and binds its variables.
  std::string add_inferred(std::size_t index, ir::Node node, const ops::InferResult& inferred) {
    const PatternNode& pattern = rule_.source[index];
    const std::vector<Key> outputs = keys_of(pattern.outputs);
    if (inferred.outputs.size() < outputs.size()) return "fewer outputs than the pattern names";
    std::vector<ir::OutputSpec> specs;
    specs.reserve(inferred.outputs.size());
    for (std::size_t j = 0; j < inferred.outputs.size(); ++j) {
      specs.push_back({inferred.outputs[j], j < outputs.size() ? outputs[j].key : std::string{}});
    }
    nodes_[index] = graph_.add_node(node.op, std::move(node.inputs), specs, std::move(node.attrs));
    const ir::Node& added = graph_.node(nodes_[index]);
    for (std::size_t j = 0; j < outputs.size(); ++j) record(outputs[j], added.outputs[j]);
    return bind_variables(pattern, added.attrs);
  }

  /// Binds the node's fresh `?var`s to its canonical attributes; a bound one must be equal.
  std::string bind_variables(const PatternNode& pattern, const ir::Attributes& attrs) {
    for (const rules::AttrSetting& setting : pattern.attrs) {
      if (setting.value.kind != Expr::Kind::kVariable) continue;
      const ir::AttrValue* actual = attrs.find(setting.name);
      if (!actual) return "the node has no " + setting.name + " for ?" + setting.value.text;
      const auto [it, fresh] = variables_.emplace(setting.value.text, *actual);
      if (!fresh && it->second != *actual) {
        return setting.name + " is not ?" + setting.value.text + " = " + ir::to_string(it->second);
      }
    }
    return {};
  }

  /// Every mapped source value is a graph output, in the order of the rule's maps.
  void set_outputs() {
    std::vector<ir::ValueId> outputs;
    for (const rules::OutputMap& map : rule_.outputs) {
      for (const Key& key : keys_of(map.source)) {
        if (const auto it = ids_.find(key.key); it != ids_.end()) outputs.push_back(it->second);
      }
    }
    graph_.set_outputs(outputs);
  }

  std::string check_sizes() const {
    for (const auto& [key, id] : ids_) {
      const std::optional<int64_t> count = graph_.value(id).type.shape.num_elements();
      if (count && *count > max_elements_) {
        return key + " has " + std::to_string(*count) + " elements, more than " + std::to_string(max_elements_);
      }
    }
    return {};
  }

  bool binds_every_node(const rewrite::Match& match) const {
    std::vector<ir::NodeId> bound = match.nodes;
    std::sort(bound.begin(), bound.end());
    return bound == graph_.node_ids();
  }

  std::string describe_input(const std::string& key) const {
    const ir::Value& value = graph_.value(ids_.at(key));
    const std::string text = key + " " + ir::to_string(value.type.shape);
    if (value.kind != ir::ValueKind::kWeight) return text;
    return text + (free_weights_.count(key) ? " weight" : " = " + constant_text(*value.data));
  }

  /// "y: group=1 strides=[1,1]": a node by its first output name, with its canonical attributes.
  std::string describe_node(std::size_t index) const {
    std::string text = rule_.source[index].outputs.front() + ":";
    for (const auto& [name, value] : graph_.node(nodes_[index]).attrs.items()) {
      text += " " + name + "=" + ir::to_string(value);
    }
    return text;
  }

  const rules::Rule& rule_;
  const rewrite::Matcher& matcher_;  ///< Of rule_ alone.
  const SourcePlan& plan_;
  const DrawSettings& settings_;
  const int64_t max_elements_;
  const int64_t max_dim_;
  const std::vector<std::pair<std::string, ir::AttrValue>>& other_than_;
  ir::Graph graph_;
  std::vector<ir::NodeId> nodes_;  ///< The graph node of each source node.
  std::map<std::string, std::size_t> list_lengths_;
  std::map<std::string, std::vector<int64_t>> solved_dims_;  ///< Pattern inputs' dims drawn from the equalities.
  std::map<std::string, ir::ValueId> ids_;  ///< Pattern names and list elements (`pre.0`) → values.
  std::map<std::string, std::vector<ir::ValueId>> lists_;
  std::map<std::string, ir::AttrValue> variables_;
  std::set<std::string> free_weights_;
};

// ---- The search.

/// Attempts in a row that find no new instance after which a search with solved dims stops.
constexpr int kSolvedPatience = 200;

/// Attempts in a row that find no new instance after which a search with `other_than` stops: a
/// value the rule's other literals pin is not searched for through every attempt.
constexpr int kMovedPatience = 50;

/// One attempt's shared choices: its dim limit (often below max_dim, which makes agreeing
/// shapes likelier), default rank and usual dims.
DrawSettings draw_settings(std::mt19937& rng, int64_t max_dim, int64_t min_limit) {
  const auto uniform = [&rng](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng);
  };
  DrawSettings settings;
  settings.rng = &rng;
  settings.dim_limit = uniform(std::min(min_limit, max_dim), std::max<int64_t>(max_dim, 1));
  settings.default_rank = uniform(1, 4);
  settings.usual_dims.push_back(uniform(1, std::min<int64_t>(2, settings.dim_limit)));
  for (int axis = 1; axis < 5; ++axis) settings.usual_dims.push_back(uniform(1, settings.dim_limit));
  return settings;
}

/// How far a failed candidate got: a reason from a later stage says more about the rule.
enum class Stage { kBuild, kMatch, kApply };

/// How often each reason stopped a candidate.
class Reasons {
 public:
  void add(Stage stage, const std::string& reason) { ++counts_[{stage, reason}]; }
  /// Of the reasons from the latest stage any candidate reached, the one met most often.
  std::string most_common() const {
    const auto best = std::max_element(counts_.begin(), counts_.end(), [](const auto& a, const auto& b) {
      return std::make_pair(a.first.first, a.second) < std::make_pair(b.first.first, b.second);
    });
    return best == counts_.end() ? "no candidate was drawn" : best->first.second;
  }

 private:
  std::map<std::pair<Stage, std::string>, int> counts_;
};

template <typename T>
std::optional<T> failure(Reasons* reasons, Stage stage, const std::string& reason) {
  if (reasons) reasons->add(stage, reason);
  return std::nullopt;
}

/// Builds and matches one attempt's source graph; nullopt for a graph seen before, one that
/// moves nothing `other_than` names, or one that failed (with the reason added to `reasons`,
/// when not null).
std::optional<Drawn> draw_source(Attempt& attempt, int number, bool solve_dims, std::set<std::string>& seen,
                                 const std::vector<std::pair<std::string, ir::AttrValue>>& other_than,
                                 Reasons* reasons) {
  const std::string reason = attempt.build(solve_dims);
  if (!reason.empty()) return failure<Drawn>(reasons, Stage::kBuild, reason);
  std::string description = attempt.describe();
  if (!seen.insert(description).second) return std::nullopt;
  std::vector<rewrite::Match> matches = attempt.whole_matches();
  if (matches.empty()) return reasons ? failure<Drawn>(reasons, Stage::kMatch, attempt.unmatched_reason()) : std::nullopt;
  if (!other_than.empty() &&
      std::none_of(matches.begin(), matches.end(), [&](const rewrite::Match& match) {
        return std::any_of(other_than.begin(), other_than.end(),
                           [&](const auto& given) { return moves_off(match, given.first, given.second); });
      })) {
    return std::nullopt;
  }
  return attempt.take(number, std::move(matches), std::move(description));
}

/// `drawn` rewritten by `rule` (whose source drew it) at the first match the rewriter accepts.
std::optional<Instance> rewrite_drawn(const Drawn& drawn, const rules::Rule& rule, uint64_t source_id, Reasons* reasons) {
  std::string refusal;
  for (const rewrite::Match& match : drawn.matches) {
    rewrite::Match applied = match;
    applied.rule = &rule;
    std::optional<ir::Graph> target = rewrite::apply(drawn.source, applied, &refusal);
    if (target) {
      return Instance{drawn.source, std::move(*target), drawn.free_weights, drawn.description, std::move(applied),
                      source_id};
    }
  }
  return failure<Instance>(reasons, Stage::kApply, "rewrite::apply refused the match: " + refusal);
}

}  // namespace

/// One search's attempts, drawn on demand and kept: the source graphs of a rule, rewritten by
/// each rule with that source that asks.
class InstanceSearch {
 public:
  /// `serial` numbers the searches of one InstanceCache (0: a search of its own).
  InstanceSearch(const rules::Rule& rule, const InstanceOptions& options, uint32_t serial = 0)
      : serial_(serial),
        rules_{rule},
        rule_(rules_.front()),
        options_(options),
        plan_(plan_source(rule_)),
        rng_(options.seed),
        acyclic_(plan_.order.size() == rule_.source.size()),
        solve_dims_(options.solve_dims && plan_.equations.has_sums()),
        // Solved dims are drawn uniformly from a space that may hold fewer instances than
        // wanted (a rule whose equalities leave one square size has three): a long run of
        // attempts that finds nothing new ends the search there.
        patience_(solve_dims_ ? kSolvedPatience : !options.other_than.empty() ? kMovedPatience : options.attempts) {}

  /// What make_instances(rule, options) gives, for `rule` with the source this search draws.
  /// Why candidates failed is added to `reasons` (when not null) only until the first instance:
  /// finding which condition failed took a third of a failed match's time.
  std::vector<Instance> instances(const rules::Rule& rule, Reasons* reasons) {
    std::vector<Instance> found;
    if (!acyclic_) {
      if (reasons) reasons->add(Stage::kBuild, "the source pattern has a cycle");
      return found;
    }
    int fruitless = 0;  // attempts since the last new instance
    int previous = -1;  // the last attempt looked at
    for (std::size_t i = 0; static_cast<int>(found.size()) < options_.count; ++i) {
      // The attempts the search still makes: before the limit, and before `patience_` in a row found nothing.
      const int limit = std::min(options_.attempts, previous + 1 + patience_ - fruitless);
      Reasons* why = found.empty() ? reasons : nullptr;
      if (!draw_until(i, limit, why)) break;
      const Drawn& drawn = drawn_[i];
      fruitless += drawn.attempt - previous - 1;
      previous = drawn.attempt;
      const uint64_t source_id = serial_ == 0 ? 0 : uint64_t{serial_} << 32 | static_cast<uint32_t>(drawn.attempt + 1);
      std::optional<Instance> instance = rewrite_drawn(drawn, rule, source_id, why);
      fruitless = instance ? 0 : fruitless + 1;
      if (instance) found.push_back(std::move(*instance));
    }
    return found;
  }

 private:
  /// Makes attempts until `drawn_` holds index `i` or the next attempt would reach `limit`;
  /// whether it holds index `i` from an attempt before `limit` (a search for another rule may
  /// have drawn further).
  bool draw_until(std::size_t i, int limit, Reasons* reasons) {
    for (; drawn_.size() <= i && next_attempt_ < limit; ++next_attempt_) {
      const DrawSettings settings = draw_settings(rng_, options_.max_dim, options_.min_dim_limit);
      // The instance is built as the source is written, and so is the match its check uses.
      if (!matcher_) matcher_.emplace(rules_, rewrite::Matcher::OperandOrder::kAsWritten);
      Attempt attempt(rule_, *matcher_, plan_, settings, options_);
      std::optional<Drawn> drawn = draw_source(attempt, next_attempt_, solve_dims_, seen_, options_.other_than, reasons);
      if (drawn) drawn_.push_back(std::move(*drawn));
    }
    return drawn_.size() > i && drawn_[i].attempt < limit;
  }

  const uint32_t serial_;
  const std::vector<rules::Rule> rules_;  ///< The rule, alone: what matcher_ matches.
  const rules::Rule& rule_;
  std::optional<rewrite::Matcher> matcher_;  ///< Made before the first attempt.
  const InstanceOptions options_;
  const SourcePlan plan_;
  std::mt19937 rng_;
  const bool acyclic_;
  const bool solve_dims_;
  const int patience_;
  int next_attempt_ = 0;
  std::set<std::string> seen_;  ///< Descriptions of the graphs built so far.
  std::vector<Drawn> drawn_;
};

std::string source_key(const rules::Rule& rule) {
  std::string key;
  key.reserve(256);
  for (const PatternNode& node : rule.source) {
    key.append(ops::kind_name(node.op)).append("(");
    for (const std::string& input : node.inputs) key.append(input).append(",");
    key.append(")");
    for (const std::string& output : node.outputs) key.append(output).append(",");
    for (const rules::AttrSetting& setting : node.attrs) {
      key.append(setting.name).append("=").append(rules::to_string(setting.value)).append(";");
    }
    key.append("\n");
  }
  for (const Expr& condition : rule.conditions) key += "where " + rules::to_string(condition) + "\n";
  for (const rules::OutputMap& map : rule.outputs) key += "map " + map.source + "\n";
  return key;
}

namespace {

/// The options as text, for a cache key.
std::string options_key(const InstanceOptions& options) {
  std::string key = std::to_string(options.count) + " " + std::to_string(options.attempts) + " " +
                    std::to_string(options.seed) + " " + std::to_string(options.max_dim) + " " +
                    std::to_string(options.max_elements) + " " + std::to_string(options.solve_dims) + " " +
                    std::to_string(options.min_dim_limit);
  for (const auto& [variable, value] : options.other_than) key += " " + variable + "!=" + ir::to_string(value);
  return key;
}

}  // namespace

bool moves_off(const rewrite::Match& match, const std::string& variable, const ir::AttrValue& value) {
  const auto bound = match.variables.find(variable);
  return bound != match.variables.end() && !(bound->second == value);
}

std::vector<Instance> make_instances(const rules::Rule& rule, const InstanceOptions& options, std::string* why_none) {
  InstanceSearch search(rule, options);
  Reasons reasons;
  std::vector<Instance> instances = search.instances(rule, &reasons);
  if (instances.empty() && why_none) {
    *why_none =
        "no small instance found in " + std::to_string(options.attempts) + " attempts: " + reasons.most_common();
  }
  return instances;
}

InstanceCache::InstanceCache() = default;
InstanceCache::~InstanceCache() = default;

std::vector<Instance> InstanceCache::instances(const rules::Rule& rule, const InstanceOptions& options) {
  std::unique_ptr<InstanceSearch>& search = searches_[source_key(rule) + options_key(options)];
  if (!search) search = std::make_unique<InstanceSearch>(rule, options, static_cast<uint32_t>(searches_.size()));
  return search->instances(rule, nullptr);
}

}  // namespace graphsub::verify
