// Channel shuffles written as Gathers of the pieces read, or folded into the convolutions that read them.
#pragma once

#include "ir/graph.h"

namespace graphsub::rewrite {

/// What rewrite_channel_shuffles did.
struct ShuffleStats {
  int as_gather = 0;          ///< Shuffles whose pieces became Gathers.
  int into_convolutions = 0;  ///< Shuffles folded into the weights of the convolutions reading them.
};

/// The graph with ShuffleNet's channel shuffles rewritten away where their readers allow. A
/// channel shuffle is a Reshape -> Transpose -> Reshape: the axis of C channels split into
/// [g, C/g], the two swapped, and merged back, so output channel o reads input channel
/// source[o] = (o % g) * (C/g) + o / g.
///
/// When every reader is a convolution reading it as its data (with constant weights), the
/// convolutions read the unshuffled tensor instead: a group-1 convolution with its weight's input
/// channels reordered, a depthwise one with its filters and bias reordered, which leaves its own
/// output in the shuffled order, so its readers must in turn be such convolutions:
///
///   Conv(Shuffle(x), W)   ->   Conv(x, W')   where W'[:, source[o]] = W[:, o]
///
/// Otherwise, when every reader is a Split of the shuffled axis or a step-1 Slice of it alone,
/// each piece becomes one Gather of the unshuffled input:
///
///   Slice(Reshape(Transpose(Reshape(x, [N, 2, 58, H, W]), [0, 2, 1, 3, 4]), [N, 116, H, W]), 58..116)
///     ->   Gather(x, [29, 88, 30, 89, ..., 57, 115], axis 1)
///
/// onnxruntime copies the tensor once for the Transpose and once more for the Split or Slices;
/// the Gathers copy each channel once, the folded convolutions not at all (ShuffleNet-v2: README
/// "Channel shuffles"). A shuffle that is a graph output, or that another op also reads, is left
/// as it is, and so is one whose axis sizes or surrounding dims are not all known sizes or named
/// symbols (the permutation must be exact). The Gathers move data only: the same values bit for
/// bit. A folded group-1 convolution sums its input channels in another order: the same values
/// up to rounding.
ir::Graph rewrite_channel_shuffles(const ir::Graph& graph, ShuffleStats* stats = nullptr);

}  // namespace graphsub::rewrite
