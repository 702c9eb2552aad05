// Conformance: every reference kernel against the expected outputs of the ONNX node tests.
//
// The tests run are listed in tests/ops/conformance/*.txt, one ONNX node test per line. Each model
// is imported (inputs that ONNX passes as operands but graphsub reads as attributes, such as
// Reshape's shape, are bound as constants from the test's own data), must import with every node
// modelled, and must reproduce every data set within ONNX's backend-test tolerance.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "ops/node_tests.h"

namespace fs = std::filesystem;
using namespace graphsub;

namespace {

using namespace graphsub::testing;

void run_data_set(const TestModel& test, const fs::path& data_set) {
  const ir::Graph& graph = test.graph;
  runtime::TensorMap feeds;
  for (ir::ValueId id : fed_inputs(graph)) {
    const std::string& name = graph.value(id).name;
    feeds[name] = read_input(data_set, test.file_index.at(name));
  }
  runtime::TensorMap outputs = runtime::CpuExecutor::run(graph, feeds);
  for (std::size_t i = 0; i < graph.output_names().size(); ++i) {
    fs::path file = data_set / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) continue;
    ir::Tensor want = onnx_io::read_tensor_file(file.string());
    std::string why;
    INFO("output " << graph.output_names()[i] << " of " << data_set.string());
    CHECK(close(*outputs.at(graph.output_names()[i]), want, why));
    if (!why.empty()) WARN(why);
  }
}

}  // namespace

TEST_CASE("reference kernels reproduce the ONNX node tests", "[ops][conformance]") {
  const std::vector<ListedTest> tests = listed_tests();
  REQUIRE_FALSE(tests.empty());
  for (const ListedTest& listed : tests) {
    DYNAMIC_SECTION(listed.data.parent_path().filename().string() << "/" << listed.name) {
      const fs::path dir = listed.data / listed.name;
      onnx_io::ImportStats stats;
      TestModel test = import_test(dir, stats);
      INFO("opaque reasons: " << [&] {
        std::string all;
        for (const auto& [op, reason] : stats.opaque_reasons) all += op + ": " + reason + "; ";
        return all;
      }());
      REQUIRE(stats.opaque_nodes == 0);
      for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set", 0) == 0) {
          run_data_set(test, entry.path());
        }
      }
    }
  }
}
