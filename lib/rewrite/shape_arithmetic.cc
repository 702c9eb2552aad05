// Shape arithmetic that a model's dims decide, done once ahead of time instead of on every run.
#include "rewrite/shape_arithmetic.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "ops/operands.h"
#include "ops/registry.h"
#include "rewrite/rewriter.h"

namespace graphsub::rewrite {
namespace {

/// Integer vectors longer than this are data, not shapes, and are not followed.
constexpr std::size_t kMaxElements = 64;

/// One element of a shape value: a known integer, a named symbol (a dim_param), or unknown.
struct Element {
  int64_t value = 0;
  std::string symbol;
  bool known = false;

  static Element of(int64_t size) { return {size, {}, true}; }
  static Element named(const std::string& name) { return {0, name, false}; }
  bool is_symbol() const { return !known && !symbol.empty(); }
};

/// An integer scalar or vector computed from dims, element by element.
struct ShapeValue {
  std::vector<Element> elements;
  bool scalar = false;

  bool all_known() const {
    return std::all_of(elements.begin(), elements.end(), [](const Element& e) { return e.known; });
  }
  std::vector<int64_t> sizes() const {
    std::vector<int64_t> out;
    for (const Element& e : elements) out.push_back(e.value);
    return out;
  }
};

using Values = std::vector<std::optional<ShapeValue>>;

bool is_index_type(ir::DataType dtype) { return dtype == ir::DataType::kInt64 || dtype == ir::DataType::kInt32; }

std::optional<ShapeValue> from_weight(const ir::Value& value) {
  const ir::TensorPtr& data = value.data;
  if (!data || !is_index_type(data->dtype()) || data->rank() > 1) return std::nullopt;
  if (static_cast<std::size_t>(data->num_elements()) > kMaxElements) return std::nullopt;
  ShapeValue out{{}, data->rank() == 0};
  for (int64_t size : data->to_int64s()) out.elements.push_back(Element::of(size));
  return out;
}

std::optional<ShapeValue> shape_of(const ir::Node& node, const ir::TensorType& type) {
  if (!type.shape.rank_known) return std::nullopt;
  const auto rank = static_cast<int64_t>(type.shape.rank());
  auto clamp = [rank](int64_t at) { return std::clamp<int64_t>(at < 0 ? at + rank : at, 0, rank); };
  const int64_t start = clamp(node.attrs.get_int("start", 0));
  const int64_t end = std::max(start, clamp(node.attrs.get_int("end", rank)));
  ShapeValue out;
  for (int64_t axis = start; axis < end; ++axis) {
    const ir::Dim& dim = type.shape.dims[static_cast<std::size_t>(axis)];
    out.elements.push_back(dim.is_known() ? Element::of(dim.value) : dim.is_symbolic() ? Element::named(dim.symbol)
                                                                                        : Element{});
  }
  return out;
}

/// Gather along axis 0 of a vector, with known indices.
std::optional<ShapeValue> gather(const ir::Node& node, const ShapeValue& data, const ShapeValue& indices) {
  if (node.attrs.get_int("axis", 0) != 0 || data.scalar || !indices.all_known()) return std::nullopt;
  const auto size = static_cast<int64_t>(data.elements.size());
  ShapeValue out{{}, indices.scalar};
  for (int64_t index : indices.sizes()) {
    if (index < 0) index += size;
    if (index < 0 || index >= size) return std::nullopt;
    out.elements.push_back(data.elements[static_cast<std::size_t>(index)]);
  }
  return out;
}

/// Slice of a vector along axis 0 (ONNX's clamping of starts and ends, any non-zero step).
std::optional<ShapeValue> slice(const ir::Node& node, const ShapeValue& data) {
  const std::vector<int64_t> starts = node.attrs.get_ints("starts", {});
  const std::vector<int64_t> ends = node.attrs.get_ints("ends", {});
  const std::vector<int64_t> axes = node.attrs.get_ints("axes", {0});
  const std::vector<int64_t> steps = node.attrs.get_ints("steps", {1});
  if (data.scalar || starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1) return std::nullopt;
  if ((axes[0] != 0 && axes[0] != -1) || steps[0] == 0) return std::nullopt;
  const auto size = static_cast<int64_t>(data.elements.size());
  const int64_t step = steps[0];
  auto bound = [size, step](int64_t at) {
    if (at < 0) at = at < std::numeric_limits<int64_t>::min() + size ? -1 : at + size;
    return step > 0 ? std::clamp<int64_t>(at, 0, size) : std::clamp<int64_t>(at, -1, size - 1);
  };
  ShapeValue out;
  for (int64_t i = bound(starts[0]), end = bound(ends[0]); step > 0 ? i < end : i > end; i += step) {
    out.elements.push_back(data.elements[static_cast<std::size_t>(i)]);
  }
  return out;
}

std::optional<ShapeValue> concat(const ir::Node& node, const Values& values) {
  const int64_t axis = node.attrs.get_int("axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  ShapeValue out;
  for (ir::ValueId input : node.inputs) {
    if (input == ir::kNoValue || !values[input] || values[input]->scalar) return std::nullopt;
    const std::vector<Element>& part = values[input]->elements;
    out.elements.insert(out.elements.end(), part.begin(), part.end());
  }
  return out;
}

/// a op b for known integers; nullopt on overflow or division by zero. Mod is ONNX's integer
/// Mod without fmod (the result takes the divisor's sign, as Python's %), or C's % with it.
std::optional<int64_t> arithmetic(ir::OpKind op, int64_t a, int64_t b, bool fmod = false) {
  int64_t out = 0;
  switch (op) {
    case ir::OpKind::kAdd: return __builtin_add_overflow(a, b, &out) ? std::nullopt : std::optional(out);
    case ir::OpKind::kSub: return __builtin_sub_overflow(a, b, &out) ? std::nullopt : std::optional(out);
    case ir::OpKind::kMul: return __builtin_mul_overflow(a, b, &out) ? std::nullopt : std::optional(out);
    case ir::OpKind::kDiv:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      return a / b;  // ONNX integer Div truncates, as C++ does.
    case ir::OpKind::kMod:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      out = a % b;
      return !fmod && out != 0 && ((out < 0) != (b < 0)) ? out + b : out;
    case ir::OpKind::kMin: return std::min(a, b);
    case ir::OpKind::kMax: return std::max(a, b);
    default: return std::nullopt;
  }
}

/// One element of an integer Add/Sub/Mul/Div/Mod/Min/Max: computed when both are known; a symbol
/// passes through an identity (+ 0, - 0, * 1, / 1); anything else is unknown.
Element combine(ir::OpKind op, const Element& a, const Element& b, bool fmod) {
  if (a.known && b.known) {
    const std::optional<int64_t> out = arithmetic(op, a.value, b.value, fmod);
    return out ? Element::of(*out) : Element{};
  }
  const bool additive = op == ir::OpKind::kAdd || op == ir::OpKind::kSub;
  if (!additive && op != ir::OpKind::kMul && op != ir::OpKind::kDiv) return Element{};
  const bool left_identity = (op == ir::OpKind::kAdd && a.known && a.value == 0) ||
                             (op == ir::OpKind::kMul && a.known && a.value == 1);
  const bool right_identity = b.known && (b.value == (additive ? 0 : 1));
  if (left_identity) return b;
  return right_identity ? a : Element{};
}

std::optional<ShapeValue> binary(const ir::Node& node, const ShapeValue& a, const ShapeValue& b) {
  const std::size_t size = std::max(a.elements.size(), b.elements.size());
  const bool broadcast = a.elements.size() == b.elements.size() || a.elements.size() == 1 || b.elements.size() == 1;
  if (!broadcast) return std::nullopt;
  const bool fmod = node.attrs.get_int("fmod", 0) != 0;
  ShapeValue out{{}, a.scalar && b.scalar};
  for (std::size_t i = 0; i < size; ++i) {
    out.elements.push_back(combine(node.op, a.elements[a.elements.size() == 1 ? 0 : i],
                                   b.elements[b.elements.size() == 1 ? 0 : i], fmod));
  }
  return out;
}

/// Equal of two elements: decided for two known integers, for one symbol (a dim equals itself),
/// and for a symbol against a negative number (a dim never is); else unknown.
Element equal(const Element& a, const Element& b) {
  if (a.known && b.known) return Element::of(a.value == b.value ? 1 : 0);
  if (a.is_symbol() && b.is_symbol() && a.symbol == b.symbol) return Element::of(1);
  if ((a.is_symbol() && b.known && b.value < 0) || (b.is_symbol() && a.known && a.value < 0)) return Element::of(0);
  return Element{};
}

std::optional<ShapeValue> equality(const ShapeValue& a, const ShapeValue& b) {
  const std::size_t size = std::max(a.elements.size(), b.elements.size());
  if (a.elements.size() != b.elements.size() && a.elements.size() != 1 && b.elements.size() != 1) return std::nullopt;
  ShapeValue out{{}, a.scalar && b.scalar};
  for (std::size_t i = 0; i < size; ++i) {
    out.elements.push_back(equal(a.elements[a.elements.size() == 1 ? 0 : i], b.elements[b.elements.size() == 1 ? 0 : i]));
  }
  return out;
}

/// Where(cond, x, y) element by element (one-element operands broadcast): x's element where the
/// condition is known true, y's where known false, unknown otherwise.
std::optional<ShapeValue> where(const ShapeValue& cond, const ShapeValue& x, const ShapeValue& y) {
  const std::size_t size = std::max({cond.elements.size(), x.elements.size(), y.elements.size()});
  for (const ShapeValue* operand : {&cond, &x, &y}) {
    if (operand->elements.size() != size && operand->elements.size() != 1) return std::nullopt;
  }
  auto at = [](const ShapeValue& v, std::size_t i) { return v.elements[v.elements.size() == 1 ? 0 : i]; };
  ShapeValue out{{}, cond.scalar && x.scalar && y.scalar};
  for (std::size_t i = 0; i < size; ++i) {
    const Element c = at(cond, i);
    out.elements.push_back(!c.known ? Element{} : c.value != 0 ? at(x, i) : at(y, i));
  }
  return out;
}

/// ConstantOfShape of a known one-dimensional shape, filled with an integer value.
std::optional<ShapeValue> constant_of_shape(const ir::Node& node, const ShapeValue& shape) {
  const ir::AttrValue* attr = node.attrs.find("value");
  const auto* value = attr ? std::get_if<ir::TensorPtr>(attr) : nullptr;
  if (!value || !*value || !is_index_type((*value)->dtype()) || (*value)->num_elements() != 1) return std::nullopt;
  if (shape.scalar || shape.elements.size() != 1 || !shape.all_known()) return std::nullopt;
  const int64_t count = shape.elements[0].value;
  if (count < 0 || static_cast<std::size_t>(count) > kMaxElements) return std::nullopt;
  return ShapeValue{std::vector<Element>(static_cast<std::size_t>(count), Element::of((*value)->to_int64s()[0])), false};
}

/// A Reshape of a scalar or vector to one dim ([-1], or its length: as exporters flatten a
/// computed shape, and as a scalar dim becomes a one-element vector) or of one element to a
/// scalar keeps its elements.
std::optional<ShapeValue> reshaped_vector(const ir::Node& node, const ShapeValue& data,
                                          const std::optional<ShapeValue>& target) {
  std::vector<int64_t> shape;
  if (target) {
    if (!target->all_known() || target->scalar) return std::nullopt;
    shape = target->sizes();
  } else if (node.inputs.size() == 1 && node.attrs.find("shape")) {
    shape = node.attrs.get_ints("shape", {});
  } else {
    return std::nullopt;
  }
  const auto count = static_cast<int64_t>(data.elements.size());
  if (shape.empty()) return count == 1 ? std::optional(ShapeValue{data.elements, true}) : std::nullopt;
  if (shape.size() == 1 && (shape[0] == -1 || shape[0] == count)) return ShapeValue{data.elements, false};
  return std::nullopt;
}

/// The shape value a modelled node computes, if its inputs have one.
std::optional<ShapeValue> evaluate(const ir::Graph& graph, const ir::Node& node, const Values& values) {
  auto input = [&](std::size_t i) -> const std::optional<ShapeValue>& {
    static const std::optional<ShapeValue> none;
    return i < node.inputs.size() && node.inputs[i] != ir::kNoValue ? values[node.inputs[i]] : none;
  };
  if (node.op == ir::OpKind::kShape) return shape_of(node, graph.value(node.inputs[0]).type);
  if (node.op == ir::OpKind::kConcat) return concat(node, values);
  if (!input(0)) return std::nullopt;
  const ShapeValue& first = *input(0);
  const std::size_t operands = node.inputs.size();
  switch (node.op) {
    case ir::OpKind::kGather: return input(1) ? gather(node, first, *input(1)) : std::nullopt;
    case ir::OpKind::kSlice: return operands == 1 ? slice(node, first) : std::nullopt;
    case ir::OpKind::kIdentity:
    case ir::OpKind::kCast: return first;
    case ir::OpKind::kUnsqueeze:
      if (operands != 1 || !first.scalar || node.attrs.get_ints("axes", {}) != std::vector<int64_t>{0}) return std::nullopt;
      return ShapeValue{first.elements, false};
    case ir::OpKind::kSqueeze:
      if (operands != 1 || first.scalar || first.elements.size() != 1) return std::nullopt;
      return ShapeValue{first.elements, true};
    case ir::OpKind::kAdd:
    case ir::OpKind::kSub:
    case ir::OpKind::kMul:
    case ir::OpKind::kDiv:
    case ir::OpKind::kMod: return input(1) ? binary(node, first, *input(1)) : std::nullopt;
    case ir::OpKind::kMin:
    case ir::OpKind::kMax: return operands == 2 && input(1) ? binary(node, first, *input(1)) : std::nullopt;
    case ir::OpKind::kEqual: return input(1) ? equality(first, *input(1)) : std::nullopt;
    case ir::OpKind::kWhere: return input(1) && input(2) ? where(first, *input(1), *input(2)) : std::nullopt;
    case ir::OpKind::kConstantOfShape: return operands == 1 ? constant_of_shape(node, first) : std::nullopt;
    case ir::OpKind::kReshape: return reshaped_vector(node, first, operands > 1 ? input(1) : std::nullopt);
    default: return std::nullopt;
  }
}

ir::TensorPtr tensor_of(const ShapeValue& value, ir::DataType dtype) {
  const std::vector<int64_t> dims = value.scalar ? std::vector<int64_t>{}
                                                 : std::vector<int64_t>{static_cast<int64_t>(value.elements.size())};
  if (dtype == ir::DataType::kInt64) return ir::share(ir::Tensor::from_int64s(dims, value.sizes()));
  if (dtype == ir::DataType::kBool) {
    ir::Tensor tensor(ir::DataType::kBool, dims);
    for (std::size_t i = 0; i < value.elements.size(); ++i) {
      tensor.mutable_data<uint8_t>()[i] = value.elements[i].value != 0 ? 1 : 0;
    }
    return ir::share(std::move(tensor));
  }
  ir::Tensor tensor(ir::DataType::kInt32, dims);
  for (std::size_t i = 0; i < value.elements.size(); ++i) {
    tensor.mutable_data<int32_t>()[i] = static_cast<int32_t>(value.elements[i].value);
  }
  return ir::share(std::move(tensor));
}

/// The literal Reshape target for a computed one, or nullopt. A symbol becomes 0 where the input
/// has that dim at the same position (without allowzero). One other entry, a symbol or a size the
/// dims do not decide, becomes -1 when every other entry is a positive size: a valid Reshape's
/// entry there is the element count over the others, which is what -1 computes, and the division
/// is never by zero (beside a copied dim it could be, for an empty tensor).
std::optional<std::vector<int64_t>> literal_target(const ShapeValue& target, const ir::Shape& input, bool allowzero) {
  std::vector<int64_t> out;
  std::optional<std::size_t> inferred;
  for (std::size_t i = 0; i < target.elements.size(); ++i) {
    const Element& e = target.elements[i];
    const bool copies = e.is_symbol() && !allowzero && input.rank_known && i < input.rank() &&
                        input.dims[i].is_symbolic() && input.dims[i].symbol == e.symbol;
    if (!e.known && !copies && inferred) return std::nullopt;
    if (!e.known && !copies) inferred = i;
    out.push_back(e.known ? e.value : copies ? 0 : -1);
  }
  if (!inferred) return out;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i != *inferred && out[i] <= 0) return std::nullopt;
  }
  return out;
}

/// Edits one graph: one sweep in topological order that types each node again from its
/// (possibly sharper) inputs, gives run-time operands it can decide their literal value, and
/// evaluates shape values; then known values still read by other nodes become weights.
class Resolver {
 public:
  Resolver(const ir::Graph& graph, ShapeArithmeticStats& stats, KnownValues* known)
      : graph_(graph), stats_(stats), known_(known) {}

