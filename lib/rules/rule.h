// A graph substitution rule: source pattern, conditions, target, and the output mapping.
#pragma once

#include <string>
#include <vector>

#include "ir/op_kind.h"
#include "rules/expr.h"

namespace graphsub::rules {

/// True for the name of a value list (`xs...`): zero or more values at the start or end of a
/// node's inputs or outputs.
inline bool is_list_name(const std::string& name) {
  return name.size() > 3 && name.compare(name.size() - 3, 3, "...") == 0;
}

/// `name = EXPR` on a pattern node.
struct AttrSetting {
  std::string name;
  Expr value;
  bool operator==(const AttrSetting& other) const { return name == other.name && value == other.value; }
};

/// One node of a source or target pattern: `outs = Op(ins) [@copy_from, attrs]`.
struct PatternNode {
  ir::OpKind op = ir::OpKind::kOpaque;
  std::vector<std::string> outputs;
  std::vector<std::string> inputs;
  std::string copy_from;  ///< Target only: a source value whose node's attributes are copied first.
  std::vector<AttrSetting> attrs;
  int line = 0;           ///< Line in the rule file, for messages (not compared).
  bool operator==(const PatternNode& other) const;
};

/// `const NAME = EXPR` in a target: a constant tensor computed from the match.
struct ConstDef {
  std::string name;
  Expr value;
  bool operator==(const ConstDef& other) const { return name == other.name && value == other.value; }
};

/// `map SRC -> TGT`: uses of the source value move to the target value.
struct OutputMap {
  std::string source;
  std::string target;
  bool operator==(const OutputMap& other) const { return source == other.source && target == other.target; }
};

/// Where a rule came from; an axiom is a property of operators that proofs may use (rules/axioms.rules).
enum class Origin { kHand, kGenerated, kTaso, kAxiom };
/// What the verifier last concluded about a rule.
enum class ProofStatus { kUnverified, kProved, kRefuted, kUnknown };

/// A graph substitution (rules/README.md describes the text form).
struct Rule {
  std::string name;
  std::vector<std::string> comment;  ///< Comment lines above the rule, without the leading "# ".
  Origin origin = Origin::kHand;
  /// An axiom that joins a proof only where the rule itself applies every function of both its
  /// sides (`origin axiom closed`): one whose terms, brought in by other axioms, would start a
  /// matching loop with them (lib/verify/README.md, "Closed axioms").
  bool closed = false;
  ProofStatus proof = ProofStatus::kUnverified;
  /// "sha256:<hex>" of the axioms file `proof` was found under (`verify-rules --write`); empty
  /// when none was recorded.
  std::string proof_axioms;
  /// The kind of a layout form (`kind NAME`, kebab-case; rules/layout.rules): the forms of one
  /// kind are kept or dropped together, each kind measured on its own where forms of several
  /// kinds apply (lib/pipeline/layout_forms.h). Empty for a rule that names none.
  std::string kind;
  std::vector<PatternNode> source;
  std::vector<Expr> conditions;      ///< `where` lines; each must evaluate to a non-zero int.
  std::vector<ConstDef> constants;   ///< Target constants, defined before the target nodes.
  std::vector<PatternNode> target;
  std::vector<OutputMap> outputs;
  std::string file;                  ///< File it was read from, for messages (not compared).
  int line = 0;                      ///< Line of `rule NAME` (not compared).

  /// Pattern inputs: names the source reads but does not define, in order of first use.
  std::vector<std::string> inputs() const;
  bool operator==(const Rule& other) const;
  bool operator!=(const Rule& other) const { return !(*this == other); }
};

const char* to_string(Origin origin);
const char* to_string(ProofStatus proof);

}  // namespace graphsub::rules
