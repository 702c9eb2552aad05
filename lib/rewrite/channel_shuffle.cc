// Channel shuffles written as Gathers of the pieces read, or folded into the convolutions that read them.
#include "rewrite/channel_shuffle.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/data_type.h"
#include "rewrite/rewriter.h"

namespace graphsub::rewrite {
namespace {

using Consumers = std::vector<std::vector<std::pair<ir::NodeId, int32_t>>>;

/// A dim that names one size: a known size or a named symbol (two unnamed unknown dims may differ).
bool exact(const ir::Dim& dim) { return dim.is_known() || dim.is_symbolic(); }

bool same_exact(const ir::Dim& a, const ir::Dim& b) { return exact(a) && a == b; }

/// Whether nodes read `value` and nothing else does: it is not a graph output, so rewriting its
/// readers lets it go.
bool read_by_nodes_only(const ir::Graph& graph, const Consumers& consumers, ir::ValueId value) {
  const std::vector<ir::ValueId>& outputs = graph.outputs();
  return !consumers[value].empty() && std::find(outputs.begin(), outputs.end(), value) == outputs.end();
}

/// A channel shuffle found at a Transpose: its unshuffled input and, for each output channel,
/// the input channel it reads.
struct Shuffle {
  ir::ValueId input = ir::kNoValue;
  ir::ValueId output = ir::kNoValue;
  int64_t axis = 0;
  std::vector<int64_t> source;
};

/// The one node reading `value`, or nullopt when none or several do.
std::optional<ir::NodeId> only_reader(const Consumers& consumers, ir::ValueId value) {
  if (consumers[value].size() != 1) return std::nullopt;
  return consumers[value][0].first;
}

/// The shuffle whose Transpose is `id`: Reshape(x) splitting one axis of x into two, the
/// Transpose swapping those two, and a Reshape that is its only reader merging them back into
/// x's shape.
std::optional<Shuffle> shuffle_at(const ir::Graph& graph, const Consumers& consumers, ir::NodeId id) {
  const ir::Node& transpose = graph.node(id);
  const ir::Value& split_value = graph.value(transpose.inputs[0]);
  if (split_value.producer < 0 || !only_reader(consumers, transpose.inputs[0])) return std::nullopt;
  const ir::Node& split = graph.node(split_value.producer);
  const std::optional<ir::NodeId> merge_id = only_reader(consumers, transpose.outputs[0]);
  if (split.op != ir::OpKind::kReshape || !merge_id) return std::nullopt;
  const ir::Node& merge = graph.node(*merge_id);
  if (merge.op != ir::OpKind::kReshape || merge.inputs[0] != transpose.outputs[0]) return std::nullopt;
  const ir::Shape& x = graph.value(split.inputs[0]).type.shape;
  const ir::Shape& parts = split_value.type.shape;
  const ir::Shape& out = graph.value(merge.outputs[0]).type.shape;
  if (!x.rank_known || !parts.rank_known || !out.rank_known) return std::nullopt;
  const std::size_t rank = x.rank();
  if (rank == 0 || parts.rank() != rank + 1 || out.rank() != rank) return std::nullopt;
  for (std::size_t i = 0; i < rank; ++i) {
    if (!same_exact(x.dims[i], out.dims[i])) return std::nullopt;
  }
  std::size_t axis = 0;
  while (axis < rank && same_exact(x.dims[axis], parts.dims[axis])) ++axis;
  if (axis == rank || !x.dims[axis].is_known() || !parts.dims[axis].is_known() ||
      !parts.dims[axis + 1].is_known()) {
    return std::nullopt;
  }
  for (std::size_t i = axis + 1; i < rank; ++i) {
    if (!same_exact(x.dims[i], parts.dims[i + 1])) return std::nullopt;
  }
  const int64_t groups = parts.dims[axis].value;
  const int64_t per_group = parts.dims[axis + 1].value;
  const int64_t channels = x.dims[axis].value;
  if (groups < 2 || per_group < 2 || groups * per_group != channels) return std::nullopt;
  std::vector<int64_t> swap(rank + 1);
  for (std::size_t i = 0; i <= rank; ++i) swap[i] = static_cast<int64_t>(i);
  std::swap(swap[axis], swap[axis + 1]);
  if (transpose.attrs.get_ints("perm", {}) != swap) return std::nullopt;
  Shuffle shuffle{split.inputs[0], merge.outputs[0], static_cast<int64_t>(axis), {}};
  // Output channel o = i * groups + j reads the transposed [i][j], that is split [j][i]: input
  // channel j * per_group + i.
  for (int64_t o = 0; o < channels; ++o) shuffle.source.push_back((o % groups) * per_group + o / groups);
  return shuffle;
}

/// The channel ranges [begin, end) that `reader` takes of the shuffled axis, one per output, or
/// nullopt when it is not a Slice or Split of that axis alone.
std::optional<std::vector<std::pair<int64_t, int64_t>>> ranges_read(const ir::Node& reader, const Shuffle& shuffle) {
  const auto channels = static_cast<int64_t>(shuffle.source.size());
  if (reader.inputs.empty() || reader.inputs[0] != shuffle.output) return std::nullopt;
  if (reader.op == ir::OpKind::kSplit) {
    if (reader.inputs.size() != 1 || reader.attrs.get_int("axis", -1) != shuffle.axis) return std::nullopt;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    int64_t begin = 0;
    for (int64_t size : reader.attrs.get_ints("split", {})) {
      ranges.emplace_back(begin, begin + size);
      begin += size;
    }
    if (begin != channels || ranges.size() != reader.outputs.size()) return std::nullopt;
    return ranges;
  }
  if (reader.op != ir::OpKind::kSlice || reader.inputs.size() != 1) return std::nullopt;
  const std::vector<int64_t> axes = reader.attrs.get_ints("axes", {});
  const std::vector<int64_t> steps = reader.attrs.get_ints("steps", {});
  const std::vector<int64_t> starts = reader.attrs.get_ints("starts", {});
  const std::vector<int64_t> ends = reader.attrs.get_ints("ends", {});
  if (axes != std::vector<int64_t>{shuffle.axis} || steps != std::vector<int64_t>{1} || starts.size() != 1 ||
      ends.size() != 1) {
    return std::nullopt;
  }
  // ONNX's clamping of a step-1 slice: negative bounds count from the end.
  auto clamp = [channels](int64_t bound) {
    if (bound < 0) bound += channels;
    return std::clamp<int64_t>(bound, 0, channels);
  };
  return std::vector<std::pair<int64_t, int64_t>>{{clamp(starts[0]), clamp(ends[0])}};
}

/// Rewrites the readers of `shuffle` as Gathers of its input; false (the graph untouched but
/// for dead nodes) when a reader is not a slice of the shuffled axis or a Gather does not fit.
bool gather(ir::Graph& graph, const Consumers& consumers, const Shuffle& shuffle) {
  if (!read_by_nodes_only(graph, consumers, shuffle.output)) return false;
  std::vector<std::pair<ir::NodeId, std::vector<std::pair<int64_t, int64_t>>>> readers;
  for (const auto& [reader, slot] : consumers[shuffle.output]) {
    std::optional<std::vector<std::pair<int64_t, int64_t>>> ranges = ranges_read(graph.node(reader), shuffle);
    if (!ranges || slot != 0) return false;
    readers.emplace_back(reader, std::move(*ranges));
  }
  std::vector<std::pair<ir::ValueId, ir::ValueId>> replacements;
  for (const auto& [reader, ranges] : readers) {
    const ir::Node& node = graph.node(reader);
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const auto [begin, end] = ranges[i];
      if (begin >= end) return false;
      const std::vector<int64_t> picked(shuffle.source.begin() + begin, shuffle.source.begin() + end);
      const std::string name = node.name.empty() ? "channel_shuffle" : node.name;
      const ir::ValueId indices =
          graph.add_weight(name + "/indices_" + std::to_string(i),
                           ir::share(ir::Tensor::from_int64s({static_cast<int64_t>(picked.size())}, picked)));
      ir::Attributes attrs;
      attrs.set("axis", shuffle.axis);
      const std::optional<ir::ValueId> gathered =
          add_canonical_node(graph, ir::OpKind::kGather, {shuffle.input, indices}, std::move(attrs), name + "/Gather");
      if (!gathered || graph.value(*gathered).type != graph.value(node.outputs[i]).type) return false;
      replacements.emplace_back(node.outputs[i], *gathered);
    }
  }
  for (const auto& [from, to] : replacements) graph.replace_all_uses(from, to);
  return true;
}

/// The inverse of `source`: inverse[source[o]] = o.
std::vector<int64_t> inverse_of(const std::vector<int64_t>& source) {
  std::vector<int64_t> inverse(source.size());
  for (std::size_t o = 0; o < source.size(); ++o) inverse[static_cast<std::size_t>(source[o])] = static_cast<int64_t>(o);
  return inverse;
}

/// `tensor` with its entries along `axis` reordered: entry s of the result is entry from[s].
ir::TensorPtr reordered(const ir::Tensor& tensor, std::size_t axis, const std::vector<int64_t>& from) {
  const std::vector<int64_t>& dims = tensor.dims();
  int64_t outer = 1;
  for (std::size_t i = 0; i < axis; ++i) outer *= dims[i];
  int64_t block = static_cast<int64_t>(ir::element_size(tensor.dtype()));
  for (std::size_t i = axis + 1; i < dims.size(); ++i) block *= dims[i];
  const int64_t count = dims[axis];
  ir::Tensor result(tensor.dtype(), dims);
  const std::byte* in = tensor.bytes();
  std::byte* out = result.mutable_bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < count; ++s) {
      std::copy_n(in + (o * count + from[static_cast<std::size_t>(s)]) * block, block, out + (o * count + s) * block);
    }
  }
  return ir::share(std::move(result));
}

