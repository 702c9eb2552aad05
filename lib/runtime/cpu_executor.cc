// The reference executor.
#include "runtime/cpu_executor.h"

#include <set>

#include "ir/error.h"
#include "ops/operands.h"
#include "ops/registry.h"

namespace graphsub::runtime {
namespace {

ir::TensorType type_of(const ir::Tensor& tensor) {
  return ir::TensorType{tensor.dtype(), ir::Shape::of(tensor.dims())};
}

std::string op_label(const ir::Node& node) {
  return node.op == ir::OpKind::kOpaque ? node.opaque->op_type : ops::kind_name(node.op);
}

/// Checks a fed tensor against the declared input type: dtype and every known dim.
void check_input(const ir::Value& value, const ir::Tensor& tensor) {
  const ir::TensorType& declared = value.type;
  bool fits = declared.dtype == ir::DataType::kUndefined || declared.dtype == tensor.dtype();
  if (declared.shape.rank_known) {
    fits = fits && declared.shape.rank() == tensor.rank();
    for (std::size_t i = 0; fits && i < declared.shape.rank(); ++i) {
      const ir::Dim& dim = declared.shape.dims[i];
      fits = !dim.is_known() || dim.value == tensor.dims()[i];
    }
  }
  if (!fits) {
    throw Error("input '" + value.name + "' is " + ir::to_string(type_of(tensor)) +
                ", the graph expects " + ir::to_string(declared));
  }
}

}  // namespace

std::vector<std::string> CpuExecutor::unsupported_ops(const ir::Graph& graph) {
  std::set<std::string> missing;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    if (node.op == ir::OpKind::kOpaque) missing.insert(op_label(node));
  }
  return {missing.begin(), missing.end()};
}

std::vector<ir::Tensor> CpuExecutor::run_node(const ir::Node& node,
                                              const std::vector<const ir::Tensor*>& inputs) {
  if (node.op == ir::OpKind::kOpaque) {
    throw Error("the reference executor has no kernel for " + op_label(node));
  }
  const ops::OpDef& def = ops::op_def(node.op);
  if (ops::is_runtime_form(def, inputs.size())) {
    ops::BoundNode bound = ops::bind_operands(def, node, inputs);
    return run_node(bound.node, bound.data_inputs);
  }
  std::vector<ir::TensorType> types;
  types.reserve(inputs.size());
  for (const ir::Tensor* input : inputs) types.push_back(input ? type_of(*input) : ir::TensorType{});
  ops::InferResult inferred = def.infer(node, types);
  if (!inferred.ok()) throw Error("node '" + node.name + "' (" + def.name + "): " + inferred.error);
  std::vector<ir::Tensor> outputs;
  outputs.reserve(inferred.outputs.size());
  for (const ir::TensorType& type : inferred.outputs) {
    auto sizes = type.shape.sizes();
    outputs.push_back(sizes ? ir::Tensor(type.dtype, *sizes) : ir::Tensor());
  }
  def.kernel(node, inputs, outputs);
  for (const ir::Tensor& output : outputs) {
    if (output.dtype() == ir::DataType::kUndefined) {
      throw Error("node '" + node.name + "' (" + def.name + "): the kernel left an output unset");
    }
  }
  return outputs;
}

TensorMap CpuExecutor::run(const ir::Graph& graph, const TensorMap& inputs) {
  auto order = graph.topological_order();
  if (!order) throw Error("the graph has a cycle");
  std::vector<ir::TensorPtr> slots(graph.value_capacity());
  std::vector<int32_t> remaining_uses(graph.value_capacity(), 0);
  auto consumers = graph.consumers();
  for (std::size_t i = 0; i < consumers.size(); ++i) {
    remaining_uses[i] = static_cast<int32_t>(consumers[i].size());
  }
  for (ir::ValueId id : graph.outputs()) remaining_uses[id] += 1;  // never freed
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& value = graph.value(id);
    auto it = inputs.find(value.name);
    if (it == inputs.end() && !value.data) throw Error("no tensor given for input '" + value.name + "'");
    slots[id] = it != inputs.end() ? it->second : value.data;
    check_input(value, *slots[id]);
  }
  for (ir::NodeId id : *order) {
    const ir::Node& node = graph.node(id);
    std::vector<const ir::Tensor*> args;
    for (ir::ValueId input : node.inputs) {
      if (input == ir::kNoValue) {
        args.push_back(nullptr);
        continue;
      }
      const ir::Value& value = graph.value(input);
      if (value.kind == ir::ValueKind::kWeight) slots[input] = value.data;
      args.push_back(slots[input].get());
    }
    std::vector<ir::Tensor> results = run_node(node, args);
    for (std::size_t i = 0; i < results.size(); ++i) {
      slots[node.outputs[i]] = ir::share(std::move(results[i]));
    }
    for (ir::ValueId input : node.inputs) {
      if (input != ir::kNoValue && --remaining_uses[input] == 0) slots[input] = nullptr;
    }
  }
  TensorMap outputs;
  for (std::size_t i = 0; i < graph.outputs().size(); ++i) {
    ir::ValueId id = graph.outputs()[i];
    const ir::Value& value = graph.value(id);
    outputs[graph.output_names()[i]] = value.kind == ir::ValueKind::kWeight ? value.data : slots[id];
  }
  return outputs;
}

}  // namespace graphsub::runtime
