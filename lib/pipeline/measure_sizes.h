// Sizes for every dim of a graph, so that any part of it can be measured at its true size.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "cost/cost_cache.h"
#include "ir/graph.h"
#include "profile/profiler.h"
#include "rewrite/shape_arithmetic.h"

namespace graphsub::pipeline {

/// What the measuring instance could not work out statically, and what one run of it told.
struct InstanceRun {
  std::size_t unresolved = 0;  ///< Values whose shape (or small integer value) depends on data.
  std::size_t sized = 0;       ///< Of those, the values a run sized.
  std::size_t computed = 0;    ///< Integer values a run computed.
  std::string error;           ///< Why the run failed, if it did.
  std::vector<std::string> unsized;  ///< Symbols left with no size: measured at 1.
};

/// What a part of the graph needs to be measured as it runs inside the whole graph.
struct MeasuringInstance {
  cost::DimSizes sizes;            ///< A size for every symbol of the graph (given ones first).
  rewrite::KnownValues integers;   ///< Integer values computed from dims (Reshape targets), by name.
  InstanceRun run;                 ///< For the report.
};

/// Runs a measuring instance once, symbolic dims of its inputs at `sizes` (1 where not given), and
/// returns the named `values` as computed there (profile::Profiler::observe). Throws
/// graphsub::Error when it cannot run it.
using Observer = std::function<profile::Observed(const ir::Graph& instance, const std::vector<ir::ValueId>& values,
                                                 const cost::DimSizes& sizes)>;

/// An Observer on graphsub's reference executor, fed as the timings feed a graph: floats random
/// (seeded), integers and booleans zero.
profile::Observed observe_with_reference(const ir::Graph& instance, const std::vector<ir::ValueId>& values,
                                         const cost::DimSizes& sizes);

/// Gives every dim of `graph` that `sizes` cannot size a size at the measuring instance, and
/// returns the sizes extended by them, with the integer values computed from dims there. The
/// instance is `graph` with its inputs' symbolic dims at `sizes` (1 where not given) and its shape
/// arithmetic resolved, so every inferable dim and shape value is known there. Then, value by
/// value (matched by name): a symbol `sizes` lacks (ONNX's invented `unk__N`) gets that value's
/// size, and a dim with neither size nor name (a product such as N * heads) is named
/// `gs_dim_<k>`, a symbol of its own, sized the same. A part of the graph is a standalone model
/// for the measurer, sized from its inputs' types and fed random data: without this, such a dim
/// was sized 1 and an input holding a Reshape target was fed zeros, so the part ran at the wrong
/// size or not at all. A symbol that two values size differently is left out (sized 1).
MeasuringInstance measuring_instance(ir::Graph& graph, const cost::DimSizes& sizes, const Observer& observe = {});

}  // namespace graphsub::pipeline
