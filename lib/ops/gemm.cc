// Gemm: Y = alpha * A' * B' + beta * C, with A' and B' optionally transposed and C broadcast to Y.
#include <cstdint>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/matrix_kernel.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Opset 7 dropped the legacy `broadcast` attribute; C broadcasts unidirectionally from then on.
constexpr int64_t kSinceOpset = 7;

/// True when a C input is present (omitted inputs arrive with an undefined type).
bool has_bias(const std::vector<ir::TensorType>& inputs) {
  return inputs.size() > 2 && inputs[2].dtype != DataType::kUndefined;
}

std::string check_signature(const ImportContext& context) {
  if (context.opset < kSinceOpset) return "Gemm before opset 7";
  const std::vector<ir::TensorType>& inputs = context.input_types;
  if (inputs.size() != 2 && inputs.size() != 3) return "expects 2 or 3 inputs";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  const bool bias_differs = has_bias(inputs) && inputs[2].dtype != inputs[0].dtype;
  if (inputs[0].dtype != inputs[1].dtype || bias_differs) return "mixed element types";
  return require_dtypes(context, {DataType::kFloat, DataType::kDouble});
}

/// Fills alpha (1.0), beta (1.0), transA (0) and transB (0).
std::string canonicalize(ImportContext& context) {
  if (std::string reason = check_signature(context); !reason.empty()) return reason;
  ir::Attributes& attrs = context.attrs;
  attrs.set("alpha", attrs.get_float("alpha", 1.0f));
  attrs.set("beta", attrs.get_float("beta", 1.0f));
  for (const char* name : {"transA", "transB"}) {
    const int64_t flag = attrs.get_int(name, 0);
    if (flag != 0 && flag != 1) return std::string(name) + " is neither 0 nor 1";
    attrs.set(name, flag);
  }
  return {};
}

/// Dimension `index` (0 or 1) of a matrix operand, read through its transpose flag; unknown when
/// the rank is.
ir::Dim matrix_dim(const ir::Shape& shape, bool transposed, int index) {
  if (!shape.rank_known) return ir::Dim{};
  return shape.dims[transposed ? 1 - index : index];
}

/// Empty when C broadcasts unidirectionally to [M, N].
std::string check_bias(const ir::Shape& bias, const ir::Dim& m, const ir::Dim& n) {
  if (!bias.rank_known) return {};
  if (bias.rank() > 2) return "C has rank " + std::to_string(bias.rank()) + ", more than 2";
  const std::vector<ir::Dim> target = {m, n};
  for (std::size_t i = 0; i < bias.rank(); ++i) {
    const ir::Dim& from = bias.dims[i];
    const ir::Dim& to = target[2 - bias.rank() + i];
    if (from.is_known() && from.value != 1 && to.is_known() && from.value != to.value) {
      return "C " + ir::to_string(bias) + " does not broadcast to the product";
    }
  }
  return {};
}

/// Empty when A, B and C share a float element type (or it is not known yet).
std::string dtype_error(const std::vector<ir::TensorType>& inputs) {
  const DataType dtype = inputs[0].dtype;
  if (dtype != DataType::kFloat && dtype != DataType::kDouble && dtype != DataType::kUndefined) {
    return "no kernel for element type " + ir::to_string(dtype);
  }
  const auto differs = [dtype](DataType other) {
    return dtype != DataType::kUndefined && other != DataType::kUndefined && other != dtype;
  };
  const bool bias_differs = has_bias(inputs) && differs(inputs[2].dtype);
  return differs(inputs[1].dtype) || bias_differs ? "element types differ" : "";
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2 && inputs.size() != 3) {
    return InferResult::failure("expects 2 or 3 inputs");
  }
  if (std::string error = dtype_error(inputs); !error.empty()) return InferResult::failure(error);
  const ir::Shape& a = inputs[0].shape;
  const ir::Shape& b = inputs[1].shape;
  if ((a.rank_known && a.rank() != 2) || (b.rank_known && b.rank() != 2)) {
    return InferResult::failure("A and B must be matrices");
  }
  const bool trans_a = node.attrs.get_int("transA", 0) != 0;
  const bool trans_b = node.attrs.get_int("transB", 0) != 0;
  const ir::Dim m = matrix_dim(a, trans_a, 0);
  const ir::Dim k_a = matrix_dim(a, trans_a, 1);
  const ir::Dim k_b = matrix_dim(b, trans_b, 0);
  const ir::Dim n = matrix_dim(b, trans_b, 1);
  if (k_a.is_known() && k_b.is_known() && k_a.value != k_b.value) {
    return InferResult::failure("inner dimensions " + std::to_string(k_a.value) + " and " +
                                std::to_string(k_b.value) + " differ");
  }
  if (has_bias(inputs)) {
    if (std::string error = check_bias(inputs[2].shape, m, n); !error.empty()) {
      return InferResult::failure(error);
    }
  }
  return InferResult{{ir::TensorType{inputs[0].dtype, ir::Shape{true, {m, n}}}}, {}};
}

