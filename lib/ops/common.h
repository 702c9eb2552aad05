// Helpers shared by operator definitions: axes, broadcasting, dtype checks, default cost features.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace graphsub::ops {

/// graphsub's fused `activation` attribute of Conv and MatMul ("none" on import): the function
/// applied after the bias and any residual or summand input.
enum class Activation { kNone, kRelu, kSigmoid, kTanh };

/// The activation named "none", "relu", "sigmoid" or "tanh"; nullopt for any other name.
std::optional<Activation> parse_activation(const std::string& name);

/// Maps a possibly negative axis into [0, rank); nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

/// Numpy-style broadcast of two shapes; symbolic dims broadcast against 1 and against an equal
/// symbol. Sets `error` and returns an unknown shape on a mismatch.
ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, std::string& error);

/// Static sizes of the broadcast result (for kernels); both inputs must be broadcast-compatible.
std::vector<int64_t> broadcast_sizes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

/// Row-major strides of `sizes`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& sizes);

/// For an output of `out_sizes` broadcast from an input of `in_sizes` (right-aligned), the input
/// strides to use per output axis (0 along broadcast axes).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_sizes,
                                       const std::vector<int64_t>& out_sizes);

/// Element count with symbolic or unknown dims counted as 1 (cost features only).
double elements_or_one(const ir::TensorType& type);
/// Bytes of a tensor of that type, with symbolic dims counted as 1.
double bytes_or_one(const ir::TensorType& type);

/// Default cost features: `flops_per_element` per output element, every input read, every output
/// written once.
CostFeatures elementwise_features(const std::vector<ir::TensorType>& inputs,
                                  const std::vector<ir::TensorType>& outputs,
                                  double flops_per_element);

/// Empty when every input with a known dtype is one of `allowed`; else the reason for canonicalize.
std::string require_dtypes(const ImportContext& context, const std::vector<ir::DataType>& allowed);

/// Empty when the node declares `expected` outputs; else the reason for canonicalize.
std::string require_outputs(const ImportContext& context, int expected);

/// Calls `body(T{})`, T the C++ element type of a floating-point `dtype` (float or double), and
/// returns its result: a kernel is written once as a generic lambda over T. Any other type throws
/// std::invalid_argument (inference rejects it first; this is the kernel's guard).
template <class Body>
auto dispatch_floating(ir::DataType dtype, Body&& body) {
  switch (dtype) {
    case ir::DataType::kFloat: return body(float{});
    case ir::DataType::kDouble: return body(double{});
    default: throw std::invalid_argument("no kernel for element type " + ir::to_string(dtype));
  }
}

/// As dispatch_floating, over the numeric types the arithmetic kernels support: float, double,
/// int32_t and int64_t.
template <class Body>
auto dispatch_numeric(ir::DataType dtype, Body&& body) {
  switch (dtype) {
    case ir::DataType::kInt32: return body(int32_t{});
    case ir::DataType::kInt64: return body(int64_t{});
    default: return dispatch_floating(dtype, body);
  }
}

}  // namespace graphsub::ops
