// The rewriter: builds the target of a match in a copy of the graph and redirects the mapped uses.
#include "rewrite/rewriter.h"

#include <exception>
#include <numeric>
#include <set>

#include "ops/folding.h"
#include "ops/registry.h"
#include "rewrite/expr_eval.h"

namespace graphsub::rewrite {
namespace {

using rules::PatternNode;

/// One application of a match; every step returns an empty string or why the match is rejected.
class Rewrite {
 public:
  Rewrite(const ir::Graph& graph, const Match& match)
      : graph_(graph), match_(match), rule_(*match.rule), names_(match.values), lists_(match.lists) {
    for (const std::string& input : rule_.inputs()) readable_.insert(input);
  }

  std::string run() {
    std::string reason = add_constants();
    for (std::size_t i = 0; reason.empty() && i < rule_.target.size(); ++i) {
      reason = add_target_node(rule_.target[i]);
    }
    if (reason.empty()) reason = redirect();
    if (!reason.empty()) return reason;
    if (!graph_.topological_order()) return "the rewrite would create a cycle";
    graph_.remove_dead_nodes();
    return {};
  }

  ir::Graph& result() { return graph_; }

 private:
  EvalContext context() const {
    return EvalContext{graph_, names_, match_.variables, [this](ir::ValueId id) { return is_weight(id); }, &lists_};
  }

  bool is_weight(ir::ValueId id) const {
    const ir::Value& value = graph_.value(id);
    if (value.kind != ir::ValueKind::kIntermediate) return value.kind == ir::ValueKind::kWeight;
    return ops::folded_nodes(graph_)[value.producer];
  }

  /// Defines a target name (a constant or a node output) for later target lines.
  void define(const std::string& name, ir::ValueId id) {
    names_[name] = id;
    readable_.insert(name);
  }

  std::string add_constants() {
    for (const rules::ConstDef& constant : rule_.constants) {
      const EvalResult result = evaluate(constant.value, context());
      if (!result.ok()) return "const " + constant.name + ": " + result.error;
      std::optional<ir::Tensor> tensor = to_tensor(result.value);
      if (!tensor) return "const " + constant.name + " is not a number or a list of numbers";
      define(constant.name, graph_.add_weight({}, ir::share(std::move(*tensor))));
    }
    return {};
  }

  /// The attributes of a target node: `@v`'s source node's, then each setting.
  std::string attributes_of(const PatternNode& pattern, ir::Attributes& attrs) const {
    if (!pattern.copy_from.empty()) {
      const std::optional<ir::NodeId> source = source_node_of(pattern.copy_from);
      if (!source) return "@" + pattern.copy_from + " is not defined by a source node";
      attrs = graph_.node(*source).attrs;
    }
    for (const rules::AttrSetting& setting : pattern.attrs) {
      const EvalResult result = evaluate(setting.value, context());
      if (!result.ok()) return setting.name + ": " + result.error;
      std::optional<ir::AttrValue> value = to_attr(result.value, attrs.find(setting.name));
      if (!value) return setting.name + ": " + to_string(result.value) + " is not an attribute value";
      attrs.set(setting.name, std::move(*value));
    }
    return {};
  }

  /// The graph node of the source node that defines `name`.
  std::optional<ir::NodeId> source_node_of(const std::string& name) const {
    for (std::size_t i = 0; i < rule_.source.size(); ++i) {
      for (const std::string& output : rule_.source[i].outputs) {
        if (output == name) return match_.nodes.at(i);
      }
    }
    return std::nullopt;
  }

  /// The values a name stands for: one, or a value list's.
  std::optional<std::vector<ir::ValueId>> values_of(const std::string& name) const {
    if (readable_.count(name) == 0) return std::nullopt;
    if (rules::is_list_name(name)) {
      const auto it = lists_.find(name);
      if (it == lists_.end()) return std::nullopt;
      return it->second;
    }
    const auto it = names_.find(name);
    if (it == names_.end()) return std::nullopt;
    return std::vector<ir::ValueId>{it->second};
  }

