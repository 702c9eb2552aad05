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

  const std::byte* bytes() const { return bytes_.data(); }
  std::byte* mutable_bytes() { return bytes_.data(); }
  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  template <class T>
  T* mutable_data() { return reinterpret_cast<T*>(bytes_.data()); }
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
  std::vector<std::byte> bytes_;
  std::vector<std::string> strings_;
};

/// Shared immutable tensor data: the weight store of the IR.
using TensorPtr = std::shared_ptr<const Tensor>;

/// Moves a tensor into shared immutable storage.
inline TensorPtr share(Tensor tensor) { return std::make_shared<const Tensor>(std::move(tensor)); }

}  // namespace graphsub::ir
