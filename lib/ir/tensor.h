// Dense tensors: the data of weights and of the reference executor's values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/data_type.h"

namespace graphsub::ir {

/// A dense, row-major tensor that owns its bytes. Weights are held as `TensorPtr`
/// (shared, immutable), so copying a graph never copies weight data.
class Tensor {
 public:
  Tensor() = default;
  /// A zero-filled tensor of the given type and sizes.
  Tensor(DataType dtype, std::vector<int64_t> dims);
  /// A tensor taking ownership of `bytes`, which must hold exactly num_elements * element_size.
  Tensor(DataType dtype, std::vector<int64_t> dims, std::vector<std::byte> bytes);
  /// The same, taking the bytes of a string without copying them (an ONNX TensorProto's raw_data).
  Tensor(DataType dtype, std::vector<int64_t> dims, std::string bytes);
  /// A string tensor.
  Tensor(std::vector<int64_t> dims, std::vector<std::string> strings);

  /// A float32 tensor holding `values` (their count must match the sizes).
  static Tensor from_floats(std::vector<int64_t> dims, const std::vector<float>& values);
  /// An int64 tensor holding `values`.
  static Tensor from_int64s(std::vector<int64_t> dims, const std::vector<int64_t>& values);

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  std::size_t rank() const { return dims_.size(); }
  int64_t num_elements() const { return num_elements_; }
  std::size_t byte_size() const { return bytes_.size(); }

  const std::byte* bytes() const { return reinterpret_cast<const std::byte*>(bytes_.data()); }
  std::byte* mutable_bytes() { return reinterpret_cast<std::byte*>(bytes_.data()); }
  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  template <class T>
  T* mutable_data() { return reinterpret_cast<T*>(bytes_.data()); }
  /// Swaps the tensor's bytes with `other`, without copying: how export lends a weight's bytes to
  /// the TensorProto it writes and takes them back (onnx_io's DataLoan). Between the two swaps the
  /// tensor is empty and must not be read.
  void swap_bytes(std::string& other) { bytes_.swap(other); }
  /// The elements of a kString tensor.
  const std::vector<std::string>& strings() const { return strings_; }

  /// Element `i` converted to double (numeric types only; used by checks and constant reads).
  double element_as_double(int64_t i) const;
  /// All elements converted to int64 (integer and float types; used to read shape/axes constants).
  std::vector<int64_t> to_int64s() const;
  /// A 64-bit hash of dtype, sizes and content, for structural hashing of weights.
  uint64_t content_hash() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 1;  ///< Product of dims_, kept because kernels loop to it.
  /// The elements' bytes. A string rather than a vector of bytes so that a TensorProto's raw_data
  /// moves in and out without a copy; its buffer comes from operator new, aligned for any element.
  std::string bytes_;
  std::vector<std::string> strings_;
};

/// Shared immutable tensor data: the weight store of the IR.
using TensorPtr = std::shared_ptr<const Tensor>;

/// Moves a tensor into shared immutable storage.
/// (Made as a non-const Tensor behind a pointer to const, so that export may lend its bytes; see
/// Tensor::swap_bytes.)
inline TensorPtr share(Tensor tensor) { return std::make_shared<Tensor>(std::move(tensor)); }

}  // namespace graphsub::ir
