// Helpers shared by the shape-computation and indexing ops: copies that map each output axis to
// input coordinates, and element conversion between numeric types (float16 included).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/shape.h"
#include "ir/tensor.h"
#include "ops/op_def.h"

namespace graphsub::ops {

/// An output coordinate that reads no input element (Pad's constant border).
inline constexpr int64_t kFillCoordinate = -1;

/// For each output axis, the input coordinate each output coordinate reads along it, or
/// kFillCoordinate. Axes map independently, which covers Slice, Pad, Tile and Expand.
using AxisMaps = std::vector<std::vector<int64_t>>;

/// The map of an axis of `size` onto itself.
std::vector<int64_t> identity_map(int64_t size);

/// Fills `output` (allocated, one axis per map, each as long as its map) element by element: an
/// element all of whose coordinates map into the input copies that input element; one with a
/// kFillCoordinate copies the one element of `fill`, or stays zero when `fill` is null. The
/// input's axes align with the last maps; missing leading input axes count as size 1 (Expand).
void copy_mapped(const ir::Tensor& input, const AxisMaps& maps, const ir::Tensor* fill,
                 ir::Tensor& output);

/// Empty when `shape` can be the 1-D int64 operand that gives Expand and ConstantOfShape their
/// output shape at run time (as far as its type is known); else the reason.
std::string shape_operand_error(const ir::TensorType& shape);

/// True for the element types convert_elements reads and writes: float16, float32, float64,
/// every integer type, and bool.
bool is_convertible(ir::DataType dtype);

/// Writes each element of `input` into `output` (as many elements, both convertible types),
/// converted as ONNX Cast: floats round to nearest even, integers wrap modulo 2^bits, floats to
/// integers truncate toward zero (saturating at the type's bounds, NaN to 0, which ONNX leaves
/// undefined), anything to bool is "!= 0", bool reads as 0 or 1.
void convert_elements(const ir::Tensor& input, ir::Tensor& output);

/// A rank-0 tensor of `dtype` (convertible) holding `value`, converted as convert_elements does.
ir::Tensor scalar_of(ir::DataType dtype, double value);

/// The cost of a gather (Gather, GatherElements, GatherND): the indices (input 1) and the picked
/// elements are read, the output written.
CostFeatures gather_features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                             const std::vector<ir::TensorType>& outputs);

/// The position `index` names on an axis of `size`, a negative one counting from the back; throws
/// graphsub::Error naming `op` when it is out of range.
int64_t checked_index(int64_t index, int64_t size, const char* op);

}  // namespace graphsub::ops
