// Running a whole graph on symbolic tensors, node by node in topological order.
#include "verify/symbolic_executor.h"

#include <optional>
#include <vector>

#include "ir/error.h"

namespace graphsub::verify {
namespace {

/// The type of a value; throws graphsub::Error naming the value when a dim is not known.
const ir::TensorType& static_type(const ir::Value& value) {
  if (value.type.shape.is_static()) return value.type;
  throw Error("value '" + value.name + "' has a dim that is not known: " + ir::to_string(value.type));
}

/// One symbolic execution: the tensors of the values computed so far.
class SymbolicRun {
 public:
  SymbolicRun(Semantics& semantics, const ir::Graph& graph, const std::set<std::string>& free_weights)
      : semantics_(semantics), graph_(graph), free_weights_(free_weights), values_(graph.value_capacity()) {}

  /// The tensor of value `id`: a graph input or weight on first use, else its producer's output.
  const SymTensor& value(ir::ValueId id) {
    std::optional<SymTensor>& slot = values_.at(id);
    if (!slot) slot = leaf(graph_.value(id));
    return *slot;
  }

  /// Computes the outputs of node `id`, whose inputs are computed already.
  void run_node(ir::NodeId id) {
    const ir::Node& node = graph_.node(id);
    std::vector<const SymTensor*> inputs;
    for (ir::ValueId input : node.inputs) inputs.push_back(input == ir::kNoValue ? nullptr : &value(input));
    std::vector<ir::TensorType> types;
    for (ir::ValueId output : node.outputs) types.push_back(static_type(graph_.value(output)));
    std::vector<SymTensor> outputs = semantics_.run(node, inputs, types);
    for (std::size_t i = 0; i < outputs.size(); ++i) values_.at(node.outputs.at(i)) = std::move(outputs[i]);
  }

 private:
  /// A graph input is any real (its default, if it has one, may be overridden); a weight is its
  /// data, or any real when it is free.
  SymTensor leaf(const ir::Value& value) const {
    if (value.kind == ir::ValueKind::kInput) {
      return semantics_.variables(value.name, *static_type(value).shape.sizes());
    }
    if (value.kind != ir::ValueKind::kWeight) {
      throw Error("value '" + value.name + "' is used before it is computed");
    }
    if (free_weights_.count(value.name)) return semantics_.variables(value.name, value.data->dims());
    return semantics_.constant(*value.data);
  }

  Semantics& semantics_;
  const ir::Graph& graph_;
  const std::set<std::string>& free_weights_;
  std::vector<std::optional<SymTensor>> values_;
};

}  // namespace

std::map<std::string, SymTensor> run_symbolic(Semantics& semantics, const ir::Graph& graph,
                                              const std::set<std::string>& free_weights) {
  const std::optional<std::vector<ir::NodeId>> order = graph.topological_order();
  if (!order) throw Error("the graph has a cycle");
  SymbolicRun run(semantics, graph, free_weights);
  for (ir::NodeId id : *order) run.run_node(id);
  std::map<std::string, SymTensor> outputs;
  for (std::size_t i = 0; i < graph.outputs().size(); ++i) {
    outputs.emplace(graph.output_names().at(i), run.value(graph.outputs()[i]));
  }
  return outputs;
}

}  // namespace graphsub::verify
