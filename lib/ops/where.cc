// Where: picks from X where the condition holds and from Y elsewhere, with numpy broadcasting of
// all three (ONNX Where, opsets 9 and 16).
#include <cstring>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when the condition is bool and X and Y share a type (as far as they are known).
std::string operand_error(const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 3) return "Where takes a condition, X and Y";
  const ir::DataType condition = inputs[0].dtype;
  if (condition != ir::DataType::kUndefined && condition != ir::DataType::kBool) {
    return "the condition must be bool";
  }
  const ir::DataType x = inputs[1].dtype;
  const ir::DataType y = inputs[2].dtype;
  if (x != y && x != ir::DataType::kUndefined && y != ir::DataType::kUndefined) {
    return "X and Y differ in type";
  }
  return {};
}

std::string canonicalize(ImportContext& context) {
  return first_reason({check_attributes(context.attrs, {}), require_outputs(context, 1),
                       reject_strings(context), operand_error(context.input_types)});
}

/// The broadcast of the three shapes, typed as X.
InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (std::string error = operand_error(inputs); !error.empty()) return InferResult::failure(error);
  std::string error;
  ir::Shape shape = broadcast_shapes(inputs[0].shape, inputs[1].shape, error);
  if (error.empty()) shape = broadcast_shapes(shape, inputs[2].shape, error);
  if (!error.empty()) return InferResult::failure(error);
  const ir::DataType x = inputs[1].dtype;
  const ir::DataType dtype = x != ir::DataType::kUndefined ? x : inputs[2].dtype;
  return InferResult{{ir::TensorType{dtype, shape}}, {}};
}

/// Steps a row-major index over `sizes` by one, moving each operand's offset along its strides.
void advance(std::vector<int64_t>& index, std::vector<int64_t>& offsets,
             const std::vector<int64_t>& sizes, const std::vector<std::vector<int64_t>>& strides) {
  for (std::size_t axis = sizes.size(); axis-- > 0;) {
    for (std::size_t k = 0; k < offsets.size(); ++k) offsets[k] += strides[k][axis];
    if (++index[axis] < sizes[axis]) return;
    for (std::size_t k = 0; k < offsets.size(); ++k) offsets[k] -= strides[k][axis] * sizes[axis];
    index[axis] = 0;
  }
}

/// Walks the output in row-major order with each operand's offset along its broadcast strides.
void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  ir::Tensor& out = outputs[0];
  std::vector<std::vector<int64_t>> strides;
  for (const ir::Tensor* input : inputs) {
    strides.push_back(broadcast_strides(input->dims(), out.dims()));
  }
  const auto size = static_cast<int64_t>(ir::element_size(out.dtype()));
  std::vector<int64_t> index(out.rank(), 0);
  std::vector<int64_t> offsets(inputs.size(), 0);
  for (int64_t i = 0; i < out.num_elements(); ++i, advance(index, offsets, out.dims(), strides)) {
    const bool pick_x = inputs[0]->data<uint8_t>()[offsets[0]] != 0;
    const std::byte* from = pick_x ? inputs[1]->bytes() + offsets[1] * size
                                   : inputs[2]->bytes() + offsets[2] * size;
    std::memcpy(out.mutable_bytes() + i * size, from, static_cast<std::size_t>(size));
  }
}

/// One selection per output element.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

}  // namespace

OpDef where_op() {
  return OpDef{ir::OpKind::kWhere, "Where", true, 9, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
