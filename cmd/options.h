// Options shared by several subcommands: symbolic dim sizes, targets, onnxruntime's session settings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "profile/ort_worker.h"

namespace graphsub::cmd {

/// `--dim NAME=SIZE` values as a map. Throws graphsub::Error naming a malformed one.
std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs);

/// `--input-shape NAME:D1,D2,...` values (onnxsim's --overwrite-input-shape syntax) as a map.
/// Throws graphsub::Error naming a malformed one.
std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::vector<std::string>& specs);

/// `--shard I/K`: slice `index` of `count`.
struct Shard {
  int index = 0;
  int count = 1;
};

/// Parses `--shard I/K` (0 <= I < K). Throws graphsub::Error naming a malformed one.
Shard parse_shard(const std::string& text);

/// Every --target name.
std::vector<std::string> target_names();

/// The help text of --target: each target, measured or estimated, and the default.
std::string target_help();

/// Adds --ort-threads and --ort-level, onnxruntime's session settings for measuring.
void add_runtime_options(CLI::App* sub, profile::OrtSettings& settings);

}  // namespace graphsub::cmd
