// Opening a generated rule's fixed window parameters into rule variables (issue 15, part 1).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/op_kind.h"
#include "rules/rule.h"

namespace graphsub::generate {

/// An attribute of one operator kind that a rule may leave open: every node of that kind in the
/// rule has it, all with one literal value, and a source node has it (so a match binds it).
struct ParameterGroup {
  ir::OpKind op = ir::OpKind::kOpaque;
  std::string attribute;
  std::string variable;  ///< `avgpool_strides`: the rule variable that replaces the literal.
  bool operator==(const ParameterGroup& other) const { return op == other.op && attribute == other.attribute; }
};

/// The groups of `rule` that may be opened, in a fixed order: the window parameters of Conv
/// (kernel_shape, strides, pads, dilations), AveragePool (kernel_shape, strides, pads, ceil_mode,
/// count_include_pad) and MaxPool (kernel_shape, strides, pads, ceil_mode, dilations). Group,
/// activation, axes and split sizes stay literal.
std::vector<ParameterGroup> open_groups(const rules::Rule& rule);

/// `rule` with each group's literal replaced by its variable in source and target: the first
/// source node of the kind binds it, the others must equal it, the target copies it.
rules::Rule open_parameters(const rules::Rule& rule, const std::vector<ParameterGroup>& groups);

/// Whether a rule holds with the named variable just opened.
using Holds = std::function<bool(const rules::Rule& rule, const std::string& variable)>;

/// The most general form of `rule` that `holds` accepts, found greedily: each group in the order
/// of open_groups is opened when the rule with it and the groups opened before still holds. The
/// comment gains a line naming what was opened. `rule` itself is returned when nothing can be.
rules::Rule generalise(const rules::Rule& rule, const Holds& holds);

}  // namespace graphsub::generate
