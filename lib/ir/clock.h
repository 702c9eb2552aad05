// Wall-clock durations for logs, reports and time limits (never for a result).
#pragma once

#include <chrono>

namespace graphsub {

using Clock = std::chrono::steady_clock;

/// Seconds since `start` on the steady clock.
inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace graphsub
