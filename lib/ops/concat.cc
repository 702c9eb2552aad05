// Concat: joins tensors along one axis (ONNX Concat, opsets 1, 4, 11 and 13).
#include <cstring>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// The rank of the first input whose rank is known (all inputs share it).
std::optional<int64_t> common_rank(const std::vector<ir::TensorType>& inputs) {
  for (const ir::TensorType& type : inputs) {
    if (type.shape.rank_known) return rank_of(type);
  }
  return std::nullopt;
}

std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({check_attributes(context.attrs, {{"axis", AttrType::kInt}}),
                                     require_outputs(context, 1), reject_strings(context)});
  if (!reason.empty()) return reason;
  if (context.input_types.empty()) return "Concat needs at least one input";
  if (!context.attrs.has("axis")) {
    if (context.opset >= 4) return "axis is required";
    context.attrs.set("axis", int64_t{1});
  }
  std::vector<int64_t> axes{context.attrs.get_int("axis", 0)};
  reason = first_reason({reject_negative_before_11(context, axes),
                         normalize_axes(axes, common_rank(context.input_types))});
  if (!reason.empty()) return reason;
  context.attrs.set("axis", axes[0]);
  return {};
}

/// Merges a dim of one input into the output's on an axis other than the concat axis: known sizes
/// must agree; a known size or a symbol wins over unknown; two different symbols give unknown.
bool merge_dim(ir::Dim& merged, const ir::Dim& dim) {
  if (merged.is_known() && dim.is_known()) return merged.value == dim.value;
  if (dim.is_known() || (!merged.is_known() && !merged.is_symbolic())) {
    merged = dim;
  } else if (dim.is_symbolic() && merged.is_symbolic() && merged.symbol != dim.symbol) {
    merged = ir::Dim{};
  }
  return true;
}

/// The output dim along the concat axis: the sum when every size is known, the dim itself for a
/// single input, else unknown.
ir::Dim concat_dim(const std::vector<ir::TensorType>& inputs, std::size_t axis) {
  if (inputs.size() == 1) return inputs[0].shape.dims[axis];
  int64_t sum = 0;
  for (const ir::TensorType& type : inputs) {
    if (!type.shape.rank_known || !type.shape.dims[axis].is_known()) return ir::Dim{};
    sum += type.shape.dims[axis].value;
  }
  return ir::Dim::known(sum);
}

/// Checks dtypes and ranks and merges the dims off the concat axis; sets `error` on a mismatch.
ir::Shape merge_shapes(const std::vector<ir::TensorType>& inputs, int64_t rank, std::size_t axis,
                       std::string& error) {
  ir::Shape out;
  out.rank_known = true;
  out.dims.resize(static_cast<std::size_t>(rank));
  for (const ir::TensorType& type : inputs) {
    if (type.dtype != inputs[0].dtype) error = "inputs have different element types";
    if (type.shape.rank_known && static_cast<int64_t>(type.shape.rank()) != rank) {
      error = "inputs have different ranks";
    }
    for (std::size_t i = 0; error.empty() && type.shape.rank_known && i < out.dims.size(); ++i) {
      if (i != axis && !merge_dim(out.dims[i], type.shape.dims[i])) {
        error = "input shapes " + ir::to_string(inputs[0].shape) + " and " +
                ir::to_string(type.shape) + " differ off the concat axis";
      }
    }
    if (!error.empty()) return out;
  }
  return out;
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.empty()) return InferResult::failure("Concat needs at least one input");
  const ir::DataType dtype = inputs[0].dtype;
  std::optional<int64_t> rank = common_rank(inputs);
  if (!rank) return InferResult{{ir::TensorType{dtype, ir::Shape::unknown()}}, {}};
  const int64_t axis = node.attrs.get_int("axis", -1);
  if (axis < 0 || axis >= *rank) return InferResult::failure("axis is out of range");
  std::string error;
  ir::Shape out = merge_shapes(inputs, *rank, static_cast<std::size_t>(axis), error);
  if (!error.empty()) return InferResult::failure(error);
  out.dims[axis] = concat_dim(inputs, static_cast<std::size_t>(axis));
  return InferResult{{ir::TensorType{dtype, out}}, {}};
}

/// Copies, for each index before the axis, each input's block (its axis size times the inner
/// elements) one after the other.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  ir::Tensor& output = outputs[0];
  const auto axis = static_cast<std::size_t>(node.attrs.get_int("axis", 0));
  const int64_t outer = product_of_sizes(output.dims(), 0, axis);
  const int64_t inner = product_of_sizes(output.dims(), axis + 1, output.rank()) *
                        static_cast<int64_t>(ir::element_size(output.dtype()));
  std::byte* out = output.mutable_bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (const ir::Tensor* input : inputs) {
      const int64_t block = input->dims()[axis] * inner;
      if (block > 0) std::memcpy(out, input->bytes() + o * block, static_cast<std::size_t>(block));
      out += block;
    }
  }
}

}  // namespace

OpDef concat_op() {
  return OpDef{ir::OpKind::kConcat, "Concat", true, 1, {},
               canonicalize, infer, kernel, copy_features};
}

}  // namespace graphsub::ops
