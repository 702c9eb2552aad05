// Tensor data: every element type from ONNX's typed fields and raw data, and read_tensor_file.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "onnx_io/onnx_io.h"
#include "onnx_io/onnx_io_testing.h"
#include "test_util.h"

namespace graphsub {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using testing::model_path;
using testing::scratch_root;
using testing::test_file;
using testing::value_named;
using testing::values_of;

/// Checks the tensors of models/typed_tensors.onnx (written in the typed fields by the script),
/// named with `suffix` after their names there.
void check_typed_tensors(const ir::Graph& graph, const std::string& suffix) {
  auto weight = [&](const std::string& name) -> const ir::Tensor& {
    return *graph.value(value_named(graph, name + suffix)).data;
  };
  REQUIRE(values_of<float>(weight("f32")) == std::vector<float>{1.5f, -2.0f});
  REQUIRE(values_of<double>(weight("f64")) == std::vector<double>{0.25, 1e300});
  REQUIRE(weight("f16").dtype() == ir::DataType::kFloat16);
  REQUIRE(values_of<uint16_t>(weight("f16")) == std::vector<uint16_t>{0x3c00, 0xb800});
  REQUIRE(values_of<int8_t>(weight("i8")) == std::vector<int8_t>{-128, 0, 127});
  REQUIRE(values_of<uint16_t>(weight("u16")) == std::vector<uint16_t>{0, 65535});
  REQUIRE(values_of<int32_t>(weight("i32")) == std::vector<int32_t>{-7, 2147483647});
  REQUIRE(values_of<int64_t>(weight("i64")) == std::vector<int64_t>{-(int64_t{1} << 62), 5});
  REQUIRE(values_of<uint64_t>(weight("u64")) == std::vector<uint64_t>{(uint64_t{1} << 63) + 1});
  REQUIRE(values_of<uint8_t>(weight("flags")) == std::vector<uint8_t>{1, 0, 1});
  REQUIRE(weight("words").strings() == std::vector<std::string>{"graph", "sub"});
}

TEST_CASE("tensors in ONNX's typed fields are read for every element type", "[onnx_io]") {
  check_typed_tensors(onnx_io::import_model(model_path("typed_tensors.onnx")), "");
}

TEST_CASE("tensors written as raw data read back the same (after folding the Identity nodes)", "[onnx_io]") {
  const fs::path& dir = scratch_root();
  const ir::Graph graph = onnx_io::import_model(model_path("typed_tensors.onnx"));
  onnx_io::export_model(graph, (dir / "raw.onnx").string());
  check_typed_tensors(onnx_io::import_model((dir / "raw.onnx").string()), "_out");
}

TEST_CASE("read_tensor_file reads the ONNX test data", "[onnx_io]") {
  const ir::Tensor x = onnx_io::read_tensor_file(test_file("node/test_abs/test_data_set_0/input_0.pb"));
  REQUIRE(x.dtype() == ir::DataType::kFloat);
  REQUIRE(x.dims() == std::vector<int64_t>{3, 4, 5});
  const ir::Tensor shape =
      onnx_io::read_tensor_file(test_file("node/test_reshape_reordered_all_dims/test_data_set_0/input_1.pb"));
  REQUIRE(shape.dtype() == ir::DataType::kInt64);
  REQUIRE(shape.to_int64s() == std::vector<int64_t>{4, 2, 3});
  const ir::Tensor words = onnx_io::read_tensor_file(
      test_file("simple/test_strnorm_model_monday_casesensintive_lower/test_data_set_0/input_0.pb"));
  REQUIRE(words.dtype() == ir::DataType::kString);
  REQUIRE(words.strings().size() == static_cast<std::size_t>(words.num_elements()));
}

TEST_CASE("read_tensor_file rejects missing and malformed files", "[onnx_io]") {
  REQUIRE_THROWS_WITH(onnx_io::read_tensor_file("/nonexistent/input_0.pb"), Contains("no such file"));
  const fs::path file = scratch_root() / "malformed.pb";
  // dims [3, 4], float32, raw_data of 4 bytes.
  std::ofstream(file, std::ios::binary) << std::string(
      "\x08\x03\x08\x04\x10\x01\x4a\x04"
      "abcd",
      12);
  REQUIRE_THROWS_WITH(onnx_io::read_tensor_file(file.string()),
                      Contains("holds 4 bytes, its shape needs 48"));
  std::ofstream(file, std::ios::binary) << std::string("\xff\xff\xff", 3);
  REQUIRE_THROWS_WITH(onnx_io::read_tensor_file(file.string()), Contains("truncated"));
}

/// A length-delimited protobuf field: its tag byte, a one-byte length, the bytes.
std::string field(char tag, const std::string& bytes) {
  return tag + std::string(1, static_cast<char>(bytes.size())) + bytes;
}

TEST_CASE("an external data range past the end of the file is an error, however large", "[onnx_io]") {
  // Found by tests/fuzz/import_fuzzer: offset + length overflowed int64, passed the check, and
  // the allocation of `length` bytes threw std::length_error.
  const fs::path dir = scratch_root() / "huge_range";
  fs::create_directories(dir);
  std::ofstream(dir / "data.bin", std::ios::binary) << std::string(16, 'x');
  auto entry = [](const std::string& key, const std::string& value) {
    return field('\x6a', field('\x0a', key) + field('\x12', value));  // external_data {key, value}
  };
  // dims [4], float32, name "t", external data at offset 1 of length 2^63 - 1, data_location EXTERNAL.
  std::ofstream(dir / "t.pb", std::ios::binary)
      << std::string("\x08\x04\x10\x01", 4) + field('\x42', "t") + entry("location", "data.bin") +
             entry("offset", "1") + entry("length", "9223372036854775807") + std::string("\x70\x01", 2);
  REQUIRE_THROWS_WITH(onnx_io::read_tensor_file((dir / "t.pb").string()),
                      Contains("has its data past the end of 'data.bin'"));
}

TEST_CASE("external data outside the model's folder is refused", "[onnx_io]") {
  const fs::path dir = scratch_root() / "outside" / "model";
  fs::create_directories(dir);
  std::ofstream(dir.parent_path() / "secret.bin", std::ios::binary) << std::string(16, 'x');
  auto entry = [](const std::string& key, const std::string& value) {
    return field('\x6a', field('\x0a', key) + field('\x12', value));
  };
  for (const std::string& location : {std::string("../secret.bin"), (dir.parent_path() / "secret.bin").string()}) {
    // dims [4], float32, name "t", data_location EXTERNAL.
    std::ofstream(dir / "t.pb", std::ios::binary)
        << std::string("\x08\x04\x10\x01", 4) + field('\x42', "t") + entry("location", location) +
               std::string("\x70\x01", 2);
    INFO(location);
    REQUIRE_THROWS_WITH(onnx_io::read_tensor_file((dir / "t.pb").string()), Contains("outside the model's folder"));
  }
}

}  // namespace
}  // namespace graphsub
