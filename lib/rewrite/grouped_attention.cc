// Grouped-query attention without copies of its keys and values: the queries grouped instead.
#include "rewrite/grouped_attention.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/registry.h"
#include "rewrite/shape_arithmetic.h"

namespace graphsub::rewrite {
namespace {

/// Opset of Shape's start and end.
constexpr int64_t kShapeSliceOpset = 15;
/// Longest chain of per-head nodes followed between a repetition and its product.
constexpr std::size_t kMaxChain = 4;

bool same_dim(const ir::Dim& a, const ir::Dim& b) {
  return (a.is_known() && b.is_known() && a.value == b.value) ||
         (a.is_symbolic() && b.is_symbolic() && a.symbol == b.symbol);
}

/// The entries of a shape operand: the attribute form's, or a computed one's.
std::optional<std::vector<ir::Dim>> shape_entries(const ir::Graph& graph, const ir::Node& node) {
  if (node.inputs.size() == 1) {
    if (!node.attrs.has("shape")) return std::nullopt;
    std::vector<ir::Dim> dims;
    for (int64_t entry : node.attrs.get_ints("shape", {})) dims.push_back(ir::Dim::known(entry));
    return dims;
  }
  if (node.inputs.size() != 2) return std::nullopt;
  return computed_dims(graph, node.inputs[1]);
}

/// True for a weight holding exactly one number.
bool is_single_number(const ir::Graph& graph, ir::ValueId value) {
  const ir::Value& read = graph.value(value);
  return read.kind == ir::ValueKind::kWeight && read.data && read.data->num_elements() == 1;
}

/// True for a node of a chain that treats every (batch, head) matrix alike: a transpose keeping
/// the first two axes, or a multiplication or division of `operand` by one number.
bool is_per_head(const ir::Graph& graph, const ir::Node& node, ir::ValueId operand) {
  if (node.outputs.size() != 1) return false;
  if (node.op == ir::OpKind::kTranspose) {
    const std::vector<int64_t> perm = node.attrs.get_ints("perm", {});
    return node.inputs.size() == 1 && perm.size() == 4 && perm[0] == 0 && perm[1] == 1;
  }
  if (node.inputs.size() != 2) return false;
  if (node.op == ir::OpKind::kMul) {
    const ir::ValueId other = node.inputs[0] == operand ? node.inputs[1] : node.inputs[0];
    return other != operand && is_single_number(graph, other);
  }
  return node.op == ir::OpKind::kDiv && node.inputs[0] == operand && is_single_number(graph, node.inputs[1]);
}

/// One repeat_kv: E = Reshape(Expand(Unsqueeze(X, [2]), [B, KV, R, S, D]), [B, KV * R, S, D]).
struct Repeat {
  ir::ValueId source = ir::kNoValue;    ///< X.
  ir::ValueId repeated = ir::kNoValue;  ///< E.
  int64_t groups = 0;                   ///< KV.
  int64_t copies = 0;                   ///< R.
};

/// A product A · f(E) to group: the chain f in order from E, and the node that multiplies.
struct Product {
  ir::NodeId matmul = -1;
  std::vector<ir::NodeId> chain;
};

/// The node producing `value` if it is an `op`, else null.
const ir::Node* producer_of(const ir::Graph& graph, ir::ValueId value, ir::OpKind op) {
  const ir::Value& read = graph.value(value);
  if (read.kind != ir::ValueKind::kIntermediate) return nullptr;
  const ir::Node& node = graph.node(read.producer);
  return node.op == op ? &node : nullptr;
}

/// R when an Expand of X unsqueezed at axis 2 ([B, KV, 1, S, D]) to `sizes` repeats axis 2 R >= 2
/// times and no other axis: every other entry 1 or the dim already there.
std::optional<int64_t> copies_of(const std::vector<ir::Dim>& sizes, const ir::Shape& x) {
  if (sizes.size() != 5 || !sizes[2].is_known() || sizes[2].value < 2) return std::nullopt;
  const std::vector<ir::Dim> before{x.dims[0], x.dims[1], ir::Dim::known(1), x.dims[2], x.dims[3]};
  for (std::size_t i : {0, 1, 3, 4}) {
    if (!(sizes[i].is_known() && sizes[i].value == 1) && !same_dim(sizes[i], before[i])) return std::nullopt;
  }
  return sizes[2].value;
}

/// True when a Reshape of [B, KV, R, S, D] to `target` gives [B, KV·R, S, D]: each entry a copy
/// (0) of that dim, the size, or at the sequence axis -1 (the element count over B · KV·R · D).
bool merges_heads(const std::vector<ir::Dim>& target, bool allowzero, const ir::Shape& x, int64_t copies) {
  if (target.size() != 4) return false;
  const std::vector<ir::Dim> input{x.dims[0], x.dims[1], ir::Dim::known(copies), x.dims[2], x.dims[3]};
  const std::vector<ir::Dim> wanted{x.dims[0], ir::Dim::known(x.dims[1].value * copies), x.dims[2], x.dims[3]};
  for (std::size_t i = 0; i < 4; ++i) {
    const ir::Dim& entry = target[i];
    const bool copied = entry.is_known() && entry.value == 0 && !allowzero;
    const bool inferred = i == 2 && !entry.is_known() && !entry.is_symbolic() && entry.value == -1;
    if (!inferred && !same_dim(copied ? input[i] : entry, wanted[i])) return false;
  }
  return true;
}

/// The repetition `reshape` ends, if it is one.
std::optional<Repeat> repeat_of(const ir::Graph& graph, ir::NodeId reshape) {
  const ir::Node& last = graph.node(reshape);
  if (last.op != ir::OpKind::kReshape || last.outputs.size() != 1) return std::nullopt;
  const ir::Node* expand = producer_of(graph, last.inputs[0], ir::OpKind::kExpand);
  const ir::Node* unsqueeze = expand ? producer_of(graph, expand->inputs[0], ir::OpKind::kUnsqueeze) : nullptr;
  if (!unsqueeze || unsqueeze->inputs.size() != 1) return std::nullopt;
  const std::vector<int64_t> axes = unsqueeze->attrs.get_ints("axes", {});
  if (axes.size() != 1 || (axes[0] != 2 && axes[0] != -3)) return std::nullopt;
  const ir::ValueId source = unsqueeze->inputs[0];
  const ir::Shape& x = graph.value(source).type.shape;
  if (!x.rank_known || x.rank() != 4 || !x.dims[1].is_known() || x.dims[1].value <= 0) return std::nullopt;
  const std::optional<std::vector<ir::Dim>> sizes = shape_entries(graph, *expand);
  const std::optional<int64_t> copies = sizes ? copies_of(*sizes, x) : std::nullopt;
  const std::optional<std::vector<ir::Dim>> target = copies ? shape_entries(graph, last) : std::nullopt;
  if (!target || !merges_heads(*target, last.attrs.get_int("allowzero", 0) != 0, x, *copies)) return std::nullopt;
  return Repeat{source, last.outputs[0], x.dims[1].value, *copies};
}

/// The chain of `graph` from `value` to the product reading it as its right operand, or nullopt.
std::optional<Product> product_from(const ir::Graph& graph, const std::vector<std::vector<std::pair<ir::NodeId, int32_t>>>& consumers,
                                    ir::NodeId first, int32_t index) {
  Product product;
  ir::NodeId at = first;
  int32_t slot = index;
  while (true) {
    const ir::Node& node = graph.node(at);
    if (node.op == ir::OpKind::kMatMul) {
      if (slot != 1 || node.inputs.size() != 2) return std::nullopt;
      product.matmul = at;
      return product;
    }
    if (product.chain.size() >= kMaxChain || !is_per_head(graph, node, node.inputs[static_cast<std::size_t>(slot)])) {
      return std::nullopt;
    }
    product.chain.push_back(at);
    const ir::ValueId out = node.outputs[0];
    const auto& readers = consumers[static_cast<std::size_t>(out)];
    const auto& outputs = graph.outputs();
    if (readers.size() != 1 || std::find(outputs.begin(), outputs.end(), out) != outputs.end()) return std::nullopt;
    at = readers[0].first;
    slot = readers[0].second;
  }
}

/// True when a Shape of E reads no head count, or its readers only gather other entries.
bool shape_skips_heads(const ir::Graph& graph, const std::vector<std::vector<std::pair<ir::NodeId, int32_t>>>& consumers,
                       const ir::Node& shape) {
  const int64_t rank = 4;
  auto clamp = [rank](int64_t at) { return std::clamp<int64_t>(at < 0 ? at + rank : at, 0, rank); };
  const int64_t start = clamp(shape.attrs.get_int("start", 0));
  const int64_t end = std::max(start, clamp(shape.attrs.get_int("end", rank)));
  if (start > 1 || end <= 1) return true;
  const int64_t heads = 1 - start;  // the head count's index in the Shape's output
  const int64_t length = end - start;
  for (const auto& [reader, slot] : consumers[static_cast<std::size_t>(shape.outputs[0])]) {
    const ir::Node& gather = graph.node(reader);
    if (gather.op != ir::OpKind::kGather || slot != 0 || gather.attrs.get_int("axis", 0) != 0 ||
        gather.inputs.size() != 2) {
      return false;
    }
    const ir::Value& indices = graph.value(gather.inputs[1]);
    if (indices.kind != ir::ValueKind::kWeight || !indices.data) return false;
    for (int64_t index : indices.data->to_int64s()) {
      if ((index < 0 ? index + length : index) == heads) return false;
    }
  }
  for (ir::ValueId output : graph.outputs()) {
    if (output == shape.outputs[0]) return false;
  }
  return true;
}

/// Edits one graph.
class Grouper {
 public:
  explicit Grouper(const ir::Graph& graph) : graph_(graph) {
    const auto& info = graph_.model_info();
    opset_ = info && info->onnx_opset() > 0 ? info->onnx_opset() : ir::kDefaultOnnxOpset;
  }

