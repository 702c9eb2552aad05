// Element types of tensors, numbered as ONNX's TensorProto::DataType so import and export are a cast.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace graphsub::ir {

/// Element type of a tensor. The numbering is ONNX's, so onnx_io converts with a cast.
enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
};

/// Bytes per element; 0 for kUndefined and kString (strings have no fixed size).
std::size_t element_size(DataType type);

/// Lower-case name, as printed by `inspect` and in error messages ("float32", "int64", ...).
std::string to_string(DataType type);

/// True for a value ONNX defines (0..16).
bool is_valid(int32_t code);

}  // namespace graphsub::ir
