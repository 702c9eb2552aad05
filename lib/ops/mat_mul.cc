// MatMul: numpy matrix product (1-D operands promoted, batch dimensions broadcast), with graphsub's
// fused epilogue, an optional summand C and an `activation` (cuBLASLt's bias and ReLU epilogues,
// onnxruntime's FusedGemm).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/matrix_kernel.h"
#include "ops/op_list.h"
#include "ops/strided_offset.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// The node's activation; absent reads as "none", so a node built without canonicalize is a plain
/// product.
std::optional<Activation> activation_of(const ir::Node& node) {
  return parse_activation(node.attrs.get_string("activation", "none"));
}

/// Empty when A, B and C (when present) share one element type.
std::string check_same_dtypes(const std::vector<ir::TensorType>& inputs) {
  for (const ir::TensorType& input : inputs) {
    if (input.dtype != inputs[0].dtype) return "mixed element types";
  }
  return {};
}

/// C (input 2) is graphsub's own: ONNX's checker refuses a 3-input MatMul before import gets here,
/// so only a rule's target carries one.
std::string canonicalize(ImportContext& context) {
  const std::size_t count = context.input_types.size();
  if (count < 2 || count > 3) return "MatMul takes A, B and an optional C";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  if (std::string reason = check_same_dtypes(context.input_types); !reason.empty()) return reason;
  if (std::string reason = require_dtypes(context, {DataType::kFloat, DataType::kDouble}); !reason.empty()) {
    return reason;
  }
  const std::string activation = context.attrs.get_string("activation", "none");
  if (!parse_activation(activation)) return "unknown activation " + activation;
  context.attrs.set("activation", activation);
  return {};
}

/// The leading (batch) dimensions of a shape of rank >= 2, as a shape; rank 0 otherwise.
ir::Shape batch_of(const ir::Shape& shape) {
  ir::Shape batch;
  batch.rank_known = true;
  if (shape.rank() > 2) batch.dims.assign(shape.dims.begin(), shape.dims.end() - 2);
  return batch;
}

/// Empty when the element types agree (or one is unknown) and have a kernel.
std::string dtype_error(DataType a, DataType b) {
  if (a != b && a != DataType::kUndefined && b != DataType::kUndefined) {
    return "element types " + ir::to_string(a) + " and " + ir::to_string(b) + " differ";
  }
  const DataType dtype = a != DataType::kUndefined ? a : b;
  if (dtype == DataType::kFloat || dtype == DataType::kDouble || dtype == DataType::kUndefined) {
    return {};
  }
  return "no kernel for element type " + ir::to_string(dtype);
}

/// [..., M, K] x [..., K, N] -> [broadcast(...), M, N]; a 1-D left operand has no M, a 1-D right
/// operand no N.
InferResult infer_product(const std::vector<ir::TensorType>& inputs) {
  if (std::string error = dtype_error(inputs[0].dtype, inputs[1].dtype); !error.empty()) {
    return InferResult::failure(error);
  }
  const DataType dtype =
      inputs[0].dtype != DataType::kUndefined ? inputs[0].dtype : inputs[1].dtype;
  const ir::Shape& a = inputs[0].shape;
  const ir::Shape& b = inputs[1].shape;
  if (!a.rank_known || !b.rank_known) return InferResult{{ir::TensorType{dtype, {}}}, {}};
  if (a.rank() == 0 || b.rank() == 0) return InferResult::failure("MatMul of a scalar");
  const ir::Dim& k_a = a.dims.back();
  const ir::Dim& k_b = b.rank() == 1 ? b.dims[0] : b.dims[b.rank() - 2];
  if (k_a.is_known() && k_b.is_known() && k_a.value != k_b.value) {
    return InferResult::failure("inner dimensions of " + ir::to_string(a) + " and " +
                                ir::to_string(b) + " differ");
  }
  std::string error;
  ir::Shape out = broadcast_shapes(batch_of(a), batch_of(b), error);
  if (!error.empty()) return InferResult::failure(error);
  if (a.rank() >= 2) out.dims.push_back(a.dims[a.rank() - 2]);
  if (b.rank() >= 2) out.dims.push_back(b.dims.back());
  return InferResult{{ir::TensorType{dtype, out}}, {}};
}

/// C is added to the product broadcast one way, as a bias is: it may not change the product's
/// shape, so the fused node has the product's type.
std::string check_summand(const ir::TensorType& summand, const ir::TensorType& product) {
  if (std::string error = dtype_error(summand.dtype, product.dtype); !error.empty()) return "C: " + error;
  std::string error;
  const ir::Shape shape = broadcast_shapes(product.shape, summand.shape, error);
  if (!error.empty()) return error;
  if (product.shape.rank_known && summand.shape.rank_known && shape != product.shape) {
    return "C " + ir::to_string(summand.shape) + " would broadcast the product " +
           ir::to_string(product.shape) + " to " + ir::to_string(shape);
  }
  return {};
}

