// The computation graph: nodes and values, with weights shared between copies.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/attributes.h"
#include "ir/op_kind.h"
#include "ir/shape.h"
#include "ir/tensor.h"

namespace graphsub::ir {

using ValueId = int32_t;
using NodeId = int32_t;

/// Marks an omitted optional input (ONNX's empty input name).
inline constexpr ValueId kNoValue = -1;

/// Where a value comes from.
enum class ValueKind : uint8_t {
  kInput,         ///< A graph input (possibly with a default initializer, see Value::data).
  kWeight,        ///< A constant: an initializer or a folded Constant node.
  kIntermediate,  ///< An output of a node.
};

/// A tensor flowing through the graph.
struct Value {
  std::string name;  ///< Name in the ONNX model; empty for values made by rewrites until export.
  TensorType type;  ///< kUndefined dtype for a value that is not a tensor (sequence, map, optional).
  ValueKind kind = ValueKind::kIntermediate;
  NodeId producer = -1;   ///< Producing node, for intermediates.
  int32_t output_index = 0;
  TensorPtr data;         ///< Weight data; for an input, its default initializer if any.
  uint64_t hash = 0;      ///< Structural hash of an input or weight (name or content).
};

/// What an opaque node needs to be written back exactly as it was read.
struct OpaqueInfo {
  std::string op_type;
  std::string domain;
  std::string onnx_node;             ///< Serialized NodeProto (attributes, subgraphs, doc string).
  int32_t num_explicit_inputs = 0;   ///< Inputs past this are outer-scope values its subgraphs read.
  std::vector<std::string> implicit_names;  ///< The names those subgraphs use for them.
};

/// One operator application.
struct Node {
  OpKind op = OpKind::kOpaque;
  std::string name;
  Attributes attrs;              ///< Canonical parameters (modelled ops only).
  std::vector<ValueId> inputs;   ///< kNoValue for an omitted optional input.
  std::vector<ValueId> outputs;
  std::shared_ptr<const OpaqueInfo> opaque;  ///< Set exactly when op == kOpaque.
};

/// The ai.onnx opset export writes for a graph built without an imported model (no ModelInfo).
inline constexpr int64_t kDefaultOnnxOpset = 17;

/// Model-level facts carried from import to export untouched.
struct ModelInfo {
  int64_t ir_version = 8;
  std::vector<std::pair<std::string, int64_t>> opsets;  ///< (domain, version); "" is ai.onnx.
  std::string onnx_shell;  ///< Serialized ModelProto with the graph's contents removed.
  /// Whether export writes the inferred types of intermediate values (value_info). A runtime
  /// that reads them may fuse more than it could in a model without them, and not always for the
  /// better (onnxruntime's SkipLayerNormalization on a CPU), so the measured target tries both.
  bool value_info = true;
  /// Version of the default (ai.onnx) domain, 0 when absent.
  int64_t onnx_opset() const;
};

/// A node output to create with add_node: its type and (optional) ONNX name.
struct OutputSpec {
  TensorType type;
  std::string name;
};

/// A computation graph. Nodes and values live in id-indexed slots of shared immutable objects, so a
/// copy costs two vectors of pointers (no weight or node is duplicated) and a rewrite that touches k
/// nodes allocates O(k). Removed nodes leave an empty slot; ids are never reused.
class Graph {
 public:
  /// Adds a graph input; `default_data` is an initializer that also names a graph input.
  ValueId add_input(std::string name, TensorType type, TensorPtr default_data = nullptr);
  /// Adds a constant.
  ValueId add_weight(std::string name, TensorPtr data);
  /// Adds a node, creating its output values; returns its id.
  NodeId add_node(OpKind op, std::vector<ValueId> inputs, const std::vector<OutputSpec>& outputs,
                  Attributes attrs = {}, std::string name = {},
                  std::shared_ptr<const OpaqueInfo> opaque = nullptr);
  /// Declares the graph outputs, in order. Their names are fixed here and survive rewrites.
  void set_outputs(std::vector<ValueId> outputs);

  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  /// The ONNX names of the graph outputs, in order.
  const std::vector<std::string>& output_names() const { return output_names_; }

  /// Slot counts: every id below these was issued (slots may be empty).
  NodeId node_capacity() const { return static_cast<NodeId>(nodes_.size()); }
  ValueId value_capacity() const { return static_cast<ValueId>(values_.size()); }
  bool has_node(NodeId id) const { return id >= 0 && id < node_capacity() && nodes_[id] != nullptr; }
  bool has_value(ValueId id) const { return id >= 0 && id < value_capacity() && values_[id] != nullptr; }
  const Node& node(NodeId id) const { return *nodes_.at(id); }
  const Value& value(ValueId id) const { return *values_.at(id); }
  /// Ids of live nodes in id order.
  std::vector<NodeId> node_ids() const;
  std::size_t node_count() const { return live_nodes_; }

