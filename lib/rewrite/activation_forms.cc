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

}  // namespace

ir::Graph write_activations(const ir::Graph& graph, ActivationStats* stats) {
  ActivationStats counts;
  ir::Graph result = with_hard_sigmoids(graph, counts.hard_sigmoid);
  const int64_t opset = graph.model_info() ? graph.model_info()->onnx_opset() : ir::kDefaultOnnxOpset;
  if (opset >= kHardSwishOpset) result = with_hard_swishes(result, counts.hard_swish);
  if (stats) *stats = counts;
  return counts.total() > 0 ? result : graph;
}

}  // namespace graphsub::rewrite
