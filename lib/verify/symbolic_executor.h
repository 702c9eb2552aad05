// Running a whole graph on symbolic tensors: graph inputs and chosen weights as variables.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/graph.h"
#include "verify/semantics.h"

namespace graphsub::verify {

/// Runs `graph` node by node with `semantics`. Every graph input without a default becomes the
/// variables `NAME[i,...]`; a weight whose name is in `free_weights` too (its value is then any
/// real, not its data); every other weight is its data as exact numbers. Returns the graph
/// outputs by name. Throws NoSemantics for a node without meaning, graphsub::Error for a dim that
/// is not known.
std::map<std::string, SymTensor> run_symbolic(Semantics& semantics, const ir::Graph& graph,
                                              const std::set<std::string>& free_weights);

}  // namespace graphsub::verify
