// Protobuf file input and output with ONNX's checks; temporary files renamed into place.
#include "onnx_io/model_file.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <system_error>

#include "ir/error.h"
#include "ops/registry.h"

namespace graphsub::onnx_io {
namespace {

namespace fs = std::filesystem;

/// Serialized models larger than this are written with external data (protobuf's limit is 2 GiB;
/// the margin covers the graph itself).
constexpr std::size_t kMaxInlineBytes = (std::size_t{1} << 31) - (std::size_t{64} << 20);
/// Initializers larger than this go to the data file when the 2 GB limit forces external data.
constexpr std::size_t kAutoThreshold = 1024;

/// The message of an exception on one line: runs of whitespace become one space.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool space = c == '\n' || c == '\r' || c == '\t' || c == ' ';
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

void check_readable(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw Error("no such file");
  if (fs::is_directory(status)) throw Error("is a directory, not a file");
  const auto size = fs::file_size(path, error);
  if (error) throw Error("cannot be read: " + error.message());
  if (size > static_cast<std::uintmax_t>(INT_MAX)) {
    throw Error("is larger than 2 GB, the most protobuf can parse; keep the weights as external data");
  }
}

/// A copy of `model` without its initializers, made without copying them.
onnx::ModelProto without_initializers(onnx::ModelProto& model) {
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  onnx::ModelProto copy = model;
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  return copy;
}

/// Moves the initializers of `owner` into `borrower` for the loan's lifetime.
class InitializerLoan {
 public:
  InitializerLoan(onnx::ModelProto& owner, onnx::ModelProto& borrower) : owner_(owner), borrower_(borrower) {
    swap();
  }
  InitializerLoan(const InitializerLoan&) = delete;
  InitializerLoan& operator=(const InitializerLoan&) = delete;
  ~InitializerLoan() { swap(); }

 private:
  void swap() {
    owner_.mutable_graph()->mutable_initializer()->Swap(borrower_.mutable_graph()->mutable_initializer());
  }
  onnx::ModelProto& owner_;
  onnx::ModelProto& borrower_;
};

/// A file written under a temporary name beside its target and renamed over it by commit();
/// removed if never committed.
class TempFile {
 public:
  explicit TempFile(std::string target)
      : target_(std::move(target)), path_(target_ + ".tmp." + std::to_string(::getpid())) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!committed_) ::unlink(path_.c_str());
  }

  const std::string& path() const { return path_; }
  void commit() {
    if (::rename(path_.c_str(), target_.c_str()) != 0) {
      throw Error("cannot write '" + target_ + "': " + std::strerror(errno));
    }
    committed_ = true;
  }

 private:
  std::string target_;
  std::string path_;
  bool committed_ = false;
};

/// The raw data of large initializers, moved to an external data file for the write and put back
/// afterwards (exceptions included), so the model is left as it was: its bytes may be lent
/// (DataLoan).
class Externalized {
 public:
  /// Writes the raw data of initializers over `threshold` bytes to `data_file`, referenced as
  /// `location`, and takes it out of the model until this object ends.
  Externalized(onnx::GraphProto& graph, const std::string& data_file, const std::string& location,
               std::size_t threshold) {
    try {
      std::ofstream out(data_file, std::ios::binary | std::ios::trunc);
      for (onnx::TensorProto& tensor : *graph.mutable_initializer()) {
        const std::string& raw = tensor.raw_data();
        if (raw.size() <= threshold) continue;
        out.write(raw.data(), static_cast<std::streamsize>(raw.size()));
        moved_.emplace_back(&tensor, std::string());
        moved_.back().second.swap(*tensor.mutable_raw_data());
        add_external_data_entry(tensor, "location", location);
        add_external_data_entry(tensor, "offset", std::to_string(bytes_));
        add_external_data_entry(tensor, "length", std::to_string(moved_.back().second.size()));
        tensor.set_data_location(onnx::TensorProto::EXTERNAL);
        bytes_ += moved_.back().second.size();
      }
      out.close();
      if (!out) throw Error("cannot write '" + data_file + "': " + std::strerror(errno));
    } catch (...) {
      // No destructor runs for a constructor that throws: the bytes go back to the model here
      // (and from it to the tensors they are lent from).
      restore();
      throw;
    }
  }
  Externalized(const Externalized&) = delete;
  Externalized& operator=(const Externalized&) = delete;
  ~Externalized() { restore(); }

  std::size_t bytes() const { return bytes_; }  ///< How many bytes went to the data file.

 private:
  void restore() { put_back_raw_data(moved_); }

  std::vector<std::pair<onnx::TensorProto*, std::string>> moved_;
  std::size_t bytes_ = 0;
};

void serialize(const onnx::ModelProto& model, const std::string& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error("cannot write '" + file + "': " + std::strerror(errno));
  google::protobuf::io::FileOutputStream stream(fd);
  bool ok;
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    ok = model.SerializeToCodedStream(&coded) && !coded.HadError();
  }
  ok = stream.Close() && ok;
  if (!ok) throw Error("cannot write '" + file + "': " + std::strerror(stream.GetErrno()));
}

}  // namespace

void add_external_data_entry(onnx::TensorProto& tensor, const std::string& key, const std::string& value) {
  onnx::StringStringEntryProto* entry = tensor.add_external_data();
  entry->set_key(key);
  entry->set_value(value);
}