  ir::Graph run(GroupedAttentionStats& stats) {
    const std::optional<std::vector<ir::NodeId>> order = graph_.topological_order();
    if (!order) return graph_;
    for (ir::NodeId id : *order) {
      if (!graph_.has_node(id)) continue;
      const std::optional<Repeat> repeat = repeat_of(graph_, id);
      if (!repeat || !rewrite(*repeat, stats)) continue;
      ++stats.repeats;
    }
    if (stats.repeats > 0) graph_.remove_dead_nodes();
    return std::move(graph_);
  }

 private:
  /// Groups every product reading the repetition; false (nothing touched) when a reader is not one.
  bool rewrite(const Repeat& repeat, GroupedAttentionStats& stats) {
    const auto consumers = graph_.consumers();
    for (ir::ValueId output : graph_.outputs()) {
      if (output == repeat.repeated) return false;
    }
    std::vector<Product> products;
    std::vector<ir::NodeId> shapes;
    for (const auto& [reader, slot] : consumers[static_cast<std::size_t>(repeat.repeated)]) {
      const ir::Node& node = graph_.node(reader);
      if (node.op == ir::OpKind::kShape) {
        if (!shape_skips_heads(graph_, consumers, node)) return false;
        shapes.push_back(reader);
        continue;
      }
      std::optional<Product> product = product_from(graph_, consumers, reader, slot);
      if (!product || !groupable(repeat, graph_.node(product->matmul))) return false;
      products.push_back(std::move(*product));
    }
    if (products.empty()) return false;
    for (ir::NodeId shape : shapes) {
      const ir::Node old = graph_.node(shape);
      const ir::Value& out = graph_.value(old.outputs[0]);
      const ir::NodeId added = graph_.add_node(ir::OpKind::kShape, {repeat.source}, {{out.type, out.name}}, old.attrs, old.name);
      graph_.replace_all_uses(old.outputs[0], graph_.node(added).outputs[0]);
      graph_.remove_node(shape);
    }
    for (const Product& product : products) {
      group(repeat, product);
      ++stats.products;
    }
    return true;
  }

