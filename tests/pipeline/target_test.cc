// Tests of target resolution: names, the cache file's setup check, the fallback of the default.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "../cost/cost_testing.h"
#include "pipeline/target.h"
#include "pipeline_testing.h"

namespace graphsub {
namespace {

using pipeline::TargetOptions;

TEST_CASE("targets are named, measured or estimated", "[pipeline]") {
  CHECK(pipeline::target_by_name("onnxruntime-cpu").measured);
  CHECK(pipeline::target_by_name("onnxruntime-cpu").device == "cpu");
  CHECK(pipeline::target_by_name("cuda").measured);
  CHECK(pipeline::target_by_name("cuda").device == "h100");
  for (const char* estimate : {"v100", "a100", "h100", "cpu"}) CHECK_FALSE(pipeline::target_by_name(estimate).measured);
  CHECK_THROWS_WITH(pipeline::target_by_name("tpu"), Catch::Contains("onnxruntime-cpu, cuda, v100"));
}

TEST_CASE("an estimate target measures nothing and takes no cache", "[pipeline]") {
  TargetOptions options;
  options.name = "v100";
  const pipeline::Target target = pipeline::open_target(options);
  CHECK(target.measurer == nullptr);
  options.cost_cache = "x.json";
  CHECK_THROWS_WITH(pipeline::open_target(options), Catch::Contains("is an estimate"));
}

TEST_CASE("the default target falls back to the cpu estimate when onnxruntime cannot run", "[pipeline]") {
  TargetOptions options;
  options.python = "/no/such/python";
  const pipeline::Target fallback = pipeline::open_target(options);
  CHECK(fallback.spec.name == "cpu");
  CHECK(fallback.measurer == nullptr);
  CHECK_THAT(fallback.note, Catch::Contains("onnxruntime is not available"));
  options.name = "onnxruntime-cpu";
  CHECK_THROWS_WITH(pipeline::open_target(options), Catch::Contains("--target cpu"));
}

TEST_CASE("a cache measured on another setup is refused", "[pipeline]") {
  const std::filesystem::path dir = testing::scratch_dir("target");
  const std::string path = (dir / "foreign.json").string();
  cost::CostCache(testing::TableProfiler("Some Other CPU").header()).write(path);
  TargetOptions options;
  options.name = "onnxruntime-cpu";
  options.cost_cache = path;
  CHECK_THROWS_WITH(pipeline::open_target(options),
                    Catch::Contains("foreign.json") && Catch::Contains("Some Other CPU") && Catch::Contains("--no-measure"));
  options.no_measure = true;
  const pipeline::Target pinned = pipeline::open_target(options);
  REQUIRE(pinned.measurer != nullptr);
  CHECK_FALSE(pinned.measurer->can_measure());
  CHECK(pinned.measurer->cache().header().device == "Some Other CPU");
}

TEST_CASE("the cuda target ranks with a cache measured on a GPU, and refuses another target's cache", "[pipeline]") {
  const std::filesystem::path dir = testing::scratch_dir("target_cuda");
  const std::string gpu_cache = (dir / "h200.json").string();
  cost::CostCache({"cuda", "NVIDIA H200", "13.0", {{"cudnn", "9.19.0"}}, {{"math", "fp32"}}}).write(gpu_cache);
  const std::string cpu_cache = (dir / "cpu.json").string();
  cost::CostCache(testing::TableProfiler().header()).write(cpu_cache);
  TargetOptions options;
  options.name = "cuda";
  options.no_measure = true;
  options.cost_cache = gpu_cache;
  const pipeline::Target pinned = pipeline::open_target(options);
  CHECK(pinned.spec.name == "cuda");
  REQUIRE(pinned.measurer != nullptr);
  CHECK_FALSE(pinned.measurer->can_measure());
  CHECK(pinned.measurer->backend() == "cuda");
  options.cost_cache = cpu_cache;
  CHECK_THROWS_WITH(pipeline::open_target(options), Catch::Contains("holds times of target 'onnxruntime-cpu'"));
  options.cost_cache.clear();
  CHECK_THROWS_WITH(pipeline::open_target(options), Catch::Contains("--no-measure needs --cost-cache"));
}

TEST_CASE("a corrupt cache or a missing pinned cache is an error", "[pipeline]") {
  const std::filesystem::path dir = testing::scratch_dir("target_bad");
  testing::write_text(dir / "corrupt.json", "{\"schema_version\": 2, \"entries\": [");
  TargetOptions options;
  options.name = "onnxruntime-cpu";
  options.no_measure = true;
  options.cost_cache = (dir / "corrupt.json").string();
  CHECK_THROWS_WITH(pipeline::open_target(options), Catch::Contains("corrupt.json") && Catch::Contains("not valid JSON"));
  options.cost_cache = (dir / "absent.json").string();
  CHECK_THROWS_WITH(pipeline::open_target(options), Catch::Contains("does not exist"));
  options.cost_cache.clear();
  CHECK_THROWS_WITH(pipeline::open_target(options), Catch::Contains("--no-measure needs --cost-cache"));
}

TEST_CASE("default cache files are per setup", "[pipeline]") {
  const cost::CacheHeader a = testing::TableProfiler("CPU A").header();
  const cost::CacheHeader b = testing::TableProfiler("CPU B").header();
  CHECK(pipeline::default_cache_path(a) != pipeline::default_cache_path(b));
  CHECK_THAT(pipeline::default_cache_path(a), Catch::StartsWith(pipeline::default_cache_dir() + "/onnxruntime-cpu-"));
}

TEST_CASE("only onnxruntime's target reads value_info and has layout forms", "[pipeline]") {
  CHECK(pipeline::target_by_name("onnxruntime-cpu").reads_value_info);
  CHECK(pipeline::target_by_name("onnxruntime-cpu").layout_forms);
  for (const char* name : {"cuda", "v100", "a100", "h100", "cpu"}) {
    INFO(name);
    CHECK_FALSE(pipeline::target_by_name(name).reads_value_info);
    CHECK_FALSE(pipeline::target_by_name(name).layout_forms);
  }
}

}  // namespace
}  // namespace graphsub
