// Sizes for every dim of a graph, so that any part of it can be measured at its true size.
#pragma once

#include "cost/cost_cache.h"
#include "ir/graph.h"

namespace graphsub::pipeline {

/// Gives every dim of `graph` that `sizes` cannot size a size at the measuring instance, and
/// returns the sizes extended by them. The instance is `graph` with its inputs' symbolic dims at
/// `sizes` (1 where not given) and its shape arithmetic resolved, so every inferable dim is known
/// there. Then, value by value (matched by name): a symbol `sizes` lacks (ONNX's invented
/// `unk__N`) gets that value's size, and a dim with neither size nor name (a product such as
/// N * heads) is named `gs_dim_<k>`, a symbol of its own, sized the same. A part of the graph is
/// a standalone model for the measurer, sized from its inputs' types; without this, such a dim
/// was sized 1 and the part timed at the wrong size, or failed to run. A symbol that two values
/// size differently is left out (sized 1, as before).
cost::DimSizes size_every_dim(ir::Graph& graph, const cost::DimSizes& sizes);

}  // namespace graphsub::pipeline
