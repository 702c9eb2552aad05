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
    std::vector<ir::ValueId> inputs;
    for (ir::ValueId input : node.inputs) inputs.push_back(inner(input));
    std::vector<ir::OutputSpec> outputs;
    for (ir::ValueId output : node.outputs) outputs.push_back({outer_.value(output).type, outer_.value(output).name});
    const ir::NodeId copy = part_.graph.add_node(node.op, std::move(inputs), outputs, node.attrs, node.name, node.opaque);
    for (std::size_t k = 0; k < node.outputs.size(); ++k) inner_[node.outputs[k]] = part_.graph.node(copy).outputs[k];
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
    std::vector<ir::ValueId> inputs;
    for (ir::ValueId input : node.inputs) inputs.push_back(outer(input));
    std::vector<ir::OutputSpec> outputs;
    for (ir::ValueId output : node.outputs) outputs.push_back({optimized_.value(output).type, optimized_.value(output).name});
    const ir::NodeId copy = graph_.add_node(node.op, std::move(inputs), outputs, node.attrs, node.name, node.opaque);
    for (std::size_t k = 0; k < node.outputs.size(); ++k) outer_[node.outputs[k]] = graph_.node(copy).outputs[k];
    return copy;
  }

  ir::Graph& graph_;
  const Subgraph& part_;
  const ir::Graph& optimized_;
  std::unordered_map<ir::ValueId, ir::ValueId> outer_;
};

}  // namespace

Subgraph extract(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  return Extractor(graph, nodes).run();
}

Stitched stitch(ir::Graph& graph, const Subgraph& part, const ir::Graph& optimized) {
  return Stitcher(graph, part, optimized).run();
}

}  // namespace graphsub::search