  ir::Graph run() {
    const std::optional<std::vector<ir::NodeId>> order = graph_.topological_order();
    if (!order) return graph_;
    const std::size_t before = graph_.node_count();
    for (ir::ValueId id = 0; id < graph_.value_capacity(); ++id) {
      if (graph_.has_value(id) && graph_.value(id).kind == ir::ValueKind::kWeight) {
        value_of(id) = from_weight(graph_.value(id));
      }
    }
    for (ir::NodeId id : *order) visit(id);
    if (known_) collect_known();
    replace_known();
    graph_.remove_dead_nodes();
    stats_.nodes_removed = before - std::min(before, graph_.node_count());
    return std::move(graph_);
  }

 private:
  std::optional<ShapeValue>& value_of(ir::ValueId id) {
    if (static_cast<std::size_t>(id) >= values_.size()) values_.resize(static_cast<std::size_t>(graph_.value_capacity()));
    return values_[static_cast<std::size_t>(id)];
  }

  void visit(ir::NodeId id) {
    if (graph_.node(id).op == ir::OpKind::kOpaque) return;
    refine_outputs(id);
    if (const std::optional<ir::NodeId> replaced = decide_operands(id)) id = *replaced;
    refine_computed_reshape(id);
    refine_computed_expand(id);
    if (const std::optional<ir::NodeId> replaced = literal_expand(id)) id = *replaced;
    if (const std::optional<ir::NodeId> replaced = compact_target(id)) id = *replaced;
    const ir::Node& node = graph_.node(id);
    const ir::DataType dtype = node.outputs.size() == 1 ? graph_.value(node.outputs[0]).type.dtype : ir::DataType::kUndefined;
    if (!is_index_type(dtype) && dtype != ir::DataType::kBool) return;
    values_.resize(static_cast<std::size_t>(graph_.value_capacity()));
    std::optional<ShapeValue> value = evaluate(graph_, node, values_);
    if (value && value->elements.size() <= kMaxElements) value_of(node.outputs[0]) = std::move(value);
  }

