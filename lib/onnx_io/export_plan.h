// What export writes of a graph: weight-only nodes folded into constants, unused nodes left out.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace graphsub::onnx_io {

/// The nodes export emits and the constants folding computed.
struct ExportPlan {
  std::vector<ir::NodeId> nodes;      ///< Nodes to write, in topological order.
  std::vector<ir::TensorPtr> folded;  ///< Per value id: its data when folding computed it.
  std::vector<char> needed;           ///< Per value id: read by a written node or a graph output.

  /// The data of a value that is constant once folded (a weight or a folded output), else null.
  ir::TensorPtr constant(const ir::Graph& graph, ir::ValueId id) const;
};

/// Folds, in topological order, every modelled node whose inputs are all constant (weights or
/// folded outputs; nodes without inputs always) with its reference kernel, keeping the node when
/// the kernel fails, and then keeps only the nodes a graph output needs. Throws graphsub::Error
/// for a cyclic graph.
ExportPlan plan_export(const ir::Graph& graph);

}  // namespace graphsub::onnx_io
