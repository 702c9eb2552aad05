// Einsum contractions written as the MatMul (and Transposes) they are.
#pragma once

#include "ir/graph.h"

namespace graphsub::rewrite {

/// The graph with every Einsum that is a batched matrix product written as one: an explicit
/// ("->") equation of two operands whose labels are, each occurring once per operand, batch
/// labels (in both operands and the output), exactly one row label (first operand and output;
/// several when there are no batch labels: a product by a matrix, `bnd,dh->bnh`), one column
/// label (second operand and output) and one summed label (both operands, not the output). Each operand is transposed to [batch..., row, summed] and [batch..., summed,
/// column] where its order differs, multiplied, and the product transposed to the output's order
/// where that differs:
///
///   Einsum("bhid,bhjd->bhij", q, k)   ->   MatMul(q, Transpose(k, [0,1,3,2]))
///
/// MatMul broadcasts batch dims of size 1 as Einsum does its ellipsis axes, so ellipsis labels
/// count as batch labels when both operands cover them. onnxruntime's CPU Einsum is a generic
/// kernel: on MaxViT-T's attention shapes it took 1.4-2.1x the time of the MatMul (README,
/// "Einsum as MatMul"). Other Einsums are left as they are. `*lowered` (when given) counts the
/// Einsums rewritten.
ir::Graph lower_einsums(const ir::Graph& graph, int* lowered = nullptr);

}  // namespace graphsub::rewrite
