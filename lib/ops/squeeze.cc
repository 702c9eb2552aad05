// Squeeze: removes dims of size 1 (ONNX Squeeze, opsets 1, 11 and 13).
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Fills `axes` with every dim of size 1, which needs every dim known. ONNX reads an empty axes
/// list the same way.
std::string set_all_unit_axes(ImportContext& context) {
  const ir::Shape& shape = context.input_types[0].shape;
  if (!shape.is_static()) return "squeezing all unit dims needs a static input shape";
  std::vector<int64_t> axes;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (shape.dims[i].value == 1) axes.push_back(static_cast<int64_t>(i));
  }
  context.attrs.set("axes", axes);
  return {};
}

std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({check_attributes(context.attrs, {{"axes", AttrType::kInts}}),
                                     require_inputs(context, 1), require_outputs(context, 1),
                                     reject_strings(context)});
  if (!reason.empty()) return reason;
  std::vector<int64_t> axes = context.attrs.get_ints("axes", {});
  if (axes.empty()) return set_all_unit_axes(context);
  reason = first_reason({reject_negative_before_11(context, axes),
                         normalize_axes(axes, rank_of(context.input_types[0]))});
  if (!reason.empty()) return reason;
  context.attrs.set("axes", axes);
  return {};
}

/// Drops the dims at `axes`; a symbolic or unknown one is taken to be 1, a known one must be.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Squeeze takes one data input");
  const ir::TensorType& in = inputs[0];
  if (!in.shape.rank_known) return InferResult{{in}, {}};
  std::vector<int64_t> axes = node.attrs.get_ints("axes", {});
  std::string error = normalize_axes(axes, rank_of(in));
  if (!error.empty()) return InferResult::failure(error);
  ir::TensorType out{in.dtype, ir::Shape{true, {}}};
  for (std::size_t i = 0, next = 0; i < in.shape.rank(); ++i) {
    const ir::Dim& dim = in.shape.dims[i];
    const bool squeezed = next < axes.size() && axes[next] == static_cast<int64_t>(i);
    if (!squeezed) {
      out.shape.dims.push_back(dim);
    } else if (dim.is_known() && dim.value != 1) {
      return InferResult::failure("cannot squeeze dim " + std::to_string(i) + " of " +
                                  ir::to_string(in.shape));
    }
    next += squeezed ? 1 : 0;
  }
  return InferResult{{out}, {}};
}

}  // namespace

OpDef squeeze_op() {
  return OpDef{ir::OpKind::kSqueeze, "Squeeze", true, 1, {{1, "axes", 13, false}},
               canonicalize, infer, copy_kernel, no_cost_features};
}

}  // namespace graphsub::ops
