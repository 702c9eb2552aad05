// Extracting and stitching back a part of a graph.
#include "search/subgraph.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "ops/folding.h"

namespace graphsub::search {
namespace {

/// A value's name for the subgraph: its own, or one made from its id (names of inputs and
/// outputs must not be empty).
std::string name_of(const ir::Graph& graph, ir::ValueId id) {
  const std::string& name = graph.value(id).name;
  return name.empty() ? "v" + std::to_string(id) : name;
}

/// Adds to `into` a copy of `node` (a node of `from`), each input mapped by `map`, and records
/// in `mapped` the copy's output behind each of the node's; returns the copy's id.
template <typename Map>
ir::NodeId add_copy(ir::Graph& into, const ir::Graph& from, const ir::Node& node, Map&& map,
                    std::unordered_map<ir::ValueId, ir::ValueId>& mapped) {
  std::vector<ir::ValueId> inputs;
  for (ir::ValueId input : node.inputs) inputs.push_back(map(input));
  std::vector<ir::OutputSpec> outputs;
  for (ir::ValueId output : node.outputs) outputs.push_back({from.value(output).type, from.value(output).name});
  const ir::NodeId copy = into.add_node(node.op, std::move(inputs), outputs, node.attrs, node.name, node.opaque);
  for (std::size_t k = 0; k < node.outputs.size(); ++k) mapped[node.outputs[k]] = into.node(copy).outputs[k];
  return copy;
}

/// Builds the subgraph's nodes, mapping each outer value read to a subgraph value.
class Extractor {
 public:
  Extractor(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes)
      : outer_(graph), order_(graph.topological_order().value()), folded_(ops::folded_nodes(graph)) {
    part_.nodes = nodes;
    part_.graph.set_model_info(graph.model_info());
    part_.graph.set_graph_name(graph.name());
    member_.insert(nodes.begin(), nodes.end());
  }

  Subgraph run() {
    for (ir::NodeId id : order_) {
      if (member_.count(id) != 0) copy_node(outer_.node(id));
    }
    set_outputs();
    return std::move(part_);
  }

 private:
  ir::ValueId inner(ir::ValueId outer) {
    if (outer == ir::kNoValue) return ir::kNoValue;
    const auto found = inner_.find(outer);
    if (found != inner_.end()) return found->second;
    const ir::Value& value = outer_.value(outer);
    ir::ValueId made;
    if (value.kind == ir::ValueKind::kWeight) {
      made = part_.graph.add_weight(value.name, value.data);
      part_.outer_weights[made] = outer;
    } else if (value.kind == ir::ValueKind::kIntermediate && folded_[value.producer] && member_.count(value.producer) == 0) {
      // Computed from weights alone (a folded weight): the part gets its own copy of the
      // computation, so that it stays a weight there, costs nothing and matches `weight(x)`.
      copy_constant(outer_.node(value.producer));
      return inner_.at(outer);
    } else {
      made = part_.graph.add_input(name_of(outer_, outer), value.type);
      part_.outer_inputs.push_back(outer);
    }
    inner_[outer] = made;
    return made;
  }

  void copy_node(const ir::Node& node) {
    add_copy(part_.graph, outer_, node, [&](ir::ValueId input) { return inner(input); }, inner_);
  }

  /// Copies a folded node from outside the part; the stitch maps its outputs back.
  void copy_constant(const ir::Node& node) {
    copy_node(node);
    for (ir::ValueId output : node.outputs) part_.outer_constants[inner_.at(output)] = output;
  }

  /// Outputs: what the part produces that a node outside reads or the graph returns.
  void set_outputs() {
    std::unordered_set<ir::ValueId> needed(outer_.outputs().begin(), outer_.outputs().end());
    for (ir::NodeId id : outer_.node_ids()) {
      if (member_.count(id) != 0) continue;
      for (ir::ValueId input : outer_.node(id).inputs) needed.insert(input);
    }
    std::vector<ir::ValueId> outputs;
    for (ir::NodeId id : order_) {
      if (member_.count(id) == 0) continue;
      for (ir::ValueId output : outer_.node(id).outputs) {
        if (needed.count(output) == 0) continue;
        part_.outer_outputs.push_back(output);
        outputs.push_back(inner_.at(output));
        part_.graph.set_name(outputs.back(), name_of(outer_, output));
      }
    }
    part_.graph.set_outputs(outputs);
  }