/// The product's type; C, when present, must broadcast to it.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() < 2 || inputs.size() > 3) {
    return InferResult::failure("MatMul takes A, B and an optional C");
  }
  if (!activation_of(node)) return InferResult::failure("unknown activation");
  InferResult result = infer_product(inputs);
  if (!result.ok() || inputs.size() < 3) return result;
  if (std::string error = check_summand(inputs[2], result.outputs[0]); !error.empty()) {
    return InferResult::failure(error);
  }
  return result;
}

/// The sizes of an operand as a stack of matrices: a 1-D left operand is a row, a 1-D right one a
/// column.
std::vector<int64_t> as_matrices(const std::vector<int64_t>& dims, bool is_left) {
  if (dims.size() != 1) return dims;
  return is_left ? std::vector<int64_t>{1, dims[0]} : std::vector<int64_t>{dims[0], 1};
}

std::vector<int64_t> batch_sizes(const std::vector<int64_t>& matrices) {
  return {matrices.begin(), matrices.end() - 2};
}

template <class T>
void mat_mul(const ir::Tensor& a, const ir::Tensor& b, ir::Tensor& out) {
  const std::vector<int64_t> a_dims = as_matrices(a.dims(), true);
  const std::vector<int64_t> b_dims = as_matrices(b.dims(), false);
  const int64_t m = a_dims[a_dims.size() - 2];
  const int64_t k = a_dims.back();
  const int64_t n = b_dims.back();
  const std::vector<int64_t> batch = broadcast_sizes(batch_sizes(a_dims), batch_sizes(b_dims));
  // Strides in whole matrices; 0 along the batch axes an operand broadcasts.
  const std::vector<int64_t> a_strides = broadcast_strides(batch_sizes(a_dims), batch);
  const std::vector<int64_t> b_strides = broadcast_strides(batch_sizes(b_dims), batch);
  const std::vector<int64_t> out_strides = strides_of(batch);
  for (int64_t index = 0; index < ir::num_elements(batch); ++index) {
    int64_t a_matrix = 0;
    int64_t b_matrix = 0;
    for (std::size_t axis = 0; axis < batch.size(); ++axis) {
      const int64_t position = index / out_strides[axis] % batch[axis];
      a_matrix += position * a_strides[axis];
      b_matrix += position * b_strides[axis];
    }
    multiply_matrices<T>({m, n, k}, {a.data<T>() + a_matrix * m * k, k}, {b.data<T>() + b_matrix * k * n, n},
                         out.mutable_data<T>() + index * m * n, n, false);
  }
}

/// out += C, C broadcast to out's shape: after the product, so the sum is bit for bit what MatMul
/// followed by Add computes.
template <class T>
void add_summand(const ir::Tensor& summand, ir::Tensor& out) {
  const std::vector<int64_t>& sizes = out.dims();
  const std::vector<int64_t> strides = broadcast_strides(summand.dims(), sizes);
  const T* c = summand.data<T>();
  T* y = out.mutable_data<T>();
  for (int64_t i = 0; i < out.num_elements(); ++i) y[i] += c[strided_offset(i, sizes, strides)];
}

/// Applies the activation in place, with the formulas of the Relu, Sigmoid and Tanh kernels.
template <class T>
void activate(Activation activation, ir::Tensor& out) {
  T* y = out.mutable_data<T>();
  const int64_t count = out.num_elements();
  switch (activation) {
    case Activation::kNone:
      return;
    case Activation::kRelu:
      for (int64_t i = 0; i < count; ++i) y[i] = y[i] > T{0} ? y[i] : T{0};
      return;
    case Activation::kSigmoid:
      for (int64_t i = 0; i < count; ++i) y[i] = T{1} / (T{1} + std::exp(-y[i]));
      return;
    case Activation::kTanh:
      for (int64_t i = 0; i < count; ++i) y[i] = std::tanh(y[i]);
      return;
  }
}

/// The product, then C, then the activation.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const Activation activation = *activation_of(node);
  dispatch_floating(inputs[0]->dtype(), [&](auto zero) {
    using T = decltype(zero);
    mat_mul<T>(*inputs[0], *inputs[1], outputs[0]);
    if (inputs.size() > 2 && inputs[2]) add_summand<T>(*inputs[2], outputs[0]);
    activate<T>(activation, outputs[0]);
  });
}

/// 2*M*N*K per batch: one multiply-add per output element and step of the inner dimension. C, when
/// present, is read in the same launch; the epilogue's additions are not counted, as Conv's bias.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  const ir::Shape& a = inputs[0].shape;
  const bool k_known = a.rank_known && a.rank() > 0 && a.dims.back().is_known();
  const double k = k_known ? static_cast<double>(a.dims.back().value) : 1.0;
  return elementwise_features(inputs, outputs, 2 * k);
}

}  // namespace

OpDef mat_mul_op() {
  return OpDef{ir::OpKind::kMatMul, "MatMul", true, 1, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
