// Test helpers for onnx_io: paths of the models and ONNX test data, a scratch folder per test
// program, file bytes, and value lookups by name.
#pragma once


#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "ir/graph.h"
#include "test_util.h"

namespace graphsub::testing {

/// The path of a model under models/ in the source tree.
inline std::string model_path(const std::string& name) {
  return std::string(GRAPHSUB_SOURCE_DIR) + "/models/" + name;
}

/// The path of a file under the ONNX test data ("node/test_abs/test_data_set_0/input_0.pb").
inline std::string test_file(const std::string& path) {
  return std::string(GRAPHSUB_TESTDATA_DIR) + "/" + path;
}

/// The model of one ONNX test ("node/test_abs").
inline std::string test_data(const std::string& suite_and_test) {
  return test_file(suite_and_test + "/model.onnx");
}


/// The whole content of a file.
inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// The value of `graph` with that name; fails the test when there is none.
inline ir::ValueId value_named(const ir::Graph& graph, const std::string& name) {
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (graph.has_value(id) && graph.value(id).name == name) return id;
  }
  FAIL("no value named " << name);
  return ir::kNoValue;
}

}  // namespace graphsub::testing