  const ir::Graph& outer_;
  const std::vector<ir::NodeId> order_;
  Subgraph part_;
  const std::vector<bool> folded_;
  std::unordered_set<ir::NodeId> member_;
  std::unordered_map<ir::ValueId, ir::ValueId> inner_;
};

/// Adds `optimized`'s nodes to `graph`, mapping its inputs and weights to outer values.
class Stitcher {
 public:
  Stitcher(ir::Graph& graph, const Subgraph& part, const ir::Graph& optimized)
      : graph_(graph), part_(part), optimized_(optimized) {
    for (std::size_t i = 0; i < part.outer_inputs.size(); ++i) outer_[optimized.inputs()[i]] = part.outer_inputs[i];
    // A folded value copied into the part maps back to the outer one while that still exists;
    // an earlier stitch may have removed it (another part rewrote the folded nodes that read
    // it), and then the part's copy of its computation goes in.
    for (const auto& [inner, outer] : part.outer_constants) {
      if (graph.has_value(outer)) outer_[inner] = outer;
    }
  }

  Stitched run() {
    std::vector<ir::NodeId> added;
    const std::vector<ir::NodeId> order = optimized_.topological_order().value();
    for (ir::NodeId id : order) {
      const ir::Node& node = optimized_.node(id);
      // A folded node copied in from outside and kept as it was: the outer one still computes it.
      const bool outside = std::all_of(node.outputs.begin(), node.outputs.end(),
                                       [&](ir::ValueId output) { return outer_.count(output) != 0; });
      if (!outside) added.push_back(copy_node(node));
    }
    Stitched stitched;
    for (std::size_t i = 0; i < part_.outer_outputs.size(); ++i) {
      stitched.outputs.push_back(outer(optimized_.outputs()[i]));
      graph_.replace_all_uses(part_.outer_outputs[i], stitched.outputs.back());
    }
    graph_.remove_dead_nodes();
    for (ir::NodeId id : added) {
      if (graph_.has_node(id)) stitched.nodes.push_back(id);
    }
    return stitched;
  }

 private:
  ir::ValueId outer(ir::ValueId inner) {
    if (inner == ir::kNoValue) return ir::kNoValue;
    const auto found = outer_.find(inner);
    if (found != outer_.end()) return found->second;
    // A weight: the outer one it was extracted from, or one a rewrite made.
    const auto weight = part_.outer_weights.find(inner);
    const ir::Value& value = optimized_.value(inner);
    const ir::ValueId made = weight != part_.outer_weights.end() ? weight->second : graph_.add_weight(value.name, value.data);
    outer_[inner] = made;
    return made;
  }

  ir::NodeId copy_node(const ir::Node& node) {
    return add_copy(graph_, optimized_, node, [&](ir::ValueId input) { return outer(input); }, outer_);
  }

  ir::Graph& graph_;
  const Subgraph& part_;
  const ir::Graph& optimized_;
  std::unordered_map<ir::ValueId, ir::ValueId> outer_;
};

/// Whether a node of kind `op` may be put around a part for timing (with_neighbours): not a
/// convolution, a matrix product, a recurrent or an opaque node, whose time would swamp the
/// part's.
bool fusable_neighbour(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::kOpaque:
    case ir::OpKind::kConv:
    case ir::OpKind::kConvTranspose:
    case ir::OpKind::kMatMul:
    case ir::OpKind::kGemm:
    case ir::OpKind::kEinsum:
    case ir::OpKind::kLSTM: return false;
    default: return true;
  }
}

/// An opaque ai.onnx node of type `op` whose inputs past the first (scale, zero point) are all
/// weights.
bool is_quantization_node(const ir::Graph& graph, ir::NodeId id, const std::string& op) {
  const ir::Node& node = graph.node(id);
  if (!node.opaque || node.opaque->op_type != op || !node.opaque->domain.empty()) return false;
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue || node.outputs.size() != 1) return false;
  return std::all_of(node.inputs.begin() + 1, node.inputs.end(), [&](ir::ValueId input) {
    return input == ir::kNoValue || graph.value(input).kind == ir::ValueKind::kWeight;
  });
}

/// Builds QuantizationContext::around's graph: the copied DequantizeLinear nodes, `graph`'s
/// nodes, then the copied QuantizeLinear nodes.
class ContextBuilder {
 public:
  ContextBuilder(const ir::Graph& outer, const Subgraph& part, const std::vector<ir::NodeId>& dequantizers,
                 const std::vector<std::vector<ir::NodeId>>& quantizers, const ir::Graph& graph)
      : outer_(outer), part_(part), dequantizers_(dequantizers), quantizers_(quantizers), graph_(graph) {
    context_.set_model_info(graph.model_info());
    context_.set_graph_name(graph.name());
  }

