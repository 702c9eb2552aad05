// Opening fixed window parameters: uniform literals become variables, each opening checked.
#include "generate/generalise.h"

#include <algorithm>
#include <map>

namespace graphsub::generate {
namespace {

using ir::OpKind;

/// The attributes of each kind that may be opened, and the prefix of their variables.
struct Openable {
  OpKind op;
  const char* prefix;
  std::vector<std::string> attributes;
};

const std::vector<Openable>& openable() {
  static const std::vector<Openable> kinds = {
      {OpKind::kConv, "conv", {"kernel_shape", "strides", "pads", "dilations"}},
      {OpKind::kAveragePool, "avgpool", {"kernel_shape", "strides", "pads", "ceil_mode", "count_include_pad"}},
      // Not MaxPool's dilations: the instance generator never varies them, so no check could accept it.
      {OpKind::kMaxPool, "maxpool", {"kernel_shape", "strides", "pads", "ceil_mode"}},
  };
  return kinds;
}

/// The literal `node` gives `attribute`, or null when it has none or an expression.
const rules::Expr* literal_of(const rules::PatternNode& node, const std::string& attribute) {
  for (const rules::AttrSetting& setting : node.attrs) {
    if (setting.name == attribute) return rules::is_literal(setting.value) ? &setting.value : nullptr;
  }
  return nullptr;
}

/// Whether every node of `op` in `rule` gives `attribute` one literal, and a source node does.
bool uniform(const rules::Rule& rule, OpKind op, const std::string& attribute) {
  const rules::Expr* value = nullptr;
  bool in_source = false;
  for (const std::vector<rules::PatternNode>* side : {&rule.source, &rule.target}) {
    for (const rules::PatternNode& node : *side) {
      if (node.op != op) continue;
      const rules::Expr* literal = literal_of(node, attribute);
      if (!literal || (value && !(*literal == *value))) return false;
      value = literal;
      in_source = in_source || side == &rule.source;
    }
  }
  return in_source;
}

/// The literal every node of the group's kind gives its attribute in `rule` (open_groups found one).
rules::Expr literal(const rules::Rule& rule, const ParameterGroup& group) {
  for (const rules::PatternNode& node : rule.source) {
    if (node.op != group.op) continue;
    if (const rules::Expr* value = literal_of(node, group.attribute)) return *value;
  }
  return {};
}

void open_in(std::vector<rules::PatternNode>& nodes, const ParameterGroup& group) {
  for (rules::PatternNode& node : nodes) {
    if (node.op != group.op) continue;
    for (rules::AttrSetting& setting : node.attrs) {
      if (setting.name != group.attribute) continue;
      setting.value = rules::Expr::variable(group.variable);
    }
  }
}

/// Whether `op` combines two tensors element by element, broadcasting where their shapes differ.
bool broadcasts(OpKind op) {
  return op == OpKind::kAdd || op == OpKind::kMul || op == OpKind::kSub || op == OpKind::kDiv;
}

/// Whether opening `attribute` changes the output size of its op (count_include_pad does not).
bool sizes_output(const std::string& attribute) { return attribute != "count_include_pad"; }

/// Whether some element-wise node of `nodes` combines two values that went through different
/// numbers of `op` nodes (the most on a path from the inputs). The enumeration never broadcasts,
/// and with literal windows each such op kept its input's size; opened, it may not, and the
/// operands' shapes then differ: where one broadcasts into the other (a 1 x 1 image added to a
/// strided convolution of it) the rule does not hold. verify-rules refuted eight rules of
/// `--max-ops 4` opened that way (gen-conv-31449: x + conv(x, v) with ?conv_strides).
bool unbalanced(const std::vector<rules::PatternNode>& nodes, OpKind op) {
  std::map<std::string, int> depth;  // pattern inputs: 0
  for (const rules::PatternNode& node : nodes) {
    int most = 0;
    for (const std::string& input : node.inputs) {
      const auto found = depth.find(input);
      most = std::max(most, found == depth.end() ? 0 : found->second);
    }
    if (broadcasts(node.op) && node.inputs.size() == 2) {
      const auto a = depth.find(node.inputs[0]), b = depth.find(node.inputs[1]);
      if ((a == depth.end() ? 0 : a->second) != (b == depth.end() ? 0 : b->second)) return true;
    }
    for (const std::string& output : node.outputs) depth[output] = most + (node.op == op ? 1 : 0);
  }
  return false;
}

}  // namespace

std::vector<ParameterGroup> open_groups(const rules::Rule& rule) {
  std::vector<ParameterGroup> groups;
  for (const Openable& kind : openable()) {
    for (const std::string& attribute : kind.attributes) {
      if (uniform(rule, kind.op, attribute)) groups.push_back({kind.op, attribute, std::string(kind.prefix) + "_" + attribute});
    }
  }
  return groups;
}

rules::Rule open_parameters(const rules::Rule& rule, const std::vector<ParameterGroup>& groups) {
  rules::Rule opened = rule;
  for (const ParameterGroup& group : groups) {
    open_in(opened.source, group);
    open_in(opened.target, group);
  }
  return opened;
}

rules::Rule generalise(const rules::Rule& rule, const Check& check) {
  const std::vector<ParameterGroup> groups = open_groups(rule);
  // The steps: each group alone, but an op's kernel and pads together (a kernel opened with its
  // pads literal changes the output's size, pads opened alone too; SAME padding needs both).
  auto find = [&groups](OpKind op, const char* attribute) {
    return std::find_if(groups.begin(), groups.end(),
                        [&](const ParameterGroup& group) { return group.op == op && group.attribute == attribute; });
  };
  std::vector<std::vector<ParameterGroup>> steps;
  for (const ParameterGroup& group : groups) {
    if (sizes_output(group.attribute) && (unbalanced(rule.source, group.op) || unbalanced(rule.target, group.op))) continue;
    const bool kernel = group.attribute == "kernel_shape", pads = group.attribute == "pads";
    if (pads && find(group.op, "kernel_shape") != groups.end()) continue;  // went with the kernel
    steps.push_back({group});
    if (kernel && find(group.op, "pads") != groups.end()) steps.back().push_back(*find(group.op, "pads"));
  }
  std::vector<ParameterGroup> opened;
  rules::Rule best = rule;
  for (const std::vector<ParameterGroup>& step : steps) {
    std::vector<ParameterGroup> trial_groups = opened;
    trial_groups.insert(trial_groups.end(), step.begin(), step.end());
    std::vector<std::string> variables;
    for (const ParameterGroup& group : trial_groups) variables.push_back(group.variable);
    std::vector<Opening> openings;
    for (const ParameterGroup& group : step) openings.push_back({group.variable, literal(rule, group)});
    rules::Rule candidate = open_parameters(rule, trial_groups);
    const Trial trial = check(candidate, variables, openings);
    const bool varied = std::all_of(step.begin(), step.end(), [&](const ParameterGroup& group) {
      return std::find(trial.varied.begin(), trial.varied.end(), group.variable) != trial.varied.end();
    });
    if (!trial.held || !varied) continue;
    opened = std::move(trial_groups);
    best = std::move(candidate);
  }
  if (opened.empty()) return rule;
  std::string line = "  for every";
  for (std::size_t i = 0; i < opened.size(); ++i) line += (i > 0 ? ", ?" : " ?") + opened[i].variable;
  // The last comment line shows before -> after (rules/README.md): the new line goes above it.
  best.comment.insert(best.comment.empty() ? best.comment.end() : best.comment.end() - 1, line);
  return best;
}

}  // namespace graphsub::generate