void put_back_raw_data(std::vector<std::pair<onnx::TensorProto*, std::string>>& moved) {
  for (auto& [tensor, raw] : moved) {
    tensor->mutable_raw_data()->swap(raw);
    tensor->clear_external_data();
    tensor->clear_data_location();
  }
  moved.clear();
}

void parse_file(const std::string& path, google::protobuf::MessageLite& message, const std::string& what) {
  check_readable(path);
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(std::string("cannot be opened: ") + std::strerror(errno));
  google::protobuf::io::FileInputStream stream(fd);
  stream.SetCloseOnDelete(true);
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!message.ParseFromCodedStream(&coded)) {
    throw Error("is not " + what + ", or the file is truncated");
  }
}

std::string serialize_to_string(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

namespace {

/// The op_type of each node ONNX's strict shape inference names in `message` at the top level (one
/// per line: "(op_type:Add, node name: add): ..."; errors inside a function body it expands are
/// on the same line as the node that calls it).
std::vector<std::string> failing_ops(const std::string& message) {
  std::vector<std::string> ops;
  std::istringstream lines(message);
  const std::string marker = "(op_type:";
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    const std::size_t begin = at + marker.size();
    ops.push_back(line.substr(begin, line.find_first_of(",)", begin) - begin));
  }
  return ops;
}

/// True when strict inference failed only in operators graphsub does not model: then the
/// runtime, not graphsub, judges those nodes (they stay opaque), and ONNX's inference of them
/// has known bugs. A failure in a modelled operator (an Add of incompatible shapes) is the
/// model's fault.
bool only_opaque_ops_fail(const std::string& message) {
  const std::vector<std::string> ops = failing_ops(message);
  if (ops.empty()) return false;
  for (const std::string& op : ops) {
    if (ops::kind_from_onnx(op) != ir::OpKind::kOpaque) return false;
  }
  return true;
}

/// Declares each sparse initializer of the copy's main graph as a dense graph input of its type, and
/// drops it from the copy. ONNX's inference types a sparse initializer as a sparse tensor, which no
/// operator that reads one accepts (MatMul: "Input tensors of wrong rank (0)"), while the IR spec
/// makes it an initializer stored sparsely, and runtimes (onnxruntime) read it as the dense tensor
/// it stands for; graphsub does too (tensor_from_sparse). Only the copy changes.
void declare_sparse_initializers_dense(onnx::ModelProto& copy) {
  onnx::GraphProto& graph = *copy.mutable_graph();
  if (graph.sparse_initializer_size() == 0) return;
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) inputs.insert(input.name());
  for (const onnx::SparseTensorProto& sparse : graph.sparse_initializer()) {
    if (inputs.count(sparse.values().name())) continue;
    onnx::ValueInfoProto& input = *graph.add_input();
    input.set_name(sparse.values().name());
    onnx::TypeProto::Tensor& tensor = *input.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(sparse.values().data_type());
    for (int64_t dim : sparse.dims()) tensor.mutable_shape()->add_dim()->set_dim_value(dim);
  }
  graph.clear_sparse_initializer();
}

}  // namespace

onnx::ModelProto checked_copy(onnx::ModelProto& model, std::string* inference_error) {
  onnx::ModelProto copy = without_initializers(model);
  // Newer IR versions (9: float8, 10: 4-bit integers, 11: float4) only add element types, which
  // the importer refuses by name; the checker of the ONNX release graphsub links refuses the whole
  // model. Check it as the newest version that checker knows; the model keeps its own.
  if (copy.ir_version() > onnx::Version::IR_VERSION) copy.set_ir_version(onnx::Version::IR_VERSION);
  InitializerLoan loan(model, copy);
  try {
    onnx::checker::check_model(copy);
  } catch (const std::exception& error) {
    throw Error("fails the ONNX checker: " + one_line(error.what()));
  }
  declare_sparse_initializers_dense(copy);
  try {
    // Node errors are thrown (error_mode 1), but an element type outside an operator's type
    // constraints is let through (check_type off), as runtimes do: exporters such as PyTorch's
    // write Constant nodes of int64 at opsets that allow only floats.
    const onnx::ShapeInferenceOptions strict(/*check_type_val=*/false, /*strict_mode_val=*/1);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), strict);
    return copy;
  } catch (const std::exception& error) {
    if (!inference_error || !only_opaque_ops_fail(error.what())) {
      throw Error("fails ONNX shape inference: " + one_line(error.what()));
    }
    *inference_error = one_line(error.what());
  }
  // Again without stopping at node errors; the types strict inference added are kept.
  const onnx::ShapeInferenceOptions lenient(/*check_type_val=*/false, /*strict_mode_val=*/0);
  try {
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), lenient);
  } catch (const std::exception& error) {
    throw Error("fails ONNX shape inference: " + one_line(error.what()));
  }
  return copy;
}

void write_model_file(onnx::ModelProto& model, const std::string& path, std::size_t threshold) {
  if (threshold == 0 && model.ByteSizeLong() > kMaxInlineBytes) threshold = kAutoThreshold;
  TempFile model_file(path);
  TempFile data_file(path + ".data");
  std::optional<Externalized> external;
  if (threshold != 0) {
    external.emplace(*model.mutable_graph(), data_file.path(), fs::path(path).filename().string() + ".data",
                     threshold);
  }
  serialize(model, model_file.path());
  if (external && external->bytes() > 0) data_file.commit();
  model_file.commit();
}

}  // namespace graphsub::onnx_io
