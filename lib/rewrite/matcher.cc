// Backtracking search for source patterns: anchor on a node of the first source op, extend along
// values, then check the match as a whole.
#include "rewrite/matcher.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>

#include "ops/folding.h"
#include "ops/registry.h"
#include "rewrite/expr_eval.h"

namespace graphsub::rewrite {
namespace {

using rules::PatternNode;

/// The facts about a graph the search reads, computed once per call.
class GraphIndex {
 public:
  explicit GraphIndex(const ir::Graph& graph)
      : graph_(graph), consumers_(graph.consumers()), is_output_(graph.value_capacity(), 0) {
    for (ir::ValueId id : graph.outputs()) is_output_[id] = 1;
  }

  const ir::Graph& graph() const { return graph_; }
  const std::vector<std::pair<ir::NodeId, int32_t>>& consumers(ir::ValueId id) const { return consumers_[id]; }
  bool is_output(ir::ValueId id) const { return is_output_[id] != 0; }

  /// A weight, or an output of a node export folds (computed on first use).
  bool is_weight(ir::ValueId id) const {
    const ir::Value& value = graph_.value(id);
    if (value.kind != ir::ValueKind::kIntermediate) return value.kind == ir::ValueKind::kWeight;
    if (!folded_) folded_ = ops::folded_nodes(graph_);
    return (*folded_)[value.producer];
  }

 private:
  const ir::Graph& graph_;
  std::vector<std::vector<std::pair<ir::NodeId, int32_t>>> consumers_;
  std::vector<char> is_output_;
  mutable std::optional<std::vector<bool>> folded_;
};

/// A value slot not bound yet (kNoValue, an absent optional operand, never binds).
constexpr ir::ValueId kUnbound = std::numeric_limits<ir::ValueId>::min();

/// A partial match. Values and attribute variables are bound by slot (Matcher::Plan::names and
/// variables): copying and comparing names was much of the matcher's time. One state serves a
/// whole search: each binding is undone back to its mark (mark, undo) when the search backs up,
/// as copying the state at every step was a tenth of a warm search's allocations. Its match holds
/// the nodes; its values, lists and variables by name are filled in once every node is bound
/// (complete).
struct State {
  Match match;
  std::vector<ir::ValueId> values;  ///< By slot; kUnbound where not bound.
  /// By variable index: the bound node attribute (the graph outlives the search), or null.
  std::vector<const ir::AttrValue*> variables;
  std::vector<std::pair<int, std::vector<ir::ValueId>>> lists;  ///< Bound value lists, by slot.
  /// Attribute constraints other than a bare variable, checked once every node is bound.
  std::vector<std::pair<ir::NodeId, const rules::AttrSetting*>> deferred;
  const Matcher::Plan* plan = nullptr;
  std::vector<int> bound_slots;      ///< The value slots bound, in order (undo clears them).
  std::vector<int> bound_variables;  ///< The variables bound, in order.

  /// How far the bindings go: what undo goes back to.
  struct Mark {
    std::size_t slots, variables, lists, deferred;
  };
  Mark mark() const { return {bound_slots.size(), bound_variables.size(), lists.size(), deferred.size()}; }
  /// Drops every binding made after `to`.
  void undo(const Mark& to) {
    for (; bound_slots.size() > to.slots; bound_slots.pop_back()) {
      values[static_cast<std::size_t>(bound_slots.back())] = kUnbound;
    }
    for (; bound_variables.size() > to.variables; bound_variables.pop_back()) {
      variables[static_cast<std::size_t>(bound_variables.back())] = nullptr;
    }
    lists.resize(to.lists);
    deferred.resize(to.deferred);
  }

