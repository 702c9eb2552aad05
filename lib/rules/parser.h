// Reading rule files (the format of rules/README.md) into Rule values.
#pragma once

#include <string>
#include <vector>

#include "rules/rule.h"

namespace graphsub::rules {

/// Parses the rules in `text`; `file` names it in messages. Throws graphsub::Error with
/// `file:line: message` on the first syntax or consistency error (unknown operator, unbound
/// target input or variable, duplicate name, disconnected source, ...).
std::vector<Rule> parse_rules(const std::string& text, const std::string& file);

/// Reads and parses a rule file; throws graphsub::Error when it cannot be read or parsed.
std::vector<Rule> read_rules_file(const std::string& path);

}  // namespace graphsub::rules
