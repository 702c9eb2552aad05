// Test helpers that drive one OpDef directly (canonicalize, infer, kernel), without the registry,
// and build the types and tensors those tests feed it.
#pragma once

#include <catch2/catch.hpp>

#include <cctype>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op_def.h"

namespace graphsub::testing {

/// A type from dim texts: a number is a size, "?" unknown, anything else a symbol.
inline ir::TensorType type_of(ir::DataType dtype, const std::vector<std::string>& dims) {
  ir::Shape shape{true, {}};
  for (const std::string& dim : dims) {
    if (dim == "?") {
      shape.dims.push_back(ir::Dim{});
    } else if (std::isdigit(static_cast<unsigned char>(dim[0]))) {
      shape.dims.push_back(ir::Dim::known(std::stoll(dim)));
    } else {
      shape.dims.push_back(ir::Dim::named(dim));
    }
  }
  return {dtype, shape};
}

/// A float32 type from dim texts, as in `type_of`: floats({"N", "3", "?"}).
inline ir::TensorType floats(const std::vector<std::string>& dims) {
  return type_of(ir::DataType::kFloat, dims);
}

/// An int64 type from dim texts, as in `type_of`.
inline ir::TensorType int64s(const std::vector<std::string>& dims) {
  return type_of(ir::DataType::kInt64, dims);
}

/// A float32 type of unknown rank.
inline const ir::TensorType kUnknownRank{ir::DataType::kFloat, ir::Shape::unknown()};

/// A type of static sizes and any element type.
inline ir::TensorType typed(ir::DataType dtype, const std::vector<int64_t>& dims) {
  return {dtype, ir::Shape::of(dims)};
}

/// A tensor of `dtype` and `dims` whose elements, stored as C++ type T, are `values` (which may be
/// shorter than the tensor: the rest stay zero).
template <class T>
ir::Tensor tensor_of(ir::DataType dtype, std::vector<int64_t> dims, const std::vector<T>& values) {
  ir::Tensor tensor(dtype, std::move(dims));
  for (std::size_t i = 0; i < values.size(); ++i) tensor.mutable_data<T>()[i] = values[i];
  return tensor;
}

/// A bool tensor from 0/1 bytes.
inline ir::Tensor bool_tensor(std::vector<int64_t> dims, const std::vector<uint8_t>& values) {
  return tensor_of<uint8_t>(ir::DataType::kBool, std::move(dims), values);
}

/// An int32 tensor.
inline ir::Tensor int32_tensor(std::vector<int64_t> dims, const std::vector<int32_t>& values) {
  return tensor_of<int32_t>(ir::DataType::kInt32, std::move(dims), values);
}

/// An int64 tensor of the given sizes with values uniform in [-500, 500), seeded.
inline ir::Tensor random_int64s(const std::vector<int64_t>& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(-500, 499);
  std::vector<int64_t> values(static_cast<std::size_t>(ir::num_elements(dims)));
  for (int64_t& value : values) value = dist(rng);
  return ir::Tensor::from_int64s(dims, values);
}

/// The elements of a bool tensor as 0/1 values; fails the test when the tensor is not bool.
inline std::vector<int> bool_values(const ir::Tensor& tensor) {
  REQUIRE(tensor.dtype() == ir::DataType::kBool);
  const uint8_t* data = tensor.data<uint8_t>();
  return std::vector<int>(data, data + tensor.num_elements());
}

/// What canonicalize made of an imported node: the reason it stays opaque (empty when modelled)
/// and the canonical attributes.
struct Canonicalized {
  std::string reason;
  ir::Attributes attrs;
};

/// Runs `def.canonicalize` on ONNX attributes and input types, as import would, rewriting `attrs`
/// into canonical form; returns the reason the node stays opaque (empty when modelled).
inline std::string canonicalize_in_place(const ops::OpDef& def, ir::Attributes& attrs,
                                         const std::vector<ir::TensorType>& input_types,
                                         int num_outputs = 1, int64_t opset = 17) {
  ops::ImportContext context{attrs, input_types, num_outputs, opset};
  return def.canonicalize(context);
}

/// Runs `def.canonicalize` on ONNX attributes and input types, as import would.
inline Canonicalized canonicalize_def(const ops::OpDef& def, ir::Attributes attrs,
                                      const std::vector<ir::TensorType>& input_types, int num_outputs = 1,
                                      int64_t opset = 17) {
  std::string reason = canonicalize_in_place(def, attrs, input_types, num_outputs, opset);
  return {reason, attrs};
}

/// A bare node of the def's kind, as the executor builds it.
inline ir::Node node_of(const ops::OpDef& def, const ir::Attributes& attrs) {
  ir::Node node;
  node.op = def.kind;
  node.attrs = attrs;
  return node;
}

/// Runs `def.infer` on a bare node.
inline ops::InferResult infer_def(const ops::OpDef& def, const ir::Attributes& attrs,
                                  const std::vector<ir::TensorType>& inputs) {
  return def.infer(node_of(def, attrs), inputs);
}

/// The output types `def.infer` gives, as text separated by spaces ("float32[N,3]"), or "error: "
/// and the reason: one string a test can compare.
inline std::string infer_text(const ops::OpDef& def, const ir::Attributes& attrs,
                              const std::vector<ir::TensorType>& inputs) {
  const ops::InferResult result = infer_def(def, attrs, inputs);
  if (!result.ok()) return "error: " + result.error;
  std::string text;
  for (const ir::TensorType& type : result.outputs) {
    text += (text.empty() ? "" : " ") + ir::to_string(type);
  }
  return text;
}

/// Runs the def's kernel the way the executor does: infer the output types from the tensors,
/// allocate, compute. Throws when inference rejects the inputs.
inline std::vector<ir::Tensor> run_def(const ops::OpDef& def, const ir::Attributes& attrs,
                                       const std::vector<const ir::Tensor*>& inputs) {
  const ir::Node node = node_of(def, attrs);
  std::vector<ir::TensorType> types;
  for (const ir::Tensor* input : inputs) {
    types.push_back(input ? ir::TensorType{input->dtype(), ir::Shape::of(input->dims())} : ir::TensorType{});
  }
  const ops::InferResult inferred = def.infer(node, types);
  if (!inferred.ok()) throw std::runtime_error("shape inference failed: " + inferred.error);
  std::vector<ir::Tensor> outputs;
  for (const ir::TensorType& type : inferred.outputs) outputs.emplace_back(type.dtype, *type.shape.sizes());
  def.kernel(node, inputs, outputs);
  return outputs;
}

}  // namespace graphsub::testing