  /// A slot bound to graph value `id` (the first by slot), or one of a list holding it, or -1.
  /// Only pattern inputs share a value, so a value a matched node produces has one slot.
  int slot_of(ir::ValueId id) const {
    for (std::size_t slot = 0; slot < values.size(); ++slot) {
      if (values[slot] == id) return static_cast<int>(slot);
    }
    for (const auto& [slot, ids] : lists) {
      if (std::find(ids.begin(), ids.end(), id) != ids.end()) return slot;
    }
    return -1;
  }
  /// The list bound to `slot`, or null.
  const std::vector<ir::ValueId>* list(int slot) const {
    for (const auto& [bound, ids] : lists) {
      if (bound == slot) return &ids;
    }
    return nullptr;
  }
};

/// Binds a slot to a graph value: consistent, and one slot per value, except that pattern inputs
/// may share one (a proved rule holds for every input, so for two equal ones too:
/// `Add(AveragePool(x), AveragePool(y))` matches two pools of one value). A value a matched node
/// produces has one name, so no pattern input aliases what the rewrite replaces.
bool bind_value(int slot, ir::ValueId id, State& state) {
  ir::ValueId& bound = state.values[static_cast<std::size_t>(slot)];
  if (bound != kUnbound) return bound == id;
  if (id == ir::kNoValue) return false;
  const int other = state.slot_of(id);
  if (other >= 0 &&
      !(state.plan->shares[static_cast<std::size_t>(slot)] && state.plan->shares[static_cast<std::size_t>(other)])) {
    return false;
  }
  bound = id;
  state.bound_slots.push_back(slot);
  return true;
}

/// Binds a value list: consistent, and one slot per value.
bool bind_list(int slot, std::vector<ir::ValueId> ids, State& state) {
  if (const std::vector<ir::ValueId>* bound = state.list(slot)) return *bound == ids;
  for (auto it = ids.begin(); it != ids.end(); ++it) {
    if (*it == ir::kNoValue || state.slot_of(*it) >= 0 || std::find(ids.begin(), it, *it) != it) return false;
  }
  state.lists.emplace_back(slot, std::move(ids));
  return true;
}

/// How a node's slots lie over `count` graph values: a leading list (also a lone list), the
/// named values, a trailing list.
struct Layout {
  bool leading = false;
  bool trailing = false;
  std::size_t named = 0;

  Layout(const std::vector<int>& slots, const Matcher::Plan& plan) {
    leading = !slots.empty() && plan.is_list[static_cast<std::size_t>(slots.front())];
    trailing = slots.size() > 1 && plan.is_list[static_cast<std::size_t>(slots.back())];
    named = slots.size() - leading - trailing;
  }
  bool has_lists() const { return leading || trailing; }

  /// The possible lengths of the leading list. Without lists, inputs must match in number exactly
  /// and outputs may be more than the pattern names (`exact` false).
  std::vector<std::size_t> leading_lengths(std::size_t count, bool exact) const {
    if (!has_lists()) return (exact ? count == named : count >= named) ? std::vector<std::size_t>{0}
                                                                       : std::vector<std::size_t>{};
    if (count < named) return {};
    if (!leading) return {0};
    if (!trailing) return {count - named};
    std::vector<std::size_t> lengths;
    for (std::size_t length = 0; length + named <= count; ++length) lengths.push_back(length);
    return lengths;
  }
};

/// Binds `slots` to `ids` with a leading list of `lead` values.
bool bind_names(const std::vector<int>& slots, const std::vector<ir::ValueId>& ids, std::size_t lead,
                State& state) {
  const Layout layout(slots, *state.plan);
  std::size_t next = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (!state.plan->is_list[static_cast<std::size_t>(slots[i])]) {
      if (!bind_value(slots[i], ids[next++], state)) return false;
      continue;
    }
    const std::size_t end = i == 0 && layout.leading ? lead : ids.size();
    if (!bind_list(slots[i], {ids.begin() + next, ids.begin() + end}, state)) return false;
    next = end;
  }
  return true;
}

/// Binds a fresh `?var` (index `variable`) or compares a bound one; defers any other expression
/// (`variable` -1).
bool bind_attribute(const rules::AttrSetting& setting, int variable, ir::NodeId id, const ir::AttrValue& actual,
                    State& state) {
  if (variable < 0) {
    state.deferred.emplace_back(id, &setting);
    return true;
  }
  const ir::AttrValue*& bound = state.variables[static_cast<std::size_t>(variable)];
  if (!bound) {
    bound = &actual;
    state.bound_variables.push_back(variable);
    return true;
  }
  return *bound == actual;
}

/// The sets of graph nodes a plan has matched so far (sorted ids), when its operands may bind
/// either way round: a match over nodes that an earlier one bound is the same rewrite with the
/// operands of a commutative node taken the other way (the mirror image of a symmetric source, as
/// `Add(Conv(x, w1), Conv(x, w2))` matched from either convolution), and only the first is kept.
using MatchedSets = std::set<std::vector<ir::NodeId>>;

/// One search: the matches of one plan in one graph.
class Search {
 public:
  /// `touched`, when given, keeps only the matches that bind one of the nodes it marks; `matched`
  /// (needed for a plan with a node whose operands bind either way) is shared by the searches of
  /// one plan over one graph.
  Search(const GraphIndex& index, const Matcher::Plan& plan, std::vector<Match>& out,
         const std::vector<char>* touched = nullptr, MatchedSets* matched = nullptr)
      : index_(index), plan_(plan), rule_(*plan.rule), out_(out), touched_(touched), matched_(matched) {}

