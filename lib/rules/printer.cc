// The canonical text layout of rules (rules/README.md): two-space sections, four-space nodes.
#include "rules/printer.h"

#include "ir/parallel.h"
#include "ops/registry.h"

namespace graphsub::rules {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i > 0 ? ", " : "") + names[i];
  return text;
}

std::string attributes(const PatternNode& node) {
  std::vector<std::string> items;
  if (!node.copy_from.empty()) items.push_back("@" + node.copy_from);
  for (const AttrSetting& attr : node.attrs) items.push_back(attr.name + " = " + to_string(attr.value));
  return items.empty() ? "" : " [" + joined(items) + "]";
}

std::string node_line(const PatternNode& node) {
  return "    " + joined(node.outputs) + " = " + ops::kind_name(node.op) + "(" + joined(node.inputs) + ")" +
         attributes(node) + "\n";
}

std::string map_line(const std::vector<OutputMap>& outputs) {
  std::vector<std::string> pairs;
  for (const OutputMap& pair : outputs) pairs.push_back(pair.source + " -> " + pair.target);
  return "  map " + joined(pairs) + "\n";
}

}  // namespace

std::string print_rule(const Rule& rule) {
  std::string text;
  for (const std::string& line : rule.comment) text += line.empty() ? "#\n" : "# " + line + "\n";
  text += "rule " + rule.name + "\n";
  text += std::string("  origin ") + to_string(rule.origin) + (rule.closed ? " closed\n" : "\n");
  text += std::string("  proof ") + to_string(rule.proof);
  text += rule.proof_axioms.empty() ? "\n" : " \"" + rule.proof_axioms + "\"\n";
  if (!rule.kind.empty()) text += "  kind " + rule.kind + "\n";
  text += "  source\n";
  for (const PatternNode& node : rule.source) text += node_line(node);
  for (const Expr& condition : rule.conditions) text += "  where " + to_string(condition) + "\n";
  text += "  target\n";
  for (const ConstDef& constant : rule.constants) {
    text += "    const " + constant.name + " = " + to_string(constant.value) + "\n";
  }
  for (const PatternNode& node : rule.target) text += node_line(node);
  if (!rule.outputs.empty()) text += map_line(rule.outputs);
  return text + "end\n";
}

std::string print_rules(const std::vector<Rule>& rules, int jobs) {
  std::vector<std::string> printed(rules.size());
  run_parallel(rules.size(), jobs, [&](std::size_t i) { printed[i] = print_rule(rules[i]); });
  std::size_t size = 0;
  for (const std::string& rule : printed) size += rule.size() + 1;
  std::string text;
  text.reserve(size);
  for (std::size_t i = 0; i < printed.size(); ++i) {
    if (i > 0) text += '\n';
    text += printed[i];
  }
  return text;
}

}  // namespace graphsub::rules