  /// The left operand A [B, KV·R, M, K] of a product: rank 4, its head count KV·R, M a positive
  /// size or a symbol.
  bool groupable(const Repeat& repeat, const ir::Node& matmul) const {
    const ir::Shape& a = graph_.value(matmul.inputs[0]).type.shape;
    const ir::Shape& result = graph_.value(matmul.outputs[0]).type.shape;
    return a.rank_known && a.rank() == 4 && same_dim(a.dims[1], ir::Dim::known(repeat.groups * repeat.copies)) &&
           ((a.dims[2].is_known() && a.dims[2].value > 0) || a.dims[2].is_symbolic()) && result.rank_known &&
           result.rank() == 4;
  }

  /// A · f(E)  ->  Reshape(MatMul(Reshape(A, [0, KV, R·M, 0]), f(X)), [0, KV·R, M, 0]).
  void group(const Repeat& repeat, const Product& product) {
    const ir::Node matmul = graph_.node(product.matmul);
    // A scalar multiplication of A (attention's query scale) moves after the grouping reshape,
    // where a runtime still fuses it into the product.
    std::vector<ir::NodeId> scales;
    ir::ValueId left = matmul.inputs[0];
    const auto consumers = graph_.consumers();
    while (scales.size() < kMaxChain) {
      const ir::Value& read = graph_.value(left);
      if (read.kind != ir::ValueKind::kIntermediate || consumers[static_cast<std::size_t>(left)].size() != 1) break;
      const ir::Node& producer = graph_.node(read.producer);
      if (producer.op != ir::OpKind::kMul && producer.op != ir::OpKind::kDiv) break;
      const ir::ValueId operand = is_single_number(graph_, producer.inputs[1]) ? producer.inputs[0] : producer.inputs[1];
      if (!is_per_head(graph_, producer, operand) || graph_.value(operand).type.shape != read.type.shape) break;
      scales.push_back(read.producer);
      left = operand;
    }
    const ir::Shape& a = graph_.value(left).type.shape;
    const ir::Dim rows = a.dims[2];
    const ir::Dim grouped_rows =
        rows.is_known() ? ir::Dim::known(rows.value * repeat.copies) : ir::Dim{};
    const ir::TensorType grouped_type{graph_.value(left).type.dtype,
                                      ir::Shape{true, {a.dims[0], ir::Dim::known(repeat.groups), grouped_rows, a.dims[3]}}};
    ir::ValueId grouped = reshaped(left, {0, repeat.groups, -1, 0}, rows, repeat.copies, grouped_type, left);
    for (auto it = scales.rbegin(); it != scales.rend(); ++it) grouped = copy_onto(*it, grouped);
    ir::ValueId right = repeat.source;
    for (ir::NodeId link : product.chain) right = copy_onto(link, right);
    const ir::NodeId product_node = add_inferred(ir::OpKind::kMatMul, {grouped, right}, {}, matmul.name);
    const ir::ValueId result = graph_.node(product_node).outputs[0];
    const ir::Value& old = graph_.value(matmul.outputs[0]);
    const ir::ValueId heads = reshaped(result, {0, repeat.groups * repeat.copies, -1, 0}, rows, 1, old.type, left, old.name);
    graph_.replace_all_uses(matmul.outputs[0], heads);
    graph_.remove_node(product.matmul);
  }

