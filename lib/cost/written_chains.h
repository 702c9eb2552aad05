// Chains of nodes that graphsub writes exactly as one of its fused forms: priced as that form.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub::cost {

/// A Conv or MatMul and the nodes after it that rules/fusion.rules fold into it: a residual (a
/// Conv's Z) or bias (a MatMul's C) added to its output, then a Relu, Sigmoid or Tanh. Export
/// writes a fused form back as these very nodes (onnx_io/node_export.cc), so in the written model
/// the chain and its fused form are one and the same ONNX, and a measured target, which times
/// what is written, gives both one time.
struct WrittenChain {
  ir::NodeId head = -1;
  std::vector<ir::NodeId> tail;          ///< The Add and/or the activation, in order.
  ir::ValueId summand = ir::kNoValue;    ///< The other operand of the Add, when the tail has one.
  std::string activation = "none";       ///< "relu", "sigmoid", "tanh" or "none".
  ir::ValueId output = ir::kNoValue;     ///< The last value of the chain.
  /// Where the summand is itself the output of a Conv that could take the Add instead (plain,
  /// with bias, read by the Add alone): that Conv. Both write the same nodes, so the chain costs
  /// whichever of the two fused forms costs less.
  ir::NodeId other_head = -1;
};

/// The chains of `graph` with at least one node in their tail, each head and tail node in at most
/// one, in node id order. A chain follows the fusion rules' conditions: a Conv takes an Add only
/// with its bias and no residual yet, of a summand that is not a weight and has its output's type;
/// a MatMul takes an Add only without a C yet, of a weight that does not broadcast its output; each
/// value inside a chain has the next node as its only reader and is not a graph output. Heads
/// that export folds (`folded`, from ops::folded_nodes) start no chain.
std::vector<WrittenChain> written_chains(const ir::Graph& graph, const std::vector<bool>& folded);

/// `graph` with the fused form of `chain` added beside it (the chain's nodes stay): the head's op
/// and attributes with the activation set, its inputs with the summand appended. Sets `fused` to
/// the new node's id; returns false, leaving `fused` unset, when the fused node's type inference
/// refuses it or gives another type than the chain's output.
bool add_fused_form(ir::Graph& graph, const WrittenChain& chain, ir::NodeId& fused);

/// The chain with its other head taking the Add: the head's output becomes the summand.
/// Requires chain.other_head >= 0.
WrittenChain swapped(const ir::Graph& graph, const WrittenChain& chain);

}  // namespace graphsub::cost
