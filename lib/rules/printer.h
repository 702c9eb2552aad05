// Writing rules in the canonical text layout of rules/README.md.
#pragma once

#include <string>
#include <vector>

#include "rules/rule.h"

namespace graphsub::rules {

/// One rule in canonical layout, ending in "end\n"; parse_rules(print_rule(r)) == {r}.
std::string print_rule(const Rule& rule);

/// Rules in canonical layout, separated by blank lines; printed on `jobs` threads (a generated
/// file has a hundred thousand rules), the text the same for any number.
std::string print_rules(const std::vector<Rule>& rules, int jobs = 1);

}  // namespace graphsub::rules
