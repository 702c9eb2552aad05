// Graph construction, editing, ordering and hashing.
#include "ir/graph.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "ir/hash.h"

namespace graphsub::ir {

int64_t ModelInfo::onnx_opset() const {
  for (const auto& [domain, version] : opsets) {
    if (domain.empty() || domain == "ai.onnx") return version;
  }
  return 0;
}

ValueId Graph::add_value(Value value) {
  forget_order();
  values_.push_back(std::make_shared<const Value>(std::move(value)));
  return static_cast<ValueId>(values_.size() - 1);
}

ValueId Graph::add_input(std::string name, TensorType type, TensorPtr default_data) {
  Value value;
  value.hash = hash_string(hash_combine(kHashSeed, 1), name);
  value.name = std::move(name);
  value.type = std::move(type);
  value.kind = ValueKind::kInput;
  value.data = std::move(default_data);
  ValueId id = add_value(std::move(value));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_weight(std::string name, TensorPtr data) {
  if (!data) throw std::invalid_argument("weight '" + name + "' has no data");
  Value value;
  value.name = std::move(name);
  value.type = TensorType{data->dtype(), Shape::of(data->dims())};
  value.kind = ValueKind::kWeight;
  value.hash = hash_combine(hash_combine(kHashSeed, 2), data->content_hash());
  value.data = std::move(data);
  return add_value(std::move(value));
}

NodeId Graph::add_node(OpKind op, std::vector<ValueId> inputs, const std::vector<OutputSpec>& outputs,
                       Attributes attrs, std::string name, std::shared_ptr<const OpaqueInfo> opaque) {
  for (ValueId input : inputs) {
    if (input != kNoValue && !has_value(input)) {
      throw std::invalid_argument("node '" + name + "' reads a value that does not exist");
    }
  }
  const auto id = static_cast<NodeId>(nodes_.size());
  auto node = std::make_shared<Node>();
  node->op = op;
  node->name = std::move(name);
  node->attrs = std::move(attrs);
  node->inputs = std::move(inputs);
  node->opaque = std::move(opaque);
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    Value value;
    value.name = outputs[i].name;
    value.type = outputs[i].type;
    value.producer = id;
    value.output_index = static_cast<int32_t>(i);
    node->outputs.push_back(add_value(std::move(value)));
  }
  forget_order();
  nodes_.push_back(std::move(node));
  ++live_nodes_;
  return id;
}

void Graph::set_outputs(std::vector<ValueId> outputs) {
  output_names_.clear();
  for (ValueId id : outputs) output_names_.push_back(value(id).name);
  outputs_ = std::move(outputs);
}

std::vector<NodeId> Graph::node_ids() const {
  std::vector<NodeId> ids;
  ids.reserve(live_nodes_);
  for (NodeId id = 0; id < node_capacity(); ++id) {
    if (nodes_[id]) ids.push_back(id);
  }
  return ids;
}

Node& Graph::mutable_node(NodeId id) {
  forget_order();
  auto copy = std::make_shared<Node>(*nodes_.at(id));
  Node& node = *copy;
  nodes_[id] = std::move(copy);
  return node;
}

Value& Graph::mutable_value(ValueId id) {
  forget_order();
  auto copy = std::make_shared<Value>(*values_.at(id));
  Value& value = *copy;
  values_[id] = std::move(copy);
  return value;
}

void Graph::set_attributes(NodeId id, Attributes attrs) { mutable_node(id).attrs = std::move(attrs); }

void Graph::set_type(ValueId id, TensorType type) { mutable_value(id).type = std::move(type); }

void Graph::set_name(ValueId id, std::string name) { mutable_value(id).name = std::move(name); }

void Graph::replace_all_uses(ValueId from, ValueId to) {
  for (NodeId id = 0; id < node_capacity(); ++id) {
    if (!nodes_[id]) continue;
    const std::vector<ValueId>& inputs = nodes_[id]->inputs;
    if (std::find(inputs.begin(), inputs.end(), from) == inputs.end()) continue;
    for (ValueId& input : mutable_node(id).inputs) {
      if (input == from) input = to;
    }
  }
  for (ValueId& output : outputs_) {
    if (output == from) output = to;
  }
}

void Graph::remove_node(NodeId id) {
  if (!has_node(id)) throw std::invalid_argument("remove_node: no node " + std::to_string(id));
  forget_order();
  for (ValueId output : nodes_[id]->outputs) values_[output] = nullptr;
  nodes_[id] = nullptr;
  --live_nodes_;
}

std::size_t Graph::remove_dead_nodes() {
  std::vector<char> live_value(values_.size(), 0);
  for (ValueId id : outputs_) live_value[id] = 1;
  std::size_t removed = 0;
  // Ids grow along edges only for graphs built in order; walk a topological order in reverse.
  auto order = topological_order();
  if (!order) throw std::logic_error("remove_dead_nodes: the graph has a cycle");
  for (auto it = order->rbegin(); it != order->rend(); ++it) {
    const Node& node = *nodes_[*it];
    bool needed = false;
    for (ValueId output : node.outputs) needed = needed || live_value[output];
    if (!needed) {
      remove_node(*it);
      ++removed;
      continue;
    }
    for (ValueId input : node.inputs) {
      if (input != kNoValue) live_value[input] = 1;
    }
  }
  return removed;
}

std::optional<std::vector<NodeId>> Graph::topological_order() const {
  if (const auto known = std::atomic_load(&order_memo_.order)) return *known;
  auto order = std::make_shared<const std::optional<std::vector<NodeId>>>(ordered());
  std::atomic_store(&order_memo_.order, order);
  return *order;
}

std::optional<std::vector<NodeId>> Graph::ordered() const {
  // The readers of each node in one array (first[p] .. first[p + 1] for producer p): the search
  // orders every graph it makes, and a vector per node was most of this function's time.
  const std::size_t count = nodes_.size();
  std::vector<int32_t> pending(count, 0);
  std::vector<int32_t> first(count + 1, 0);
  const auto producer_of = [this](ValueId input) -> NodeId {
    return input == kNoValue || !values_[input] ? NodeId{-1} : values_[input]->producer;
  };
  for (NodeId id = 0; id < node_capacity(); ++id) {
    if (!nodes_[id]) continue;
    for (ValueId input : nodes_[id]->inputs) {
      const NodeId producer = producer_of(input);
      if (producer < 0) continue;
      ++pending[id];
      ++first[static_cast<std::size_t>(producer) + 1];
    }
  }
  for (std::size_t i = 0; i < count; ++i) first[i + 1] += first[i];
  std::vector<NodeId> readers(static_cast<std::size_t>(first[count]));
  std::vector<int32_t> next(first.begin(), first.end() - 1);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<NodeId>> ready;
  for (NodeId id = 0; id < node_capacity(); ++id) {
    if (!nodes_[id]) continue;
    for (ValueId input : nodes_[id]->inputs) {
      const NodeId producer = producer_of(input);
      if (producer >= 0) readers[static_cast<std::size_t>(next[static_cast<std::size_t>(producer)]++)] = id;
    }
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<NodeId> order;
  order.reserve(live_nodes_);
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (int32_t k = first[static_cast<std::size_t>(id)]; k < first[static_cast<std::size_t>(id) + 1]; ++k) {
      const NodeId reader = readers[static_cast<std::size_t>(k)];
      if (--pending[static_cast<std::size_t>(reader)] == 0) ready.push(reader);
    }
  }
  if (order.size() != live_nodes_) return std::nullopt;
  return order;
}

std::vector<std::vector<std::pair<NodeId, int32_t>>> Graph::consumers() const {
  std::vector<std::vector<std::pair<NodeId, int32_t>>> uses(values_.size());
  for (NodeId id = 0; id < node_capacity(); ++id) {
    if (!nodes_[id]) continue;
    const std::vector<ValueId>& inputs = nodes_[id]->inputs;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] != kNoValue) uses[inputs[i]].emplace_back(id, static_cast<int32_t>(i));
    }
  }
  return uses;
}

