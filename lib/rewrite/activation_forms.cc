// Chains of element-wise nodes that compute a hard sigmoid or hard swish, written as that one ONNX operator.
#include "rewrite/activation_forms.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace graphsub::rewrite {
namespace {

/// How far k·h may be from 1 (and HardSwish's alpha from 1/6): float32 rounding of 1/h and 1/6.
constexpr double kTolerance = 1e-6;

/// The opset that brought HardSwish.
constexpr int64_t kHardSwishOpset = 14;

bool near(double a, double b) { return std::fabs(a - b) <= kTolerance * std::max(1.0, std::fabs(b)); }

/// A hard sigmoid found: max(0, min(1, alpha·x + beta)), and the nodes that compute it.
struct HardSigmoid {
  ir::ValueId x = ir::kNoValue;
  double alpha = 0;
  double beta = 0;
  std::vector<ir::NodeId> nodes;
};

/// A tanh GELU found: 0.5·x·(1 + tanh(s·(x + a·x³))), and the nodes that compute it.
struct TanhGelu {
  ir::ValueId x = ir::kNoValue;
  double a = 0;
  double s = 0;
  std::vector<ir::NodeId> nodes;
};

/// GELU's tanh approximation's constants: sqrt(2/pi) and 0.044715.
constexpr double kSqrtTwoOverPi = 0.7978845608028654;
constexpr double kCubicTerm = 0.044715;

/// The chains of one graph, found on it as it was before any rewrite.
class ChainFinder {
 public:
  explicit ChainFinder(const ir::Graph& graph) : graph_(graph), consumers_(graph.consumers()) {}

  /// The hard sigmoid computed by the chain ending at `id` (forms 1-3 of write_activations).
  std::optional<HardSigmoid> hard_sigmoid(ir::NodeId id) const {
    const ir::Node& node = graph_.node(id);
    if (node.op == ir::OpKind::kClip) return affine_clip(id);
    std::optional<Scaled> scaled = scaled_by_constant(node);
    if (!scaled) return std::nullopt;
    std::optional<HardSigmoid> found = shifted_clip(scaled->operand, scaled->scale, scaled->divides, std::nullopt);
    if (found) found->nodes.push_back(id);
    return found;
  }

  /// x·hard_sigmoid(x) computed by the chain ending at `id` as Mul(x, Clip(Add(x, s), 0, h)) times
  /// k or divided by h (form 4): the hard sigmoid's nodes include the Mul by x and `id`.
  std::optional<HardSigmoid> times_hard_sigmoid(ir::NodeId id) const {
    std::optional<Scaled> scaled = scaled_by_constant(graph_.node(id));
    if (!scaled) return std::nullopt;
    const ir::Node* product = inner(scaled->operand, ir::OpKind::kMul);
    if (!product || product->inputs.size() != 2) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const ir::ValueId x = product->inputs[static_cast<std::size_t>(i)];
      const ir::ValueId clipped = product->inputs[static_cast<std::size_t>(1 - i)];
      std::optional<HardSigmoid> found = shifted_clip(clipped, scaled->scale, scaled->divides, x);
      if (!found) continue;
      found->nodes.push_back(graph_.value(scaled->operand).producer);
      found->nodes.push_back(id);
      return found;
    }
    return std::nullopt;
  }

