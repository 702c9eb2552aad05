// Expand: broadcasts a tensor to a shape given at run time (ONNX Expand, opsets 8 and 13).
#include <algorithm>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

std::string canonicalize(ImportContext& context) {
  std::string reason =
      first_reason({check_attributes(context.attrs, {}), require_inputs(context, 2),
                    require_outputs(context, 1), reject_strings(context)});
  return reason.empty() ? shape_operand_error(context.input_types[1]) : reason;
}

/// The output rank is the larger of the input's and the shape operand's length; a dim is certain
/// only where the input's is a size other than 1 (the shape may hold 1 or that size there).
InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("Expand takes data and a shape");
  if (std::string error = shape_operand_error(inputs[1]); !error.empty()) {
    return InferResult::failure(error);
  }
  const ir::Shape& in = inputs[0].shape;
  const ir::Dim length = inputs[1].shape.rank_known ? inputs[1].shape.dims[0] : ir::Dim{};
  if (!in.rank_known || !length.is_known()) {
    return InferResult{{ir::TensorType{inputs[0].dtype, ir::Shape::unknown()}}, {}};
  }
  const std::size_t rank = std::max(in.rank(), static_cast<std::size_t>(length.value));
  ir::Shape out{true, std::vector<ir::Dim>(rank)};
  for (std::size_t i = 0; i < in.rank(); ++i) {
    const ir::Dim& dim = in.dims[i];
    if (dim.is_known() && dim.value != 1) out.dims[rank - in.rank() + i] = dim;
  }
  return InferResult{{ir::TensorType{inputs[0].dtype, out}}, {}};
}

/// The broadcast of the input's sizes and the requested shape; throws when they do not broadcast.
std::vector<int64_t> expanded_sizes(const std::vector<int64_t>& in,
                                    const std::vector<int64_t>& shape) {
  bool fits = std::all_of(shape.begin(), shape.end(), [](int64_t size) { return size >= 0; });
  for (std::size_t i = 1; fits && i <= std::min(in.size(), shape.size()); ++i) {
    const int64_t a = in[in.size() - i];
    const int64_t b = shape[shape.size() - i];
    fits = a == b || a == 1 || b == 1;
  }
  if (!fits) {
    throw Error("Expand: " + ir::to_string(ir::Shape::of(in)) + " does not broadcast to " +
                ir::to_string(ir::AttrValue{shape}));
  }
  return broadcast_sizes(in, shape);
}

/// Allocates the output from the shape operand's values; along each axis the input's coordinate
/// is the output's, or 0 where the input has size 1.
void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& input = *inputs[0];
  const std::vector<int64_t> sizes = expanded_sizes(input.dims(), inputs[1]->to_int64s());
  outputs[0] = ir::Tensor(input.dtype(), sizes);
  const std::size_t offset = sizes.size() - input.rank();
  AxisMaps maps;
  for (std::size_t axis = 0; axis < sizes.size(); ++axis) {
    const bool repeats = axis < offset || input.dims()[axis - offset] == 1;
    maps.push_back(repeats ? std::vector<int64_t>(static_cast<std::size_t>(sizes[axis]), 0)
                           : identity_map(sizes[axis]));
  }
  copy_mapped(input, maps, nullptr, outputs[0]);
}

}  // namespace

OpDef expand_op() {
  return OpDef{ir::OpKind::kExpand, "Expand", true, 8, {},
               canonicalize, infer, kernel, copy_features};
}

}  // namespace graphsub::ops
