// Gather: picks entries along one axis by index (ONNX Gather, opsets 1, 11 and 13).
#include <cstring>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `dtype` is an index type (or not known yet).
std::string index_type_error(ir::DataType dtype) {
  if (dtype == ir::DataType::kUndefined || dtype == ir::DataType::kInt32 ||
      dtype == ir::DataType::kInt64) {
    return {};
  }
  return "indices must be int32 or int64, not " + ir::to_string(dtype);
}

/// Fills the default axis 0 and normalizes a negative one.
std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({check_attributes(context.attrs, {{"axis", AttrType::kInt}}),
                                     require_inputs(context, 2), require_outputs(context, 1),
                                     reject_strings(context)});
  if (!reason.empty()) return reason;
  std::vector<int64_t> axes{context.attrs.get_int("axis", 0)};
  reason = first_reason({index_type_error(context.input_types[1].dtype),
                         reject_negative_before_11(context, axes),
                         normalize_axes(axes, rank_of(context.input_types[0]))});
  if (!reason.empty()) return reason;
  context.attrs.set("axis", axes[0]);
  return {};
}

/// data[:axis] + indices + data[axis+1:].
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("Gather takes data and indices");
  const ir::TensorType& data = inputs[0];
  const ir::TensorType& indices = inputs[1];
  if (std::string error = index_type_error(indices.dtype); !error.empty()) {
    return InferResult::failure(error);
  }
  if (!data.shape.rank_known || !indices.shape.rank_known) {
    return InferResult{{ir::TensorType{data.dtype, ir::Shape::unknown()}}, {}};
  }
  const int64_t axis = node.attrs.get_int("axis", 0);
  if (axis < 0 || axis >= static_cast<int64_t>(data.shape.rank())) {
    return InferResult::failure("axis " + std::to_string(axis) + " is out of range for " +
                                ir::to_string(data.shape));
  }
  const auto& dims = data.shape.dims;
  ir::Shape out{true, {dims.begin(), dims.begin() + axis}};
  out.dims.insert(out.dims.end(), indices.shape.dims.begin(), indices.shape.dims.end());
  out.dims.insert(out.dims.end(), dims.begin() + axis + 1, dims.end());
  return InferResult{{ir::TensorType{data.dtype, out}}, {}};
}

/// For each index before the axis, copies the block (inner elements) each index picks.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& data = *inputs[0];
  const std::vector<int64_t> indices = inputs[1]->to_int64s();
  const auto axis = static_cast<std::size_t>(node.attrs.get_int("axis", 0));
  const int64_t size = data.dims()[axis];
  const int64_t outer = product_of_sizes(data.dims(), 0, axis);
  const int64_t block = product_of_sizes(data.dims(), axis + 1, data.rank()) *
                        static_cast<int64_t>(ir::element_size(data.dtype()));
  std::byte* out = outputs[0].mutable_bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t index : indices) {
      const int64_t from = (o * size + checked_index(index, size, "Gather")) * block;
      if (block > 0) std::memcpy(out, data.bytes() + from, static_cast<std::size_t>(block));
      out += block;
    }
  }
}

}  // namespace

OpDef gather_op() {
  return OpDef{ir::OpKind::kGather, "Gather", true, 1, {}, canonicalize, infer, kernel, gather_features};
}

}  // namespace graphsub::ops