  std::string inputs_of(const PatternNode& pattern, std::vector<ir::ValueId>& inputs,
                        std::vector<ir::TensorType>& types) const {
    for (const std::string& name : pattern.inputs) {
      const std::optional<std::vector<ir::ValueId>> values = values_of(name);
      if (!values) return "target input " + name + " is neither a pattern input nor defined by the target";
      for (ir::ValueId id : *values) {
        inputs.push_back(id);
        types.push_back(graph_.value(id).type);
      }
    }
    return {};
  }

  /// How many values each of a target node's output names stands for: 1, or for a value list the
  /// length of the source list mapped to it.
  std::vector<std::size_t> output_counts(const PatternNode& pattern) const {
    std::vector<std::size_t> counts;
    for (const std::string& name : pattern.outputs) {
      std::size_t count = 1;
      if (rules::is_list_name(name)) {
        for (const rules::OutputMap& map : rule_.outputs) {
          if (map.target == name) count = match_.lists.at(map.source).size();
        }
      }
      counts.push_back(count);
    }
    return counts;
  }

  /// Fills ONNX defaults (graphsub's own ops take their attributes as given), then infers types.
  static ops::InferResult infer(const PatternNode& pattern, ir::Node& node, const std::vector<ir::TensorType>& types,
                                std::size_t num_outputs) {
    const ops::OpDef& def = ops::op_def(pattern.op);
    if (def.is_onnx) {
      ops::ImportContext import{node.attrs, types, static_cast<int>(num_outputs), target_opset(def)};
      std::string reason = def.canonicalize(import);
      if (!reason.empty()) return ops::InferResult::failure(reason);
    }
    return def.infer(node, types);
  }

  /// "Conv (target line 7): ", what a refusal of a target node starts with.
  static std::string where(const PatternNode& pattern) {
    return std::string(ops::kind_name(pattern.op)) + " (target line " + std::to_string(pattern.line) + "): ";
  }

  std::string add_target_node(const PatternNode& pattern) {
    ir::Node node;
    node.op = pattern.op;
    std::vector<ir::TensorType> types;
    std::string reason = inputs_of(pattern, node.inputs, types);
    if (reason.empty()) reason = attributes_of(pattern, node.attrs);
    if (!reason.empty()) return where(pattern) + reason;
    const std::vector<std::size_t> counts = output_counts(pattern);
    const std::size_t num_outputs = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
    const ops::InferResult inferred = infer(pattern, node, types, num_outputs);
    if (!inferred.ok()) return where(pattern) + inferred.error;
    if (inferred.outputs.size() < num_outputs) return where(pattern) + "too few outputs";
    std::vector<ir::OutputSpec> outputs;
    outputs.reserve(inferred.outputs.size());
    for (const ir::TensorType& type : inferred.outputs) outputs.push_back({type, {}});
    const ir::NodeId id = graph_.add_node(node.op, std::move(node.inputs), outputs, std::move(node.attrs));
    const std::vector<ir::ValueId>& produced = graph_.node(id).outputs;
    std::size_t next = 0;
    for (std::size_t j = 0; j < pattern.outputs.size(); ++j) {
      const std::string& name = pattern.outputs[j];
      if (rules::is_list_name(name)) {
        lists_[name].assign(produced.begin() + next, produced.begin() + next + counts[j]);
        readable_.insert(name);
      } else {
        define(name, produced[next]);
      }
      next += counts[j];
    }
    return {};
  }

  bool produced_by_match(ir::ValueId id) const {
    const ir::NodeId producer = graph_.value(id).producer;
    for (ir::NodeId node : match_.nodes) {
      if (node == producer) return true;
    }
    return false;
  }

  /// The source values a map's source name stands for.
  std::optional<std::vector<ir::ValueId>> source_values(const std::string& name) const {
    if (rules::is_list_name(name)) {
      const auto it = match_.lists.find(name);
      if (it == match_.lists.end()) return std::nullopt;
      return it->second;
    }
    const auto it = match_.values.find(name);
    if (it == match_.values.end()) return std::nullopt;
    return std::vector<ir::ValueId>{it->second};
  }