  /// The value `id` computes x·HardSigmoid(x) with HardSwish's constants from: x, or nullopt.
  std::optional<ir::ValueId> hard_swish_of(ir::NodeId id) const {
    const ir::Node& node = graph_.node(id);
    if (node.op != ir::OpKind::kMul || node.inputs.size() != 2) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const ir::Node* sigmoid = inner(node.inputs[static_cast<std::size_t>(i)], ir::OpKind::kHardSigmoid);
      const ir::ValueId x = node.inputs[static_cast<std::size_t>(1 - i)];
      if (!sigmoid || sigmoid->inputs[0] != x) continue;
      if (near(sigmoid->attrs.get_float("alpha", 0) * 6.0, 1.0) && near(sigmoid->attrs.get_float("beta", 0), 0.5)) {
        return x;
      }
    }
    return std::nullopt;
  }

  /// The tanh GELU ending at `id` in the form torch's TorchScript exporter writes for
  /// gelu(approximate="tanh") (Gemma's MLP): Mul(0.5, Mul(x, Add(1, Tanh(Mul(s, Add(x, Mul(a,
  /// x·x·x))))))), operands of Add and Mul in either order, the cube as Mul(Mul(x, x), x) either
  /// way round.
  std::optional<TanhGelu> tanh_gelu(ir::NodeId id) const {
    std::optional<std::pair<ir::ValueId, double>> half = with_scalar(graph_.node(id), ir::OpKind::kMul);
    if (!half || half->second != 0.5) return std::nullopt;
    const ir::Node* product = inner(half->first, ir::OpKind::kMul);
    if (!product || product->inputs.size() != 2) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const ir::ValueId x = product->inputs[static_cast<std::size_t>(i)];
      std::optional<TanhGelu> found = tanh_part(product->inputs[static_cast<std::size_t>(1 - i)], x);
      if (!found) continue;
      found->nodes.push_back(graph_.value(half->first).producer);
      found->nodes.push_back(id);
      return found;
    }
    return std::nullopt;
  }

  /// Whether a node that computes `value`'s type from x may replace the node that makes `value`.
  bool keeps_type(ir::ValueId x, ir::ValueId value) const {
    const ir::TensorType& type = graph_.value(x).type;
    return (type.dtype == ir::DataType::kFloat || type.dtype == ir::DataType::kDouble) &&
           type == graph_.value(value).type;
  }

 private:
  /// A node that multiplies a value by a one-element constant, or divides it by one.
  struct Scaled {
    ir::ValueId operand = ir::kNoValue;
    double scale = 0;
    bool divides = false;
  };

  /// The one element of a one-element floating-point weight.
  std::optional<double> scalar(ir::ValueId id) const {
    if (id == ir::kNoValue) return std::nullopt;
    const ir::Value& value = graph_.value(id);
    if (value.kind != ir::ValueKind::kWeight || !value.data || value.data->num_elements() != 1) return std::nullopt;
    const ir::DataType dtype = value.data->dtype();
    if (dtype != ir::DataType::kFloat && dtype != ir::DataType::kDouble) return std::nullopt;
    const double number = value.data->element_as_double(0);
    if (!std::isfinite(number)) return std::nullopt;
    return number;
  }

  /// For a two-input node of `op` with one one-element constant operand: the other operand and
  /// the constant (either order).
  std::optional<std::pair<ir::ValueId, double>> with_scalar(const ir::Node& node, ir::OpKind op) const {
    if (node.op != op || node.inputs.size() != 2) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      if (std::optional<double> number = scalar(node.inputs[static_cast<std::size_t>(i)])) {
        const ir::ValueId other = node.inputs[static_cast<std::size_t>(1 - i)];
        if (!scalar(other)) return std::make_pair(other, *number);
      }
    }
    return std::nullopt;
  }

  std::optional<Scaled> scaled_by_constant(const ir::Node& node) const {
    if (auto product = with_scalar(node, ir::OpKind::kMul)) return Scaled{product->first, product->second, false};
    if (node.op != ir::OpKind::kDiv || node.inputs.size() != 2) return std::nullopt;
    std::optional<double> divisor = scalar(node.inputs[1]);
    if (!divisor || *divisor == 0 || scalar(node.inputs[0])) return std::nullopt;
    return Scaled{node.inputs[0], *divisor, true};
  }

  /// The node of `op` making `value`, when only one node reads `value` and it is no graph output:
  /// a link inside a chain.
  const ir::Node* inner(ir::ValueId value, ir::OpKind op) const {
    const ir::Value& made = graph_.value(value);
    if (made.producer < 0 || consumers_[static_cast<std::size_t>(value)].size() != 1) return nullptr;
    const std::vector<ir::ValueId>& outputs = graph_.outputs();
    if (std::find(outputs.begin(), outputs.end(), value) != outputs.end()) return nullptr;
    const ir::Node& node = graph_.node(made.producer);
    return node.op == op ? &node : nullptr;
  }

  /// Add(1, Tanh(Mul(s, Add(x, Mul(a, x³))))) at `value`, with GELU's s and a.
  std::optional<TanhGelu> tanh_part(ir::ValueId value, ir::ValueId x) const {
    const ir::Node* plus_one = inner(value, ir::OpKind::kAdd);
    if (!plus_one) return std::nullopt;
    std::optional<std::pair<ir::ValueId, double>> one = with_scalar(*plus_one, ir::OpKind::kAdd);
    if (!one || one->second != 1.0) return std::nullopt;
    const ir::Node* tanh = inner(one->first, ir::OpKind::kTanh);
    if (!tanh) return std::nullopt;
    const ir::Node* scale = inner(tanh->inputs[0], ir::OpKind::kMul);
    std::optional<std::pair<ir::ValueId, double>> scaled = scale ? with_scalar(*scale, ir::OpKind::kMul) : std::nullopt;
    if (!scaled || !near(scaled->second, kSqrtTwoOverPi)) return std::nullopt;
    const ir::Node* sum = inner(scaled->first, ir::OpKind::kAdd);
    if (!sum || sum->inputs.size() != 2 || (sum->inputs[0] != x && sum->inputs[1] != x)) return std::nullopt;
    const ir::ValueId term = sum->inputs[0] == x ? sum->inputs[1] : sum->inputs[0];
    const ir::Node* cubic = inner(term, ir::OpKind::kMul);
    std::optional<std::pair<ir::ValueId, double>> weighted = cubic ? with_scalar(*cubic, ir::OpKind::kMul) : std::nullopt;
    if (!weighted || !near(weighted->second, kCubicTerm)) return std::nullopt;
    std::optional<std::vector<ir::NodeId>> cube = cube_of(weighted->first, x);
    if (!cube) return std::nullopt;
    std::vector<ir::NodeId> nodes = *cube;
    for (ir::ValueId made : {term, scaled->first, tanh->inputs[0], one->first, value}) {
      nodes.push_back(graph_.value(made).producer);
    }
    return TanhGelu{x, weighted->second, scaled->second, nodes};
  }

  /// The nodes computing x·x·x at `value` as Mul(Mul(x, x), x) or Mul(x, Mul(x, x)).
  std::optional<std::vector<ir::NodeId>> cube_of(ir::ValueId value, ir::ValueId x) const {
    const ir::Node* outer = inner(value, ir::OpKind::kMul);
    if (!outer || outer->inputs.size() != 2 || (outer->inputs[0] != x && outer->inputs[1] != x)) return std::nullopt;
    const ir::ValueId square = outer->inputs[0] == x ? outer->inputs[1] : outer->inputs[0];
    const ir::Node* squared = inner(square, ir::OpKind::kMul);
    if (!squared || squared->inputs.size() != 2 || squared->inputs[0] != x || squared->inputs[1] != x) return std::nullopt;
    return std::vector<ir::NodeId>{graph_.value(square).producer, graph_.value(value).producer};
  }

  /// Clip(Add(x, s), 0, h) at `clipped`, scaled by k (k·h = 1) or divided by h: the hard sigmoid
  /// of x with alpha 1/h and beta s/h. Where `x` is given, the Add must read it.
  std::optional<HardSigmoid> shifted_clip(ir::ValueId clipped, double scale, bool divides,
                                          std::optional<ir::ValueId> x) const {
    const ir::Node* clip = inner(clipped, ir::OpKind::kClip);
    if (!clip || clip->attrs.get_float("min", -1) != 0.0f) return std::nullopt;
    const double high = clip->attrs.get_float("max", 0);
    if (!(high > 0) || !std::isfinite(high)) return std::nullopt;
    if (divides ? scale != high : !near(scale * high, 1.0)) return std::nullopt;
    const ir::Node* add = inner(clip->inputs[0], ir::OpKind::kAdd);
    if (!add) return std::nullopt;
    std::optional<std::pair<ir::ValueId, double>> shifted = with_scalar(*add, ir::OpKind::kAdd);
    if (!shifted || (x && shifted->first != *x)) return std::nullopt;
    const double alpha = divides ? 1.0 / high : scale;
    return HardSigmoid{shifted->first, alpha, shifted->second * alpha,
                       {graph_.value(clip->inputs[0]).producer, graph_.value(clipped).producer}};
  }

  /// Clip(Add(Mul(x, a), b), 0, 1) ending at `id`: the hard sigmoid of x with alpha a, beta b.
  std::optional<HardSigmoid> affine_clip(ir::NodeId id) const {
    const ir::Node& clip = graph_.node(id);
    if (clip.attrs.get_float("min", -1) != 0.0f || clip.attrs.get_float("max", 0) != 1.0f) return std::nullopt;
    const ir::Node* add = inner(clip.inputs[0], ir::OpKind::kAdd);
    if (!add) return std::nullopt;
    std::optional<std::pair<ir::ValueId, double>> shifted = with_scalar(*add, ir::OpKind::kAdd);
    if (!shifted) return std::nullopt;
    const ir::Node* product = inner(shifted->first, ir::OpKind::kMul);
    if (!product) return std::nullopt;
    std::optional<std::pair<ir::ValueId, double>> scaled = with_scalar(*product, ir::OpKind::kMul);
    if (!scaled) return std::nullopt;
    return HardSigmoid{scaled->first, scaled->second, shifted->second,
                       {graph_.value(shifted->first).producer, graph_.value(clip.inputs[0]).producer, id}};
  }

  const ir::Graph& graph_;
  std::vector<std::vector<std::pair<ir::NodeId, int32_t>>> consumers_;
};

