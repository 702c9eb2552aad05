// TensorProto <-> ir::Tensor conversion, external data loading, and read_tensor_file.
#include "onnx_io/tensor_proto.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <system_error>

#include "ir/error.h"
#include "onnx_io/model_file.h"
#include "onnx_io/onnx_io.h"

namespace graphsub::onnx_io {
namespace {

using onnx::TensorProto;

/// Tensors past this many elements are rejected rather than allocated.
constexpr int64_t kMaxElements = int64_t{1} << 40;

[[noreturn]] void fail(const TensorProto& proto, const std::string& what) {
  throw Error("tensor '" + proto.name() + "' " + what);
}

ir::DataType checked_dtype(const TensorProto& proto) {
  const int32_t code = proto.data_type();
  if (code == 0 || !ir::is_valid(code)) fail(proto, "has unsupported data type " + std::to_string(code));
  return static_cast<ir::DataType>(code);
}

int64_t checked_count(const TensorProto& proto) {
  int64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0) fail(proto, "has a negative dimension");
    if (__builtin_mul_overflow(count, dim, &count) || count > kMaxElements) fail(proto, "is too large");
  }
  return count;
}

void check_size(const TensorProto& proto, std::size_t actual, std::size_t expected, const char* unit) {
  if (actual != expected) {
    fail(proto,
         "holds " + std::to_string(actual) + " " + unit + ", its shape needs " + std::to_string(expected));
  }
}

std::vector<std::byte> raw_bytes(const TensorProto& proto, std::size_t expected) {
  const std::string& raw = proto.raw_data();
  check_size(proto, raw.size(), expected, "bytes");
  std::vector<std::byte> bytes(raw.size());
  if (!raw.empty()) std::memcpy(bytes.data(), raw.data(), raw.size());
  return bytes;
}

/// Converts `count` typed-field elements to `Dst` (narrowing int32_data to small types, keeping
/// the bit patterns of float16 and bfloat16).
template <class Dst, class Field>
std::vector<std::byte> field_bytes(const TensorProto& proto, const Field& field, int64_t count) {
  check_size(proto, static_cast<std::size_t>(field.size()), static_cast<std::size_t>(count), "elements");
  std::vector<std::byte> bytes(static_cast<std::size_t>(count) * sizeof(Dst));
  auto* out = reinterpret_cast<Dst*>(bytes.data());
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
  return bytes;
}

std::vector<std::byte> typed_bytes(const TensorProto& proto, ir::DataType dtype, int64_t count) {
  using ir::DataType;
  switch (dtype) {
    case DataType::kFloat:
      return field_bytes<float>(proto, proto.float_data(), count);
    case DataType::kComplex64:
      return field_bytes<float>(proto, proto.float_data(), 2 * count);
    case DataType::kDouble:
      return field_bytes<double>(proto, proto.double_data(), count);
    case DataType::kComplex128:
      return field_bytes<double>(proto, proto.double_data(), 2 * count);
    case DataType::kInt64:
      return field_bytes<int64_t>(proto, proto.int64_data(), count);
    case DataType::kUint64:
      return field_bytes<uint64_t>(proto, proto.uint64_data(), count);
    case DataType::kUint32:
      return field_bytes<uint32_t>(proto, proto.uint64_data(), count);
    case DataType::kInt32:
      return field_bytes<int32_t>(proto, proto.int32_data(), count);
    case DataType::kInt16:
      return field_bytes<int16_t>(proto, proto.int32_data(), count);
    case DataType::kInt8:
      return field_bytes<int8_t>(proto, proto.int32_data(), count);
    case DataType::kUint16:
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return field_bytes<uint16_t>(proto, proto.int32_data(), count);
    case DataType::kUint8:
    case DataType::kBool:
      return field_bytes<uint8_t>(proto, proto.int32_data(), count);
    default:
      fail(proto, "has no typed data field for " + ir::to_string(dtype));
  }
}

ir::Tensor string_tensor(const TensorProto& proto, std::vector<int64_t> dims, int64_t count) {
  check_size(proto, static_cast<std::size_t>(proto.string_data_size()), static_cast<std::size_t>(count),
             "strings");
  return ir::Tensor(std::move(dims), {proto.string_data().begin(), proto.string_data().end()});
}