/// How a Conv reading a shuffled tensor as its data takes the unshuffled one instead.
enum class ConvFold {
  kNone,       ///< It cannot.
  kInputs,     ///< Group 1: its weight's input channels reordered; its output is unchanged.
  kDepthwise,  ///< One filter per channel: filters and bias reordered; its output is shuffled alike.
};

ConvFold conv_fold(const ir::Graph& graph, const ir::Node& node, ir::ValueId value, int64_t channels) {
  if (node.op != ir::OpKind::kConv || node.inputs.size() < 2 || node.inputs.size() > 3 || node.inputs[0] != value ||
      node.inputs[1] == value) {
    return ConvFold::kNone;
  }
  for (std::size_t i = 1; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == ir::kNoValue) continue;
    const ir::Value& operand = graph.value(node.inputs[i]);
    if (operand.kind != ir::ValueKind::kWeight || !operand.data || operand.data->dtype() == ir::DataType::kString) {
      return ConvFold::kNone;
    }
  }
  const std::vector<int64_t>& weight = graph.value(node.inputs[1]).data->dims();
  const int64_t group = node.attrs.get_int("group", 1);
  if (weight.size() < 2) return ConvFold::kNone;
  if (group == 1 && weight[1] == channels) return ConvFold::kInputs;
  if (group == channels && weight[0] == channels && weight[1] == 1) return ConvFold::kDepthwise;
  return ConvFold::kNone;
}

