// Channel shuffles whose every reader takes a slice of the channels, written as Gathers.
#pragma once

#include "ir/graph.h"

namespace graphsub::rewrite {

/// The graph with every channel shuffle whose readers are all Slices or Splits of the shuffled
/// axis written as one Gather of the unshuffled tensor per slice. A channel shuffle is
/// ShuffleNet's Reshape -> Transpose -> Reshape: the axis of C channels split into [g, C/g], the
/// two swapped, and merged back, so output channel o reads input channel (o % g) * (C/g) + o / g.
/// Each slice of it is then a Gather of those input channels:
///
///   Slice(Reshape(Transpose(Reshape(x, [N, 2, 58, H, W]), [0, 2, 1, 3, 4]), [N, 116, H, W]), 58..116)
///     ->   Gather(x, [29, 88, 30, 89, ..., 57, 115], axis 1)
///
/// onnxruntime copies the tensor once for the Transpose and once more for the Split or Slices;
/// the Gathers copy each channel once (ShuffleNet-v2, by hand: 1.029x faster than the graph
/// with the shuffles, README "Channel shuffles as Gather"). A shuffle another op also reads, or
/// that is a graph output, is left as it is, and so is one whose axis sizes or surrounding dims
/// are not all known sizes or named symbols (the permutation must be exact). Pure data movement:
/// the result computes the same values bit for bit. `*rewritten` (when given) counts the
/// shuffles rewritten.
ir::Graph gather_channel_shuffles(const ir::Graph& graph, int* rewritten = nullptr);

}  // namespace graphsub::rewrite
