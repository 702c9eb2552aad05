// The rule files shipped in rules/, compiled into the executable so it runs from anywhere.
#pragma once

#include <string>
#include <vector>

namespace graphsub::cmd {

/// One shipped rule file: its path in the repository and its text.
struct ShippedRuleFile {
  const char* path;
  const char* text;
};

/// Every rules/*.rules file, in file-name order.
const std::vector<ShippedRuleFile>& shipped_rule_files();

}  // namespace graphsub::cmd
