// Named stderr loggers.
#include "ir/log.h"

#include <mutex>

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace graphsub {

std::shared_ptr<spdlog::logger> logger(const std::string& subsystem) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto existing = spdlog::get(subsystem)) return existing;
  auto created = spdlog::stderr_color_mt(subsystem);
  created->set_pattern("[%n] %l: %v");
  created->set_level(spdlog::get_level());
  spdlog::cfg::load_env_levels();
  return spdlog::get(subsystem);
}

void set_log_level(spdlog::level::level_enum level) {
  spdlog::set_level(level);
  spdlog::cfg::load_env_levels();
}

}  // namespace graphsub
