// Rule equality (positions in the file are not part of a rule's meaning) and its pattern inputs.
#include "rules/rule.h"

#include <algorithm>
#include <set>

namespace graphsub::rules {

bool PatternNode::operator==(const PatternNode& other) const {
  return op == other.op && outputs == other.outputs && inputs == other.inputs &&
         copy_from == other.copy_from && attrs == other.attrs;
}

bool Rule::operator==(const Rule& other) const {
  return name == other.name && comment == other.comment && origin == other.origin && closed == other.closed &&
         proof == other.proof && proof_axioms == other.proof_axioms && kind == other.kind &&
         source == other.source && conditions == other.conditions && constants == other.constants &&
         target == other.target && outputs == other.outputs;
}

std::vector<std::string> Rule::inputs() const {
  std::set<std::string> defined;
  for (const PatternNode& node : source) defined.insert(node.outputs.begin(), node.outputs.end());
  std::vector<std::string> result;
  for (const PatternNode& node : source) {
    for (const std::string& input : node.inputs) {
      if (defined.count(input) == 0 && std::find(result.begin(), result.end(), input) == result.end()) {
        result.push_back(input);
      }
    }
  }
  return result;
}

const char* to_string(Origin origin) {
  switch (origin) {
    case Origin::kHand:
      return "hand";
    case Origin::kGenerated:
      return "generated";
    case Origin::kTaso:
      return "taso";
    case Origin::kAxiom:
      return "axiom";
  }
  return "hand";
}

const char* to_string(ProofStatus proof) {
  switch (proof) {
    case ProofStatus::kUnverified:
      return "unverified";
    case ProofStatus::kProved:
      return "proved";
    case ProofStatus::kRefuted:
      return "refuted";
    case ProofStatus::kUnknown:
      return "unknown";
  }
  return "unverified";
}

}  // namespace graphsub::rules
