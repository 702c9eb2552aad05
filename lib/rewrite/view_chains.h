// Chains of data-movement nodes written in fewer nodes, read from the tensor they start at.
#pragma once

#include "ir/graph.h"

namespace graphsub::rewrite {

/// What simplify_view_chains did.
struct ViewChainStats {
  int chains = 0;         ///< Chains written anew.
  int nodes_removed = 0;  ///< Nodes fewer in the graph afterwards (the shape arithmetic they read included).
};

/// The graph with its chains of data-movement nodes (Reshape, Transpose, Squeeze, Unsqueeze,
/// Flatten, Identity, and Gather of one constant index) written as at most a
/// Reshape, the Gathers of the fixed indices, a Transpose and a Reshape, read from the tensor the
/// chain starts at, wherever that takes fewer nodes and no more copies.
///
/// Each chain is followed from its start x as a view of x's elements: x's dims are split into
/// factors ("atoms") as the Reshapes need (sizes known or named symbols, and products of them,
/// divided exactly: [S, N, 256] -> [S, 8 N, 32] splits 256 into 8 x 32 and puts N and 8 side by
/// side), permuted by the Transposes, and fixed by the Gathers. A value that other nodes read is
/// then written from x directly. PyTorch's packed attention projection, for example,
///
///   Gather(Squeeze(Transpose(Unsqueeze(Reshape(x, [0, 0, 3, 256]), 0), [3, 1, 2, 0, 4]), 3), i)
///     ->   Gather(Reshape(x, [0, 0, 3, 256]), i, axis 2)
///
/// and its per-head split (x: [16, 2, 256] -> [16, 16, 32] -> Transpose(1, 0, 2) -> [2, 8, 16, 32])
///
///   Reshape(Transpose(Reshape(x, [16, 16, 32]), [1, 0, 2]), [2, 8, 16, 32])
///     ->   Transpose(Reshape(x, [0, 0, 8, 32]), [1, 2, 0, 3])
///
/// A value that keeps x's elements in order is one Reshape of x, or x itself where it has x's
/// dims (a pooled [N, C, 1, 1] squeezed and reshaped back; a lone Reshape that keeps every dim).
///
/// A Reshape's target is read from its output type, or, where the exporter computes it at run
/// time, through the arithmetic that computes it (Shape, Gather, Unsqueeze, Concat, Mul, exact
/// Div, ...) down to the dims it reads; dims of the same name are the same size, and a placeholder
/// symbol of ONNX's shape inference ("unk__12") names none. The new Reshape targets are literal:
/// a dim copied from the same position (0), a known size,
/// or one -1 beside known positive sizes only (so that an empty tensor still reshapes). Where a
/// value cannot be written so, the chain is cut at the last value on its way that can, and the
/// nodes after the cut stay. A chain whose values a graph output names is left as it is. Data
/// moves only: the same values bit for bit.
ir::Graph simplify_view_chains(const ir::Graph& graph, ViewChainStats* stats = nullptr);

}  // namespace graphsub::rewrite
