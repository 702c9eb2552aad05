// The reference executor: runs a graph on the CPU with the operators' reference kernels.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace graphsub::runtime {

/// Named tensors: graph inputs going in, graph outputs coming out.
using TensorMap = std::map<std::string, ir::TensorPtr>;

/// Runs graphs node by node in topological order. Intermediate tensors are freed after their last
/// use. Opaque nodes have no kernel: `supports` says whether a graph can run.
class CpuExecutor {
 public:
  /// Empty when every node of `graph` has a reference kernel; else the op_types that do not.
  static std::vector<std::string> unsupported_ops(const ir::Graph& graph);

  /// Runs the graph; `inputs` must name every graph input without a default. Returns the graph
  /// outputs by their names. Throws graphsub::Error on a missing input, a shape that does not fit,
  /// or an op without a kernel.
  static TensorMap run(const ir::Graph& graph, const TensorMap& inputs);

  /// Computes one node from its input tensors (used by export to fold weight-only nodes).
  static std::vector<ir::Tensor> run_node(const ir::Node& node,
                                          const std::vector<const ir::Tensor*>& inputs);
};

}  // namespace graphsub::runtime
