// TypeProto <-> TensorType.
#include "onnx_io/value_types.h"

namespace graphsub::onnx_io {
namespace {

ir::Dim dim_from_proto(const onnx::TensorShapeProto::Dimension& dim) {
  if (dim.has_dim_value() && dim.dim_value() >= 0) return ir::Dim::known(dim.dim_value());
  if (dim.has_dim_param() && !dim.dim_param().empty()) return ir::Dim::named(dim.dim_param());
  return ir::Dim{};
}

void dim_to_proto(const ir::Dim& dim, onnx::TensorShapeProto::Dimension& proto) {
  if (dim.is_known()) proto.set_dim_value(dim.value);
  if (dim.is_symbolic()) proto.set_dim_param(dim.symbol);
}

}  // namespace

ir::TensorType tensor_type_from_proto(const onnx::TypeProto& proto) {
  ir::TensorType type;
  if (!proto.has_tensor_type()) return type;
  const onnx::TypeProto::Tensor& tensor = proto.tensor_type();
  if (ir::is_valid(tensor.elem_type())) type.dtype = static_cast<ir::DataType>(tensor.elem_type());
  if (!tensor.has_shape()) return type;
  type.shape.rank_known = true;
  for (const auto& dim : tensor.shape().dim()) type.shape.dims.push_back(dim_from_proto(dim));
  return type;
}

void tensor_type_to_proto(const ir::TensorType& type, onnx::TypeProto& proto) {
  onnx::TypeProto::Tensor* tensor = proto.mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(type.dtype));
  if (!type.shape.rank_known) return;
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (const ir::Dim& dim : type.shape.dims) dim_to_proto(dim, *shape->add_dim());
}

bool types_conflict(const ir::TensorType& a, const ir::TensorType& b) {
  const bool dtypes_known = a.dtype != ir::DataType::kUndefined && b.dtype != ir::DataType::kUndefined;
  if (dtypes_known && a.dtype != b.dtype) return true;
  if (!a.shape.rank_known || !b.shape.rank_known) return false;
  if (a.shape.rank() != b.shape.rank()) return true;
  for (std::size_t i = 0; i < a.shape.rank(); ++i) {
    const ir::Dim& da = a.shape.dims[i];
    const ir::Dim& db = b.shape.dims[i];
    if (da.is_known() && db.is_known() && da.value != db.value) return true;
  }
  return false;
}

ir::TensorType refine_type(const ir::TensorType& ours, const ir::TensorType& onnx) {
  ir::TensorType out = ours;
  if (out.dtype == ir::DataType::kUndefined) out.dtype = onnx.dtype;
  if (!onnx.shape.rank_known) return out;
  if (!out.shape.rank_known) {
    out.shape = onnx.shape;
    return out;
  }
  for (std::size_t i = 0; i < out.shape.rank(); ++i) {
    ir::Dim& dim = out.shape.dims[i];
    if (!dim.is_known() && (!dim.is_symbolic() || onnx.shape.dims[i].is_known())) dim = onnx.shape.dims[i];
  }
  return out;
}

}  // namespace graphsub::onnx_io
