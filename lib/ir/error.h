// The error type for bad input: one clear message, shown to the user as is.
#pragma once

#include <stdexcept>
#include <string>

namespace graphsub {

/// A user-facing failure (bad model, unreadable file, invalid graph). The command line prints
/// `what()` as the one-line error and exits 1; anything else escaping is a bug.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace graphsub