/// y = alpha * y + beta * C, with C broadcast to y's [M, N]; y = alpha * y without C.
template <class T>
void scale_and_add_bias(T alpha, const ir::Tensor* bias, T beta, ir::Tensor& y) {
  T* out = y.mutable_data<T>();
  const int64_t m = y.dims()[0];
  const int64_t n = y.dims()[1];
  const std::vector<int64_t> strides =
      bias ? broadcast_strides(bias->dims(), y.dims()) : std::vector<int64_t>{0, 0};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const T added = bias ? beta * bias->data<T>()[i * strides[0] + j * strides[1]] : T{0};
      out[i * n + j] = alpha * out[i * n + j] + added;
    }
  }
}

/// A' as a view of A: a transposed operand is read through swapped strides.
template <class T>
MatrixView<T> operand_view(const ir::Tensor& tensor, bool transposed) {
  const int64_t cols = tensor.dims()[1];
  return transposed ? MatrixView<T>{tensor.data<T>(), 1, cols} : MatrixView<T>{tensor.data<T>(), cols, 1};
}

/// y = A' * B' by the shared matrix kernel, then scaled by alpha and C added.
template <class T>
void gemm(const ir::Attributes& attrs, const ir::Tensor& a, const ir::Tensor& b,
          const ir::Tensor* bias, ir::Tensor& y) {
  const bool trans_a = attrs.get_int("transA", 0) != 0;
  const bool trans_b = attrs.get_int("transB", 0) != 0;
  const int64_t m = y.dims()[0];
  const int64_t n = y.dims()[1];
  const int64_t k = a.dims()[trans_a ? 0 : 1];
  multiply_matrices<T>({m, n, k}, operand_view<T>(a, trans_a), operand_view<T>(b, trans_b),
                       y.mutable_data<T>(), n, false);
  scale_and_add_bias<T>(T(attrs.get_float("alpha", 1.0f)), bias, T(attrs.get_float("beta", 1.0f)), y);
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor* bias = inputs.size() > 2 ? inputs[2] : nullptr;
  if (inputs[0]->dtype() == DataType::kDouble) {
    gemm<double>(node.attrs, *inputs[0], *inputs[1], bias, outputs[0]);
  } else {
    gemm<float>(node.attrs, *inputs[0], *inputs[1], bias, outputs[0]);
  }
}

/// 2*M*N*K for the product, then per output element one FLOP for alpha and two for beta * C.
CostFeatures features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  const ir::Dim k = matrix_dim(inputs[0].shape, node.attrs.get_int("transA", 0) != 0, 1);
  const double k_or_one = k.is_known() ? static_cast<double>(k.value) : 1.0;
  const bool bias = has_bias(inputs);
  const std::vector<ir::TensorType> present(inputs.begin(), inputs.begin() + (bias ? 3 : 2));
  return elementwise_features(present, outputs, 2 * k_or_one + (bias ? 3 : 1));
}

}  // namespace

OpDef gemm_op() {
  return OpDef{ir::OpKind::kGemm, "Gemm", true, kSinceOpset, {}, canonicalize, infer, kernel,
               features};
}

}  // namespace graphsub::ops