  /// Every match whose first source node is `anchor`.
  void run(ir::NodeId anchor) {
    State state;
    state.match.rule = &rule_;
    state.match.nodes.assign(rule_.source.size(), -1);
    state.values.assign(plan_.names.size(), kUnbound);
    state.variables.assign(plan_.variables.size(), nullptr);
    state.plan = &plan_;
    try_node(0, anchor, state, 1);
  }

 private:
  void extend(std::size_t step, State& state) {
    if (step == plan_.order.size()) {
      if (!binds_touched(state)) return;
      Match complete = named(state);
      if (accept(state, complete) && first_over_its_nodes(state)) out_.push_back(std::move(complete));
      return;
    }
    const std::size_t index = plan_.order[step];
    for (ir::NodeId candidate : candidates(index, state)) try_node(index, candidate, state, step + 1);
  }

  /// Binds source node `index` to graph node `id` in each way its value lists allow, and extends
  /// every binding that holds from plan step `step`.
  void try_node(std::size_t index, ir::NodeId id, State& state, std::size_t step) {
    const PatternNode& pattern = rule_.source[index];
    const ir::Node& node = index_.graph().node(id);
    if (node.op != pattern.op || node.op == ir::OpKind::kOpaque) return;
    for (ir::NodeId other : state.match.nodes) {
      if (other == id) return;
    }
    const Layout outputs(plan_.output_slots[index], plan_);
    for (std::size_t lead_in : Layout(plan_.input_slots[index], plan_).leading_lengths(node.inputs.size(), true)) {
      for (std::size_t lead_out : outputs.leading_lengths(node.outputs.size(), false)) {
        try_binding(index, id, node.inputs, lead_in, lead_out, state, step);
      }
    }
    // The operands the other way round; one value read twice binds the same either way.
    if (!plan_.either_order[index] || node.inputs.size() != 2 || node.inputs[0] == node.inputs[1]) return;
    const std::vector<ir::ValueId> swapped{node.inputs[1], node.inputs[0]};
    for (std::size_t lead_out : outputs.leading_lengths(node.outputs.size(), false)) {
      try_binding(index, id, swapped, 0, lead_out, state, step);
    }
  }

  /// bind_node, and extend from plan step `step` when it holds; then the state as it was.
  void try_binding(std::size_t index, ir::NodeId id, const std::vector<ir::ValueId>& inputs, std::size_t lead_in,
                   std::size_t lead_out, State& state, std::size_t step) {
    const State::Mark mark = state.mark();
    if (bind_node(index, id, inputs, lead_in, lead_out, state)) extend(step, state);
    state.undo(mark);
    state.match.nodes[index] = -1;
  }

