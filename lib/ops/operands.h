// The run-time form of ops whose ONNX operands graphsub reads as attributes (OpDef::attr_inputs).
#pragma once

#include <string>
#include <vector>

#include "ops/op_def.h"

namespace graphsub::ops {

/// Position of the first attribute operand (every op's come after its data inputs); SIZE_MAX
/// for an op without any.
std::size_t first_operand_slot(const OpDef& def);

/// True when a node of `def` with `num_inputs` inputs holds its attr_inputs as inputs (the
/// run-time form): in the attribute form those positions are removed, and every op's attribute
/// operands come after its data inputs.
bool is_runtime_form(const OpDef& def, std::size_t num_inputs);

/// Reads the constant `data` of one attribute operand into `attrs` (int64 list, or float list
/// when entry.as_floats). Returns why it cannot be read, else empty.
std::string read_operand(const ir::Tensor& data, const AttrInput& entry, ir::Attributes& attrs);

/// A run-time form node turned into its attribute form for one execution.
struct BoundNode {
  ir::Node node;                               ///< The node with the operands as attributes.
  std::vector<const ir::Tensor*> data_inputs;  ///< The inputs left once operands are taken.
};

/// Reads the operand tensors of a run-time form node into attributes. Throws graphsub::Error when
/// an operand cannot be read.
BoundNode bind_operands(const OpDef& def, const ir::Node& node,
                        const std::vector<const ir::Tensor*>& inputs);

}  // namespace graphsub::ops
