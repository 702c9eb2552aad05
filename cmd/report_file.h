// Writing JSON reports and text files atomically.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace graphsub::cmd {

/// Writes `text` to `path` through a temporary file and a rename, so a reader never sees a
/// partial file. Throws graphsub::Error naming `what` ("report", "rule file").
void write_text_file(const std::string& path, const std::string& text, const std::string& what);

/// Writes `report` (pretty-printed, keys sorted) to `path` through a temporary file and a rename,
/// so a reader never sees a partial report. Throws graphsub::Error.
void write_report(const std::string& path, const nlohmann::json& report);

}  // namespace graphsub::cmd