  ir::Graph run() {
    for (std::size_t i = 0; i < graph_.inputs().size(); ++i) {
      const ir::ValueId input = graph_.inputs()[i];
      if (dequantizers_[i] != -1) {
        inner_[input] = copy_outer(dequantizers_[i], {graph_.value(input).type, graph_.value(input).name});
        continue;
      }
      // One context input per outer value: the part may read a quantized value both as it is
      // and through a DequantizeLinear copied in front.
      const ir::ValueId outer = part_.outer_inputs[i];
      auto found = outer_to_context_.find(outer);
      if (found == outer_to_context_.end()) {
        found = outer_to_context_.emplace(outer, context_.add_input(graph_.value(input).name, graph_.value(input).type)).first;
      }
      inner_[input] = found->second;
    }
    const std::vector<ir::NodeId> order = graph_.topological_order().value();
    for (ir::NodeId id : order) {
      add_copy(context_, graph_, graph_.node(id), [&](ir::ValueId input) { return inner(input); }, inner_);
    }
    std::vector<ir::ValueId> outputs;
    for (std::size_t j = 0; j < graph_.outputs().size(); ++j) {
      const ir::ValueId value = inner(graph_.outputs()[j]);
      if (quantizers_[j].empty()) {
        outputs.push_back(value);
        continue;
      }
      // The part's output is what the outer quantizers read.
      outer_to_context_[part_.outer_outputs[j]] = value;
      for (ir::NodeId id : quantizers_[j]) {
        const ir::Value& made = outer_.value(outer_.node(id).outputs[0]);
        outputs.push_back(copy_outer(id, {made.type, made.name}));
      }
    }
    context_.set_outputs(outputs);
    return std::move(context_);
  }

 private:
  /// A copy of the outer node `id` (one output, typed and named `output`); each input is the
  /// context's value for the outer one: where there is none yet, a copy of the weight, or a new
  /// input of the computed value's name and type.
  ir::ValueId copy_outer(ir::NodeId id, const ir::OutputSpec& output) {
    const ir::Node& node = outer_.node(id);
    std::vector<ir::ValueId> inputs;
    for (ir::ValueId input : node.inputs) {
      if (input == ir::kNoValue) {
        inputs.push_back(ir::kNoValue);
        continue;
      }
      auto found = outer_to_context_.find(input);
      if (found == outer_to_context_.end()) {
        const ir::Value& value = outer_.value(input);
        const ir::ValueId made = value.kind == ir::ValueKind::kWeight ? context_.add_weight(value.name, value.data)
                                                                      : context_.add_input(name_of(outer_, input), value.type);
        found = outer_to_context_.emplace(input, made).first;
      }
      inputs.push_back(found->second);
    }
    const ir::NodeId copy = context_.add_node(node.op, std::move(inputs), {output}, node.attrs, node.name, node.opaque);
    return context_.node(copy).outputs[0];
  }

  ir::ValueId inner(ir::ValueId value) {
    if (value == ir::kNoValue) return ir::kNoValue;
    const auto found = inner_.find(value);
    if (found != inner_.end()) return found->second;
    // A weight: one context value for each outer weight, whichever of the part's nodes and the
    // copied quantization nodes reads it first.
    const auto outer = part_.outer_weights.find(value);
    if (outer != part_.outer_weights.end()) {
      const auto shared = outer_to_context_.find(outer->second);
      if (shared != outer_to_context_.end()) return inner_[value] = shared->second;
    }
    const ir::Value& weight = graph_.value(value);
    const ir::ValueId made = context_.add_weight(weight.name, weight.data);
    if (outer != part_.outer_weights.end()) outer_to_context_[outer->second] = made;
    return inner_[value] = made;
  }

  const ir::Graph& outer_;
  const Subgraph& part_;
  const std::vector<ir::NodeId>& dequantizers_;
  const std::vector<std::vector<ir::NodeId>>& quantizers_;
  const ir::Graph& graph_;
  ir::Graph context_;
  std::unordered_map<ir::ValueId, ir::ValueId> inner_;             // graph_'s value → context's
  std::unordered_map<ir::ValueId, ir::ValueId> outer_to_context_;  // outer value → context's
};

}  // namespace

std::vector<ir::NodeId> convex_hull(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes,
                                    const std::vector<std::vector<std::pair<ir::NodeId, int32_t>>>& consumers) {
  auto reach = [&](bool forward) {
    std::vector<bool> seen(static_cast<std::size_t>(graph.node_capacity()), false);
    std::vector<ir::NodeId> stack(nodes.begin(), nodes.end());
    for (ir::NodeId id : nodes) seen[static_cast<std::size_t>(id)] = true;
    while (!stack.empty()) {
      const ir::Node& node = graph.node(stack.back());
      stack.pop_back();
      std::vector<ir::NodeId> next;
      for (ir::ValueId value : forward ? node.outputs : node.inputs) {
        if (value == ir::kNoValue) continue;
        if (forward) {
          for (const auto& use : consumers[static_cast<std::size_t>(value)]) next.push_back(use.first);
        } else if (graph.value(value).kind == ir::ValueKind::kIntermediate) {
          next.push_back(graph.value(value).producer);
        }
      }
      for (ir::NodeId id : next) {
        if (!seen[static_cast<std::size_t>(id)]) {
          seen[static_cast<std::size_t>(id)] = true;
          stack.push_back(id);
        }
      }
    }
    return seen;
  };
  const std::vector<bool> below = reach(true);
  const std::vector<bool> above = reach(false);
  std::vector<ir::NodeId> hull;
  for (ir::NodeId id : graph.node_ids()) {
    if (below[static_cast<std::size_t>(id)] && above[static_cast<std::size_t>(id)]) hull.push_back(id);
  }
  return hull;
}