  /// Replaces a node's attributes (copy-on-write of that node only).
  void set_attributes(NodeId id, Attributes attrs);
  /// Replaces a value's type.
  void set_type(ValueId id, TensorType type);
  /// Renames a value.
  void set_name(ValueId id, std::string name);
  /// Points every use of `from` (node inputs and graph outputs) at `to`.
  void replace_all_uses(ValueId from, ValueId to);
  /// Removes a node and its output values; uses of them must be gone already.
  void remove_node(NodeId id);
  /// Removes every node none of whose outputs reach a graph output; returns how many.
  std::size_t remove_dead_nodes();

  /// Live nodes such that every node comes after the producers of its inputs (ties by id, so the
  /// order is deterministic); nullopt when the graph has a cycle.
  std::optional<std::vector<NodeId>> topological_order() const;
  bool has_cycle() const { return !topological_order().has_value(); }
  /// For each value id, the (node, input index) pairs that read it.
  std::vector<std::vector<std::pair<NodeId, int32_t>>> consumers() const;
  /// True when every input of the node is a weight (so export can fold it).
  bool is_weight_only(NodeId id) const;

  /// Which ops' two inputs count in either order in a hash (ops::is_commutative).
  using SymmetricOps = bool (*)(OpKind);

  /// Merkle hash per node (op, attributes, input hashes), indexed by node id; 0 for empty slots.
  /// With `symmetric`, a two-input node of an op it names hashes its inputs in either order
  /// alike. Requires an acyclic graph.
  std::vector<uint64_t> node_hashes(SymmetricOps symmetric = nullptr) const;
  /// Hash of the whole graph: the hashes of the graph outputs, in order. Equal graphs hash equal
  /// whatever their node ids; with `symmetric`, also graphs that differ only in the operand
  /// order of such nodes (a search's set of graphs seen).
  uint64_t structural_hash(SymmetricOps symmetric = nullptr) const;
  /// Hash of what the graph's run time depends on: structural_hash, except that a graph input
  /// counts by its position and element type rather than its name (its shape is the caller's
  /// to add, at the sizes it runs at), and a floating-point weight of
  /// kLargeWeight elements or more by its type rather than its values (small weights, such as
  /// a Resize's scales or a Pow's exponent, and integer ones, such as shapes and indices, steer
  /// what is computed and count by value). Two layers of a model that differ only in their
  /// weights hash alike, so a measurement of one stands for the other.
  uint64_t timing_hash() const;
  static constexpr int64_t kLargeWeight = 64;
  /// Hash of the graph as built, ids included: every node in id order (op, attributes, input and
  /// output ids), every value in id order (kind, type, producer), the inputs and outputs, and
  /// each weight as timing_hash counts it, a large floating-point one together with whether its
  /// elements all equal one number and which (what a rule's `value(x)` reads). Names do not
  /// count. Two graphs that hash alike differ only in names and in the values of large
  /// non-uniform weights: the matcher finds the same matches in both (the same ids), a rewrite
  /// applies to both alike, and their operators have the same timing signatures.
  uint64_t replica_hash() const;

  const std::shared_ptr<const ModelInfo>& model_info() const { return model_info_; }
  void set_model_info(std::shared_ptr<const ModelInfo> info) { model_info_ = std::move(info); }
  /// The graph's name in the ONNX model.
  const std::string& name() const { return name_; }
  void set_graph_name(std::string name) { name_ = std::move(name); }

 private:
  ValueId add_value(Value value);
  /// topological_order, computed.
  std::optional<std::vector<NodeId>> ordered() const;
  Node& mutable_node(NodeId id);
  Value& mutable_value(ValueId id);
  /// node_hashes with `leaf` hashing the values no node produces.
  std::vector<uint64_t> node_hashes_with(const std::function<uint64_t(ValueId)>& leaf, SymmetricOps symmetric) const;
  /// The hash of the graph outputs, from node_hashes_with's result and the same `leaf`.
  uint64_t outputs_hash(const std::vector<uint64_t>& node_hashes, const std::function<uint64_t(ValueId)>& leaf) const;

  /// topological_order's result, kept until the graph changes: a search orders each graph it
  /// makes several times (to remove dead nodes, to fold, to cost, to hash). Copies share it.
  /// Threads may order one graph at once (const), so it is read and set atomically, copies
  /// included; a graph is changed by one thread only, and every change drops it.
  struct OrderMemo {
    std::shared_ptr<const std::optional<std::vector<NodeId>>> order;
    OrderMemo() = default;
    OrderMemo(const OrderMemo& other) : order(std::atomic_load(&other.order)) {}
    OrderMemo& operator=(const OrderMemo& other) {
      std::atomic_store(&order, std::atomic_load(&other.order));
      return *this;
    }
  };
  void forget_order() { order_memo_.order.reset(); }

  mutable OrderMemo order_memo_;
  std::vector<std::shared_ptr<const Node>> nodes_;
  std::vector<std::shared_ptr<const Value>> values_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::vector<std::string> output_names_;
  std::size_t live_nodes_ = 0;
  std::shared_ptr<const ModelInfo> model_info_;
  std::string name_;
};

}  // namespace graphsub::ir