  /// Reshape of `data` to `entries` whose -1 stands for `rows` · `factor`: a literal target when
  /// the rows are a known size, else a computed one reading the symbol from a graph input's dims
  /// (or `fallback`'s, which has it at axis 2). No -1 is written: beside a copied 0 of an empty
  /// batch, a runtime could not infer it.
  ir::ValueId reshaped(ir::ValueId data, std::vector<int64_t> entries, const ir::Dim& rows, int64_t factor,
                       const ir::TensorType& type, ir::ValueId fallback, std::string name = {}) {
    ir::Attributes attrs;
    attrs.set("allowzero", int64_t{0});
    std::vector<ir::ValueId> inputs{data};
    if (rows.is_known()) {
      std::replace(entries.begin(), entries.end(), int64_t{-1}, rows.value * factor);
      attrs.set("shape", entries);
    } else {
      inputs.push_back(computed_target(entries, rows, factor, fallback));
    }
    return graph_.node(graph_.add_node(ir::OpKind::kReshape, std::move(inputs), {{type, std::move(name)}}, std::move(attrs)))
        .outputs[0];
  }

  /// [e0, e1, rows · factor, e3] as a Concat of weights and the symbol read at run time; one per
  /// target and read, shared by every product that needs it.
  ir::ValueId computed_target(const std::vector<int64_t>& entries, const ir::Dim& rows, int64_t factor, ir::ValueId fallback) {
    ir::ValueId size = dim_read(rows.symbol, fallback);
    const auto key = std::make_tuple(entries[0], entries[1], entries[3], size, factor);
    if (const auto found = targets_.find(key); found != targets_.end()) return found->second;
    const ir::TensorType vector{ir::DataType::kInt64, ir::Shape{true, {ir::Dim::known(1)}}};
    if (factor != 1) {
      size = add_node(ir::OpKind::kMul, {size, int_weight({factor})}, vector, {});
    }
    ir::Attributes axis;
    axis.set("axis", int64_t{0});
    const ir::TensorType four{ir::DataType::kInt64, ir::Shape{true, {ir::Dim::known(4)}}};
    const ir::ValueId target =
        add_node(ir::OpKind::kConcat, {int_weight({entries[0], entries[1]}), size, int_weight({entries[3]})}, four,
                 std::move(axis));
    targets_.emplace(key, target);
    return target;
  }