  /// A Reshape whose computed target stays computed still has the dims its known positive
  /// entries give (a 0 or -1 at run time would copy or infer, so only those are sure).
  void refine_computed_reshape(ir::NodeId id) {
    const ir::Node& node = graph_.node(id);
    if (node.op != ir::OpKind::kReshape || node.inputs.size() != 2 || !value_of(node.inputs[1])) return;
    const ShapeValue& target = *value_of(node.inputs[1]);
    ir::TensorType type = graph_.value(node.outputs[0]).type;
    if (!type.shape.rank_known || type.shape.rank() != target.elements.size()) return;
    for (std::size_t i = 0; i < target.elements.size(); ++i) {
      const Element& e = target.elements[i];
      if (e.known && e.value > 0 && !type.shape.dims[i].is_known()) type.shape.dims[i] = ir::Dim::known(e.value);
    }
    graph_.set_type(node.outputs[0], type);
  }

  /// An Expand to a computed shape has the dims broadcasting gives where that shape's entries
  /// are known sizes or symbols: an entry of 1 keeps the input's dim, an input dim of 1 takes
  /// the entry, and equal dims stay.
  void refine_computed_expand(ir::NodeId id) {
    const ir::Node& node = graph_.node(id);
    if (node.op != ir::OpKind::kExpand || node.inputs.size() != 2 || !value_of(node.inputs[1])) return;
    const ShapeValue& target = *value_of(node.inputs[1]);
    const ir::Shape& input = graph_.value(node.inputs[0]).type.shape;
    ir::TensorType type = graph_.value(node.outputs[0]).type;
    const std::size_t rank = std::max(input.rank(), target.elements.size());
    if (target.scalar || !input.rank_known || !type.shape.rank_known || type.shape.rank() != rank) return;
    for (std::size_t i = 0; i < rank; ++i) {
      ir::Dim& out = type.shape.dims[i];
      if (out.is_known()) continue;
      const std::size_t input_start = rank - input.rank();
      const std::size_t target_start = rank - target.elements.size();
      const ir::Dim in = i >= input_start ? input.dims[i - input_start] : ir::Dim::known(1);
      const Element entry = i >= target_start ? target.elements[i - target_start] : Element::of(1);
      const ir::Dim wanted = entry.known ? ir::Dim::known(entry.value) : entry.is_symbol() ? ir::Dim::named(entry.symbol)
                                                                                           : ir::Dim{};
      ir::Dim derived;
      if (entry.known && entry.value == 1) {
        derived = in;
      } else if (in.is_known() && in.value == 1) {
        derived = wanted;
      } else if (in == wanted) {
        derived = in;
      }
      // A derived symbol replaces the one there (often a name ONNX's inference invented for an
      // unknown dim): both name the same size, as in `merge`.
      if (derived.is_known() || derived.is_symbolic()) out = derived;
    }
    graph_.set_type(node.outputs[0], type);
  }

