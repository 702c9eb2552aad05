// The ONNX node tests graphsub runs (tests/ops/conformance/*.txt): finding them, importing their
// models, reading their data, and comparing outputs within ONNX's backend-test tolerance. Shared by
// the reference kernels' conformance test and the CUDA executor's check.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "onnx_io/onnx_io.h"
#include "ops/registry.h"
#include "runtime/cpu_executor.h"

namespace graphsub::testing {

namespace fs = std::filesystem;

inline constexpr double kRtol = 1e-3;
inline constexpr double kAtol = 1e-7;

/// One listed node test: the folder of its test data and its name.
struct ListedTest {
  fs::path data;
  std::string name;
};

/// The tests named in the *.txt files of `lists`, one per line, found under `data`.
inline void add_listed(const fs::path& lists, const fs::path& data, std::vector<ListedTest>& tests) {
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

/// The environment variable `name` where set (a copy of the data on another machine), else `built_in`.
inline std::string env_or(const char* name, const char* built_in) {
  const char* value = std::getenv(name);
  return value && *value ? value : built_in;
}

/// libonnx-testdata's tests (tests/ops/conformance/*.txt), then those of the current onnx
/// release written at build time (tests/ops/conformance/current/*.txt).
inline std::vector<ListedTest> listed_tests() {
  const fs::path lists = fs::path(env_or("GRAPHSUB_SOURCE_DIR", GRAPHSUB_SOURCE_DIR)) / "tests/ops/conformance";
  std::vector<ListedTest> tests;
  add_listed(lists, fs::path(env_or("GRAPHSUB_TESTDATA_DIR", GRAPHSUB_TESTDATA_DIR)) / "node", tests);
  add_listed(lists / "current", fs::path(env_or("GRAPHSUB_NODE_TESTS_DIR", GRAPHSUB_NODE_TESTS_DIR)) / "node", tests);
  return tests;
}

/// Graph inputs without defaults, in order: the test data's input_<i>.pb files follow this order.
inline std::vector<ir::ValueId> fed_inputs(const ir::Graph& graph) {
  std::vector<ir::ValueId> fed;
  for (ir::ValueId id : graph.inputs()) {
    if (!graph.value(id).data) fed.push_back(id);
  }
  return fed;
}

/// Names of graph inputs that an opaque node of a modelled op reads in an attribute slot.
inline std::vector<std::string> attribute_operands(const ir::Graph& graph) {
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

inline ir::TensorPtr read_input(const fs::path& data_set, std::size_t index) {
  return ir::share(onnx_io::read_tensor_file((data_set / ("input_" + std::to_string(index) + ".pb")).string()));
}

/// A test model as imported, and the data file index of each input it still takes.
struct TestModel {
  ir::Graph graph;
  std::map<std::string, std::size_t> file_index;
};

/// Imports the test model, binding attribute operands to the first data set's values.
inline TestModel import_test(const fs::path& dir, onnx_io::ImportStats& stats) {
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

inline bool close(const ir::Tensor& got, const ir::Tensor& want, std::string& why) {
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

}  // namespace graphsub::testing
