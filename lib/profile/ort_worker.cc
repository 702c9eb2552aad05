// The onnxruntime worker's protocol: hello, then timing requests, one JSON line each way.
#include "profile/ort_worker.h"

#include <cstdlib>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "ir/error.h"
#include "ir/log.h"
#include "profile/ort_worker_source.h"

namespace graphsub::profile {
namespace {

using Json = nlohmann::json;

/// Seconds to wait for the worker to start and import onnxruntime.
constexpr double kStartSeconds = 60;
/// Seconds a timing request may take beyond its own time limit: loading and optimizing the
/// models (a large transformer takes a few seconds) and the warm-up runs.
constexpr double kSessionSeconds = 300;

Json parse_answer(const std::string& line) {
  Json answer;
  try {
    answer = Json::parse(line);
  } catch (const Json::parse_error&) {
    throw Error("the onnxruntime worker answered something that is not JSON: " + line.substr(0, 200));
  }
  if (!answer.is_object() || !answer.value("ok", false)) {
    throw Error(answer.is_object() ? answer.value("error", std::string("unknown failure")) : line);
  }
  return answer;
}

}  // namespace

const std::vector<std::string>& ort_levels() {
  static const std::vector<std::string> levels = {"disabled", "basic", "extended", "all"};
  return levels;
}

std::string default_python() {
  const char* python = std::getenv("GRAPHSUB_PYTHON");
  return python && *python ? python : "python3";
}

OrtWorker::OrtWorker(const std::string& python) : python_(python) {
  start();
  logger("profile")->info("onnxruntime {} (Python {}) on {}", info_.onnxruntime, info_.python, info_.cpu);
}

void OrtWorker::start() {
  try {
    // The source goes on the command line, so no file is left behind when graphsub is killed.
    process_ = std::make_unique<Subprocess>(std::vector<std::string>{python_, "-c", ort_worker_source()},
                                            "onnxruntime's worker");
    process_->write_line(R"({"cmd": "hello"})");
    const Json hello = parse_answer(process_->read_line(kStartSeconds));
    info_ = {hello.at("onnxruntime").get<std::string>(), hello.at("cpu").get<std::string>(),
             hello.at("python").get<std::string>()};
  } catch (const Error& error) {
    throw Error(std::string("onnxruntime is not available (") + python_ + "): " + error.what());
  }
}

std::string OrtWorker::request(const std::string& line, double timeout_s, int threads) {
  if (!process_->running()) {
    start();
    ++restarts_;
    threads_ = 0;
    // The request that found it gone was answered with an error its caller may have handled
    // quietly (timing candidates one by one after timing them together failed): say why here,
    // since a worker killed for memory (signal 9) is worth knowing about.
    logger("profile")->warn("the onnxruntime worker had ended ({}); started another",
                            last_failure_.empty() ? "no reason known" : last_failure_);
  } else if (threads_ != 0 && threads_ != threads) {
    // Its sessions share one thread pool of the size it was first asked for (ort_worker.py,
    // "Threads"), which onnxruntime cannot change in a running process.
    // (start() replaces the process, so a start that fails leaves the old one, not none.)
    logger("profile")->debug("onnxruntime worker: {} threads after {}, starting a new one", threads, threads_);
    start();
  }
  threads_ = threads;
  try {
    process_->write_line(line);
    return process_->read_line(timeout_s);
  } catch (const Error& error) {
    last_failure_ = error.what();
    throw;
  }
}

std::string describe(const OneAtATime& alone) {
  constexpr double kGiB = 1 << 30;
  return fmt::format("a session took {:.2f} GiB; {:.2f} GiB were free beside it",
                     static_cast<double>(alone.session_bytes) / kGiB, static_cast<double>(alone.free_bytes) / kGiB);
}

std::vector<Timing> OrtWorker::time_files(const std::vector<std::string>& paths, const OrtSettings& settings,
                                          const cost::DimSizes& sizes, const TimingLimits& limits, uint32_t seed,
                                          const std::vector<std::vector<double>>& prior_ms) {
  Json ask = {{"cmd", "time"},           {"models", paths},
                    {"threads", settings.threads}, {"level", settings.level},
                    {"dims", sizes},           {"seed", seed},
                    {"warmup", limits.warmup}, {"warmup_seconds", limits.warmup_seconds},
                    {"min_runs", limits.min_runs},
                    {"max_runs", limits.max_runs}, {"max_seconds", limits.max_seconds},
                    {"rel_error", limits.rel_error}, {"abs_error_ms", limits.abs_error_ms},
                    {"paired", limits.paired}, {"sessions", limits.sessions},
                    {"decide_at", limits.decide_at}, {"runs_only_seconds", limits.runs_only_seconds}};
  if (!prior_ms.empty()) ask["prior_ms"] = prior_ms;
  last_one_at_a_time_.reset();
  // Where the runs alone are bounded, creating the sessions may take as long again (the blocks
  // after the first ones are sized so), and the first blocks' creation comes on top.
  const double seconds = limits.max_seconds * (limits.runs_only_seconds ? 3 : 1) + kSessionSeconds;
  const Json answer = parse_answer(request(ask.dump(), seconds, settings.threads));
  if (const auto alone = answer.find("one_at_a_time"); alone != answer.end() && alone->is_object()) {
    last_one_at_a_time_ = OneAtATime{alone->at("session_bytes").get<int64_t>(),
                                     alone->at("free_bytes").is_number() ? alone->at("free_bytes").get<int64_t>() : -1};
  }
  std::vector<Timing> timings;
  for (const Json& samples : answer.at("samples_ms")) timings.push_back(summarize(samples.get<std::vector<double>>()));
  if (timings.size() != paths.size()) throw Error("the onnxruntime worker timed the wrong number of models");
  return timings;
}

std::vector<OutputComparison> OrtWorker::compare_files(const std::string& reference, const std::string& candidate,
                                                      const OrtSettings& settings, const cost::DimSizes& sizes,
                                                      int samples, uint32_t seed, double atol, double rtol,
                                                      const std::string& reference_level,
                                                      const std::string& variation_level,
                                                      const std::map<std::string, int64_t>& index_bounds) {
  Json ask = {{"cmd", "compare"}, {"models", {reference, candidate}}, {"threads", settings.threads},
              {"level", settings.level}, {"dims", sizes}, {"seed", seed}, {"samples", samples},
              {"atol", atol}, {"rtol", rtol}, {"index_bounds", index_bounds}};
  if (!reference_level.empty()) ask["reference_level"] = reference_level;
  if (!variation_level.empty()) ask["variation_level"] = variation_level;
  const Json answer = parse_answer(request(ask.dump(), kSessionSeconds * 3 + 90.0 * samples, settings.threads));
  std::vector<OutputComparison> outputs;
  for (const Json& output : answer.at("outputs")) {
    OutputComparison& compared = outputs.emplace_back();
    compared.name = output.at("name").get<std::string>();
    compared.max_abs_error = output.at("max_abs_error").get<double>();
    compared.max_rel_error = output.at("max_rel_error").get<double>();
    compared.passed = output.at("passed").get<bool>();
    compared.runtime_variation = output.value("runtime_variation", -1.0);
    compared.within_runtime_variation = output.value("within_runtime_variation", false);
  }
  return outputs;
}

Observed OrtWorker::observe_file(const std::string& path, const OrtSettings& settings, const cost::DimSizes& sizes,
                                 int64_t max_elements, uint32_t seed) {
  const Json ask = {{"cmd", "observe"}, {"models", {path}}, {"threads", settings.threads}, {"level", settings.level},
                    {"dims", sizes},    {"seed", seed},     {"max_elements", max_elements}};
  const Json answer = parse_answer(request(ask.dump(), kSessionSeconds, settings.threads));
  Observed outputs;
  for (const Json& value : answer.at("values")) {
    ObservedValue& output = outputs[value.at("name").get<std::string>()];
    output.shape = value.at("shape").get<std::vector<int64_t>>();
    if (value.contains("integers")) output.integers = value.at("integers").get<std::vector<int64_t>>();
  }
  return outputs;
}

std::vector<OpTimes> OrtWorker::profile_files(const std::vector<std::string>& paths, const OrtSettings& settings,
                                              const cost::DimSizes& sizes, int warmup, int runs, uint32_t seed) {
  const Json ask = {{"cmd", "profile"},         {"models", paths}, {"threads", settings.threads},
                    {"level", settings.level}, {"dims", sizes},   {"seed", seed},
                    {"warmup", warmup},        {"runs", runs}};
  const Json answer =
      parse_answer(request(ask.dump(), kSessionSeconds * static_cast<double>(paths.size() + 1), settings.threads));
  std::vector<OpTimes> result;
  for (const Json& model : answer.at("by_op")) {
    OpTimes times;
    for (const auto& [op, entry] : model.items()) times[op] = {entry.at(0).get<double>(), entry.at(1).get<int>(), entry.at(2).get<double>()};
    result.push_back(std::move(times));
  }
  if (result.size() != paths.size()) throw Error("the onnxruntime worker profiled the wrong number of models");
  return result;
}

}  // namespace graphsub::profile