bool Graph::is_weight_only(NodeId id) const {
  for (ValueId input : node(id).inputs) {
    if (input != kNoValue && value(input).kind != ValueKind::kWeight) return false;
  }
  return true;
}

std::vector<uint64_t> Graph::node_hashes(SymmetricOps symmetric) const {
  return node_hashes_with([this](ValueId id) { return values_[id]->hash; }, symmetric);
}

std::vector<uint64_t> Graph::node_hashes_with(const std::function<uint64_t(ValueId)>& leaf,
                                              SymmetricOps symmetric) const {
  auto order = topological_order();
  if (!order) throw std::logic_error("node_hashes: the graph has a cycle");
  std::vector<uint64_t> hashes(nodes_.size(), 0);
  auto value_hash = [&](ValueId id) -> uint64_t {
    if (id == kNoValue) return 0;
    const Value& value = *values_[id];
    if (value.producer < 0) return leaf(id);
    return hash_combine(hashes[value.producer], static_cast<uint64_t>(value.output_index));
  };
  for (NodeId id : *order) {
    const Node& node = *nodes_[id];
    uint64_t hash = hash_combine(kHashSeed, static_cast<uint64_t>(node.op));
    hash = hash_combine(hash, node.attrs.hash());
    if (node.opaque) hash = hash_string(hash_string(hash, node.opaque->op_type), node.opaque->onnx_node);
    if (symmetric && node.inputs.size() == 2 && symmetric(node.op)) {
      const uint64_t a = value_hash(node.inputs[0]);
      const uint64_t b = value_hash(node.inputs[1]);
      hash = hash_combine(hash_combine(hash, std::min(a, b)), std::max(a, b));
    } else {
      for (ValueId input : node.inputs) hash = hash_combine(hash, value_hash(input));
    }
    hashes[id] = hash;
  }
  return hashes;
}

uint64_t Graph::structural_hash(SymmetricOps symmetric) const {
  return outputs_hash(node_hashes(symmetric), [this](ValueId id) { return values_[id]->hash; });
}

