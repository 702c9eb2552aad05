// graphsub: command-line entry; parses arguments, runs one subcommand, maps failures to exit codes.
#include <iostream>
#include <vector>

#include "cmd/commands.h"
#include "ir/log.h"

namespace {

spdlog::level::level_enum level_for(int verbosity) {
  if (verbosity < 0) return spdlog::level::err;
  if (verbosity == 0) return spdlog::level::warn;
  return verbosity == 1 ? spdlog::level::info : spdlog::level::debug;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"graphsub: a superoptimizer for ONNX computation graphs"};
  app.set_version_flag("--version", std::string("graphsub ") + GRAPHSUB_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output on stderr (-vv: debug)");
  app.add_flag_callback("-q,--quiet", [&] { verbosity = -1; }, "Only errors on stderr");
  const std::vector<graphsub::cmd::Command> commands = {graphsub::cmd::setup_optimize(app),
                                                        graphsub::cmd::setup_bench(app),
                                                        graphsub::cmd::setup_inspect(app),
                                                        graphsub::cmd::setup_models(app),
                                                        graphsub::cmd::setup_verify_rules(app),
                                                        graphsub::cmd::setup_generate_rules(app),
                                                        graphsub::cmd::setup_profile(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  graphsub::set_log_level(level_for(verbosity));
  try {
    for (const auto& command : commands) {
      if (command.app->parsed()) command.run();
    }
  } catch (const std::exception& e) {
    std::cerr << "graphsub: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