  /// The one-element vector [symbol]: a slice of the Shape of the first graph input with that
  /// dim, else of `fallback` (axis 2). Made once per source: a fallback's read serves only the
  /// products of that operand (another product with the symbol may run before the operand is
  /// computed, even depend on it).
  ir::ValueId dim_read(const std::string& symbol, ir::ValueId fallback) {
    ir::ValueId source = fallback;
    int64_t axis = 2;
    for (ir::ValueId input : graph_.inputs()) {
      const ir::Shape& shape = graph_.value(input).type.shape;
      const auto at = std::find_if(shape.dims.begin(), shape.dims.end(),
                                   [&](const ir::Dim& dim) { return dim.is_symbolic() && dim.symbol == symbol; });
      if (!shape.rank_known || at == shape.dims.end()) continue;
      source = input;
      axis = at - shape.dims.begin();
      break;
    }
    const auto key = std::make_pair(source, axis);
    if (const auto found = dims_.find(key); found != dims_.end()) return found->second;
    const ir::TensorType vector{ir::DataType::kInt64, ir::Shape{true, {ir::Dim::known(1)}}};
    ir::ValueId read;
    if (opset_ >= kShapeSliceOpset) {
      ir::Attributes attrs;
      attrs.set("start", axis);
      attrs.set("end", axis + 1);
      read = add_node(ir::OpKind::kShape, {source}, vector, std::move(attrs));
    } else {
      const auto rank = static_cast<int64_t>(graph_.value(source).type.shape.rank());
      const ir::TensorType whole{ir::DataType::kInt64, ir::Shape{true, {ir::Dim::known(rank)}}};
      ir::Attributes gather;
      gather.set("axis", int64_t{0});
      read = add_node(ir::OpKind::kGather, {add_node(ir::OpKind::kShape, {source}, whole, {}), int_weight({axis})}, vector,
                      std::move(gather));
    }
    dims_.emplace(key, read);
    return read;
  }

  /// A copy of chain node `id` reading `input` where it read its chain predecessor.
  ir::ValueId copy_onto(ir::NodeId id, ir::ValueId input) {
    const ir::Node old = graph_.node(id);
    std::vector<ir::ValueId> inputs = old.inputs;
    for (ir::ValueId& read : inputs) {
      if (!is_single_number(graph_, read) || old.op == ir::OpKind::kTranspose) {
        read = input;
        break;
      }
    }
    return graph_.node(add_inferred(old.op, std::move(inputs), old.attrs, old.name)).outputs[0];
  }

  ir::NodeId add_inferred(ir::OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs, std::string name) {
    ir::Node probe;
    probe.op = op;
    probe.attrs = attrs;
    probe.inputs = inputs;
    std::vector<ir::TensorType> types;
    for (ir::ValueId input : inputs) types.push_back(graph_.value(input).type);
    const ops::InferResult inferred = ops::op_def(op).infer(probe, types);
    std::vector<ir::OutputSpec> outputs;
    for (const ir::TensorType& type : inferred.outputs) outputs.push_back({type, {}});
    if (!inferred.ok() || outputs.size() != 1) outputs = {{ir::TensorType{types[0].dtype, ir::Shape::unknown()}, {}}};
    return graph_.add_node(op, std::move(inputs), outputs, std::move(attrs), std::move(name));
  }

  ir::ValueId add_node(ir::OpKind op, std::vector<ir::ValueId> inputs, const ir::TensorType& type, ir::Attributes attrs) {
    return graph_.node(graph_.add_node(op, std::move(inputs), {{type, {}}}, std::move(attrs))).outputs[0];
  }

  ir::ValueId int_weight(const std::vector<int64_t>& values) {
    return graph_.add_weight({}, ir::share(ir::Tensor::from_int64s({static_cast<int64_t>(values.size())}, values)));
  }

  ir::Graph graph_;
  int64_t opset_ = ir::kDefaultOnnxOpset;
  std::map<std::pair<ir::ValueId, int64_t>, ir::ValueId> dims_;  ///< dim_read's values, by source and axis.
  std::map<std::tuple<int64_t, int64_t, int64_t, ir::ValueId, int64_t>, ir::ValueId> targets_;  ///< computed_target's.
};

}  // namespace

ir::Graph group_repeated_heads(const ir::Graph& graph, GroupedAttentionStats* stats) {
  GroupedAttentionStats local;
  GroupedAttentionStats& counts = stats ? *stats : local;
  counts = {};
  ir::Graph result = Grouper(graph).run(counts);
  return counts.repeats > 0 ? result : graph;
}

}  // namespace graphsub::rewrite
