// The subcommands of the graphsub executable: each adds its options to the app and says how to run.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace graphsub::cmd {

/// A registered subcommand: its CLI11 node and the action to run when it was given.
struct Command {
  CLI::App* app;
  std::function<void()> run;
};

/// `graphsub optimize IN -o OUT`: import, optimize, export, optionally check numerically.
Command setup_optimize(CLI::App& app);

/// `graphsub bench A [B]`: time a model, or compare two, in the measured target.
Command setup_bench(CLI::App& app);

/// `graphsub inspect IN`: what the model holds and what graphsub models of it.
Command setup_inspect(CLI::App& app);

/// `graphsub models [--write DIR]`: list the benchmark models, or write them as ONNX files.
Command setup_models(CLI::App& app);

/// `graphsub verify-rules [FILE...]`: check rules with Z3, a verdict per rule.
Command setup_verify_rules(CLI::App& app);

/// `graphsub generate-rules --max-ops N -o FILE`: enumerate small graphs, write the rules found.
Command setup_generate_rules(CLI::App& app);

/// `graphsub profile`: measure the operator signatures of models into a cost cache.
Command setup_profile(CLI::App& app);

}  // namespace graphsub::cmd
