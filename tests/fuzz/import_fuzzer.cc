// libFuzzer target: arbitrary bytes as an ONNX model file through import_model and export_model.
//
// import_model reads only files, so each input is written to a scratch folder made once per process
// (on /dev/shm when it exists, to keep the disk out of the loop). The folder also holds a data file
// under the name models/external_data.onnx references, so mutations of that seed reach the external
// data reader. Only graphsub::Error may escape the library: any other exception, a crash, a hang or
// a sanitizer report is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ir/error.h"
#include "ir/log.h"
#include "onnx_io/onnx_io.h"

namespace {

/// Bytes of the external data file beside each input (models/external_data.onnx reads 256 at 16).
constexpr std::size_t kDataFileBytes = 272;
/// Weights larger than this are exported as external data, so the writer's data file path runs too.
constexpr std::size_t kExternalThreshold = 64;

std::string scratch_dir;

std::string make_scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (tmp ? tmp : "/tmp");
  std::string pattern = base + "/graphsub_import_fuzzer.XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  return pattern;
}

void write_file(const std::string& path, const char* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) std::abort();
}

void remove_scratch_dir() {
  for (const char* name : {"/model.onnx", "/external_data.onnx.data", "/out.onnx", "/out.onnx.data"}) {
    unlink((scratch_dir + name).c_str());
  }
  rmdir(scratch_dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  graphsub::set_log_level(spdlog::level::off);
  scratch_dir = make_scratch_dir();
  std::string data(kDataFileBytes, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 37);
  write_file(scratch_dir + "/external_data.onnx.data", data.data(), data.size());
  std::atexit(remove_scratch_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string model = scratch_dir + "/model.onnx";
  write_file(model, reinterpret_cast<const char*>(data), size);
  try {
    const graphsub::ir::Graph graph = graphsub::onnx_io::import_model(model);
    graphsub::onnx_io::ExportOptions options;
    options.external_data_threshold = kExternalThreshold;
    graphsub::onnx_io::export_model(graph, scratch_dir + "/out.onnx", options);
  } catch (const graphsub::Error&) {
  }
  return 0;
}
