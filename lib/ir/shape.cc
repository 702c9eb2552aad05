// Shape helpers.
#include "ir/shape.h"

namespace graphsub::ir {

Shape Shape::of(const std::vector<int64_t>& sizes) {
  Shape shape;
  shape.rank_known = true;
  shape.dims.reserve(sizes.size());
  for (int64_t size : sizes) shape.dims.push_back(Dim::known(size));
  return shape;
}

bool Shape::is_static() const {
  if (!rank_known) return false;
  for (const Dim& dim : dims) {
    if (!dim.is_known()) return false;
  }
  return true;
}

std::optional<std::vector<int64_t>> Shape::sizes() const {
  if (!is_static()) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const Dim& dim : dims) out.push_back(dim.value);
  return out;
}

std::optional<int64_t> Shape::num_elements() const {
  auto static_sizes = sizes();
  if (!static_sizes) return std::nullopt;
  return ir::num_elements(*static_sizes);
}

int64_t num_elements(const std::vector<int64_t>& sizes) {
  int64_t count = 1;
  for (int64_t size : sizes) count *= size;
  return count;
}

std::string to_string(const Shape& shape) {
  if (!shape.rank_known) return "[*]";
  std::string out = "[";
  for (std::size_t i = 0; i < shape.dims.size(); ++i) {
    if (i) out += ",";
    const Dim& dim = shape.dims[i];
    out += dim.is_known() ? std::to_string(dim.value) : dim.is_symbolic() ? dim.symbol : "?";
  }
  return out + "]";
}

std::string to_string(const TensorType& type) { return to_string(type.dtype) + to_string(type.shape); }

bool generalizes(const TensorType& general, const TensorType& specific) {
  if (general.dtype != specific.dtype) return false;
  if (!general.shape.rank_known) return true;
  if (!specific.shape.rank_known || general.shape.rank() != specific.shape.rank()) return false;
  for (std::size_t i = 0; i < general.shape.rank(); ++i) {
    const Dim& dim = general.shape.dims[i];
    if (dim != specific.shape.dims[i] && (dim.is_known() || dim.is_symbolic())) return false;
  }
  return true;
}

}  // namespace graphsub::ir
