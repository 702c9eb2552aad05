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
/// count_include_pad) and MaxPool (kernel_shape, strides, pads, ceil_mode). Group,
/// activation, axes and split sizes stay literal.
std::vector<ParameterGroup> open_groups(const rules::Rule& rule);

/// `rule` with each group's literal replaced by its variable in source and target: the first
/// source node of the kind binds it, the others must equal it, the target copies it.
rules::Rule open_parameters(const rules::Rule& rule, const std::vector<ParameterGroup>& groups);

/// What checking a rule with some groups opened found.
struct Trial {
  bool held = false;  ///< Equal on every instance drawn (and one was found).
  /// The step's variables some instance bound to another value than the literal they replace
  /// (the rule with the literal was checked before: a step no instance moves off it is untested).
  std::vector<std::string> varied;
};

/// A variable a step opens, and the literal of the rule it replaces.
struct Opening {
  std::string variable;
  rules::Expr literal;
};

/// Checks `rule`, in which `variables` are the opened groups' variables and `step` those the
/// step opens (the last of `variables`).
using Check = std::function<Trial(const rules::Rule& rule, const std::vector<std::string>& variables,
                                  const std::vector<Opening>& step)>;

/// The most general form of `rule` that `check` accepts, found greedily in the order of
/// open_groups: each group is opened when the rule with it and the groups opened before still
/// holds and some instance bound its variable to another value than the literal. An op's
/// kernel_shape and pads are one step (opened together or not at all: SAME padding needs both,
/// and either alone changes the output's size); every other group is a step of its own.
/// Opening all groups at once and checking once was tried and is wrong: with many variables
/// drawn together, the instances that vary a convolution's strides were ones a 1 x 1 pooling
/// window made trivial. A group that sizes its op's output (all but count_include_pad) is not
/// opened where an element-wise node of the source or the target adds values that went through
/// different numbers of nodes of that op: the rule was found without broadcasting, and opened,
/// one operand could broadcast into the other. The comment gains a line naming what was opened.
/// `rule` itself is returned when nothing can be.
rules::Rule generalise(const rules::Rule& rule, const Check& check);

}  // namespace graphsub::generate
