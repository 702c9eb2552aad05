// Helpers shared by the shape-computation and indexing ops.
#include "ops/indexing.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>

#include "ir/error.h"
#include "ir/float16.h"
#include "ops/common.h"

namespace graphsub::ops {
namespace {

/// Per output axis and coordinate, the byte offset into the input it reads, or kFillCoordinate.
AxisMaps byte_offsets(const ir::Tensor& input, const AxisMaps& maps) {
  if (input.rank() > maps.size()) throw std::logic_error("copy_mapped: more input axes than maps");
  std::vector<int64_t> dims(maps.size() - input.rank(), 1);
  dims.insert(dims.end(), input.dims().begin(), input.dims().end());
  const std::vector<int64_t> strides = strides_of(dims);
  const auto size = static_cast<int64_t>(ir::element_size(input.dtype()));
  AxisMaps offsets = maps;
  for (std::size_t axis = 0; axis < maps.size(); ++axis) {
    for (int64_t& at : offsets[axis]) {
      if (at != kFillCoordinate) at *= strides[axis] * size;
    }
  }
  return offsets;
}

/// The input byte offset of the element at `index`, or nullopt when some axis fills.
std::optional<int64_t> source_offset(const AxisMaps& offsets, const std::vector<int64_t>& index) {
  int64_t total = 0;
  for (std::size_t axis = 0; axis < index.size(); ++axis) {
    const int64_t at = offsets[axis][index[axis]];
    if (at == kFillCoordinate) return std::nullopt;
    total += at;
  }
  return total;
}

/// Steps a row-major multi-index over the lengths of `maps` by one.
void advance(std::vector<int64_t>& index, const AxisMaps& maps) {
  for (std::size_t axis = index.size(); axis-- > 0;) {
    if (++index[axis] < static_cast<int64_t>(maps[axis].size())) return;
    index[axis] = 0;
  }
}

/// An element read exactly: signed and unsigned integers as such, floats as double.
using Number = std::variant<int64_t, uint64_t, double>;

Number read_number(const ir::Tensor& tensor, int64_t i) {
  switch (tensor.dtype()) {
    case ir::DataType::kFloat: return double{tensor.data<float>()[i]};
    case ir::DataType::kDouble: return tensor.data<double>()[i];
    case ir::DataType::kFloat16: return ir::float16_to_double(tensor.data<uint16_t>()[i]);
    case ir::DataType::kInt8: return int64_t{tensor.data<int8_t>()[i]};
    case ir::DataType::kInt16: return int64_t{tensor.data<int16_t>()[i]};
    case ir::DataType::kInt32: return int64_t{tensor.data<int32_t>()[i]};
    case ir::DataType::kInt64: return tensor.data<int64_t>()[i];
    case ir::DataType::kUint8: return uint64_t{tensor.data<uint8_t>()[i]};
    case ir::DataType::kUint16: return uint64_t{tensor.data<uint16_t>()[i]};
    case ir::DataType::kUint32: return uint64_t{tensor.data<uint32_t>()[i]};
    case ir::DataType::kUint64: return tensor.data<uint64_t>()[i];
    case ir::DataType::kBool: return int64_t{tensor.data<uint8_t>()[i] != 0};
    default:
      throw std::invalid_argument("cannot convert " + ir::to_string(tensor.dtype()) + " elements");
  }
}

/// A float truncated toward zero into the integer type D, saturating; NaN gives 0.
template <class D>
D saturating_cast(double value) {
  if (std::isnan(value)) return 0;
  const double low = static_cast<double>(std::numeric_limits<D>::min());
  const double high = static_cast<double>(std::numeric_limits<D>::max());
  if (value <= low) return std::numeric_limits<D>::min();
  if (value >= high) return std::numeric_limits<D>::max();
  return static_cast<D>(value);
}

/// `number` as the C++ type D: see convert_elements for the rules.
template <class D>
D convert_to(const Number& number) {
  return std::visit([](auto value) -> D {
    using S = decltype(value);
    if constexpr (std::is_same_v<D, bool>) {
      return value != 0;
    } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
      return saturating_cast<D>(value);
    } else {
      return static_cast<D>(value);
    }
  }, number);
}

template <class D>
void store(ir::Tensor& tensor, int64_t i, D value) {
  tensor.mutable_data<D>()[i] = value;
}

void write_number(ir::Tensor& tensor, int64_t i, const Number& number) {
  switch (tensor.dtype()) {
    case ir::DataType::kFloat: return store(tensor, i, convert_to<float>(number));
    case ir::DataType::kDouble: return store(tensor, i, convert_to<double>(number));
    case ir::DataType::kFloat16:
      return store(tensor, i, ir::float16_from_double(convert_to<double>(number)));
    case ir::DataType::kInt8: return store(tensor, i, convert_to<int8_t>(number));
    case ir::DataType::kInt16: return store(tensor, i, convert_to<int16_t>(number));
    case ir::DataType::kInt32: return store(tensor, i, convert_to<int32_t>(number));
    case ir::DataType::kInt64: return store(tensor, i, convert_to<int64_t>(number));
    case ir::DataType::kUint8: return store(tensor, i, convert_to<uint8_t>(number));
    case ir::DataType::kUint16: return store(tensor, i, convert_to<uint16_t>(number));
    case ir::DataType::kUint32: return store(tensor, i, convert_to<uint32_t>(number));
    case ir::DataType::kUint64: return store(tensor, i, convert_to<uint64_t>(number));
    case ir::DataType::kBool:
      return store(tensor, i, static_cast<uint8_t>(convert_to<bool>(number)));
    default: throw std::invalid_argument("cannot convert to " + ir::to_string(tensor.dtype()));
  }
}


}  // namespace

