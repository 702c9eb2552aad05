// Writing generated pairs as rule text, parsed back so the rule language checks it.
#include "generate/rule_writer.h"

#include <algorithm>
#include <map>
#include <set>

#include "generate/term.h"
#include "ir/error.h"
#include "ops/registry.h"
#include "rules/parser.h"

namespace graphsub::generate {
namespace {

using ir::OpKind;

std::string ints(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i > 0 ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// Every attribute of an enumerated operator, as the rule language writes it.
std::string attributes(const OpChoice& op, const std::vector<const Slot*>& inputs, const std::vector<std::string>& names) {
  switch (op.kind) {
    case OpKind::kMatMul: return "activation = \"none\"";
    case OpKind::kTranspose: return "perm = [1, 0]";
    case OpKind::kConcat: return "axis = " + std::to_string(op.axis);
    case OpKind::kSplit: {
      const SplitPoint& point = *inputs[0]->splits[static_cast<std::size_t>(op.axis)];
      return "axis = " + std::to_string(op.axis) + ", split = [" + to_rule_text(point.first_expr, names) + ", " +
             to_rule_text(point.second_expr, names) + "]";
    }
    case OpKind::kConv: {
      const int64_t k = inputs[1]->dims[2], pad = k / 2;
      return "kernel_shape = " + ints({k, k}) + ", strides = [1, 1], pads = " + ints({pad, pad, pad, pad}) +
             ", dilations = [1, 1], group = 1, activation = \"" + (op.relu ? "relu" : "none") + "\"";
    }
    case OpKind::kEnlarge: return "kernel_shape = " + ints({op.kernel, op.kernel});
    case OpKind::kAveragePool:
    case OpKind::kMaxPool: {
      const int64_t pad = op.kernel / 2;
      std::string text = "kernel_shape = " + ints({op.kernel, op.kernel}) + ", strides = [1, 1], pads = " +
                         ints({pad, pad, pad, pad}) + ", ceil_mode = 0";
      return text + (op.kind == OpKind::kMaxPool ? ", dilations = [1, 1]" : ", count_include_pad = 1");
    }
    default: return {};
  }
}

/// The name of a slot: the input's (renamed) name, or `prefix` and the slot number.
std::string value_name(int slot, const std::vector<std::string>& names, const std::string& prefix) {
  return slot < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(slot)] : prefix + std::to_string(slot);
}

/// The node lines of `graph`, its operator outputs named `prefix` + slot number.
std::string node_lines(const GraphPair& pair, const CompactGraph& graph, const std::vector<Slot>& slots,
                       const std::string& prefix, const std::vector<std::string>& names) {
  const Universe& universe = *pair.universe;
  auto name_of = [&](int slot) { return value_name(slot, names, prefix); };
  std::string text;
  int next_slot = static_cast<int>(names.size());
  for (int i = 0; i < graph.num_ops; ++i) {
    const OpRecord& record = graph.ops[static_cast<std::size_t>(i)];
    const OpChoice& op = universe.ops[record.choice];
    std::vector<const Slot*> inputs;
    std::string line = "    ";
    for (int k = 0; k < op.outputs; ++k) line += (k > 0 ? ", " : "") + name_of(next_slot + k);
    line += " = " + std::string(ops::kind_name(op.kind)) + "(";
    for (int k = 0; k < op.arity; ++k) {
      const int slot = record.inputs[static_cast<std::size_t>(k)];
      inputs.push_back(&slots[static_cast<std::size_t>(slot)]);
      line += (k > 0 ? ", " : "") + name_of(slot);
    }
    line += ")";
    const std::string attrs = attributes(op, inputs, names);
    if (!attrs.empty()) line += " [" + attrs + "]";
    text += line + "\n";
    next_slot += op.outputs;
  }
  return text;
}

/// The terms of a pair's mapped outputs: (source, target) for each.
std::vector<std::pair<Term, Term>> output_terms(const GraphPair& pair) {
  std::vector<std::pair<Term, Term>> terms;
  for (const auto& [source, target] : pair.outputs) {
    terms.emplace_back(term_of(*pair.universe, pair.source, source), term_of(*pair.universe, pair.target, target));
  }
  return terms;
}

/// The `before -> after` comment line of a pair whose output terms are `terms`.
std::string comment(const Universe& universe, const std::vector<std::pair<Term, Term>>& terms,
                    const std::vector<std::string>& names) {
  std::string sources, targets;
  for (const auto& [source, target] : terms) {
    sources += (sources.empty() ? "" : ", ") + to_text(universe, source, names);
    targets += (targets.empty() ? "" : ", ") + to_text(universe, target, names);
  }
  return "#   " + sources + " -> " + targets + "\n";
}

/// `where rank(x) == r` for each input the source reads, by name.
std::map<std::string, std::size_t> ranks(const Universe& universe, const std::set<int>& used,
                                         const std::vector<std::string>& names) {
  std::map<std::string, std::size_t> result;
  for (int input : used) result[names[static_cast<std::size_t>(input)]] = universe.inputs[static_cast<std::size_t>(input)].dims.size();
  return result;
}

/// The pairs of dims an operator's inputs must agree on: every dim of element-wise operands (the
/// enumeration never broadcasts), a conv's input channels and its kernel's, a matmul's inner
/// dims, a concatenation's other axes.
std::vector<std::pair<DimExpr, DimExpr>> agreements(const OpChoice& op, const std::vector<const Slot*>& in) {
  std::vector<std::pair<DimExpr, DimExpr>> pairs;
  switch (op.kind) {
    case OpKind::kAdd:
    case OpKind::kMul:
      for (std::size_t axis = 0; axis < in[0]->dims.size(); ++axis) pairs.emplace_back(in[0]->dim_exprs[axis], in[1]->dim_exprs[axis]);
      break;
    case OpKind::kConv: pairs.emplace_back(in[0]->dim_exprs[1], in[1]->dim_exprs[1]); break;
    case OpKind::kMatMul: pairs.emplace_back(in[0]->dim_exprs[1], in[1]->dim_exprs[0]); break;
    case OpKind::kConcat:
      for (std::size_t axis = 0; axis < in[0]->dims.size(); ++axis) {
        if (static_cast<int>(axis) != op.axis) pairs.emplace_back(in[0]->dim_exprs[axis], in[1]->dim_exprs[axis]);
      }
      break;
    default: break;
  }
  return pairs;
}

/// Appends the agreements of `graph`'s operators (its slots evaluated) and the 1 x 1 of its
/// enlarged kernels.
void add_conditions(const Universe& universe, const CompactGraph& graph, const std::vector<Slot>& slots,
                    const std::vector<std::string>& names, std::vector<std::string>& conditions) {
  for (int i = 0; i < graph.num_ops; ++i) {
    const OpRecord& record = graph.ops[static_cast<std::size_t>(i)];
    const OpChoice& op = universe.ops[record.choice];
    std::vector<const Slot*> inputs;
    for (int k = 0; k < op.arity; ++k) inputs.push_back(&slots[record.inputs[static_cast<std::size_t>(k)]]);
    for (const auto& [a, b] : agreements(op, inputs)) {
      if (a == b) continue;
      // Each agreement once, whichever way round an operator states it.
      std::string lhs = to_rule_text(a, names), rhs = to_rule_text(b, names);
      if (rhs < lhs) std::swap(lhs, rhs);
      conditions.push_back(lhs + " == " + rhs);
    }
    if (op.kind == OpKind::kEnlarge) {
      for (const DimExpr& dim : {inputs[0]->dim_exprs[2], inputs[0]->dim_exprs[3]}) {
        conditions.push_back(to_rule_text(dim, names) + " == 1");
      }
    }
  }
}

/// What the enumeration's shapes held and the rule depends on, stated over the pattern inputs'
/// dims: each agreement an operator of the source or the target needs (without broadcasting,
/// `add(pool(x), pool(y)) -> pool(add(x, y))` is wrong when y broadcasts; the prover's axioms ask
/// `shape(x) == shape(y)` of the inputs, not of their transposes; and a target that holds for the
/// enumerated shapes only where its operators fit, such as concat1(a + b, b + c) for
/// concat1(a, b) + concat1(b, c), is stated for those), and that an enlarged kernel is 1 x 1
/// (pooling commutes with a 1 x 1 convolution only).
std::string shape_conditions(const GraphPair& pair, const std::vector<Slot>& source_slots,
                             const std::vector<Slot>& target_slots, const std::vector<std::string>& names) {
  std::vector<std::string> conditions;
  add_conditions(*pair.universe, pair.source, source_slots, names, conditions);
  add_conditions(*pair.universe, pair.target, target_slots, names, conditions);
  std::string text;
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    if (std::find(conditions.begin(), conditions.begin() + static_cast<std::ptrdiff_t>(i), conditions[i]) ==
        conditions.begin() + static_cast<std::ptrdiff_t>(i)) {
      text += "  where " + conditions[i] + "\n";
    }
  }
  return text;
}

/// The input names `renaming` gives.
std::vector<std::string> names_of(const Universe& universe, const std::vector<int>& renaming) {
  std::vector<std::string> names(universe.inputs.size());
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = universe.inputs[static_cast<std::size_t>(renaming[i])].name;
  return names;
}

}  // namespace