  /// An Expand to a computed shape whose entries are each a size, or a symbol the input has at
  /// the same position (the shapes aligned on the right), gets a literal shape with 1 for each
  /// such symbol: broadcasting a dim against 1 keeps it, as against itself. torch's
  /// `x[:, :, None].expand(b, kv, n, s, d)` (grouped-query attention's repeat_kv) then needs no
  /// Shape, Gather, Concat or Where at run time.
  std::optional<ir::NodeId> literal_expand(ir::NodeId id) {
    const ir::Node node = graph_.node(id);
    if (node.op != ir::OpKind::kExpand || node.inputs.size() != 2 || !value_of(node.inputs[1])) return std::nullopt;
    const ShapeValue target = *value_of(node.inputs[1]);
    const ir::Shape input = graph_.value(node.inputs[0]).type.shape;
    if (target.scalar || target.all_known() || !input.rank_known) return std::nullopt;
    const std::size_t length = target.elements.size();
    std::vector<int64_t> sizes;
    for (std::size_t i = 0; i < length; ++i) {
      const Element& entry = target.elements[i];
      const bool aligned = i + input.rank() >= length;
      const ir::Dim* dim = aligned ? &input.dims[i + input.rank() - length] : nullptr;
      if (entry.known) {
        sizes.push_back(entry.value);
      } else if (entry.is_symbol() && dim && dim->is_symbolic() && dim->symbol == entry.symbol) {
        sizes.push_back(1);
      } else {
        return std::nullopt;
      }
    }
    const ir::ValueId literal =
        graph_.add_weight({}, ir::share(ir::Tensor::from_int64s({static_cast<int64_t>(length)}, sizes)));
    const std::optional<ir::NodeId> added = replace_node(id, {node.inputs[0], literal}, node.attrs);
    if (added) ++stats_.expands;
    return added;
  }

