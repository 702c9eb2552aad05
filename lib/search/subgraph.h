// A part of a graph taken out as a graph of its own, and put back once optimized.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"

namespace graphsub::search {

/// A convex set of a graph's nodes as a standalone graph. Its inputs are the values the part
/// reads from outside (graph inputs and other nodes' outputs); its outputs are the values it
/// produces that are read outside or are graph outputs. Weights stay weights, shared; a value
/// computed outside from weights alone (a folded weight, e.g. a merged conv's concatenated
/// kernel) is computed in the part by copies of those folded nodes, so it is a weight there too.
struct Subgraph {
  ir::Graph graph;
  std::vector<ir::NodeId> nodes;           ///< The part's nodes in the outer graph.
  std::vector<ir::ValueId> outer_inputs;   ///< The outer value behind each graph.inputs()[i].
  std::vector<ir::ValueId> outer_outputs;  ///< The outer value behind each graph.outputs()[i].
  std::unordered_map<ir::ValueId, ir::ValueId> outer_weights;  ///< Weight in graph → outer weight.
  std::unordered_map<ir::ValueId, ir::ValueId> outer_constants;  ///< Copied folded value → outer value.
};

/// Takes `nodes` (live, convex: no path leaves the set and comes back) out of `graph`.
Subgraph extract(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes);

/// What stitching put into the outer graph.
struct Stitched {
  std::vector<ir::NodeId> nodes;     ///< The nodes added (those still live).
  std::vector<ir::ValueId> outputs;  ///< The outer value now behind each of part.outer_outputs.
};

/// Replaces the part's nodes in `graph` by the nodes of `optimized`, a graph derived from
/// `part.graph` by rewrites (same inputs, outputs computing the same values). Uses of the part's
/// outputs are redirected and nodes of `graph` left dead are removed.
Stitched stitch(ir::Graph& graph, const Subgraph& part, const ir::Graph& optimized);

/// The convex hull of `nodes` in `graph`: every node on a path between two of them.
/// `consumers` is graph.consumers().
std::vector<ir::NodeId> convex_hull(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                                    const std::vector<std::vector<std::pair<ir::NodeId, int32_t>>>& consumers);
std::vector<ir::NodeId> convex_hull(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes);

/// `nodes` (convex in `graph`) and the nodes around them, up to `depth` steps away, that a
/// runtime may fuse with them: each step takes in the readers of the set's outputs and the makers
/// of its inputs that are neither convolutions nor matrix products nor recurrent or opaque nodes
/// (element-wise, data movement, reductions, normalization), where the set stays convex without
/// taking in anything else. A part whose boundary cuts through a pattern the runtime fuses (a
/// GELU, a layer normalization) is timed by itself with the pattern unfused on both sides; with
/// these around it, as the whole model runs it.
std::vector<ir::NodeId> with_neighbours(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes, int depth);

/// The quantization that surrounds a part in the graph it was taken out of (`outer`), to put
/// around the part's graph, or one derived from it by rewrites (same inputs and outputs), so
/// that it is timed as the target runs it in the whole model. onnxruntime runs a quantized (QDQ)
/// model's convolutions and products as integer kernels only where it sees the DequantizeLinear
/// before them and the QuantizeLinear after; a part timed without those runs in float, and a
/// rewrite that stops the integer kernel (a merge of convolutions concatenating dequantized
/// kernels) would look faster than it is.
class QuantizationContext {
 public:
  /// Finds, in `outer`, the DequantizeLinear making each of the part's inputs (from a computed
  /// value, or from a weight: a kernel dequantized outside the part) and, for each output that
  /// is not a graph output, the QuantizeLinear nodes when they are all that reads it outside the
  /// part. Only nodes whose scale and zero point are weights count.
  QuantizationContext(const ir::Graph& outer, const Subgraph& part);
  /// Whether no quantization surrounds the part.
  bool empty() const { return empty_; }
  /// `graph` with copies of those DequantizeLinear nodes in front, reading inputs of the
  /// quantized type (or copies of the quantized weights), and copies of those QuantizeLinear
  /// nodes after, whose outputs are the graph's; `graph` itself where the context is empty.
  ir::Graph around(const ir::Graph& graph) const;

 private:
  const ir::Graph& outer_;
  const Subgraph& part_;
  std::vector<ir::NodeId> dequantizers_;             ///< Per part input: the outer node, or -1.
  std::vector<std::vector<ir::NodeId>> quantizers_;  ///< Per part output: the outer nodes.
  bool empty_ = true;
};

/// A changed part as a judge times it: the part (taken out of `outer`) and each candidate for it
/// (derived from part.graph by rewrites) with the nodes around the part that a runtime may fuse
/// with it (with_neighbours, `depth` steps; 0: none), and the quantization around those
/// (QuantizationContext). The part's side is built once, for every candidate judged against it.
class TimingContext {
 public:
  TimingContext(const ir::Graph& outer, const Subgraph& part, int depth);
  /// The part's graph in its context.
  const ir::Graph& original() const { return original_; }
  /// `candidate` in the same context: the outer graph with `candidate` stitched in, the same
  /// nodes around it.
  ir::Graph around(const ir::Graph& candidate) const;

 private:
  const ir::Graph& outer_;
  const Subgraph& part_;
  std::vector<ir::NodeId> wide_;  ///< The part's nodes and those around it, in `outer_`.
  /// Where nothing is around the part: its quantization, the same for every candidate.
  std::optional<QuantizationContext> quantization_;
  ir::Graph original_;
};

}  // namespace graphsub::search