  /// Graph nodes that may play source node `index`: readers of a bound input (at its position
  /// when no list comes before it and the operands keep their order), else the producer of a
  /// bound output; failing both, the readers or the producer of a bound list's first value.
  std::vector<ir::NodeId> candidates(std::size_t index, const State& state) const {
    const std::vector<int>& inputs = plan_.input_slots[index];
    const std::vector<int>& outputs = plan_.output_slots[index];
    std::vector<ir::NodeId> result;
    const bool inputs_shift = Layout(inputs, plan_).leading || plan_.either_order[index];
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const ir::ValueId bound = state.values[static_cast<std::size_t>(inputs[i])];
      if (bound == kUnbound) continue;
      for (const auto& [reader, position] : index_.consumers(bound)) {
        if (inputs_shift || static_cast<std::size_t>(position) == i) result.push_back(reader);
      }
      return distinct(result);
    }
    const bool outputs_shift = Layout(outputs, plan_).leading;
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      const ir::ValueId bound = state.values[static_cast<std::size_t>(outputs[j])];
      if (bound == kUnbound) continue;
      const ir::Value& value = index_.graph().value(bound);
      if (value.producer >= 0 && (outputs_shift || static_cast<std::size_t>(value.output_index) == j)) {
        result.push_back(value.producer);
      }
      return result;
    }
    return list_candidates(index, state);
  }

  std::vector<ir::NodeId> list_candidates(std::size_t index, const State& state) const {
    std::vector<ir::NodeId> result;
    for (int slot : plan_.input_slots[index]) {
      const std::vector<ir::ValueId>* list = state.list(slot);
      if (!list || list->empty()) continue;
      for (const auto& use : index_.consumers(list->front())) result.push_back(use.first);
      return distinct(result);
    }
    for (int slot : plan_.output_slots[index]) {
      const std::vector<ir::ValueId>* list = state.list(slot);
      if (!list || list->empty()) continue;
      const ir::NodeId producer = index_.graph().value(list->front()).producer;
      if (producer >= 0) result.push_back(producer);
      return result;
    }
    return result;
  }

  /// Node ids sorted, each once (a node may read one value at several positions).
  static std::vector<ir::NodeId> distinct(std::vector<ir::NodeId> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
  }

  /// Binds source node `index` to graph node `id`, whose inputs are taken as `inputs` (its own, or
  /// swapped), with leading lists of the given lengths: values, then attribute constraints.
  bool bind_node(std::size_t index, ir::NodeId id, const std::vector<ir::ValueId>& inputs, std::size_t lead_in,
                 std::size_t lead_out, State& state) const {
    const PatternNode& pattern = rule_.source[index];
    const ir::Node& node = index_.graph().node(id);
    state.match.nodes[index] = id;
    if (!bind_names(plan_.input_slots[index], inputs, lead_in, state)) return false;
    if (!bind_names(plan_.output_slots[index], node.outputs, lead_out, state)) return false;
    for (std::size_t k = 0; k < pattern.attrs.size(); ++k) {
      const rules::AttrSetting& setting = pattern.attrs[k];
      const ir::AttrValue* actual = node.attrs.find(setting.name);
      if (!actual) return false;
      // A literal (activation = "none", axis = 1) is compared now: it prunes the search early.
      if (rules::is_literal(setting.value)) {
        if (!attribute_holds(setting, *actual, context(state.match))) return false;
        continue;
      }
      if (!bind_attribute(setting, plan_.attr_variables[index][k], id, *actual, state)) return false;
    }
    return true;
  }

  /// Whether the value of `setting`'s expression is the attribute's value.
  static bool attribute_holds(const rules::AttrSetting& setting, const ir::AttrValue& actual, const EvalContext& eval) {
    const EvalResult result = evaluate(setting.value, eval);
    if (!result.ok()) return false;
    const std::optional<ir::AttrValue> expected = to_attr(result.value, &actual);
    return expected && *expected == actual;
  }

  bool first_over_its_nodes(const State& state) {
    if (!matched_) return true;
    std::vector<ir::NodeId> nodes = state.match.nodes;
    std::sort(nodes.begin(), nodes.end());
    return matched_->insert(std::move(nodes)).second;
  }

  bool binds_touched(const State& state) const {
    if (!touched_) return true;
    return std::any_of(state.match.nodes.begin(), state.match.nodes.end(),
                       [this](ir::NodeId id) { return (*touched_)[static_cast<std::size_t>(id)] != 0; });
  }

  /// The match of a complete binding, its values and lists by name.
  Match named(const State& state) const {
    Match match = state.match;
    for (std::size_t slot = 0; slot < state.values.size(); ++slot) {
      if (state.values[slot] != kUnbound) match.values.emplace(plan_.names[slot], state.values[slot]);
    }
    for (const auto& [slot, ids] : state.lists) match.lists.emplace(plan_.names[static_cast<std::size_t>(slot)], ids);
    for (std::size_t variable = 0; variable < state.variables.size(); ++variable) {
      if (state.variables[variable]) match.variables.emplace(plan_.variables[variable], *state.variables[variable]);
    }
    return match;
  }

  /// The checks on a complete binding (`match`, named): outside uses first (cheap), then expressions.
  bool accept(const State& state, const Match& match) const {
    return outside_uses_mapped(state) && deferred_attributes_hold(state, match) && conditions_hold(match);
  }

  bool inside(ir::NodeId id, const State& state) const {
    for (ir::NodeId node : state.match.nodes) {
      if (node == id) return true;
    }
    return false;
  }

  /// Every produced value used outside the match (or a graph output) is a `map` source.
  bool outside_uses_mapped(const State& state) const {
    for (ir::NodeId id : state.match.nodes) {
      for (ir::ValueId value : index_.graph().node(id).outputs) {
        if (!used_outside(value, state)) continue;
        const int slot = state.slot_of(value);
        if (slot < 0 || !plan_.mapped[static_cast<std::size_t>(slot)]) return false;
      }
    }
    return true;
  }

  bool used_outside(ir::ValueId value, const State& state) const {
    if (index_.is_output(value)) return true;
    for (const auto& use : index_.consumers(value)) {
      if (!inside(use.first, state)) return true;
    }
    return false;
  }

  EvalContext context(const Match& match) const {
    return EvalContext{index_.graph(), match.values, match.variables,
                       [this](ir::ValueId id) { return index_.is_weight(id); }, &match.lists};
  }

  bool deferred_attributes_hold(const State& state, const Match& match) const {
    const EvalContext eval = context(match);
    for (const auto& [id, setting] : state.deferred) {
      if (!attribute_holds(*setting, *index_.graph().node(id).attrs.find(setting->name), eval)) return false;
    }
    return true;
  }

  bool conditions_hold(const Match& match) const {
    const EvalContext eval = context(match);
    for (const rules::Expr& condition : rule_.conditions) {
      if (!holds(condition, eval)) return false;
    }
    return true;
  }

  const GraphIndex& index_;
  const Matcher::Plan& plan_;
  const rules::Rule& rule_;
  std::vector<Match>& out_;
  const std::vector<char>* touched_;
  MatchedSets* matched_;
};

