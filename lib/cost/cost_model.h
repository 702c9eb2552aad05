// The cost model interface: a cost per node, summed over the graph, with an optional memory cap.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "cost/cost.h"
#include "ir/graph.h"

namespace graphsub::cost {

/// Estimates what a graph costs to run. Implementations give the cost of one node; the graph's
/// cost is the sum over the nodes that run (TASO §5: the sum of measured operator times).
/// Units: milliseconds, FLOPs, bytes, launches (see Cost).
///
/// node_cost and graph_cost are const and safe to call from several threads at once; configure the
/// memory cap before sharing the model.
class CostModel {
 public:
  virtual ~CostModel() = default;

  /// The cost of one live node of `graph`, as if it ran (weight folding is graph_cost's business).
  virtual Cost node_cost(const ir::Graph& graph, ir::NodeId id) const = 0;

  /// The sum of node_cost over the live nodes, where a node export folds into a weight (see
  /// ops::folded_nodes) costs 0. When the graph's tensors need more than the memory cap, the cost is
  /// Cost::infinite() (MetaFlow §4.1). Throws std::logic_error for a graph with a cycle.
  Cost graph_cost(const ir::Graph& graph) const;

  /// What the graph costs as export writes it: graph_cost, except that where
  /// prices_written_chains(), each chain export writes as a fused form (written_chains.h) costs
  /// what that fused node costs, and its nodes nothing. The search ranks by graph_cost, where a
  /// fusion is a gain that leads it on to the rewrites fused forms open (merges of convolutions
  /// with their activations); this is the price of what the target will run.
  Cost written_cost(const ir::Graph& graph) const;

  /// True for a model of a target that times the written model: there a Conv or MatMul with the
  /// Add and activation after it that graphsub's fusion rules fold into it is the same ONNX as
  /// the fused form, so it costs the same. False by default.
  virtual bool prices_written_chains() const { return false; }

  /// How many of the calling thread's node_cost calls so far gave an answer that a later
  /// measurement may change (a measured model's misses, which it remembers to have measured); 0
  /// for a model whose answers are all final. A search during which this count did not grow would
  /// find the same again on the same graph, whatever is measured in between.
  virtual int64_t provisional_answers() const { return 0; }

  /// Caps the memory a graph may use (memory_upper_bound, in bytes); +infinity means no cap.
  void set_memory_cap_bytes(double bytes) { memory_cap_bytes_ = bytes; }
  double memory_cap_bytes() const { return memory_cap_bytes_; }

 private:
  /// graph_cost, or written_cost with `chains_as_fused`.
  Cost summed(const ir::Graph& graph, bool chains_as_fused) const;

  double memory_cap_bytes_ = std::numeric_limits<double>::infinity();
};

/// A simple upper bound of the memory a graph needs, in bytes: every input, weight and node output
/// that a live node reads or writes or that is a graph output, all alive at once. Symbolic and
/// unknown dims count as 1.
double memory_upper_bound(const ir::Graph& graph);

}  // namespace graphsub::cost
