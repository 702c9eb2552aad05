// Dense tensor storage and element access.
#include "ir/tensor.h"

#include <cstring>
#include <stdexcept>

#include "ir/float16.h"
#include "ir/hash.h"
#include "ir/shape.h"

namespace graphsub::ir {

Tensor::Tensor(DataType dtype, std::vector<int64_t> dims)
    : dtype_(dtype), dims_(std::move(dims)), num_elements_(ir::num_elements(dims_)) {
  if (dtype_ == DataType::kString) {
    strings_.resize(static_cast<std::size_t>(num_elements_));
  } else {
    bytes_.resize(static_cast<std::size_t>(num_elements_) * element_size(dtype_));
  }
}

Tensor::Tensor(DataType dtype, std::vector<int64_t> dims, std::vector<std::byte> bytes)
    : Tensor(dtype, std::move(dims), std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size())) {}

Tensor::Tensor(DataType dtype, std::vector<int64_t> dims, std::string bytes)
    : dtype_(dtype), dims_(std::move(dims)), num_elements_(ir::num_elements(dims_)),
      bytes_(std::move(bytes)) {
  const auto expected = static_cast<std::size_t>(num_elements_) * element_size(dtype_);
  if (bytes_.size() != expected) {
    throw std::invalid_argument("tensor data has " + std::to_string(bytes_.size()) +
                                " bytes, expected " + std::to_string(expected));
  }
}

Tensor::Tensor(std::vector<int64_t> dims, std::vector<std::string> strings)
    : dtype_(DataType::kString), dims_(std::move(dims)), num_elements_(ir::num_elements(dims_)),
      strings_(std::move(strings)) {
  if (static_cast<int64_t>(strings_.size()) != num_elements_) {
    throw std::invalid_argument("string tensor element count does not match its shape");
  }
}

Tensor Tensor::from_floats(std::vector<int64_t> dims, const std::vector<float>& values) {
  Tensor tensor(DataType::kFloat, std::move(dims));
  if (static_cast<int64_t>(values.size()) != tensor.num_elements()) {
    throw std::invalid_argument("float tensor element count does not match its shape");
  }
  std::memcpy(tensor.mutable_bytes(), values.data(), tensor.byte_size());
  return tensor;
}

Tensor Tensor::from_int64s(std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Tensor tensor(DataType::kInt64, std::move(dims));
  if (static_cast<int64_t>(values.size()) != tensor.num_elements()) {
    throw std::invalid_argument("int64 tensor element count does not match its shape");
  }
  std::memcpy(tensor.mutable_bytes(), values.data(), tensor.byte_size());
  return tensor;
}

double Tensor::element_as_double(int64_t i) const {
  switch (dtype_) {
    case DataType::kFloat: return data<float>()[i];
    case DataType::kDouble: return data<double>()[i];
    case DataType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DataType::kInt32: return data<int32_t>()[i];
    case DataType::kInt16: return data<int16_t>()[i];
    case DataType::kInt8: return data<int8_t>()[i];
    case DataType::kUint8: return data<uint8_t>()[i];
    case DataType::kUint16: return data<uint16_t>()[i];
    case DataType::kUint32: return data<uint32_t>()[i];
    case DataType::kUint64: return static_cast<double>(data<uint64_t>()[i]);
    case DataType::kBool: return data<uint8_t>()[i] ? 1.0 : 0.0;
    case DataType::kFloat16: return float16_to_double(data<uint16_t>()[i]);
    case DataType::kBfloat16: return bfloat16_to_double(data<uint16_t>()[i]);
    default: throw std::invalid_argument("cannot read " + to_string(dtype_) + " elements as numbers");
  }
}

std::vector<int64_t> Tensor::to_int64s() const {
  std::vector<int64_t> out(static_cast<std::size_t>(num_elements()));
  if (dtype_ == DataType::kInt64) {
    std::memcpy(out.data(), bytes_.data(), bytes_.size());
    return out;
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<int64_t>(element_as_double(static_cast<int64_t>(i)));
  }
  return out;
}

uint64_t Tensor::content_hash() const {
  if (const uint64_t known = hash_.get(); known != 0) return known;
  uint64_t hash = hash_combine(kHashSeed, static_cast<uint64_t>(dtype_));
  for (int64_t dim : dims_) hash = hash_combine(hash, static_cast<uint64_t>(dim));
  hash = hash_bytes(hash, bytes_.data(), bytes_.size());
  for (const std::string& text : strings_) hash = hash_string(hash, text);
  hash_.set(hash);
  return hash;
}

}  // namespace graphsub::ir
