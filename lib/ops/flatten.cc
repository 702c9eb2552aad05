// Flatten: views a tensor as a matrix, splitting its dims at one axis (ONNX Flatten, opsets 1-13).
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({check_attributes(context.attrs, {{"axis", AttrType::kInt}}),
                                     require_inputs(context, 1), require_outputs(context, 1),
                                     reject_strings(context)});
  if (!reason.empty()) return reason;
  int64_t axis = context.attrs.get_int("axis", 1);
  reason = reject_negative_before_11(context, {axis});
  if (!reason.empty()) return reason;
  std::optional<int64_t> rank = rank_of(context.input_types[0]);
  if (axis < 0) {
    if (!rank) return "negative axis with an unknown rank";
    axis += *rank;
  }
  if (axis < 0 || (rank && axis > *rank)) return "axis is out of range";
  context.attrs.set("axis", axis);
  return {};
}

/// Output [prod(dims[:axis]), prod(dims[axis:])]; a product that is one symbol keeps it.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Flatten takes one input");
  const int64_t axis = node.attrs.get_int("axis", -1);
  const ir::Shape& in = inputs[0].shape;
  ir::Shape out;
  out.rank_known = true;
  out.dims.resize(2);
  if (axis < 0 || (in.rank_known && axis > static_cast<int64_t>(in.rank()))) {
    return InferResult::failure("axis is out of range");
  }
  if (in.rank_known) {
    const auto split = static_cast<std::size_t>(axis);
    out.dims[0] = to_dim(product_of(in.dims, 0, split));
    out.dims[1] = to_dim(product_of(in.dims, split, in.rank()));
  }
  return InferResult{{ir::TensorType{inputs[0].dtype, out}}, {}};
}

}  // namespace

OpDef flatten_op() {
  return OpDef{ir::OpKind::kFlatten, "Flatten", true, 1, {},
               canonicalize, infer, copy_kernel, no_cost_features};
}

}  // namespace graphsub::ops
