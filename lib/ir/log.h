// One named spdlog logger per subsystem, all writing to stderr.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace graphsub {

/// The logger of a subsystem ("onnx_io", "search", ...), created on first use with the current
/// global level. Library code logs only through these; nothing is printed to stdout.
std::shared_ptr<spdlog::logger> logger(const std::string& subsystem);

/// Sets the level of every logger, present and future (from -v/-q; SPDLOG_LEVEL overrides).
void set_log_level(spdlog::level::level_enum level);

}  // namespace graphsub
