// Dense tensors: the data of weights and of the reference executor's values.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/data_type.h"

namespace graphsub::ir {

/// A tensor's content hash once computed (0: not yet), shared by the threads that read the tensor;
/// a copy of the tensor carries it.
class HashMemo {
 public:
  HashMemo() = default;
  HashMemo(const HashMemo& other) : value_(other.get()) {}
  HashMemo& operator=(const HashMemo& other) {
    value_.store(other.get(), std::memory_order_relaxed);
    return *this;
  }
  uint64_t get() const { return value_.load(std::memory_order_relaxed); }
  void set(uint64_t value) const { value_.store(value, std::memory_order_relaxed); }
  void clear() { value_.store(0, std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint64_t> value_{0};
};

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
  std::byte* mutable_bytes() {
    hash_.clear();
    return reinterpret_cast<std::byte*>(bytes_.data());
  }
  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }
  template <class T>
  T* mutable_data() {
    hash_.clear();
    return reinterpret_cast<T*>(bytes_.data());
  }
  /// Swaps the tensor's bytes with `other`, without copying: how export lends a weight's bytes to
  /// the TensorProto it writes and takes them back (onnx_io's DataLoan). Between the two swaps the
  /// tensor is empty and must not be read (its content hash, kept, is that of the bytes it gets back).
  void swap_bytes(std::string& other) { bytes_.swap(other); }
  /// The elements of a kString tensor.
  const std::vector<std::string>& strings() const { return strings_; }

  /// Element `i` converted to double (numeric types only; used by checks and constant reads).
  double element_as_double(int64_t i) const;
  /// All elements converted to int64 (integer and float types; used to read shape/axes constants).
  std::vector<int64_t> to_int64s() const;
  /// A 64-bit hash of dtype, sizes and content, for structural hashing of weights. Computed once
  /// and kept until the bytes are next handed out for writing (mutable_bytes, mutable_data): a
  /// weight is hashed again by every graph it is added to (each part of the search, each graph
  /// timed), and BERT-base's 440 MB took half a second of a warm run to hash over and over.
  uint64_t content_hash() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> dims_;
  int64_t num_elements_ = 1;  ///< Product of dims_, kept because kernels loop to it.
  /// The elements' bytes. A string rather than a vector of bytes so that a TensorProto's raw_data
  /// moves in and out without a copy; its buffer comes from operator new, aligned for any element.
  std::string bytes_;
  std::vector<std::string> strings_;
  HashMemo hash_;
};

/// Shared immutable tensor data: the weight store of the IR.
using TensorPtr = std::shared_ptr<const Tensor>;

/// Moves a tensor into shared immutable storage.
/// (Made as a non-const Tensor behind a pointer to const, so that export may lend its bytes; see
/// Tensor::swap_bytes.)
inline TensorPtr share(Tensor tensor) { return std::make_shared<Tensor>(std::move(tensor)); }

}  // namespace graphsub::ir
