// The default rule files from rules/, compiled into the executable so it runs from anywhere.
#pragma once

#include <string>
#include <vector>

namespace graphsub::cmd {

/// One shipped rule file: its path in the repository and its text.
struct ShippedRuleFile {
  const char* path;
  const char* text;
};

/// The default rule files (the list in cmd/CMakeLists.txt), in that order.
const std::vector<ShippedRuleFile>& shipped_rule_files();

}  // namespace graphsub::cmd