int64_t parse_int(const TensorProto& proto, const std::string& text) {
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    fail(proto, "has an invalid external data offset or length '" + text + "'");
  }
  return value;
}

/// Where an external tensor's bytes are.
struct ExternalRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  ///< -1: to the end of the file.
};

ExternalRef external_ref(const TensorProto& proto) {
  ExternalRef ref;
  for (const onnx::StringStringEntryProto& entry : proto.external_data()) {
    if (entry.key() == "location") ref.location = entry.value();
    if (entry.key() == "offset") ref.offset = parse_int(proto, entry.value());
    if (entry.key() == "length") ref.length = parse_int(proto, entry.value());
  }
  if (ref.location.empty()) fail(proto, "has external data without a location");
  // ONNX defines the location relative to the model's folder; an absolute path or a ".." step
  // would let a model copy any file of the machine into its weights (onnxruntime refuses both).
  const std::filesystem::path location(ref.location);
  const bool climbs = std::any_of(location.begin(), location.end(), [](const auto& part) { return part == ".."; });
  if (location.is_absolute() || climbs) {
    fail(proto, "has its data in '" + ref.location + "', outside the model's folder");
  }
  return ref;
}

std::string read_range(const TensorProto& proto, const std::filesystem::path& file, const ExternalRef& ref) {
  std::error_code error;
  const auto size = static_cast<int64_t>(std::filesystem::file_size(file, error));
  if (error) fail(proto, "has its data in '" + ref.location + "', which cannot be read");
  const int64_t length = ref.length < 0 ? size - ref.offset : ref.length;
  // `length > size - offset`, not `offset + length > size`: the sum of two values a model gives
  // can overflow.
  if (ref.offset > size || length < 0 || length > size - ref.offset) {
    fail(proto, "has its data past the end of '" + ref.location + "'");
  }
  std::string bytes(static_cast<std::size_t>(length), '\0');
  std::ifstream in(file, std::ios::binary);
  in.seekg(ref.offset);
  in.read(bytes.data(), length);
  if (!in) fail(proto, "could not read its data from '" + ref.location + "'");
  return bytes;
}

/// The linear position of each of `count` sparse values in a tensor of `dims`.
std::vector<int64_t> linear_indices(const onnx::SparseTensorProto& sparse, const std::vector<int64_t>& dims,
                                    int64_t count) {
  const TensorProto& proto = sparse.indices();
  const ir::Tensor indices = tensor_from_proto(proto);
  std::vector<int64_t> flat = indices.to_int64s();
  if (indices.rank() == 1 && indices.num_elements() == count) return flat;
  const auto rank = static_cast<int64_t>(dims.size());
  if (indices.rank() != 2 || indices.dims()[0] != count || indices.dims()[1] != rank) {
    fail(proto, "does not index the sparse values");
  }
  std::vector<int64_t> linear(static_cast<std::size_t>(count), 0);
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t axis = 0; axis < rank; ++axis) {
      const int64_t at = flat[i * rank + axis];
      if (at < 0 || at >= dims[axis]) fail(proto, "holds an index out of range");
      linear[i] = linear[i] * dims[axis] + at;
    }
  }
  return linear;
}

int load_attribute_data(onnx::AttributeProto& attribute, const std::filesystem::path& dir) {
  int loaded = 0;
  if (attribute.has_t()) loaded += load_external_data(*attribute.mutable_t(), dir);
  for (TensorProto& tensor : *attribute.mutable_tensors()) loaded += load_external_data(tensor, dir);
  if (attribute.has_g()) loaded += load_external_data(*attribute.mutable_g(), dir);
  for (onnx::GraphProto& graph : *attribute.mutable_graphs()) loaded += load_external_data(graph, dir);
  return loaded;
}

}  // namespace

ir::Tensor tensor_from_proto(const TensorProto& proto) {
  if (proto.data_location() == TensorProto::EXTERNAL) fail(proto, "has unloaded external data");
  if (proto.has_segment()) fail(proto, "is segmented, which is not supported");
  const ir::DataType dtype = checked_dtype(proto);
  const int64_t count = checked_count(proto);
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  if (dtype == ir::DataType::kString) return string_tensor(proto, std::move(dims), count);
  std::vector<std::byte> bytes =
      proto.has_raw_data() ? raw_bytes(proto, static_cast<std::size_t>(count) * ir::element_size(dtype))
                           : typed_bytes(proto, dtype, count);
  return ir::Tensor(dtype, std::move(dims), std::move(bytes));
}