std::vector<ir::NodeId> convex_hull(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  return convex_hull(graph, nodes, graph.consumers());
}

std::vector<ir::NodeId> with_neighbours(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes, int depth) {
  const auto consumers = graph.consumers();
  std::vector<ir::NodeId> grown = nodes;
  std::unordered_set<ir::NodeId> members(nodes.begin(), nodes.end());
  std::vector<ir::NodeId> frontier = nodes;
  for (int step = 0; step < depth && !frontier.empty(); ++step) {
    std::vector<ir::NodeId> candidates;
    for (ir::NodeId id : frontier) {
      const ir::Node& node = graph.node(id);
      for (ir::ValueId output : node.outputs) {
        if (output == ir::kNoValue) continue;
        for (const auto& use : consumers[static_cast<std::size_t>(output)]) candidates.push_back(use.first);
      }
      for (ir::ValueId input : node.inputs) {
        if (input != ir::kNoValue && graph.value(input).kind == ir::ValueKind::kIntermediate) {
          candidates.push_back(graph.value(input).producer);
        }
      }
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    std::vector<ir::NodeId> next;
    for (ir::NodeId id : candidates) {
      if (members.count(id) != 0 || !fusable_neighbour(graph.node(id).op)) continue;
      grown.push_back(id);
      if (convex_hull(graph, grown, consumers).size() == grown.size()) {
        members.insert(id);
        next.push_back(id);
      } else {
        grown.pop_back();
      }
    }
    frontier = std::move(next);
  }
  return grown;
}

QuantizationContext::QuantizationContext(const ir::Graph& outer, const Subgraph& part) : outer_(outer), part_(part) {
  for (ir::ValueId input : part.outer_inputs) {
    const ir::Value& made = outer.value(input);
    const bool dequantized = made.kind == ir::ValueKind::kIntermediate &&
                             is_quantization_node(outer, made.producer, "DequantizeLinear");
    dequantizers_.push_back(dequantized ? made.producer : -1);
    empty_ = empty_ && !dequantized;
  }
  const std::unordered_set<ir::NodeId> members(part.nodes.begin(), part.nodes.end());
  const auto readers = outer.consumers();
  for (ir::ValueId output : part.outer_outputs) {
    std::vector<ir::NodeId>& found = quantizers_.emplace_back();
    if (std::find(outer.outputs().begin(), outer.outputs().end(), output) != outer.outputs().end()) continue;
    for (const auto& [reader, index] : readers[output]) {
      if (members.count(reader) != 0) continue;
      if (index != 0 || !is_quantization_node(outer, reader, "QuantizeLinear")) {
        found.clear();
        break;
      }
      found.push_back(reader);
    }
    empty_ = empty_ && found.empty();
  }
}

ir::Graph QuantizationContext::around(const ir::Graph& graph) const {
  if (empty_) return graph;
  return ContextBuilder(outer_, part_, dequantizers_, quantizers_, graph).run();
}

Subgraph extract(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  return Extractor(graph, nodes).run();
}

Stitched stitch(ir::Graph& graph, const Subgraph& part, const ir::Graph& optimized) {
  return Stitcher(graph, part, optimized).run();
}

TimingContext::TimingContext(const ir::Graph& outer, const Subgraph& part, int depth)
    : outer_(outer), part_(part), wide_(with_neighbours(outer, part.nodes, depth)) {
  if (wide_.size() == part.nodes.size()) {
    quantization_.emplace(outer, part);
    original_ = quantization_->around(part.graph);
  } else {
    const Subgraph before = extract(outer, wide_);
    original_ = QuantizationContext(outer, before).around(before.graph);
  }
}

ir::Graph TimingContext::around(const ir::Graph& candidate) const {
  if (quantization_) return quantization_->around(candidate);
  ir::Graph changed = outer_;
  std::vector<ir::NodeId> kept = stitch(changed, part_, candidate).nodes;
  const std::unordered_set<ir::NodeId> inside(part_.nodes.begin(), part_.nodes.end());
  for (ir::NodeId id : wide_) {
    if (inside.count(id) == 0 && changed.has_node(id)) kept.push_back(id);
  }
  const Subgraph after = extract(changed, kept);
  return QuantizationContext(changed, after).around(after.graph);
}

}  // namespace graphsub::search