/// True when `node` reads or writes a name in `seen`.
bool touches(const PatternNode& node, const std::set<std::string>& seen) {
  for (const std::string& name : node.inputs) {
    if (seen.count(name)) return true;
  }
  for (const std::string& name : node.outputs) {
    if (seen.count(name)) return true;
  }
  return false;
}

/// Whether a source node's two operands may bind the other way round: a commutative op, and two
/// distinct named inputs (`Add(x, x)` reads one value either way).
bool binds_either_order(const PatternNode& node) {
  return ops::is_commutative(node.op) && node.inputs.size() == 2 && node.inputs[0] != node.inputs[1] &&
         !rules::is_list_name(node.inputs[0]) && !rules::is_list_name(node.inputs[1]);
}

/// Orders the source nodes so that each one shares a value with an earlier one.
Matcher::Plan plan_of(const rules::Rule& rule, Matcher::OperandOrder order) {
  const std::vector<PatternNode>& source = rule.source;
  if (source.empty()) throw std::invalid_argument("rule " + rule.name + " has an empty source");
  Matcher::Plan plan;
  plan.rule = &rule;
  std::set<std::string> inputs;  // pattern inputs other than lists
  for (const std::string& input : rule.inputs()) {
    if (!rules::is_list_name(input)) inputs.insert(input);
  }
  std::set<std::string> mapped;
  for (const rules::OutputMap& map : rule.outputs) mapped.insert(map.source);
  const auto slots_of = [&](const std::vector<std::string>& names) {
    std::vector<int> slots;
    for (const std::string& name : names) {
      auto known = std::find(plan.names.begin(), plan.names.end(), name);
      if (known == plan.names.end()) {
        plan.shares.push_back(inputs.count(name) > 0);
        plan.mapped.push_back(mapped.count(name) > 0);
        plan.is_list.push_back(rules::is_list_name(name));
        known = plan.names.insert(plan.names.end(), name);
      }
      slots.push_back(static_cast<int>(known - plan.names.begin()));
    }
    return slots;
  };
  for (const PatternNode& node : source) {
    plan.input_slots.push_back(slots_of(node.inputs));
    plan.output_slots.push_back(slots_of(node.outputs));
    std::vector<int>& variables = plan.attr_variables.emplace_back();
    for (const rules::AttrSetting& setting : node.attrs) {
      if (setting.value.kind != rules::Expr::Kind::kVariable) {
        variables.push_back(-1);
        continue;
      }
      auto known = std::find(plan.variables.begin(), plan.variables.end(), setting.value.text);
      if (known == plan.variables.end()) known = plan.variables.insert(plan.variables.end(), setting.value.text);
      variables.push_back(static_cast<int>(known - plan.variables.begin()));
    }
  }
  for (const PatternNode& node : source) {
    plan.either_order.push_back(order == Matcher::OperandOrder::kEitherOrder && binds_either_order(node));
  }
  std::vector<char> placed(source.size(), 0);
  std::set<std::string> seen;
  for (std::size_t next = 0; next < source.size();) {
    plan.order.push_back(next);
    placed[next] = 1;
    seen.insert(source[next].inputs.begin(), source[next].inputs.end());
    seen.insert(source[next].outputs.begin(), source[next].outputs.end());
    next = 1;
    while (next < source.size() && (placed[next] || !touches(source[next], seen))) ++next;
  }
  if (plan.order.size() != source.size()) {
    throw std::invalid_argument("rule " + rule.name + ": the source is not connected");
  }
  return plan;
}

