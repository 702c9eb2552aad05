// The default rule files from rules/, compiled in so the executable and the tests search with the
// same set from anywhere.
#pragma once

#include <string>
#include <vector>

#include "rules/rule.h"

namespace graphsub::rules {

/// One shipped rule file: its path in the repository and its text.
struct ShippedRuleFile {
  const char* path;
  const char* text;
};

/// The default rule files (the list in lib/rules/CMakeLists.txt), in that order.
const std::vector<ShippedRuleFile>& shipped_rule_files();

/// Every rule of the shipped files, parsed, in file order: what `optimize` searches with by default.
std::vector<Rule> default_rules();

/// The operator axioms file (rules/axioms.rules), compiled in like the rule files.
const ShippedRuleFile& shipped_axiom_file();

/// "sha256:<hex>" of shipped_axiom_file()'s text, computed when the build is configured: the
/// axioms a rule's recorded proof must name to count (`verify-rules --write` records it).
const std::string& shipped_axioms_hash();

/// Whether `rule`'s proof line says `proved` under the shipped axioms: what `optimize` searches
/// with unless --allow-unverified.
bool proved_under_shipped_axioms(const Rule& rule);

/// The layout forms of the onnxruntime CPU target (rules/layout.rules), compiled in like the rule
/// files but not among them: `optimize` applies them after the search and keeps them only when
/// the whole graph is measured faster.
const ShippedRuleFile& shipped_layout_file();

/// The rules of shipped_layout_file(), parsed.
std::vector<Rule> shipped_layout_rules();

/// The narrowing rules (rules/narrow.rules), compiled in like the rule files but not among them:
/// `optimize` applies them before the search wherever they match, as each makes an op compute
/// fewer elements (a Gather of one token moved above the ops that made its input).
const ShippedRuleFile& shipped_narrow_file();

/// The rules of shipped_narrow_file(), parsed.
std::vector<Rule> shipped_narrow_rules();

/// The axioms of shipped_axiom_file(), parsed: what `verify-rules --check-axioms` checks.
std::vector<Rule> shipped_axioms();

}  // namespace graphsub::rules
