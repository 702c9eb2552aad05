// Enlarge (TASO): zero-pads a convolution kernel W [M, C, k...] to kernel_shape, centred.
#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

std::string canonicalize(ImportContext&) { return "not an ONNX operator"; }

/// Checks W's size along one kernel axis against its enlarged size; an unknown size passes.
std::string check_axis(const ir::Dim& size, int64_t target) {
  if (!size.is_known()) return {};
  if (size.value > target) return "kernel_shape is smaller than W";
  if ((target - size.value) % 2 != 0) return "kernel_shape must grow W by an even amount per axis";
  return {};
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Enlarge takes one kernel W");
  const std::vector<int64_t> target = node.attrs.get_ints("kernel_shape", {});
  if (target.empty()) return InferResult::failure("kernel_shape is missing");
  const ir::Shape& weight = inputs[0].shape;
  if (weight.rank_known && weight.rank() != target.size() + 2) {
    return InferResult::failure("W " + ir::to_string(weight) + " does not fit kernel_shape");
  }
  ir::Shape shape{true, {ir::Dim{}, ir::Dim{}}};
  if (weight.rank_known) shape.dims = {weight.dims[0], weight.dims[1]};
  for (std::size_t axis = 0; axis < target.size(); ++axis) {
    const ir::Dim size = weight.rank_known ? weight.dims[axis + 2] : ir::Dim{};
    if (std::string error = check_axis(size, target[axis]); !error.empty())
      return InferResult::failure(error);
    shape.dims.push_back(ir::Dim::known(target[axis]));
  }
  return InferResult{{ir::TensorType{inputs[0].dtype, std::move(shape)}}, {}};
}

/// Copies every element of W to its place shifted by half the growth of each kernel axis; the
/// output arrives zero-filled.
void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs, std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& weight = *inputs[0];
  ir::Tensor& out = outputs[0];
  const std::vector<int64_t> from_strides = strides_of(weight.dims());
  const std::vector<int64_t> to_strides = strides_of(out.dims());
  for (int64_t i = 0; i < weight.num_elements(); ++i) {
    int64_t target = 0;
    for (std::size_t axis = 0; axis < weight.rank(); ++axis) {
      const int64_t shift = (out.dims()[axis] - weight.dims()[axis]) / 2;
      target += (i / from_strides[axis] % weight.dims()[axis] + shift) * to_strides[axis];
    }
    out.mutable_data<float>()[target] = weight.data<float>()[i];
  }
}

CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 0);
}

}  // namespace

OpDef enlarge_op() {
  return OpDef{ir::OpKind::kEnlarge, "Enlarge", false, 1, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
