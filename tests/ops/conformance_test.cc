// Conformance: every reference kernel against the expected outputs of the ONNX node tests.
//
// The tests run are listed in tests/ops/conformance/*.txt, one ONNX node test per line. Each model
// is imported (inputs that ONNX passes as operands but graphsub reads as attributes, such as
// Reshape's shape, are bound as constants from the test's own data), must import with every node
// modelled, and must reproduce every data set within ONNX's backend-test tolerance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "onnx_io/onnx_io.h"
#include "ops/registry.h"
#include "runtime/cpu_executor.h"

namespace fs = std::filesystem;
using namespace graphsub;

namespace {

constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-7;

/// One listed node test: the folder of its test data and its name.
struct ListedTest {
  fs::path data;
  std::string name;
};

/// The tests named in the *.txt files of `lists`, one per line, found under `data`.
void add_listed(const fs::path& lists, const fs::path& data, std::vector<ListedTest>& tests) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(lists)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '#') tests.push_back({data, line});
    }
  }
}

/// libonnx-testdata's tests (tests/ops/conformance/*.txt), then those of the current onnx
/// release written at build time (tests/ops/conformance/current/*.txt).
std::vector<ListedTest> listed_tests() {
  const fs::path lists = fs::path(GRAPHSUB_SOURCE_DIR) / "tests/ops/conformance";
  std::vector<ListedTest> tests;
  add_listed(lists, fs::path(GRAPHSUB_TESTDATA_DIR) / "node", tests);
  add_listed(lists / "current", fs::path(GRAPHSUB_NODE_TESTS_DIR) / "node", tests);
  return tests;
}

/// Graph inputs without defaults, in order: the test data's input_<i>.pb files follow this order.
std::vector<ir::ValueId> fed_inputs(const ir::Graph& graph) {
  std::vector<ir::ValueId> fed;
  for (ir::ValueId id : graph.inputs()) {
    if (!graph.value(id).data) fed.push_back(id);
  }
  return fed;
}

/// Names of graph inputs that an opaque node of a modelled op reads in an attribute slot.
std::vector<std::string> attribute_operands(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    if (node.op != ir::OpKind::kOpaque) continue;
    ir::OpKind kind = ops::kind_from_onnx(node.opaque->op_type);
    if (kind == ir::OpKind::kOpaque) continue;
    for (const ops::AttrInput& slot : ops::op_def(kind).attr_inputs) {
      if (slot.input_index >= static_cast<int>(node.inputs.size())) continue;
      ir::ValueId input = node.inputs[slot.input_index];
      if (input != ir::kNoValue && graph.value(input).kind == ir::ValueKind::kInput) {
        names.push_back(graph.value(input).name);
      }
    }
  }
  return names;
}

ir::TensorPtr read_input(const fs::path& data_set, std::size_t index) {
  return ir::share(onnx_io::read_tensor_file((data_set / ("input_" + std::to_string(index) + ".pb")).string()));
}

/// A test model as imported, and the data file index of each input it still takes.
struct TestModel {
  ir::Graph graph;
  std::map<std::string, std::size_t> file_index;
};

/// Imports the test model, binding attribute operands to the first data set's values.
TestModel import_test(const fs::path& dir, onnx_io::ImportStats& stats) {
  const std::string model = (dir / "model.onnx").string();
  ir::Graph plain = onnx_io::import_model(model);
  TestModel test;
  std::vector<ir::ValueId> fed = fed_inputs(plain);
  for (std::size_t i = 0; i < fed.size(); ++i) test.file_index[plain.value(fed[i]).name] = i;
  onnx_io::ImportOptions options;
  for (const std::string& name : attribute_operands(plain)) {
    options.constant_inputs[name] = read_input(dir / "test_data_set_0", test.file_index.at(name));
  }
  test.graph = onnx_io::import_model(model, options, &stats);
  return test;
}

bool close(const ir::Tensor& got, const ir::Tensor& want, std::string& why) {
  if (got.dims() != want.dims() || got.dtype() != want.dtype()) {
    why = "shape or type differs";
    return false;
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    double g = got.element_as_double(i), w = want.element_as_double(i);
    if ((std::isnan(g) && std::isnan(w)) || g == w) continue;
    if (!(std::fabs(g - w) <= kAtol + kRtol * std::fabs(w))) {
      why = "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(w);
      return false;
    }
  }
  return true;
}

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
