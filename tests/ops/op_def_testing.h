// Test helpers that drive one OpDef directly (canonicalize, infer, kernel), without the registry.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op_def.h"

namespace graphsub::testing {

/// What canonicalize made of an imported node: the reason it stays opaque (empty when modelled)
/// and the canonical attributes.
struct Canonicalized {
  std::string reason;
  ir::Attributes attrs;
};

/// Runs `def.canonicalize` on ONNX attributes and input types, as import would.
inline Canonicalized canonicalize_def(const ops::OpDef& def, ir::Attributes attrs,
                                      const std::vector<ir::TensorType>& input_types, int num_outputs = 1,
                                      int64_t opset = 17) {
  ops::ImportContext context{attrs, input_types, num_outputs, opset};
  std::string reason = def.canonicalize(context);
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
