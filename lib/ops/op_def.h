// The one interface every operator implements: ONNX mapping, shape inference, reference kernel, cost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/graph.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace graphsub::ops {

/// The output types of a node, or why it is invalid.
struct InferResult {
  std::vector<ir::TensorType> outputs;
  std::string error;  ///< Empty on success.
  bool ok() const { return error.empty(); }
  static InferResult failure(std::string message) { return InferResult{{}, std::move(message)}; }
};

/// What `canonicalize` sees of an ONNX node being imported. Inputs listed in OpDef::attr_inputs
/// have already been read from constants into `attrs` and removed from `input_types` — or, in the
/// run-time form (`runtime_operands`), they are not constants and stay inputs of the node, absent
/// from `attrs` and from `input_types`.
struct ImportContext {
  ir::Attributes& attrs;                         ///< ONNX attributes; canonicalize fills defaults.
  const std::vector<ir::TensorType>& input_types;  ///< kUndefined dtype for an omitted input.
  int num_outputs;                               ///< Outputs the ONNX node declares (non-empty).
  int64_t opset;                                 ///< Version of the default ONNX domain.
  bool runtime_operands = false;                 ///< The attr_inputs are computed at run time.
};

/// An ONNX input read as a constant into an attribute (Reshape's shape, Squeeze's axes, ...).
struct AttrInput {
  int input_index;          ///< Position of the input in the ONNX node.
  const char* attr;         ///< Attribute it becomes in the IR.
  int64_t since_opset;      ///< From this opset on ONNX takes it as an input, before as an attribute.
  bool as_floats;           ///< Stored as a float list (Clip's min/max) instead of int64s.
};

/// Work a node does, for the cost model. Units: floating-point operations and bytes.
struct CostFeatures {
  double flops = 0;
  double bytes_read = 0;
  double bytes_written = 0;
};

/// Computes the outputs of a node from its input tensors. `outputs` arrive allocated with the
/// types that `infer` gave for these inputs, and the kernel fills them. Where an output's shape
/// depends on input values (Range, Expand or ConstantOfShape with a run-time shape, ...), infer
/// leaves dims unknown, the output arrives empty, and the kernel assigns it a new ir::Tensor.
using Kernel = void (*)(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                        std::vector<ir::Tensor>& outputs);

/// Everything graphsub knows about one operator kind. One instance per kind, listed in registry.cc.
struct OpDef {
  ir::OpKind kind;
  const char* name;         ///< ONNX op_type for ONNX ops, graphsub's name for its own.
  bool is_onnx;             ///< False for Enlarge, SMul and the Const* kinds.
  int64_t since_opset;      ///< Oldest ONNX opset whose semantics this op models.
  std::vector<AttrInput> attr_inputs;
  /// Validates an imported node and fills every default so equal nodes carry equal attributes.
  /// Returns an empty string when the node is modelled, else why it stays opaque.
  std::string (*canonicalize)(ImportContext& context);
  /// Output types from input types (symbolic dims are propagated where the op allows).
  InferResult (*infer)(const ir::Node& node, const std::vector<ir::TensorType>& inputs);
  /// The reference CPU kernel (float32 for arithmetic; any dtype for data movement).
  Kernel kernel;
  /// FLOPs and bytes of one execution; symbolic dims count as 1.
  CostFeatures (*features)(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                           const std::vector<ir::TensorType>& outputs);
  /// Output types of the run-time form, whose attr_inputs are node inputs computed at run time
  /// (a Reshape to a shape built from Shape and Concat, as exporters emit for dynamic dims).
  /// `inputs` are all of the node's inputs. Null when the op has no run-time form: such a node
  /// then stays opaque. The executor runs the form by reading the operands into attributes
  /// (see operands.h), so `kernel` only ever sees the attribute form.
  InferResult (*infer_runtime)(const ir::Node& node, const std::vector<ir::TensorType>& inputs) = nullptr;
};

}  // namespace graphsub::ops
