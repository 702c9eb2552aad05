// Topological ordering of the nodes of an ONNX graph, which may come in any order.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

namespace graphsub::onnx_io {

/// Indices of `graph`'s nodes such that each comes after the producers of its inputs, explicit
/// and implicit (`implicit[i]`: the outer-scope names node i's subgraphs read); nodes already in
/// order keep it. Names no node produces are sources. Throws graphsub::Error "graph has a cycle
/// through node 'X'" naming a node on the cycle.
std::vector<int> topological_node_order(const onnx::GraphProto& graph,
                                        const std::vector<std::vector<std::string>>& implicit);

/// Rearranges graph.node into `order` (a permutation of its indices) without copying nodes.
void reorder_nodes(onnx::GraphProto& graph, const std::vector<int>& order);

}  // namespace graphsub::onnx_io