/// Marks the nodes at most `hops` steps from `nodes`, a step going from a node to another that
/// produces, reads or shares one of its values: a connected source pattern of n nodes binds only
/// nodes within n - 1 steps of each other.
std::vector<char> near(const GraphIndex& index, const std::vector<ir::NodeId>& nodes, std::size_t hops) {
  const ir::Graph& graph = index.graph();
  std::vector<char> marked(static_cast<std::size_t>(graph.node_capacity()), 0);
  for (ir::NodeId id : nodes) marked[id] = 1;
  std::vector<ir::NodeId> frontier = nodes;
  for (std::size_t hop = 0; hop < hops && !frontier.empty(); ++hop) {
    std::vector<ir::NodeId> next;
    const auto visit = [&](ir::NodeId id) {
      if (marked[id]) return;
      marked[id] = 1;
      next.push_back(id);
    };
    for (ir::NodeId id : frontier) {
      const ir::Node& node = graph.node(id);
      for (ir::ValueId value : node.inputs) {
        if (value == ir::kNoValue) continue;
        if (graph.value(value).kind == ir::ValueKind::kIntermediate) visit(graph.value(value).producer);
        for (const auto& use : index.consumers(value)) visit(use.first);
      }
      for (ir::ValueId value : node.outputs) {
        for (const auto& use : index.consumers(value)) visit(use.first);
      }
    }
    frontier = std::move(next);
  }
  return marked;
}

