// Reading TASO's binary rule collection (graph_subst.pb) into graphsub rules.
#pragma once

#include <string>
#include <vector>

#include "rules/rule.h"

namespace graphsub::rules {

/// TASO's rules as graphsub rules, and the ones that could not be translated faithfully.
struct TasoRules {
  std::vector<Rule> rules;           ///< Named "taso-<index>", origin kTaso.
  std::vector<std::string> skipped;  ///< One line per untranslated rule: "taso-<index>: reason".
};

/// Translates a serialized TASO RuleCollection; `file` names it in messages. Throws graphsub::Error
/// when the bytes do not decode; a rule that cannot be translated exactly is skipped.
TasoRules parse_taso_rules(const std::string& bytes, const std::string& file);

/// Reads a TASO RuleCollection file (format in shared/peers/taso/README.md). Throws graphsub::Error
/// when the file cannot be read or decoded; a rule that cannot be translated exactly is skipped.
TasoRules read_taso_rules(const std::string& path);

}  // namespace graphsub::rules
