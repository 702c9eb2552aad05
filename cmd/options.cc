// Shared option parsing.
#include "cmd/options.h"

#include "ir/error.h"
#include "pipeline/target.h"

namespace graphsub::cmd {

std::map<std::string, int64_t> parse_dims(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const std::string& spec : specs) {
    const auto eq = spec.find('=');
    std::size_t used = 0;
    int64_t size = -1;
    try {
      if (eq != std::string::npos && eq > 0) size = std::stoll(spec.substr(eq + 1), &used);
    } catch (const std::exception&) {
      size = -1;
    }
    if (size < 0 || used != spec.size() - eq - 1) throw Error("--dim expects NAME=SIZE with SIZE >= 0, got '" + spec + "'");
    dims[spec.substr(0, eq)] = size;
  }
  return dims;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard shard;
  bool ok = slash != std::string::npos && slash > 0 && slash + 1 < text.size() &&
            text.find_first_not_of("0123456789/") == std::string::npos && text.find('/', slash + 1) == std::string::npos;
  try {
    if (ok) {
      shard.index = std::stoi(text.substr(0, slash));
      shard.count = std::stoi(text.substr(slash + 1));
    }
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok || shard.count < 1 || shard.index >= shard.count) {
    throw Error("--shard takes I/K with 0 <= I < K, e.g. 0/4, not '" + text + "'");
  }
  return shard;
}

std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::vector<std::string>& specs) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& spec : specs) {
    const std::string usage = "--input-shape expects NAME:D1,D2,... with every size >= 0, got '" + spec + "'";
    const auto colon = spec.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size()) throw Error(usage);
    std::vector<int64_t> sizes;
    std::size_t begin = colon + 1;
    while (begin <= spec.size()) {
      const std::size_t end = std::min(spec.find(',', begin), spec.size());
      const std::string text = spec.substr(begin, end - begin);
      std::size_t used = 0;
      int64_t size = -1;
      try {
        if (!text.empty()) size = std::stoll(text, &used);
      } catch (const std::exception&) {
        size = -1;
      }
      if (size < 0 || used != text.size()) throw Error(usage);
      sizes.push_back(size);
      begin = end + 1;
    }
    if (!shapes.emplace(spec.substr(0, colon), sizes).second) {
      throw Error("--input-shape gives input '" + spec.substr(0, colon) + "' twice");
    }
  }
  return shapes;
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const pipeline::TargetSpec& spec : pipeline::target_specs()) names.push_back(spec.name);
  return names;
}

std::string target_help() {
  std::string text = "What the model is optimized for (default: onnxruntime-cpu where onnxruntime runs, else cpu):";
  for (const pipeline::TargetSpec& spec : pipeline::target_specs()) text += "\n  " + spec.name + ": " + spec.description;
  return text;
}

void add_runtime_options(CLI::App* sub, profile::OrtSettings& settings) {
  sub->add_option("--ort-threads", settings.threads,
                  "onnxruntime intra-op threads when measuring, as the model will run")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--ort-level", settings.level, "onnxruntime graph optimization level when measuring")
      ->capture_default_str()->check(CLI::IsMember(profile::ort_levels()));
}

}  // namespace graphsub::cmd