  /// A Reshape or Expand whose shape stays computed, every entry of it a size or a symbol that a
  /// graph input (or the node's own data) has, reads the symbols straight from those dims: a
  /// Shape with start and end per run of them, shared by every such shape, and the sizes as
  /// weights, joined by one Concat. The exporters' form takes a Shape, Gather and Unsqueeze per
  /// dim and a Concat (Hugging Face's attention: `view(b, heads, s, d)` with b and s read from
  /// a tensor each time); a runtime runs each of those nodes on every call. Needs Shape's start
  /// and end (opset 15); the old computation goes where nothing else reads it.
  std::optional<ir::NodeId> compact_target(ir::NodeId id) {
    const ir::Node node = graph_.node(id);
    if (node.op != ir::OpKind::kReshape && node.op != ir::OpKind::kExpand) return std::nullopt;
    if (node.inputs.size() != 2 || opset() < 15 || !value_of(node.inputs[1])) return std::nullopt;
    const ShapeValue target = *value_of(node.inputs[1]);
    if (target.scalar || target.elements.empty() || target.all_known() || is_compact(node.inputs[1])) return std::nullopt;
    // The pieces first, touching nothing: each a run of symbols some dims hold, or sizes.
    std::vector<std::variant<DimRun, std::vector<int64_t>>> plan;
    for (std::size_t i = 0; i < target.elements.size();) {
      const Element& entry = target.elements[i];
      if (entry.known) {
        if (plan.empty() || !std::holds_alternative<std::vector<int64_t>>(plan.back())) plan.emplace_back(std::vector<int64_t>{});
        std::get<std::vector<int64_t>>(plan.back()).push_back(entry.value);
        ++i;
        continue;
      }
      const std::optional<DimRun> run = longest_run(target.elements, i, node.inputs[0]);
      if (!run) return std::nullopt;
      plan.emplace_back(*run);
      i += run->length;
    }
    if (graph_.consumers()[node.inputs[1]].size() != 1) return std::nullopt;
    std::vector<ir::ValueId> pieces;
    for (const auto& piece : plan) {
      if (const auto* run = std::get_if<DimRun>(&piece)) {
        pieces.push_back(shape_slice(*run));
      } else {
        const auto& sizes = std::get<std::vector<int64_t>>(piece);
        pieces.push_back(graph_.add_weight({}, ir::share(ir::Tensor::from_int64s({static_cast<int64_t>(sizes.size())}, sizes))));
      }
    }
    ir::ValueId shape = pieces.front();
    if (pieces.size() > 1) {
      const ir::TensorType type{ir::DataType::kInt64,
                                ir::Shape{true, {ir::Dim::known(static_cast<int64_t>(target.elements.size()))}}};
      ir::Attributes attrs;
      attrs.set("axis", int64_t{0});
      shape = graph_.node(graph_.add_node(ir::OpKind::kConcat, pieces, {{type, {}}}, std::move(attrs))).outputs[0];
    }
    value_of(shape) = target;
    ++stats_.compacted;
    return replace_input(id, 1, shape);
  }

