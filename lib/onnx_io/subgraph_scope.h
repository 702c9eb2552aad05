// Names that nodes with subgraphs (If, Loop, Scan) read from and define in nested scopes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_set>
#include <vector>

namespace graphsub::onnx_io {

/// The names a node's subgraph attributes read from the enclosing scope without defining them
/// (recursively through nested subgraphs), in order of first use. These become implicit inputs.
std::vector<std::string> outer_scope_names(const onnx::NodeProto& node);

/// Adds every name defined inside a node's subgraphs (inputs, initializers, node outputs,
/// recursively) to `names`, so fresh names in the enclosing graph can avoid them.
void collect_subgraph_names(const onnx::NodeProto& node, std::unordered_set<std::string>& names);

}  // namespace graphsub::onnx_io