bool any_either_order(const Matcher::Plan& plan) {
  return std::any_of(plan.either_order.begin(), plan.either_order.end(), [](char either) { return either != 0; });
}

/// Adds every match anchored at node `id` of the plans whose first source op is its op;
/// `matched` holds a MatchedSets per plan, for the whole graph.
void match_at(const GraphIndex& index, ir::NodeId id, const std::vector<Matcher::Plan>& plans,
              const std::map<ir::OpKind, std::vector<std::size_t>>& by_anchor_op, std::vector<Match>& matches,
              std::vector<MatchedSets>& matched, const std::vector<char>* touched = nullptr) {
  const auto anchored = by_anchor_op.find(index.graph().node(id).op);
  if (anchored == by_anchor_op.end()) return;
  for (std::size_t plan : anchored->second) {
    MatchedSets* sets = any_either_order(plans[plan]) ? &matched[plan] : nullptr;
    Search(index, plans[plan], matches, touched, sets).run(id);
  }
}

}  // namespace

Matcher::Matcher(const std::vector<rules::Rule>& rules, OperandOrder order) {
  for (const rules::Rule& rule : rules) add(plan_of(rule, order));
}

void Matcher::add(Plan plan) {
  const rules::Rule& rule = *plan.rule;
  by_anchor_op_[rule.source[0].op].push_back(plans_.size());
  plans_.push_back(std::move(plan));
  largest_source_ = std::max(largest_source_, rule.source.size());
}

Matcher Matcher::without(const std::vector<std::string>& names) const {
  Matcher less;
  for (const Plan& plan : plans_) {
    if (std::find(names.begin(), names.end(), plan.rule->name) == names.end()) less.add(plan);
  }
  return less;
}

std::vector<Match> Matcher::find_all(const ir::Graph& graph) const {
  const GraphIndex index(graph);
  std::vector<Match> matches;
  std::vector<MatchedSets> matched(plans_.size());
  for (ir::NodeId id : graph.node_ids()) match_at(index, id, plans_, by_anchor_op_, matches, matched);
  return matches;
}

std::vector<Match> Matcher::find_touching(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) const {
  const GraphIndex index(graph);
  const std::vector<char> anchors = near(index, nodes, std::max<std::size_t>(largest_source_, 1) - 1);
  // Only the matches that bind one of `nodes` are kept, checked before a match is copied out.
  std::vector<char> touched(static_cast<std::size_t>(graph.node_capacity()), 0);
  for (ir::NodeId id : nodes) {
    if (id >= 0 && static_cast<std::size_t>(id) < touched.size()) touched[static_cast<std::size_t>(id)] = 1;
  }
  std::vector<Match> matches;
  std::vector<MatchedSets> matched(plans_.size());
  for (ir::NodeId id : graph.node_ids()) {
    if (anchors[id]) match_at(index, id, plans_, by_anchor_op_, matches, matched, &touched);
  }
  return matches;
}

std::vector<Match> Matcher::find(const ir::Graph& graph, const rules::Rule& rule, OperandOrder order) {
  const GraphIndex index(graph);
  const Plan plan = plan_of(rule, order);
  std::vector<Match> matches;
  MatchedSets matched;
  MatchedSets* sets = any_either_order(plan) ? &matched : nullptr;
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op == rule.source[0].op) Search(index, plan, matches, nullptr, sets).run(id);
  }
  return matches;
}

}  // namespace graphsub::rewrite
