// SMul: TASO's scalar multiply, y = x * s where s holds exactly one element (graphsub's own op).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

std::string canonicalize(ImportContext&) { return "not an ONNX operator"; }

/// Empty when `scalar` may hold one element and does not outrank `x`. Every dim must be 1; an
/// unknown dim or rank is accepted, a symbolic dim is not (it names a size free to vary).
std::string check_scalar(const ir::Shape& scalar, const ir::Shape& x) {
  if (!scalar.rank_known) return {};
  if (x.rank_known && scalar.rank() > x.rank()) return "the scalar outranks the tensor";
  for (const ir::Dim& dim : scalar.dims) {
    const bool unknown = !dim.is_known() && !dim.is_symbolic();
    if (!unknown && dim.value != 1) return "the scalar has shape " + ir::to_string(scalar);
  }
  return {};
}

InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("expects 2 inputs");
  const DataType dtype = inputs[0].dtype;
  if (dtype != DataType::kFloat && dtype != DataType::kDouble && dtype != DataType::kUndefined) {
    return InferResult::failure("no kernel for element type " + ir::to_string(dtype));
  }
  if (inputs[1].dtype != dtype && inputs[1].dtype != DataType::kUndefined &&
      dtype != DataType::kUndefined) {
    return InferResult::failure("element types differ");
  }
  if (std::string error = check_scalar(inputs[1].shape, inputs[0].shape); !error.empty()) {
    return InferResult::failure(error);
  }
  return InferResult{{inputs[0]}, {}};
}

template <class T>
void scale(const ir::Tensor& x, const ir::Tensor& scalar, ir::Tensor& y) {
  const T s = scalar.data<T>()[0];
  const T* in = x.data<T>();
  T* out = y.mutable_data<T>();
  for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = in[i] * s;
}

void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  if (inputs[0]->dtype() == DataType::kDouble) {
    scale<double>(*inputs[0], *inputs[1], outputs[0]);
  } else {
    scale<float>(*inputs[0], *inputs[1], outputs[0]);
  }
}

/// One multiply per element of x.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

}  // namespace

OpDef s_mul_op() {
  return OpDef{ir::OpKind::kSMul, "SMul", false, 1, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