/// Whether none of `nodes` is in `claimed`; then claims them.
bool claim(std::set<ir::NodeId>& claimed, const std::vector<ir::NodeId>& nodes) {
  for (ir::NodeId id : nodes) {
    if (claimed.count(id) > 0) return false;
  }
  claimed.insert(nodes.begin(), nodes.end());
  return true;
}

/// Adds HardSigmoid(x) and returns its output.
ir::ValueId add_hard_sigmoid(ir::Graph& graph, const HardSigmoid& found, const std::string& name) {
  ir::Attributes attrs;
  attrs.set("alpha", static_cast<float>(found.alpha));
  attrs.set("beta", static_cast<float>(found.beta));
  const ir::NodeId added =
      graph.add_node(ir::OpKind::kHardSigmoid, {found.x}, {{graph.value(found.x).type, {}}}, std::move(attrs), name);
  return graph.node(added).outputs[0];
}

/// Every hard sigmoid chain written as HardSigmoid (and form 4 as Mul(x, HardSigmoid(x))).
ir::Graph with_hard_sigmoids(const ir::Graph& graph, int& count) {
  ir::Graph result = graph;
  const ChainFinder finder(graph);
  std::set<ir::NodeId> claimed;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    const ir::ValueId output = node.outputs[0];
    if (std::optional<HardSigmoid> found = finder.hard_sigmoid(id)) {
      if (!finder.keeps_type(found->x, output) || !claim(claimed, found->nodes)) continue;
      result.replace_all_uses(output, add_hard_sigmoid(result, *found, node.name));
      ++count;
    } else if (std::optional<HardSigmoid> times = finder.times_hard_sigmoid(id)) {
      if (!finder.keeps_type(times->x, output) || !claim(claimed, times->nodes)) continue;
      const ir::ValueId sigmoid = add_hard_sigmoid(result, *times, node.name + "/hard_sigmoid");
      const ir::NodeId product = result.add_node(ir::OpKind::kMul, {times->x, sigmoid},
                                                 {{graph.value(output).type, {}}}, {}, node.name);
      result.replace_all_uses(output, result.node(product).outputs[0]);
      ++count;
    }
  }
  result.remove_dead_nodes();
  return result;
}

