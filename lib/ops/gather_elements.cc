// GatherElements: picks one data element per index along one axis, the other coordinates those of
// the index itself (ONNX GatherElements, opsets 11 and 13; numpy's take_along_axis).
#include <cstring>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `dtype` is an index type (or not known yet).
std::string index_type_error(ir::DataType dtype) {
  if (dtype == ir::DataType::kUndefined || dtype == ir::DataType::kInt32 || dtype == ir::DataType::kInt64) {
    return {};
  }
  return "indices must be int32 or int64, not " + ir::to_string(dtype);
}

/// Fills the default axis 0 and normalizes a negative one.
std::string canonicalize(ImportContext& context) {
  std::string reason =
      first_reason({check_attributes(context.attrs, {{"axis", AttrType::kInt}}), require_inputs(context, 2),
                    require_outputs(context, 1), reject_strings(context)});
  if (!reason.empty()) return reason;
  std::vector<int64_t> axes{context.attrs.get_int("axis", 0)};
  reason = first_reason({index_type_error(context.input_types[1].dtype),
                         normalize_axes(axes, rank_of(context.input_types[0]))});
  if (!reason.empty()) return reason;
  context.attrs.set("axis", axes[0]);
  return {};
}

/// Data and indices have one rank; off the axis an index dim cannot exceed the data's.
std::string check_shapes(const ir::Shape& data, const ir::Shape& indices, int64_t axis) {
  if (data.rank() != indices.rank()) {
    return "data " + ir::to_string(data) + " and indices " + ir::to_string(indices) + " differ in rank";
  }
  if (axis < 0 || axis >= static_cast<int64_t>(data.rank())) {
    return "axis " + std::to_string(axis) + " is out of range for " + ir::to_string(data);
  }
  for (std::size_t i = 0; i < data.rank(); ++i) {
    const ir::Dim& have = data.dims[i];
    const ir::Dim& want = indices.dims[i];
    if (static_cast<int64_t>(i) != axis && have.is_known() && want.is_known() && want.value > have.value) {
      return "indices " + ir::to_string(indices) + " exceed data " + ir::to_string(data) + " off the axis";
    }
  }
  return {};
}

/// The indices' shape, the data's element type.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("GatherElements takes data and indices");
  const ir::TensorType& data = inputs[0];
  const ir::TensorType& indices = inputs[1];
  if (std::string error = index_type_error(indices.dtype); !error.empty()) {
    return InferResult::failure(error);
  }
  if (data.shape.rank_known && indices.shape.rank_known) {
    const std::string error = check_shapes(data.shape, indices.shape, node.attrs.get_int("axis", 0));
    if (!error.empty()) return InferResult::failure(error);
  }
  return InferResult{{ir::TensorType{data.dtype, indices.shape}}, {}};
}

/// out[i0, .., ik, ..] = data[i0, .., indices[i0, .., ik, ..], ..], ik on the axis.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& data = *inputs[0];
  const std::vector<int64_t> indices = inputs[1]->to_int64s();
  const auto axis = static_cast<std::size_t>(node.attrs.get_int("axis", 0));
  const std::vector<int64_t>& sizes = inputs[1]->dims();
  const std::vector<int64_t> data_strides = strides_of(data.dims());
  const std::size_t element = ir::element_size(data.dtype());
  std::byte* out = outputs[0].mutable_bytes();
  for (int64_t i = 0; i < static_cast<int64_t>(indices.size()); ++i) {
    int64_t from = 0;
    for (std::size_t d = sizes.size(), rest = static_cast<std::size_t>(i); d-- > 0;) {
      const auto size = static_cast<std::size_t>(sizes[d]);
      const auto coordinate = static_cast<int64_t>(rest % size);
      rest /= size;
      from += (d == axis ? checked_index(indices[i], data.dims()[d], "GatherElements") : coordinate) * data_strides[d];
    }
    std::memcpy(out + i * static_cast<int64_t>(element), data.bytes() + from * static_cast<int64_t>(element),
                element);
  }
}

}  // namespace

OpDef gather_elements_op() {
  return OpDef{
      ir::OpKind::kGatherElements, "GatherElements", true, 11, {}, canonicalize, infer, kernel, gather_features};
}

}  // namespace graphsub::ops
