// TASO's constant tensors (float32, no inputs): identity conv kernel, identity matrix, ones, pool kernel.
#include <algorithm>

#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

std::string canonicalize(ImportContext&) { return "not an ONNX operator"; }

InferResult float_constant(std::vector<int64_t> dims) {
  return InferResult{{ir::TensorType{ir::DataType::kFloat, ir::Shape::of(dims)}}, {}};
}

bool all_positive(const std::vector<int64_t>& values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v > 0; });
}

/// The `channels` and `kernel_shape` of ConstIdentityConv and ConstPool.
struct KernelAttributes {
  int64_t channels;
  std::vector<int64_t> kernel_shape;

  static KernelAttributes from(const ir::Attributes& attrs) {
    return {attrs.get_int("channels", 0), attrs.get_ints("kernel_shape", {})};
  }
  std::string check() const {
    if (channels < 1) return "channels must be positive";
    if (kernel_shape.empty() || !all_positive(kernel_shape))
      return "kernel_shape must be a positive size list";
    return {};
  }
  int64_t kernel_block() const { return ir::num_elements(kernel_shape); }
};

/// ConstIdentityConv: [C, C, k...] with 1 at [c, c, centre]; a conv with it is the identity (TASO
/// I_conv), so kernel_shape must be odd.
InferResult infer_identity_conv(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (!inputs.empty()) return InferResult::failure("a constant takes no inputs");
  const KernelAttributes attrs = KernelAttributes::from(node.attrs);
  if (std::string error = attrs.check(); !error.empty()) return InferResult::failure(error);
  for (int64_t size : attrs.kernel_shape) {
    if (size % 2 == 0) return InferResult::failure("kernel_shape must be odd to have a centre");
  }
  std::vector<int64_t> dims{attrs.channels, attrs.channels};
  dims.insert(dims.end(), attrs.kernel_shape.begin(), attrs.kernel_shape.end());
  return float_constant(dims);
}

void identity_conv_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>&,
                          std::vector<ir::Tensor>& outputs) {
  const KernelAttributes attrs = KernelAttributes::from(node.attrs);
  // The centre's offset in one kernel block is the row-major index of (k0/2, k1/2, ...).
  int64_t centre = 0;
  for (int64_t size : attrs.kernel_shape) centre = centre * size + size / 2;
  for (int64_t c = 0; c < attrs.channels; ++c) {
    outputs[0].mutable_data<float>()[(c * attrs.channels + c) * attrs.kernel_block() + centre] = 1.0f;
  }
}

/// ConstIdentityMatrix: the [n, n] identity, n = `size`.
InferResult infer_identity_matrix(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (!inputs.empty()) return InferResult::failure("a constant takes no inputs");
  const int64_t size = node.attrs.get_int("size", 0);
  if (size < 1) return InferResult::failure("size must be positive");
  return float_constant({size, size});
}

void identity_matrix_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>&,
                            std::vector<ir::Tensor>& outputs) {
  const int64_t size = node.attrs.get_int("size", 0);
  for (int64_t i = 0; i < size; ++i) outputs[0].mutable_data<float>()[i * size + i] = 1.0f;
}

/// ConstOnes: all ones of the given `shape` (TASO I_ewmul, the identity of element-wise Mul).
InferResult infer_ones(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (!inputs.empty()) return InferResult::failure("a constant takes no inputs");
  const std::vector<int64_t> shape = node.attrs.get_ints("shape", {});
  if (!all_positive(shape)) return InferResult::failure("shape must be positive sizes");
  return float_constant(shape);
}

void ones_kernel(const ir::Node&, const std::vector<const ir::Tensor*>&, std::vector<ir::Tensor>& outputs) {
  float* out = outputs[0].mutable_data<float>();
  std::fill(out, out + outputs[0].num_elements(), 1.0f);
}

/// ConstPool: [C, 1, k...] filled with 1 / prod(k); a depthwise conv (group C) with it is an
/// AveragePool with count_include_pad (TASO C_pool).
InferResult infer_pool(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (!inputs.empty()) return InferResult::failure("a constant takes no inputs");
  const KernelAttributes attrs = KernelAttributes::from(node.attrs);
  if (std::string error = attrs.check(); !error.empty()) return InferResult::failure(error);
  std::vector<int64_t> dims{attrs.channels, 1};
  dims.insert(dims.end(), attrs.kernel_shape.begin(), attrs.kernel_shape.end());
  return float_constant(dims);
}

void pool_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>&,
                 std::vector<ir::Tensor>& outputs) {
  const float weight = 1.0f / static_cast<float>(KernelAttributes::from(node.attrs).kernel_block());
  float* out = outputs[0].mutable_data<float>();
  std::fill(out, out + outputs[0].num_elements(), weight);
}

/// Producing a constant only writes it.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 0);
}

}  // namespace

OpDef const_identity_conv_op() {
  return OpDef{ir::OpKind::kConstIdentityConv,
               "ConstIdentityConv",
               false,
               1,
               {},
               canonicalize,
               infer_identity_conv,
               identity_conv_kernel,
               features};
}

OpDef const_identity_matrix_op() {
  return OpDef{ir::OpKind::kConstIdentityMatrix,
               "ConstIdentityMatrix",
               false,
               1,
               {},
               canonicalize,
               infer_identity_matrix,
               identity_matrix_kernel,
               features};
}

OpDef const_ones_op() {
  return OpDef{ir::OpKind::kConstOnes, "ConstOnes", false,       1,       {},
               canonicalize,           infer_ones,  ones_kernel, features};
}

OpDef const_pool_op() {
  return OpDef{ir::OpKind::kConstPool, "ConstPool", false,       1,       {},
               canonicalize,           infer_pool,  pool_kernel, features};
}

}  // namespace graphsub::ops