  /// Replaces node `id` by a copy that reads `value` as input `index` (the same value computed
  /// another way), its outputs keeping their types and names; returns the copy's id.
  ir::NodeId replace_input(ir::NodeId id, std::size_t index, ir::ValueId value) {
    const ir::Node old = graph_.node(id);
    std::vector<ir::ValueId> inputs = old.inputs;
    inputs[index] = value;
    std::vector<ir::OutputSpec> outputs;
    for (ir::ValueId output : old.outputs) outputs.push_back({graph_.value(output).type, graph_.value(output).name});
    const ir::NodeId added = graph_.add_node(old.op, std::move(inputs), outputs, old.attrs, old.name);
    for (std::size_t i = 0; i < old.outputs.size(); ++i) {
      graph_.replace_all_uses(old.outputs[i], graph_.node(added).outputs[i]);
    }
    graph_.remove_node(id);
    return added;
  }

  /// Dims [start, start + length) of a value.
  struct DimRun {
    ir::ValueId value = ir::kNoValue;
    std::size_t start = 0;
    std::size_t length = 0;
  };

  /// The longest run of the graph inputs' dims (or else `data`'s) that are the symbols
  /// elements[at...] in order; the first such run where several are as long.
  std::optional<DimRun> longest_run(const std::vector<Element>& elements, std::size_t at, ir::ValueId data) const {
    std::vector<ir::ValueId> sources = graph_.inputs();
    sources.push_back(data);
    std::optional<DimRun> best;
    for (ir::ValueId source : sources) {
      const ir::Shape& shape = graph_.value(source).type.shape;
      if (!shape.rank_known) continue;
      for (std::size_t start = 0; start < shape.rank(); ++start) {
        std::size_t length = 0;
        while (at + length < elements.size() && start + length < shape.rank() && elements[at + length].is_symbol() &&
               shape.dims[start + length].is_symbolic() && shape.dims[start + length].symbol == elements[at + length].symbol) {
          ++length;
        }
        if (length > 0 && (!best || length > best->length)) best = DimRun{source, start, length};
      }
    }
    return best;
  }

  /// Shape(value) with start and end, made once per run and read by every target that needs it.
  ir::ValueId shape_slice(const DimRun& run) {
    const auto key = std::make_tuple(run.value, run.start, run.length);
    if (const auto found = slices_.find(key); found != slices_.end()) return found->second;
    ir::Attributes attrs;
    attrs.set("start", static_cast<int64_t>(run.start));
    attrs.set("end", static_cast<int64_t>(run.start + run.length));
    const ir::TensorType type{ir::DataType::kInt64, ir::Shape{true, {ir::Dim::known(static_cast<int64_t>(run.length))}}};
    const ir::NodeId added = graph_.add_node(ir::OpKind::kShape, {run.value}, {{type, {}}}, std::move(attrs));
    const ir::ValueId out = graph_.node(added).outputs[0];
    value_of(out) = shape_of(graph_.node(added), graph_.value(run.value).type);
    slices_.emplace(key, out);
    return out;
  }

  /// Whether a shape is already read that way: a Shape, or a Concat of Shapes and weights.
  bool is_compact(ir::ValueId value) const {
    auto direct = [this](ir::ValueId v) {
      const ir::Value& read = graph_.value(v);
      return read.kind == ir::ValueKind::kWeight ||
             (read.kind == ir::ValueKind::kIntermediate && graph_.node(read.producer).op == ir::OpKind::kShape);
    };
    if (direct(value)) return true;
    const ir::Value& read = graph_.value(value);
    if (read.kind != ir::ValueKind::kIntermediate || graph_.node(read.producer).op != ir::OpKind::kConcat) return false;
    const std::vector<ir::ValueId>& parts = graph_.node(read.producer).inputs;
    return std::all_of(parts.begin(), parts.end(), direct);
  }