std::vector<int> readable_renaming(const GraphPair& pair) {
  const std::vector<std::pair<Term, Term>> terms = output_terms(pair);
  std::vector<int> best;
  std::string best_text;
  for (const std::vector<int>& renaming : renamings(*pair.universe)) {
    std::string text = comment(*pair.universe, terms, names_of(*pair.universe, renaming));
    if (best.empty() || text < best_text) {
      best = renaming;
      best_text = std::move(text);
    }
  }
  return best;
}

rules::Rule write_rule(const GraphPair& pair, const std::string& name, Evaluator& sources, Evaluator& targets) {
  const Universe& universe = *pair.universe;
  const std::vector<std::string> names = names_of(universe, pair.renaming);
  std::set<int> used;
  for (const auto& [source, target] : pair.outputs) {
    for (int input : inputs_of(term_of(universe, pair.source, source))) used.insert(input);
  }
  // Each graph evaluated once: the writer reads its dims, dim expressions and split points.
  const std::vector<Slot>& source_slots = sources.evaluate(pair.source);
  const std::vector<Slot>& target_slots = targets.evaluate(pair.target);
  std::string text = comment(universe, output_terms(pair), names) + "rule " + name + "\n  origin generated\n  source\n";
  text += node_lines(pair, pair.source, source_slots, "s", names);
  for (const auto& [name, rank] : ranks(universe, used, names)) {
    text += "  where rank(" + name + ") == " + std::to_string(rank) + "\n";
  }
  text += shape_conditions(pair, source_slots, target_slots, names);
  text += "  target\n" + node_lines(pair, pair.target, target_slots, "t", names) + "  map ";
  for (std::size_t i = 0; i < pair.outputs.size(); ++i) {
    const auto [source, target] = pair.outputs[i];
    text += (i > 0 ? ", " : "") + value_name(source, names, "s") + " -> " + value_name(target, names, "t");
  }
  text += "\nend\n";
  std::vector<rules::Rule> parsed = rules::parse_rules(text, "generated");
  if (parsed.size() != 1) throw Error("generated rule " + name + " did not parse as one rule");
  return parsed.front();
}

}  // namespace graphsub::generate
