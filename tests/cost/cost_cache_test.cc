// Tests of the cost cache file (round trip, determinism, errors) and of op signatures.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cost/cost_cache.h"
#include "cost_testing.h"
#include "ir/error.h"

namespace graphsub {
namespace {

using cost::CacheEntry;
using cost::CostCache;
using testing::conv_graph;
using testing::file_text;
using testing::write_text;

const std::filesystem::path& dir() {
  static const std::filesystem::path path = testing::scratch_dir("cache");
  return path;
}

CostCache sample_cache(bool reversed) {
  CostCache cache({"cuda", "NVIDIA H100 80GB HBM3", "550.54", {{"cudnn", "9.1.0"}, {"cublas", "12.4"}},
                   {{"math", "fp32"}}});
  std::vector<CacheEntry> entries = {{"Relu(;float32[1,64,56,56])", "cudnn", 0.0123, 0.0004, 100, {}},
                                     {"Conv(x;float32[1])", "cudnn", 0.25, 0.01, 50, {}, "WINOGRAD_NONFUSED"},
                                     {"Conv(x;float32[1])", "reference", 31.5, 1.25, 3, {}},
                                     {"Gather(x;int64[1])", "cudnn", 0, 0, 0, "no kernel"}};
  if (reversed) std::reverse(entries.begin(), entries.end());
  for (const CacheEntry& entry : entries) cache.insert(entry);
  cache.insert(cost::Comparison{"Graph(1)", "Graph(2)", "cudnn", 0.75, 0.02, 40, {}});
  cache.insert(cost::Comparison{"Graph(1)", "Graph(3)", "cudnn", 1, 0, 0, "cannot run"});
  cost::Comparison timed{"Graph(1)", "Graph(4)", "cudnn", 0.96, 0.05, 48, {}};
  timed.original_ms = 325.4;
  timed.original_spread_ms = 67.3;
  timed.candidate_ms = 341.3;
  timed.candidate_spread_ms = 67.8;
  cache.insert(timed);
  cost::Observation observation{"Graph(5);observing=ab", "onnxruntime-cpu", {}};
  observation.values["target"] = {{2}, std::vector<int64_t>{5, 7}};
  observation.values["y"] = {{5, 7}, std::nullopt};
  cache.insert(observation);
  return cache;
}

TEST_CASE("a cost cache reads back what was written", "[cost]") {
  const std::string path = (dir() / "round_trip.json").string();
  const CostCache written = sample_cache(false);
  written.write(path);
  const CostCache read = CostCache::read(path);
  REQUIRE(read.header() == written.header());
  REQUIRE(read.header().settings.at("math") == "fp32");
  REQUIRE(read.entries() == written.entries());
  REQUIRE(read.find("Conv(x;float32[1])", "reference")->median_ms == 31.5);
  REQUIRE(read.find("Gather(x;int64[1])", "cudnn")->error == "no kernel");
  REQUIRE(read.find("Gather(x;int64[1])", "cudnn")->failed());
  REQUIRE(read.comparisons() == written.comparisons());
  REQUIRE(read.find_comparison("Graph(1)", "Graph(2)", "cudnn")->median_ratio == 0.75);
  // Both graphs' own times in the comparison, where it recorded them (not before 2026-11-29).
  REQUIRE_FALSE(read.find_comparison("Graph(1)", "Graph(2)", "cudnn")->has_times());
  REQUIRE(read.find_comparison("Graph(1)", "Graph(4)", "cudnn")->candidate_ms == 341.3);
  REQUIRE(read.find_comparison("Graph(1)", "Graph(4)", "cudnn")->original_spread_ms == 67.3);
  REQUIRE(read.find_comparison("Graph(1)", "Graph(3)", "cudnn")->failed());
  REQUIRE(read.find_comparison("Graph(2)", "Graph(1)", "cudnn") == nullptr);
  REQUIRE(read.find("Conv(x;float32[1])", "cudnn")->runs == 50);
  REQUIRE(read.find("Conv(x;float32[1])", "cudnn")->algorithm == "WINOGRAD_NONFUSED");
  REQUIRE(read.find("Relu(;float32[1,64,56,56])", "cudnn")->algorithm.empty());
  REQUIRE(read.find("Conv(x;float32[1])", "cpu") == nullptr);
  // A run of a measuring instance, whatever ran it.
  REQUIRE(read.observations() == written.observations());
  REQUIRE(read.find_observation("Graph(5);observing=ab")->values.at("target").integers ==
          std::vector<int64_t>{5, 7});
  REQUIRE_FALSE(read.find_observation("Graph(5);observing=ab")->values.at("y").integers);
}

TEST_CASE("a cost cache file is deterministic and sorted by signature", "[cost]") {
  const std::filesystem::path a = dir() / "a.json";
  const std::filesystem::path b = dir() / "b.json";
  sample_cache(false).write(a.string());
  sample_cache(true).write(b.string());
  const std::string text = file_text(a);
  REQUIRE(text == file_text(b));
  REQUIRE(text.find("\"schema_version\": 2") < text.find("\"entries\""));
  REQUIRE(text.find("Conv(x") < text.find("Relu("));
  REQUIRE(text.find("\"backend\": \"cudnn\"") < text.find("\"backend\": \"reference\""));
  sample_cache(true).write(a.string());
  REQUIRE(file_text(a) == text);
}

TEST_CASE("insert replaces the entry of the same signature and backend", "[cost]") {
  CostCache cache = sample_cache(false);
  cache.insert({"Conv(x;float32[1])", "cudnn", 0.5, 0.02, 10, {}});
  REQUIRE(cache.entries().size() == 4);
  REQUIRE(cache.find("Conv(x;float32[1])", "cudnn")->median_ms == 0.5);
}

TEST_CASE("merge adds only the entries a cache lacks", "[cost]") {
  CostCache mine = sample_cache(false);
  mine.insert({"Conv(x;float32[1])", "cudnn", 0.5, 0.02, 10, {}});
  CostCache theirs(mine.header());
  theirs.insert({"Conv(x;float32[1])", "cudnn", 9, 0, 1, {}});
  theirs.insert({"Sigmoid(;float32[4])", "cudnn", 0.001, 0, 5, {}});
  mine.merge(theirs);
  REQUIRE(mine.entries().size() == 5);
  REQUIRE(mine.find("Conv(x;float32[1])", "cudnn")->median_ms == 0.5);
  REQUIRE(mine.find("Sigmoid(;float32[4])", "cudnn")->runs == 5);
}

TEST_CASE("a header describes what makes measurements comparable", "[cost]") {
  const cost::CacheHeader header = sample_cache(false).header();
  CHECK(cost::describe(header) == "cuda on NVIDIA H100 80GB HBM3, driver 550.54, cublas 12.4, cudnn 9.1.0, math=fp32");
  cost::CacheHeader other = header;
  other.settings["math"] = "tf32";
  CHECK(other != header);
}

/// The message of the graphsub::Error that reading `text` as a cache throws.
std::string read_error(const std::string& name, const std::string& text) {
  const std::filesystem::path path = dir() / name;
  write_text(path, text);
  try {
    CostCache::read(path.string());
  } catch (const Error& error) {
    return error.what();
  }
  FAIL("no error reading " << name);
  return {};
}

/// A cache file of the given schema_version and entries (JSON text of the array's items).
std::string cache_text(int version, const std::string& entries) {
  return "{\"schema_version\": " + std::to_string(version) +
         R"json(, "target": "t", "device": "d", "driver": "", "libraries": {}, "settings": {}, "entries": [)json" +
         entries + "]}";
}

const char* const kEntry = R"json({"signature": "A()", "backend": "b", "median_ms": 1, "spread_ms": 0, "runs": 1})json";

TEST_CASE("a bad cost cache file is an error naming the file", "[cost]") {
  CHECK_THAT(read_error("not_json.json", "{\"schema_version\": 2,"),
             Catch::Contains("not_json.json") && Catch::Contains("not valid JSON"));
  CHECK_THAT(read_error("version.json", cache_text(1, kEntry)),
             Catch::Contains("version.json") && Catch::Contains("schema_version 1"));
  CHECK_THAT(read_error("no_version.json", R"json({"device": "d", "entries": []})json"),
             Catch::Contains("no_version.json") && Catch::Contains("schema_version"));
  const std::string slow = R"json({"signature": "A()", "backend": "b", "median_ms": "slow", "spread_ms": 0, "runs": 1})json";
  CHECK_THAT(read_error("bad_entry.json", cache_text(2, slow)),
             Catch::Contains("bad_entry.json") && Catch::Contains("median_ms"));
  CHECK_THAT(read_error("duplicate.json", cache_text(2, std::string(kEntry) + "," + kEntry)),
             Catch::Contains("duplicate.json") && Catch::Contains("duplicate entry"));
  CHECK_THAT(read_error("no_target.json", R"json({"schema_version": 2, "device": "d", "entries": []})json"),
             Catch::Contains("no_target.json") && Catch::Contains("target"));
  write_text(dir() / "good.json", cache_text(2, kEntry));
  REQUIRE(CostCache::read((dir() / "good.json").string()).size() == 1);
  REQUIRE_THROWS_AS(CostCache::read((dir() / "absent.json").string()), Error);
}

TEST_CASE("op signatures name the op, its attributes and its input types", "[cost]") {
  const ir::Graph graph = conv_graph(64, 56, 3, "relu", false);
  REQUIRE(cost::op_signature(graph, 0) ==
          "Conv(activation=\"relu\",dilations=[1,1],group=1,kernel_shape=[3,3],pads=[1,1,1,1],strides=[1,1];"
          "float32[1,64,56,56],const float32[64,64,3,3],const float32[64])");
}

TEST_CASE("op signatures are equal exactly for structurally equal nodes", "[cost]") {
  ir::Graph other = conv_graph(64, 56, 3, "relu", true);
  other.set_name(other.node(0).outputs[0], "renamed");
  const std::string signature = cost::op_signature(conv_graph(64, 56, 3, "relu", false), 0);
  REQUIRE(cost::op_signature(other, 0) == signature);
  REQUIRE(cost::op_signature(conv_graph(64, 56, 3, "none", false), 0) != signature);
  REQUIRE(cost::op_signature(conv_graph(64, 28, 3, "relu", false), 0) != signature);
}

TEST_CASE("op signatures keep symbolic dims and hash opaque nodes", "[cost]") {
  ir::Graph graph;
  ir::TensorType type = testing::float_type({1, 16});
  type.shape.dims[0] = ir::Dim::named("batch");
  const ir::ValueId x = graph.add_input("X", type);
  const ir::NodeId relu = testing::add_inferred(graph, ir::OpKind::kRelu, {x});
  const ir::NodeId first = testing::add_opaque(graph, "TopK", {x}, {1, 4}, "first");
  const ir::NodeId second = testing::add_opaque(graph, "TopK", {x}, {1, 4}, "second");
  REQUIRE(cost::op_signature(graph, relu) == "Relu(;float32[batch,16])");
  const std::string opaque = cost::op_signature(graph, first);
  CHECK_THAT(opaque, Catch::StartsWith("TopK(onnx_node=") && Catch::EndsWith(";float32[batch,16])"));
  REQUIRE(opaque != cost::op_signature(graph, second));
  const cost::DimSizes sizes = {{"batch", 8}};
  REQUIRE(cost::op_signature(graph, relu, &sizes) == "Relu(;float32[8,16])");
  const cost::DimSizes none;
  REQUIRE(cost::op_signature(graph, relu, &none) == "Relu(;float32[1,16])");
}

TEST_CASE("graph signatures tell graphs, input types and dim sizes apart", "[cost]") {
  const ir::Graph relu = conv_graph(64, 56, 3, "relu", false);
  const std::string signature = cost::graph_signature(relu, {});
  CHECK_THAT(signature, Catch::StartsWith("Graph(") && Catch::Contains(";nodes=1;float32[1,64,56,56]"));
  CHECK(cost::graph_signature(conv_graph(64, 56, 3, "relu", false), {}) == signature);
  CHECK(cost::graph_signature(conv_graph(64, 56, 3, "none", true), {}) != signature);
  CHECK(cost::graph_signature(conv_graph(64, 56, 3, "none", false), {}) != signature);
  CHECK(cost::graph_signature(conv_graph(64, 28, 3, "relu", false), {}) != signature);
  // A size is part of the key when an input has that symbolic dim, and only then.
  CHECK(cost::graph_signature(relu, {{"N", 4}}) == signature);
  ir::Graph symbolic;
  const ir::ValueId x = symbolic.add_input("x", ir::TensorType{ir::DataType::kFloat,
                                                               ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(3)}}});
  symbolic.set_outputs({symbolic.node(testing::add_inferred(symbolic, ir::OpKind::kRelu, {x})).outputs[0]});
  const std::string sized = cost::graph_signature(symbolic, {{"N", 4}, {"M", 2}});
  CHECK_THAT(sized, Catch::Contains("float32[4,3]") && Catch::EndsWith(";N=4)"));
  CHECK(cost::graph_signature(symbolic, {{"N", 5}}) != sized);
}

}  // namespace
}  // namespace graphsub