  /// A run-time form node whose operands are known (or, for Reshape, resolvable to 0 and -1)
  /// becomes its attribute form; returns the new node's id.
  std::optional<ir::NodeId> decide_operands(ir::NodeId id) {
    const ir::Node& node = graph_.node(id);
    const ops::OpDef& def = ops::op_def(node.op);
    if (def.attr_inputs.empty() || !ops::is_runtime_form(def, node.inputs.size())) return std::nullopt;
    if (node.op == ir::OpKind::kReshape && value_of(node.inputs[1]) && !value_of(node.inputs[1])->all_known()) {
      return literal_reshape(id);
    }
    ir::Attributes attrs = node.attrs;
    std::vector<char> taken(node.inputs.size(), 0);
    for (const ops::AttrInput& entry : def.attr_inputs) {
      const auto index = static_cast<std::size_t>(entry.input_index);
      if (index >= node.inputs.size()) continue;
      taken[index] = 1;
      const ir::ValueId operand = node.inputs[index];
      if (operand == ir::kNoValue) continue;
      const std::optional<ShapeValue>& known = value_of(operand);
      if (!known || !known->all_known()) return std::nullopt;
      if (!ops::read_operand(*tensor_of(*known, ir::DataType::kInt64), entry, attrs).empty()) return std::nullopt;
    }
    std::vector<ir::ValueId> inputs;
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (!taken[i]) inputs.push_back(node.inputs[i]);
    }
    const std::optional<ir::NodeId> added = replace_node(id, std::move(inputs), std::move(attrs));
    if (added) ++stats_.attribute_forms;
    return added;
  }

  std::optional<ir::NodeId> literal_reshape(ir::NodeId id) {
    const ir::Node& node = graph_.node(id);
    const ir::Shape& input = graph_.value(node.inputs[0]).type.shape;
    const auto literal = literal_target(*value_of(node.inputs[1]), input, node.attrs.get_int("allowzero", 0) != 0);
    if (!literal) return std::nullopt;
    ir::Attributes attrs = node.attrs;
    attrs.set("shape", *literal);
    const std::optional<ir::NodeId> added = replace_node(id, {node.inputs[0]}, std::move(attrs));
    if (added) ++stats_.reshapes;
    return added;
  }

  /// The computed values whose every element is known, by name.
  void collect_known() {
    values_.resize(static_cast<std::size_t>(graph_.value_capacity()));
    for (ir::ValueId id = 0; id < graph_.value_capacity(); ++id) {
      if (!values_[id] || !values_[id]->all_known() || !graph_.has_value(id)) continue;
      const ir::Value& value = graph_.value(id);
      if (value.kind == ir::ValueKind::kIntermediate && !value.name.empty()) {
        (*known_)[value.name] = tensor_of(*values_[id], value.type.dtype);
      }
    }
  }

  /// Every known computed value that a node staying in the graph reads becomes a weight.
  void replace_known() {
    const std::vector<ir::ValueId>& outputs = graph_.outputs();
    const auto consumers = graph_.consumers();
    const ir::ValueId capacity = graph_.value_capacity();  // weights added below are not visited
    values_.resize(static_cast<std::size_t>(capacity));
    for (ir::ValueId value = 0; value < capacity; ++value) {
      if (!values_[value] || !values_[value]->all_known() || !graph_.has_value(value)) continue;
      if (graph_.value(value).kind != ir::ValueKind::kIntermediate) continue;
      if (std::find(outputs.begin(), outputs.end(), value) != outputs.end()) continue;
      // Read by a node that stays: one without a shape value, or whose value is not all known.
      const bool read_outside = std::any_of(consumers[value].begin(), consumers[value].end(), [&](const auto& use) {
        const ir::Node& consumer = graph_.node(use.first);
        return consumer.outputs.size() != 1 || !values_[consumer.outputs[0]] || !values_[consumer.outputs[0]]->all_known();
      });
      if (!read_outside) continue;
      const ir::Value& computed = graph_.value(value);
      graph_.replace_all_uses(value, graph_.add_weight(computed.name, tensor_of(*values_[value], computed.type.dtype)));
      ++stats_.constants;
    }
  }

  /// Replaces node `id` by one of the same kind in attribute form; nullopt (nothing changed)
  /// when the op refuses the attributes or infers types that contradict the old ones.
  std::optional<ir::NodeId> replace_node(ir::NodeId id, std::vector<ir::ValueId> inputs, ir::Attributes attrs) {
    const ir::Node old = graph_.node(id);
    const ops::OpDef& def = ops::op_def(old.op);
    std::vector<ir::TensorType> types;
    for (ir::ValueId input : inputs) types.push_back(input == ir::kNoValue ? ir::TensorType{} : graph_.value(input).type);
    ir::Node probe = old;
    probe.inputs = inputs;
    probe.attrs = std::move(attrs);
    ops::ImportContext context{probe.attrs, types, static_cast<int>(old.outputs.size()), opset()};
    if (!def.canonicalize(context).empty()) return std::nullopt;
    const std::optional<std::vector<ir::TensorType>> inferred = infer(def, probe, types, old.outputs);
    if (!inferred) return std::nullopt;
    std::vector<ir::OutputSpec> outputs;
    for (std::size_t i = 0; i < old.outputs.size(); ++i) outputs.push_back({(*inferred)[i], graph_.value(old.outputs[i]).name});
    const ir::NodeId added = graph_.add_node(old.op, std::move(inputs), outputs, probe.attrs, old.name);
    for (std::size_t i = 0; i < old.outputs.size(); ++i) {
      graph_.replace_all_uses(old.outputs[i], graph_.node(added).outputs[i]);
    }
    graph_.remove_node(id);
    return added;
  }

