// Spawning a line-speaking child with posix_spawnp, pipes and poll.
#include "profile/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "ir/error.h"

extern char** environ;

namespace graphsub::profile {
namespace {

/// A connected pair of stream sockets, closed on exec in this process's other children. A
/// socket rather than a pipe, so that writing to a child that has gone fails with EPIPE
/// (MSG_NOSIGNAL) instead of raising SIGPIPE in the whole process.
void make_channel(int fds[2]) {
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw Error(std::string("cannot create a socket pair: ") + std::strerror(errno));
  }
}

/// ": reason", or nothing for an empty reason.
std::string with_reason(const std::string& reason) { return reason.empty() ? "" : ": " + reason; }

/// A new empty temporary file for a child's stderr, open for reading and writing and already
/// unlinked, so that nothing is left behind however this process ends.
int anonymous_file() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/graphsub-stderr-XXXXXX";
  const int fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) throw Error("cannot create a temporary file in " + path.substr(0, path.rfind('/')));
  ::unlink(path.c_str());
  return fd;
}

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv, std::string name)
    : stderr_fd_(anonymous_file()), name_(std::move(name)) {
  int in[2];
  int out[2];
  make_channel(in);
  make_channel(out);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd_, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int failed = ::posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  if (failed != 0) {
    pid_ = -1;
    throw Error("cannot start '" + argv[0] + "': " + std::strerror(failed));
  }
}

Subprocess::~Subprocess() {
  if (to_child_ >= 0) ::close(to_child_);
  if (pid_ > 0) {
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill_child();
        break;
      }
      ::usleep(10000);
    }
  }
  if (from_child_ >= 0) ::close(from_child_);
  ::close(stderr_fd_);
}

void Subprocess::kill_child() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void Subprocess::write_line(const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(to_child_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(failure("has ended"));
    done += static_cast<std::size_t>(n);
  }
}

std::string Subprocess::read_line(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const std::size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill_child();
      throw Error(name_ + " gave no answer within " + std::to_string(static_cast<int>(timeout_s)) +
                  " s and was stopped");
    }
    pollfd ready{from_child_, POLLIN, 0};
    if (::poll(&ready, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) {
      throw Error(std::string("cannot wait for the child process: ") + std::strerror(errno));
    }
    if (ready.revents == 0) continue;
    char chunk[65536];
    const ssize_t n = ::read(from_child_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(failure("ended without answering"));
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

bool Subprocess::running() { return !wait_for_end(0).has_value(); }

std::optional<std::string> Subprocess::wait_for_end(double seconds) {
  if (pid_ <= 0) return std::string();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  for (;;) {
    const pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
    if (reaped == pid_ || (reaped < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    ::usleep(10000);
  }
  pid_ = -1;
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return std::string();
}

std::string Subprocess::failure(const std::string& what) {
  // A child that closed its end is usually gone already: a second is plenty to reap it.
  const std::string how = wait_for_end(1.0).value_or("");
  return name_ + " " + what + with_reason(how) + with_reason(last_stderr_line());
}

std::string Subprocess::last_stderr_line() const {
  std::string text;
  char chunk[65536];
  for (off_t offset = 0;;) {
    const ssize_t n = ::pread(stderr_fd_, chunk, sizeof chunk, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    offset += n;
  }
  std::istringstream in(text);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  return last;
}

}  // namespace graphsub::profile
