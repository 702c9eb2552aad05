// Which nodes are computable from weights alone, so export folds them into initializers.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace graphsub::ops {

/// Per node id: true when the node is modelled, has a reference kernel, and reads only weights
/// or outputs of such nodes (nodes without inputs count). Export folds exactly these, so they
/// cost nothing, and a rule's `weight(x)` holds for their outputs. Requires an acyclic graph.
std::vector<bool> folded_nodes(const ir::Graph& graph);

}  // namespace graphsub::ops