/// Whether every reader of `value` (C channels in the shuffle's order) can read them unshuffled:
/// a group-1 Conv, or a depthwise one whose readers can in turn. Nothing is changed.
bool foldable(const ir::Graph& graph, const Consumers& consumers, ir::ValueId value, int64_t channels) {
  if (!read_by_nodes_only(graph, consumers, value)) return false;
  for (const auto& [reader, slot] : consumers[value]) {
    const ir::Node& node = graph.node(reader);
    const ConvFold fold = conv_fold(graph, node, value, channels);
    if (fold == ConvFold::kNone || slot != 0) return false;
    if (fold == ConvFold::kDepthwise && !foldable(graph, consumers, node.outputs[0], channels)) return false;
  }
  return true;
}

/// Points the readers of `shuffled` (checked by foldable) at `unshuffled`, whose channel
/// source[o] is their channel o: each Conv is added again with reordered weights.
void fold(ir::Graph& graph, const Consumers& consumers, ir::ValueId shuffled, ir::ValueId unshuffled,
          const std::vector<int64_t>& inverse) {
  const auto channels = static_cast<int64_t>(inverse.size());
  for (const auto& [reader, slot] : consumers[shuffled]) {
    const ir::Node node = graph.node(reader);
    const ConvFold how = conv_fold(graph, node, shuffled, channels);
    std::vector<ir::ValueId> inputs = {unshuffled};
    for (std::size_t i = 1; i < node.inputs.size(); ++i) {
      const ir::Value& operand = graph.value(node.inputs[i]);
      // Group 1: the weight's input channels (axis 1). Depthwise: its filters and bias (axis 0).
      const std::size_t axis = how == ConvFold::kInputs ? 1 : 0;
      const bool reorder = how == ConvFold::kDepthwise || i == 1;
      const std::string name = operand.name.empty() ? std::string() : operand.name + "_unshuffled";
      inputs.push_back(reorder ? graph.add_weight(name, reordered(*operand.data, axis, inverse)) : node.inputs[i]);
    }
    const ir::NodeId added = graph.add_node(ir::OpKind::kConv, std::move(inputs),
                                            {{graph.value(node.outputs[0]).type, {}}}, node.attrs, node.name);
    const ir::ValueId output = graph.node(added).outputs[0];
    if (how == ConvFold::kInputs) graph.replace_all_uses(node.outputs[0], output);
    else fold(graph, consumers, node.outputs[0], output, inverse);
  }
}

}  // namespace

ir::Graph rewrite_channel_shuffles(const ir::Graph& graph, ShuffleStats* stats) {
  ir::Graph result = graph;
  const Consumers consumers = graph.consumers();
  ShuffleStats counted;
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op != ir::OpKind::kTranspose) continue;
    const std::optional<Shuffle> shuffle = shuffle_at(graph, consumers, id);
    if (!shuffle) continue;
    const auto channels = static_cast<int64_t>(shuffle->source.size());
    if (foldable(graph, consumers, shuffle->output, channels)) {
      fold(result, consumers, shuffle->output, shuffle->input, inverse_of(shuffle->source));
      ++counted.into_convolutions;
    } else if (gather(result, consumers, *shuffle)) {
      ++counted.as_gather;
    }
  }
  result.remove_dead_nodes();
  if (stats) *stats = counted;
  return result;
}

}  // namespace graphsub::rewrite
