// Conversion between ONNX TypeProto and ir::TensorType.
#pragma once

#include <onnx/onnx_pb.h>

#include "ir/shape.h"

namespace graphsub::onnx_io {

/// The tensor type a TypeProto describes: dim_value -> known size, dim_param -> symbol, neither
/// -> unknown dim. Non-tensor types (sequence, map, optional, sparse) give an undefined type.
ir::TensorType tensor_type_from_proto(const onnx::TypeProto& proto);

/// Writes a tensor type; an unknown rank writes no shape.
void tensor_type_to_proto(const ir::TensorType& type, onnx::TypeProto& proto);

/// True when two types of one value are known to disagree: both dtypes known and different,
/// both ranks known and different, or a dim known in both with different sizes.
bool types_conflict(const ir::TensorType& a, const ir::TensorType& b);

/// graphsub's inferred type completed by ONNX's for the same value (which must not conflict):
/// where graphsub knows neither a dim's size nor its symbol, or not even the rank, ONNX's
/// inference (which propagates constant shape data) may; a size ONNX knows (a graph output's
/// declared [2, 4, 24], say) replaces a symbol graphsub only named.
ir::TensorType refine_type(const ir::TensorType& ours, const ir::TensorType& onnx);

}  // namespace graphsub::onnx_io
