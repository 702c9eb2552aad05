// Writing JSON reports atomically.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace graphsub::cmd {

/// Writes `report` (pretty-printed, keys sorted) to `path` through a temporary file and a rename,
/// so a reader never sees a partial report. Throws graphsub::Error.
void write_report(const std::string& path, const nlohmann::json& report);

}  // namespace graphsub::cmd