  /// The output types of `node` merged with the current ones; nullopt when they contradict.
  std::optional<std::vector<ir::TensorType>> infer(const ops::OpDef& def, const ir::Node& node,
                                                   const std::vector<ir::TensorType>& types,
                                                   const std::vector<ir::ValueId>& outputs) const {
    std::vector<ir::TensorType> out;
    for (const std::optional<ir::TensorType>& type : merged_outputs([&] { return def.infer(node, types); }, outputs)) {
      if (!type) return std::nullopt;
      out.push_back(*type);
    }
    if (out.empty() && !outputs.empty()) return std::nullopt;
    return out;
  }

  /// Types node `id`'s outputs again from its inputs' current types, keeping what is sharper.
  void refine_outputs(ir::NodeId id) {
    const std::vector<ir::ValueId> outputs = graph_.node(id).outputs;
    const auto merged = merged_outputs([&] { return ops::infer_node(graph_, id); }, outputs);
    for (std::size_t i = 0; i < merged.size(); ++i) {
      if (merged[i] && *merged[i] != graph_.value(outputs[i]).type) graph_.set_type(outputs[i], *merged[i]);
    }
  }

  /// What `infer` gives each of `outputs`, merged with its current type (nullopt where the two
  /// contradict); empty when inference fails or gives another number of outputs.
  template <class Infer>
  std::vector<std::optional<ir::TensorType>> merged_outputs(const Infer& infer,
                                                            const std::vector<ir::ValueId>& outputs) const {
    ops::InferResult inferred;
    try {
      inferred = infer();
    } catch (const std::exception&) {
      return {};
    }
    if (!inferred.ok() || inferred.outputs.size() != outputs.size()) return {};
    std::vector<std::optional<ir::TensorType>> merged;
    for (std::size_t i = 0; i < outputs.size(); ++i) merged.push_back(merge(graph_.value(outputs[i]).type, inferred.outputs[i]));
    return merged;
  }

  /// `old` sharpened by `inferred`: a known size replaces a symbol or an unknown dim, and a symbol
  /// that graphsub's inference derives replaces another (both name the same size); nullopt when
  /// they contradict.
  static std::optional<ir::TensorType> merge(const ir::TensorType& old, const ir::TensorType& inferred) {
    if (old.dtype != inferred.dtype && old.dtype != ir::DataType::kUndefined) return std::nullopt;
    if (!inferred.shape.rank_known) return old;
    if (!old.shape.rank_known) return inferred;
    if (old.shape.rank() != inferred.shape.rank()) return std::nullopt;
    ir::TensorType out = old;
    for (std::size_t i = 0; i < old.shape.rank(); ++i) {
      const ir::Dim& a = old.shape.dims[i];
      const ir::Dim& b = inferred.shape.dims[i];
      if (a.is_known() && b.is_known() && a.value != b.value) return std::nullopt;
      if (!a.is_known() && (b.is_known() || b.is_symbolic())) out.shape.dims[i] = b;
    }
    return out;
  }

  int64_t opset() const {
    const auto& info = graph_.model_info();
    return info && info->onnx_opset() > 0 ? info->onnx_opset() : kTargetOpset;
  }

  ir::Graph graph_;
  ShapeArithmeticStats& stats_;
  KnownValues* known_;
  Values values_;
  std::map<std::tuple<ir::ValueId, std::size_t, std::size_t>, ir::ValueId> slices_;  ///< shape_slice's nodes.
};

}  // namespace

ir::Graph resolve_shape_arithmetic(const ir::Graph& graph, ShapeArithmeticStats* stats, KnownValues* known) {
  ShapeArithmeticStats local;
  return Resolver(graph, stats ? *stats : local, known).run();
}

std::optional<std::vector<ir::Dim>> computed_dims(const ir::Graph& graph, ir::ValueId value) {
  Values values(static_cast<std::size_t>(graph.value_capacity()));
  std::vector<bool> visited(values.size(), false);
  // Depth-first over the producers; shape chains are short, and a bound keeps data out.
  constexpr int kMaxDepth = 32;
  std::function<void(ir::ValueId, int)> fill = [&](ir::ValueId id, int depth) {
    const auto at = static_cast<std::size_t>(id);
    if (id == ir::kNoValue || visited[at] || depth > kMaxDepth) return;
    visited[at] = true;
    const ir::Value& read = graph.value(id);
    if (read.kind == ir::ValueKind::kWeight) {
      values[at] = from_weight(read);
      return;
    }
    if (read.kind != ir::ValueKind::kIntermediate) return;
    const ir::Node& node = graph.node(read.producer);
    if (node.op == ir::OpKind::kOpaque || node.outputs.size() != 1) return;
    if (node.op != ir::OpKind::kShape) {
      for (ir::ValueId input : node.inputs) fill(input, depth + 1);
    }
    std::optional<ShapeValue> result = evaluate(graph, node, values);
    if (result && result->elements.size() <= kMaxElements) values[at] = std::move(result);
  };
  fill(value, 0);
  const std::optional<ShapeValue>& result = values[static_cast<std::size_t>(value)];
  if (!result || result->scalar) return std::nullopt;
  std::vector<ir::Dim> dims;
  for (const Element& element : result->elements) {
    if (element.known) {
      dims.push_back(ir::Dim::known(element.value));
    } else if (element.is_symbol()) {
      dims.push_back(ir::Dim::named(element.symbol));
    } else {
      return std::nullopt;
    }
  }
  return dims;
}

}  // namespace graphsub::rewrite
