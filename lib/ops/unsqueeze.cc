// Unsqueeze: inserts dims of size 1 at given output positions (ONNX Unsqueeze, opsets 1, 11, 13).
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// The output rank, when the input rank is known.
std::optional<int64_t> output_rank(const ir::TensorType& input, std::size_t num_axes) {
  std::optional<int64_t> rank = rank_of(input);
  if (!rank) return std::nullopt;
  return *rank + static_cast<int64_t>(num_axes);
}

std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({check_attributes(context.attrs, {{"axes", AttrType::kInts}}),
                                     require_inputs(context, 1), require_outputs(context, 1),
                                     reject_strings(context)});
  if (!reason.empty()) return reason;
  if (!context.attrs.has("axes")) return "the axes are not a constant";
  std::vector<int64_t> axes = context.attrs.get_ints("axes", {});
  reason = first_reason({reject_negative_before_11(context, axes),
                         normalize_axes(axes, output_rank(context.input_types[0], axes.size()))});
  if (!reason.empty()) return reason;
  context.attrs.set("axes", axes);
  return {};
}

/// Output dims: 1 at each of `axes` (positions in the output), the input dims in order elsewhere.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Unsqueeze takes one data input");
  const ir::TensorType& in = inputs[0];
  if (!in.shape.rank_known) return InferResult{{in}, {}};
  std::vector<int64_t> axes = node.attrs.get_ints("axes", {});
  std::string error = normalize_axes(axes, output_rank(in, axes.size()));
  if (!error.empty()) return InferResult::failure(error);
  ir::TensorType out{in.dtype, ir::Shape{true, {}}};
  auto next_input = in.shape.dims.begin();
  for (std::size_t i = 0, next = 0; i < in.shape.rank() + axes.size(); ++i) {
    const bool inserted = next < axes.size() && axes[next] == static_cast<int64_t>(i);
    out.shape.dims.push_back(inserted ? ir::Dim::known(1) : *next_input++);
    next += inserted ? 1 : 0;
  }
  return InferResult{{out}, {}};
}

}  // namespace

OpDef unsqueeze_op() {
  return OpDef{ir::OpKind::kUnsqueeze, "Unsqueeze", true, 1, {{1, "axes", 13, false}},
               canonicalize, infer, copy_kernel, no_cost_features};
}

}  // namespace graphsub::ops