/// Every x·HardSigmoid(x) with HardSwish's constants written as HardSwish.
ir::Graph with_hard_swishes(const ir::Graph& graph, int& count) {
  ir::Graph result = graph;
  const ChainFinder finder(graph);
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    std::optional<ir::ValueId> x = finder.hard_swish_of(id);
    if (!x || !finder.keeps_type(*x, node.outputs[0])) continue;
    const ir::NodeId added =
        result.add_node(ir::OpKind::kHardSwish, {*x}, {{graph.value(*x).type, {}}}, {}, node.name);
    result.replace_all_uses(node.outputs[0], result.node(added).outputs[0]);
    ++count;
  }
  result.remove_dead_nodes();
  return result;
}

/// Every tanh GELU in TorchScript's form written in the form onnxruntime fuses into FastGelu:
/// Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), a)), s)), 1)).
ir::Graph with_fusable_tanh_gelus(const ir::Graph& graph, int& count) {
  ir::Graph result = graph;
  const ChainFinder finder(graph);
  std::set<ir::NodeId> claimed;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    std::optional<TanhGelu> found = finder.tanh_gelu(id);
    if (!found || graph.value(found->x).type.dtype != ir::DataType::kFloat ||
        !finder.keeps_type(found->x, node.outputs[0]) || !claim(claimed, found->nodes)) {
      continue;
    }
    const ir::TensorType& type = graph.value(found->x).type;
    auto constant = [&](double number) {
      return result.add_weight({}, ir::share(ir::Tensor::from_floats({}, {static_cast<float>(number)})));
    };
    auto add = [&](ir::OpKind op, std::vector<ir::ValueId> inputs, const std::string& suffix) {
      return result.node(result.add_node(op, std::move(inputs), {{type, {}}}, {}, node.name + suffix)).outputs[0];
    };
    const ir::ValueId halved = add(ir::OpKind::kMul, {found->x, constant(0.5)}, "/half");
    const ir::ValueId cube = add(ir::OpKind::kPow, {found->x, constant(3.0)}, "/cube");
    const ir::ValueId term = add(ir::OpKind::kMul, {cube, constant(found->a)}, "/cubic");
    const ir::ValueId sum = add(ir::OpKind::kAdd, {found->x, term}, "/sum");
    const ir::ValueId scaled = add(ir::OpKind::kMul, {sum, constant(found->s)}, "/scale");
    const ir::ValueId tanh = add(ir::OpKind::kTanh, {scaled}, "/tanh");
    const ir::ValueId plus_one = add(ir::OpKind::kAdd, {tanh, constant(1.0)}, "/plus_one");
    const ir::ValueId gelu = add(ir::OpKind::kMul, {halved, plus_one}, "");
    result.replace_all_uses(node.outputs[0], gelu);
    ++count;
  }
  result.remove_dead_nodes();
  return result;
}

}  // namespace

ir::Graph write_activations(const ir::Graph& graph, ActivationStats* stats) {
  ActivationStats counts;
  ir::Graph result = with_hard_sigmoids(graph, counts.hard_sigmoid);
  const int64_t opset = graph.model_info() ? graph.model_info()->onnx_opset() : ir::kDefaultOnnxOpset;
  if (opset >= kHardSwishOpset) result = with_hard_swishes(result, counts.hard_swish);
  result = with_fusable_tanh_gelus(result, counts.tanh_gelu);
  if (stats) *stats = counts;
  return counts.total() > 0 ? result : graph;
}

}  // namespace graphsub::rewrite
