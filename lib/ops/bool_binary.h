// Shared parts of the broadcasting binary ops with a bool result: Equal, Less, Greater, And, Or.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/strided_offset.h"

namespace graphsub::ops {

/// Empty when the node is the opset-7+ form (no legacy broadcast attributes) with two operands of
/// one element type among `allowed` and one output; else the reason it stays opaque.
std::string canonicalize_bool_binary(const ImportContext& context,
                                     const std::vector<ir::DataType>& allowed);

/// A bool tensor of the operands' broadcast shape (symbols kept); the operands must share an
/// element type among `allowed`.
InferResult infer_bool_binary(const std::vector<ir::TensorType>& inputs,
                              const std::vector<ir::DataType>& allowed);

/// out = fn(a, b) over the broadcast of `a` and `b` (elements of type T), stored as bool bytes 0/1.
template <class T, class Fn>
void broadcast_predicate(const ir::Tensor& a, const ir::Tensor& b, ir::Tensor& out, Fn fn) {
  const std::vector<int64_t>& sizes = out.dims();
  const std::vector<int64_t> strides_a = broadcast_strides(a.dims(), sizes);
  const std::vector<int64_t> strides_b = broadcast_strides(b.dims(), sizes);
  uint8_t* out_data = out.mutable_data<uint8_t>();
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const T lhs = a.data<T>()[strided_offset(i, sizes, strides_a)];
    const T rhs = b.data<T>()[strided_offset(i, sizes, strides_b)];
    out_data[i] = fn(lhs, rhs) ? 1 : 0;
  }
}

/// One operation per output element; both operands read, the output written.
CostFeatures bool_binary_features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                                  const std::vector<ir::TensorType>& outputs);

}  // namespace graphsub::ops