namespace {

/// A floating-point weight of Graph::kLargeWeight elements or more: what timing_hash counts by
/// its type, and replica_hash by its type and whether its elements are all one number.
bool counts_by_type(const Value& value) {
  const DataType dtype = value.type.dtype;
  const bool floating = dtype == DataType::kFloat || dtype == DataType::kFloat16 || dtype == DataType::kDouble ||
                        dtype == DataType::kBfloat16;
  return value.kind == ValueKind::kWeight && floating && value.data &&
         value.data->num_elements() >= Graph::kLargeWeight;
}

}  // namespace

uint64_t Graph::timing_hash() const {
  std::unordered_map<ValueId, uint64_t> positions;
  for (std::size_t i = 0; i < inputs_.size(); ++i) positions.emplace(inputs_[i], i);
  auto leaf = [&](ValueId id) -> uint64_t {
    const Value& value = *values_[id];
    const DataType dtype = value.type.dtype;
    if (value.kind == ValueKind::kInput) {  // its shape, at the sizes measured, is the caller's
      const auto position = positions.find(id);
      const uint64_t where = position == positions.end() ? ~uint64_t{0} : position->second;
      return hash_combine(hash_combine(hash_combine(kHashSeed, 3), where), static_cast<uint64_t>(dtype));
    }
    if (counts_by_type(value)) return hash_string(hash_combine(kHashSeed, 4), to_string(value.type));
    return value.hash;
  };
  return outputs_hash(node_hashes_with(leaf, nullptr), leaf);
}

namespace {

/// A type's dtype and dims.
uint64_t type_hash(uint64_t hash, const TensorType& type) {
  hash = hash_combine(hash_combine(hash, static_cast<uint64_t>(type.dtype)), type.shape.rank_known);
  for (const Dim& dim : type.shape.dims) hash = hash_string(hash_combine(hash, static_cast<uint64_t>(dim.value)), dim.symbol);
  return hash_combine(hash, type.shape.dims.size());
}

/// The one number every element holds, as `value(x)` reads it (equal as doubles), or nullopt.
std::optional<double> uniform_element(const Tensor& tensor) {
  if (tensor.num_elements() == 0) return std::nullopt;
  const double first = tensor.element_as_double(0);
  for (int64_t i = 1; i < tensor.num_elements(); ++i) {
    if (tensor.element_as_double(i) != first) return std::nullopt;
  }
  return first;
}

}  // namespace

uint64_t Graph::replica_hash() const {
  uint64_t hash = hash_combine(kHashSeed, 5);
  for (NodeId id = 0; id < node_capacity(); ++id) {
    if (!nodes_[id]) {
      hash = hash_combine(hash, ~uint64_t{0});
      continue;
    }
    const Node& node = *nodes_[id];
    hash = hash_combine(hash_combine(hash, static_cast<uint64_t>(node.op)), node.attrs.hash());
    if (node.opaque) hash = hash_string(hash_string(hash, node.opaque->op_type), node.opaque->onnx_node);
    for (ValueId input : node.inputs) hash = hash_combine(hash, static_cast<uint64_t>(input));
    hash = hash_combine(hash, node.inputs.size());
    for (ValueId output : node.outputs) hash = hash_combine(hash, static_cast<uint64_t>(output));
    hash = hash_combine(hash, node.outputs.size());
  }
  for (ValueId id = 0; id < value_capacity(); ++id) {
    if (!values_[id]) {
      hash = hash_combine(hash, ~uint64_t{0});
      continue;
    }
    const Value& value = *values_[id];
    hash = type_hash(hash_combine(hash, static_cast<uint64_t>(value.kind)), value.type);
    if (value.kind == ValueKind::kIntermediate) {
      hash = hash_combine(hash_combine(hash, static_cast<uint64_t>(value.producer)), value.output_index);
      continue;
    }
    hash = hash_combine(hash, value.data != nullptr);
    if (!value.data) continue;
    if (value.kind != ValueKind::kWeight) {
      hash = hash_combine(hash, value.data->content_hash());  // an input's default
      continue;
    }
    if (!counts_by_type(value)) {
      hash = hash_combine(hash, value.hash);  // the weight's content
      continue;
    }
    const std::optional<double> uniform = uniform_element(*value.data);
    uint64_t bits = 0;
    if (uniform) std::memcpy(&bits, &*uniform, sizeof bits);
    hash = hash_combine(hash_combine(hash, uniform.has_value()), bits);
  }
  for (ValueId id : inputs_) hash = hash_combine(hash, static_cast<uint64_t>(id));
  hash = hash_combine(hash, inputs_.size());
  for (ValueId id : outputs_) hash = hash_combine(hash, static_cast<uint64_t>(id));
  return hash_combine(hash, outputs_.size());
}

uint64_t Graph::outputs_hash(const std::vector<uint64_t>& node_hashes,
                             const std::function<uint64_t(ValueId)>& leaf) const {
  uint64_t hash = kHashSeed;
  for (ValueId id : outputs_) {
    const Value& value = *values_[id];
    uint64_t out = value.producer < 0 ? leaf(id) : hash_combine(node_hashes[value.producer], value.output_index);
    hash = hash_combine(hash, out);
  }
  return hash;
}

}  // namespace graphsub::ir
