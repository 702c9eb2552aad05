// Sizes and names of element types.
#include "ir/data_type.h"

namespace graphsub::ir {

std::size_t element_size(DataType type) {
  switch (type) {
    case DataType::kBool:
    case DataType::kUint8:
    case DataType::kInt8: return 1;
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBfloat16: return 2;
    case DataType::kFloat:
    case DataType::kInt32:
    case DataType::kUint32: return 4;
    case DataType::kDouble:
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kUndefined:
    case DataType::kString: return 0;
  }
  return 0;
}

std::string to_string(DataType type) {
  switch (type) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat: return "float32";
    case DataType::kUint8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUint16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "float64";
    case DataType::kUint32: return "uint32";
    case DataType::kUint64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBfloat16: return "bfloat16";
  }
  return "undefined";
}

bool is_valid(int32_t code) { return code >= 0 && code <= 16; }

}  // namespace graphsub::ir
