// Tests of Subprocess: lines both ways, a child that hangs, a child that fails, a missing program.
#include <catch2/catch.hpp>

#include <string>

#include "ir/error.h"
#include "profile/subprocess.h"

namespace graphsub {
namespace {

using profile::Subprocess;

TEST_CASE("a child answers line by line", "[profile]") {
  Subprocess cat({"cat"});
  cat.write_line("first");
  cat.write_line("{\"second\": 2}");
  CHECK(cat.read_line(10) == "first");
  CHECK(cat.read_line(10) == "{\"second\": 2}");
}

TEST_CASE("a child that gives no answer in time is stopped", "[profile]") {
  Subprocess silent({"sleep", "30"});
  CHECK_THROWS_WITH(silent.read_line(0.2), Catch::Contains("no answer within"));
}

TEST_CASE("a child that dies names its last error line", "[profile]") {
  Subprocess failing({"sh", "-c", "echo 'Traceback:' >&2; echo 'ImportError: no module named x' >&2; exit 3"});
  CHECK_THROWS_WITH(failing.read_line(10), Catch::Contains("ended without answering") &&
                                                Catch::Contains("ImportError: no module named x"));
  CHECK(failing.last_stderr_line() == "ImportError: no module named x");
}

TEST_CASE("a child killed by a signal says so, and is no longer running", "[profile]") {
  Subprocess crashing({"sh", "-c", "kill -SEGV $$"}, "the worker");
  CHECK_THROWS_WITH(crashing.read_line(10), Catch::StartsWith("the worker ended without answering") &&
                                                Catch::Contains("killed by signal 11"));
  CHECK_FALSE(crashing.running());
  CHECK(crashing.pid() == -1);
  Subprocess failing({"sh", "-c", "exit 3"});
  CHECK_THROWS_WITH(failing.read_line(10), Catch::Contains("exited with status 3"));
  Subprocess cat({"cat"});
  CHECK(cat.running());
}

TEST_CASE("writing to a child that has gone is an error, not a signal", "[profile]") {
  Subprocess gone({"true"});
  CHECK_THROWS_AS(gone.read_line(10), Error);
  std::string big(1 << 20, 'x');
  CHECK_THROWS_WITH(gone.write_line(big), Catch::Contains("has ended"));
}

TEST_CASE("a program that does not exist cannot start", "[profile]") {
  CHECK_THROWS_WITH(Subprocess({"/no/such/program"}), Catch::Contains("cannot start '/no/such/program'"));
}

}  // namespace
}  // namespace graphsub
