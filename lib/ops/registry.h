// Lookup of operator definitions by kind or ONNX name.
#pragma once

#include <string_view>

#include "ops/op_def.h"

namespace graphsub::ops {

/// The definition of a modelled kind; throws std::invalid_argument for kOpaque.
const OpDef& op_def(ir::OpKind kind);

/// The modelled kind for an ONNX op_type in the default domain, or kOpaque when graphsub does not
/// model it.
ir::OpKind kind_from_onnx(std::string_view op_type);

/// The kind whose name (OpDef::name) is `name`, graphsub's own kinds included; kOpaque when none.
ir::OpKind kind_from_name(std::string_view name);

/// Name of a kind (the ONNX op_type or graphsub's own name); "Opaque" for kOpaque.
const char* kind_name(ir::OpKind kind);

/// Whether a node of `kind` with two inputs computes the same with its inputs swapped, for every
/// pair of inputs the op accepts (broadcasting included): Add, Mul, Max, Min, Sum, Mean, And, Or,
/// Equal. The matcher tries such a node's operands in both orders.
bool is_commutative(ir::OpKind kind);

/// Output types of a node of `graph` from the current types of its inputs.
InferResult infer_node(const ir::Graph& graph, ir::NodeId id);

}  // namespace graphsub::ops