ir::Tensor tensor_from_sparse(const onnx::SparseTensorProto& sparse) {
  const TensorProto& values_proto = sparse.values();
  const ir::Tensor values = tensor_from_proto(values_proto);
  if (values.dtype() == ir::DataType::kString || values.rank() != 1) {
    fail(values_proto, "is not a sparse tensor of numbers");
  }
  TensorProto shape;
  shape.set_name(values_proto.name());
  *shape.mutable_dims() = sparse.dims();
  const int64_t total = checked_count(shape);
  ir::Tensor dense(values.dtype(), {sparse.dims().begin(), sparse.dims().end()});
  const std::vector<int64_t> positions = linear_indices(sparse, dense.dims(), values.num_elements());
  const std::size_t size = ir::element_size(values.dtype());
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (positions[i] < 0 || positions[i] >= total) fail(values_proto, "has an index out of range");
    std::memcpy(dense.mutable_bytes() + positions[i] * size, values.bytes() + i * size, size);
  }
  return dense;
}

void tensor_header_to_proto(const ir::Tensor& tensor, TensorProto& proto) {
  proto.clear_dims();
  for (int64_t dim : tensor.dims()) proto.add_dims(dim);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
}

void tensor_to_proto(const ir::Tensor& tensor, TensorProto& proto) {
  tensor_header_to_proto(tensor, proto);
  if (tensor.dtype() == ir::DataType::kString) {
    for (const std::string& text : tensor.strings()) proto.add_string_data(text);
    return;
  }
  // Assigned in place: set_raw_data(ptr, size) would build a temporary string and copy it again,
  // holding a large weight three times at once (VGG-16's 411 MB fc6 kernel).
  proto.mutable_raw_data()->assign(reinterpret_cast<const char*>(tensor.bytes()), tensor.byte_size());
}

int load_external_data(TensorProto& proto, const std::filesystem::path& dir) {
  if (proto.data_location() != TensorProto::EXTERNAL) return 0;
  const ExternalRef ref = external_ref(proto);
  proto.set_raw_data(read_range(proto, dir / ref.location, ref));
  proto.clear_external_data();
  proto.set_data_location(TensorProto::DEFAULT);
  return 1;
}

int load_external_data(onnx::GraphProto& graph, const std::filesystem::path& dir) {
  int loaded = 0;
  for (TensorProto& tensor : *graph.mutable_initializer()) loaded += load_external_data(tensor, dir);
  for (onnx::SparseTensorProto& sparse : *graph.mutable_sparse_initializer()) {
    loaded += load_external_data(*sparse.mutable_values(), dir);
    loaded += load_external_data(*sparse.mutable_indices(), dir);
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) loaded += load_attribute_data(attribute, dir);
  }
  return loaded;
}

void release_data(TensorProto& proto) {
  TensorProto emptied;
  emptied.set_name(proto.name());
  proto.Swap(&emptied);
}

ir::Tensor take_tensor_from_proto(TensorProto& proto) {
  const bool raw = proto.has_raw_data() && proto.data_location() != TensorProto::EXTERNAL && !proto.has_segment();
  const ir::DataType dtype = checked_dtype(proto);
  if (!raw || dtype == ir::DataType::kString) {
    ir::Tensor tensor = tensor_from_proto(proto);
    release_data(proto);
    return tensor;
  }
  const int64_t count = checked_count(proto);
  check_size(proto, proto.raw_data().size(), static_cast<std::size_t>(count) * ir::element_size(dtype), "bytes");
  std::string bytes;
  bytes.swap(*proto.mutable_raw_data());
  ir::Tensor tensor(dtype, {proto.dims().begin(), proto.dims().end()}, std::move(bytes));
  release_data(proto);
  return tensor;
}

ir::Tensor read_tensor_file(const std::string& path) {
  try {
    TensorProto proto;
    parse_file(path, proto, "a serialized ONNX TensorProto");
    load_external_data(proto, std::filesystem::path(path).parent_path());
    return tensor_from_proto(proto);
  } catch (const Error& error) {
    throw Error(path + ": " + error.what());
  }
}

}  // namespace graphsub::onnx_io
