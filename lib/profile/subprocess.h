// A child process spoken to by lines: its stdin and stdout are sockets, its stderr goes to a file.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace graphsub::profile {

/// A running child process that reads requests on stdin and answers on stdout, one line each.
/// Its stderr is collected in an unlinked temporary file, whose last line explains a failure. The destructor
/// closes stdin, waits briefly, and kills the child if it has not ended.
class Subprocess {
 public:
  /// Starts `argv[0]` (looked up on PATH) with `argv`; error messages call it `name`. Throws
  /// graphsub::Error when it cannot start.
  explicit Subprocess(const std::vector<std::string>& argv, std::string name = "the child process");
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// Writes one line (a newline is added). Throws graphsub::Error when the child has gone.
  void write_line(const std::string& line);

  /// The next line of the child's stdout, without its newline. Throws graphsub::Error when the
  /// child closes stdout or gives no complete line within `timeout_s` seconds (the child is then
  /// killed, so a hung child never hangs the caller).
  std::string read_line(double timeout_s);

  /// The last non-blank line the child wrote to stderr so far (an exception's message, for
  /// error messages); empty when it wrote nothing.
  std::string last_stderr_line() const;

  /// False once the child has ended (crashed, exited, or was stopped after a timeout): every
  /// later request to it fails, so its owner starts another.
  bool running();

  /// The child's process id; -1 once it has ended and was reaped.
  pid_t pid() const { return pid_; }

 private:
  void kill_child();
  /// Waits up to `seconds` for the child to end and reaps it: how it ended ("killed by signal 11
  /// (Segmentation fault)", "exited with status 1", or "" when that is not known), or nullopt
  /// while it still runs.
  std::optional<std::string> wait_for_end(double seconds);
  /// Why a request failed: "<name> <what>", how it ended, and its last stderr line.
  std::string failure(const std::string& what);

  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  int stderr_fd_ = -1;  ///< The child's stderr: an unlinked temporary file.
  std::string buffer_;  ///< Bytes read from stdout after the last complete line.
  std::string name_;    ///< What error messages call the child.
};

}  // namespace graphsub::profile
