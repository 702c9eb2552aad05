// Islands of element-wise nodes: what a runtime that fuses such chains runs as one kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "ir/graph.h"

namespace graphsub::cost {

/// Two or more element-wise nodes (and the reductions and normalizations written beside them)
/// joined by the values they pass each other. onnxruntime fuses such chains into one kernel where
/// it knows their pattern (GELU, LayerNorm, x * sigmoid(x), a bias before a GELU), and what it
/// fuses is what a rewrite of one of the nodes may break; timed as one model, an island costs
/// what the runtime makes of it.
struct Island {
  std::vector<ir::NodeId> nodes;     ///< In an order of the graph's topological order.
  std::vector<ir::ValueId> exposed;  ///< Its nodes' outputs read outside it or graph outputs.
};

/// Whether a node of this op may belong to an island: element-wise arithmetic and activations,
/// ReduceMean and LayerNormalization (the parts of a layer normalization).
bool island_op(ir::OpKind op);

/// The islands of `graph`, nodes in `excluded` (folded, or priced otherwise) left out. An island is
/// a connected set of island ops with a floating-point output, each joined to the next through a
/// value one makes and the other reads, where no path leaves the set and comes back (every node
/// of an island lies behind equally many nodes of other kinds on its longest path from the
/// graph's inputs, which makes the set convex, so that it can be timed alone). Islands over
/// `max_nodes` nodes are left out (each of their nodes is priced alone). In order of their first
/// node; deterministic for a graph.
std::vector<Island> islands(const ir::Graph& graph, const std::vector<bool>& excluded, std::size_t max_nodes = 24);

/// The values an island reads that none of its nodes makes, in order of first use.
std::vector<ir::ValueId> island_inputs(const ir::Graph& graph, const Island& island);

/// A hash of an island: `node_hash` of each node in order, which node's output or which of
/// island_inputs each input is, the content of each weight input of fewer than
/// ir::Graph::kLargeWeight elements, and which outputs are exposed.
uint64_t island_hash(const ir::Graph& graph, const Island& island, const std::function<uint64_t(ir::NodeId)>& node_hash);

}  // namespace graphsub::cost