  /// Checks every mapped pair (value lists pair element by element), then moves the uses.
  std::string redirect() {
    std::vector<std::pair<ir::ValueId, ir::ValueId>> pairs;
    for (const rules::OutputMap& map : rule_.outputs) {
      const std::string what = "map " + map.source + " -> " + map.target;
      const std::optional<std::vector<ir::ValueId>> from = source_values(map.source);
      const std::optional<std::vector<ir::ValueId>> to = values_of(map.target);
      if (!from) return what + ": the source value is not bound";
      if (!to) return what + ": the target value is not defined";
      if (from->size() != to->size()) return what + ": the lists differ in length";
      for (std::size_t i = 0; i < from->size(); ++i) {
        if (!produced_by_match((*from)[i])) return what + ": the source value is not produced by the match";
        const ir::TensorType& want = graph_.value((*from)[i]).type;
        const ir::TensorType& got = graph_.value((*to)[i]).type;
        // A target value of unknown rank says nothing of its shape: where the rule holds only
        // for equal types (a Reshape to its input's own shape), taking it as the source's type
        // would replace a tensor by one of another rank (an opaque node's output).
        const bool rank_unknown = want.shape.rank_known && !got.shape.rank_known;
        if (want != got && (rank_unknown || !ir::generalizes(got, want))) {
          return what + ": types differ, " + ir::to_string(want) + " vs " + ir::to_string(got);
        }
        pairs.emplace_back((*from)[i], (*to)[i]);
      }
    }
    for (const auto& [from, to] : pairs) {
      // A target value whose inferred type knows less than the source value's (a dim ONNX's
      // inference named, as unk__12, that graphsub's broadcast of two other symbols cannot)
      // takes the source's type: the rule computes the same tensor, so it has that shape.
      if (graph_.value(to).type != graph_.value(from).type) graph_.set_type(to, graph_.value(from).type);
      graph_.replace_all_uses(from, to);
    }
    return {};
  }

  ir::Graph graph_;
  const Match& match_;
  const rules::Rule& rule_;
  std::map<std::string, ir::ValueId> names_;  ///< Source names, then target constants and outputs.
  std::map<std::string, std::vector<ir::ValueId>> lists_;  ///< Source value lists, then target ones.
  std::set<std::string> readable_;            ///< Names a target line may read.
};

}  // namespace

std::optional<ir::ValueId> add_canonical_node(ir::Graph& graph, ir::OpKind op, std::vector<ir::ValueId> inputs,
                                              ir::Attributes attrs, const std::string& name) {
  const ops::OpDef& def = ops::op_def(op);
  std::vector<ir::TensorType> types;
  for (ir::ValueId input : inputs) types.push_back(graph.value(input).type);
  ops::ImportContext context{attrs, types, 1, target_opset(def)};
  if (!def.canonicalize(context).empty()) return std::nullopt;
  ir::Node node;
  node.op = op;
  node.attrs = attrs;
  const ops::InferResult inferred = def.infer(node, types);
  if (!inferred.ok()) return std::nullopt;
  const ir::NodeId id = graph.add_node(op, std::move(inputs), {{inferred.outputs[0], {}}}, std::move(attrs), name);
  return graph.node(id).outputs[0];
}

std::optional<ir::Graph> apply(const ir::Graph& graph, const Match& match, std::string* why_not) {
  std::string reason;
  try {
    if (!match.rule) {
      reason = "the match has no rule";
    } else {
      Rewrite rewrite(graph, match);
      reason = rewrite.run();
      if (reason.empty()) return std::move(rewrite.result());
    }
  } catch (const std::exception& error) {
    reason = error.what();
  }
  if (why_not) *why_not = (match.rule ? match.rule->name + ": " : std::string()) + reason;
  return std::nullopt;
}

}  // namespace graphsub::rewrite
