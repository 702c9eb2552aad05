// Finding the chains that export writes as a fused form, and that form.
#include "cost/written_chains.h"

#include <algorithm>
#include <utility>

#include "ops/registry.h"

namespace graphsub::cost {
namespace {

using Uses = std::vector<std::vector<std::pair<ir::NodeId, int32_t>>>;

/// The only node reading `value`, or -1 when none, several, or the value is a graph output.
ir::NodeId sole_reader(const ir::Graph& graph, const Uses& uses, ir::ValueId value) {
  if (uses[value].size() != 1) return -1;
  const std::vector<ir::ValueId>& outputs = graph.outputs();
  if (std::find(outputs.begin(), outputs.end(), value) != outputs.end()) return -1;
  return uses[value].front().first;
}

/// The fused activation a node applies, or null.
const char* activation_of(ir::OpKind op) {
  switch (op) {
    case ir::OpKind::kRelu:
      return "relu";
    case ir::OpKind::kSigmoid:
      return "sigmoid";
    case ir::OpKind::kTanh:
      return "tanh";
    default:
      return nullptr;
  }
}

bool is_weight(const ir::Graph& graph, const std::vector<bool>& folded, ir::ValueId value) {
  const ir::Value& v = graph.value(value);
  if (v.kind == ir::ValueKind::kWeight) return true;
  return v.kind == ir::ValueKind::kIntermediate && folded[v.producer];
}

/// The summand an Add reading `value` adds to it: its other operand, when the fusion rule's
/// condition on it holds (a Conv's residual: not a weight, the output's type; a MatMul's bias: a
/// weight, no broadcast of the output).
ir::ValueId summand_of(const ir::Graph& graph, const std::vector<bool>& folded, ir::OpKind head,
                       const ir::Node& add, ir::ValueId value) {
  if (add.inputs.size() != 2) return ir::kNoValue;
  const ir::ValueId other = add.inputs[0] == value ? add.inputs[1] : add.inputs[0];
  if (other == value || other == ir::kNoValue) return ir::kNoValue;
  const ir::TensorType& type = graph.value(value).type;
  if (graph.value(add.outputs[0]).type != type) return ir::kNoValue;
  const bool weight = is_weight(graph, folded, other);
  if (head == ir::OpKind::kConv) return !weight && graph.value(other).type == type ? other : ir::kNoValue;
  return weight ? other : ir::kNoValue;
}

/// Whether `summand`, added by `add`, is the output of a plain Conv with bias and no residual
/// that `add` alone reads: a Conv that could take the Add as its residual sum.
bool could_take_add(const ir::Graph& graph, const Uses& uses, const std::vector<bool>& folded,
                    const std::vector<bool>& taken, ir::ValueId summand, ir::NodeId add) {
  const ir::Value& value = graph.value(summand);
  if (value.kind != ir::ValueKind::kIntermediate || taken[value.producer] || folded[value.producer]) return false;
  const ir::Node& maker = graph.node(value.producer);
  if (maker.op != ir::OpKind::kConv || maker.outputs.size() != 1) return false;
  if (maker.attrs.get_string("activation", "none") != "none") return false;
  if (maker.inputs.size() != 3 || maker.inputs[2] == ir::kNoValue) return false;
  return sole_reader(graph, uses, summand) == add;
}

}  // namespace

std::vector<WrittenChain> written_chains(const ir::Graph& graph, const std::vector<bool>& folded) {
  std::vector<WrittenChain> chains;
  const Uses uses = graph.consumers();
  std::vector<bool> taken(graph.node_capacity(), false);
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    if (taken[id] || folded[id]) continue;
    if (node.op != ir::OpKind::kConv && node.op != ir::OpKind::kMatMul) continue;
    if (node.attrs.get_string("activation", "none") != "none" || node.outputs.size() != 1) continue;
    WrittenChain chain;
    chain.head = id;
    chain.output = node.outputs[0];
    ir::NodeId next = sole_reader(graph, uses, chain.output);
    // A Conv takes a residual with its bias (Z needs B); a MatMul a bias C.
    const bool conv = node.op == ir::OpKind::kConv;
    const bool takes_summand = conv ? node.inputs.size() == 3 && node.inputs[2] != ir::kNoValue
                                    : node.inputs.size() == 2;
    if (next >= 0 && !taken[next] && takes_summand && graph.node(next).op == ir::OpKind::kAdd) {
      const ir::ValueId summand = summand_of(graph, folded, node.op, graph.node(next), chain.output);
      if (summand != ir::kNoValue) {
        chain.summand = summand;
        if (conv && could_take_add(graph, uses, folded, taken, summand, next)) {
          chain.other_head = graph.value(summand).producer;
        }
        chain.tail.push_back(next);
        chain.output = graph.node(next).outputs[0];
        next = sole_reader(graph, uses, chain.output);
      }
    }
    if (next >= 0 && !taken[next]) {
      const ir::Node& reader = graph.node(next);
      if (const char* activation = activation_of(reader.op); activation && reader.inputs.size() == 1) {
        chain.activation = activation;
        chain.tail.push_back(next);
        chain.output = reader.outputs[0];
      }
    }
    if (chain.tail.empty()) continue;
    taken[id] = true;
    if (chain.other_head >= 0) taken[chain.other_head] = true;
    for (ir::NodeId member : chain.tail) taken[member] = true;
    chains.push_back(std::move(chain));
  }
  return chains;
}

bool add_fused_form(ir::Graph& graph, const WrittenChain& chain, ir::NodeId& fused) {
  const ir::Node& head = graph.node(chain.head);
  std::vector<ir::ValueId> inputs = head.inputs;
  if (chain.summand != ir::kNoValue) inputs.push_back(chain.summand);
  ir::Attributes attrs = head.attrs;
  attrs.set("activation", chain.activation);
  const ir::TensorType type = graph.value(chain.output).type;
  const ir::NodeId id = graph.add_node(head.op, std::move(inputs), {{type, ""}}, std::move(attrs), head.name);
  const ops::InferResult inferred = ops::infer_node(graph, id);
  if (!inferred.ok() || inferred.outputs.size() != 1 || inferred.outputs[0] != type) return false;
  fused = id;
  return true;
}

WrittenChain swapped(const ir::Graph& graph, const WrittenChain& chain) {
  WrittenChain other = chain;
  other.head = chain.other_head;
  other.other_head = chain.head;
  other.summand = graph.node(chain.head).outputs[0];
  return other;
}

}  // namespace graphsub::cost
