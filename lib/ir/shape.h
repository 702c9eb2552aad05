// Tensor shapes whose dimensions may be symbolic ("N") or unknown, and the type of a value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/data_type.h"

namespace graphsub::ir {

/// One dimension: a known size, a named symbol (ONNX dim_param), or unknown (neither).
struct Dim {
  int64_t value = -1;  ///< The size when known (>= 0), else -1.
  std::string symbol;  ///< The symbol when the size is symbolic, e.g. "batch"; empty otherwise.

  /// A dimension of known size.
  static Dim known(int64_t size) { return Dim{size, {}}; }
  /// A symbolic dimension; symbols are kept through import, inference and export.
  static Dim named(std::string name) { return Dim{-1, std::move(name)}; }

  bool is_known() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !symbol.empty(); }
  bool operator==(const Dim& other) const { return value == other.value && symbol == other.symbol; }
  bool operator!=(const Dim& other) const { return !(*this == other); }
};

/// The dimensions of a tensor; `rank_known == false` means nothing is known about it.
struct Shape {
  bool rank_known = false;
  std::vector<Dim> dims;

  /// A shape of fully known sizes.
  static Shape of(const std::vector<int64_t>& sizes);
  /// A shape of unknown rank.
  static Shape unknown() { return Shape{}; }

  std::size_t rank() const { return dims.size(); }
  /// True when the rank and every dimension are known sizes.
  bool is_static() const;
  /// The sizes, if static.
  std::optional<std::vector<int64_t>> sizes() const;
  /// Number of elements if static, else nullopt.
  std::optional<int64_t> num_elements() const;
  bool operator==(const Shape& other) const {
    return rank_known == other.rank_known && dims == other.dims;
  }
  bool operator!=(const Shape& other) const { return !(*this == other); }
};

/// Element count of static sizes (1 for rank 0).
int64_t num_elements(const std::vector<int64_t>& sizes);

/// "[N,3,224,224]", "[?]", or "[*]" for unknown rank.
std::string to_string(const Shape& shape);

/// The type of a value: element type and shape.
struct TensorType {
  DataType dtype = DataType::kUndefined;
  Shape shape;

  bool operator==(const TensorType& other) const {
    return dtype == other.dtype && shape == other.shape;
  }
  bool operator!=(const TensorType& other) const { return !(*this == other); }
};

/// True when `general` says nothing `specific` contradicts: the same element type, and an
/// unknown rank, or the same rank with each dim equal or unknown (neither size nor symbol).
bool generalizes(const TensorType& general, const TensorType& specific);

/// "float32[N,3,224,224]".
std::string to_string(const TensorType& type);

}  // namespace graphsub::ir