std::vector<int64_t> identity_map(int64_t size) {
  std::vector<int64_t> map(static_cast<std::size_t>(size));
  std::iota(map.begin(), map.end(), int64_t{0});
  return map;
}

void copy_mapped(const ir::Tensor& input, const AxisMaps& maps, const ir::Tensor* fill,
                 ir::Tensor& output) {
  const AxisMaps offsets = byte_offsets(input, maps);
  const std::size_t size = ir::element_size(output.dtype());
  std::vector<int64_t> index(maps.size(), 0);
  for (int64_t i = 0; i < output.num_elements(); ++i, advance(index, maps)) {
    std::optional<int64_t> from = source_offset(offsets, index);
    std::byte* to = output.mutable_bytes() + i * static_cast<int64_t>(size);
    if (from) {
      std::memcpy(to, input.bytes() + *from, size);
    } else if (fill) {
      std::memcpy(to, fill->bytes(), size);
    }
  }
}

std::string shape_operand_error(const ir::TensorType& shape) {
  if (shape.dtype != ir::DataType::kUndefined && shape.dtype != ir::DataType::kInt64) {
    return "the shape operand must be int64";
  }
  if (shape.shape.rank_known && shape.shape.rank() != 1) return "the shape operand must be 1-D";
  return {};
}

bool is_convertible(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kFloat:
    case ir::DataType::kDouble:
    case ir::DataType::kFloat16:
    case ir::DataType::kInt8:
    case ir::DataType::kInt16:
    case ir::DataType::kInt32:
    case ir::DataType::kInt64:
    case ir::DataType::kUint8:
    case ir::DataType::kUint16:
    case ir::DataType::kUint32:
    case ir::DataType::kUint64:
    case ir::DataType::kBool: return true;
    default: return false;
  }
}

void convert_elements(const ir::Tensor& input, ir::Tensor& output) {
  if (input.num_elements() != output.num_elements()) {
    throw std::logic_error("convert_elements: element counts differ");
  }
  for (int64_t i = 0; i < input.num_elements(); ++i) write_number(output, i, read_number(input, i));
}

ir::Tensor scalar_of(ir::DataType dtype, double value) {
  ir::Tensor scalar(dtype, {});
  write_number(scalar, 0, value);
  return scalar;
}


int64_t checked_index(int64_t index, int64_t size, const char* op) {
  if (index < -size || index >= size) {
    throw Error(std::string(op) + " index " + std::to_string(index) + " is out of range for an axis of " +
                std::to_string(size));
  }
  return index < 0 ? index + size : index;
}

CostFeatures gather_features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                             const std::vector<ir::TensorType>& outputs) {
  CostFeatures cost = elementwise_features({inputs[1]}, outputs, 0);
  cost.bytes_read += bytes_or_one(outputs[0]);
  return cost;
}

}  // namespace graphsub::ops
