// Translation of TASO's rule collection: op codes to graphsub kinds, TASO parameters to attribute
// constraints, the tensor ranks TASO's generator assumed to `where rank(...)` conditions, and
// split sizes recovered from the concatenation each split undoes (TASO §2.1 split trees).
#include "rules/taso_reader.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ops/registry.h"
#include "rules/parser.h"
#include "rules/printer.h"
#include "taso_graph_subst.pb.h"

namespace graphsub::rules {
namespace {

/// TASO's OpType codes that have a translation (kTasoOpNames names them all, for messages).
enum TasoOp {
  kConv2d = 3,
  kRelu = 8,
  kSigmoid = 9,
  kTanh = 10,
  kConcat = 12,
  kSplit = 13,
  kEwAdd = 16,
  kEwMul = 17,
  kMatMul = 18,
  kScalarMul = 19,
  kEnlarge = 20,
};

const char* const kTasoOpNames[] = {
    "INPUT",        "WEIGHT",       "ANY",     "CONV2D",      "DROPOUT",      "LINEAR",
    "POOL2D_MAX",   "POOL2D_AVG",   "RELU",    "SIGMOID",     "TANH",         "BATCHNORM",
    "CONCAT",       "SPLIT",        "RESHAPE", "TRANSPOSE",   "EW_ADD",       "EW_MUL",
    "MATMUL",       "MUL",          "ENLARGE", "MERGE_GCONV", "CONSTANT_IMM", "CONSTANT_ICONV",
    "CONSTANT_ONE", "CONSTANT_POOL"};

/// TASO's PMParameter codes.
enum TasoParam {
  kNumInputs = 1,
  kNumOutputs = 2,
  kGroup = 3,
  kKernelH = 4,
  kKernelW = 5,
  kStrideH = 6,
  kStrideW = 7,
  kPad = 8,
  kActivation = 9,
  kNumDim = 10,
  kAxis = 11,
};

/// Why a rule cannot be translated exactly; caught per rule and recorded as skipped.
struct Untranslatable {
  std::string reason;
};

/// How a TASO operator becomes a graphsub node: its kind, its arity (kVariadic: NUM_INPUTS) and
/// the parameters the translation accounts for (any other parameter skips the rule).
struct OpTranslation {
  int type;
  ir::OpKind kind;
  int arity;
  std::set<int> params;
};

constexpr int kVariadic = -1;
constexpr int kMaxSplitOutputs = 64;

const OpTranslation kTranslations[] = {
    {kConv2d, ir::OpKind::kConv, 2, {kGroup, kKernelH, kKernelW, kStrideH, kStrideW, kPad, kActivation}},
    {kRelu, ir::OpKind::kRelu, 1, {}},
    {kSigmoid, ir::OpKind::kSigmoid, 1, {}},
    {kTanh, ir::OpKind::kTanh, 1, {}},
    {kConcat, ir::OpKind::kConcat, kVariadic, {kNumInputs, kNumDim, kAxis}},
    {kSplit, ir::OpKind::kSplit, 1, {kNumOutputs, kAxis}},
    {kEwAdd, ir::OpKind::kAdd, 2, {}},
    {kEwMul, ir::OpKind::kMul, 2, {}},
    {kMatMul, ir::OpKind::kMatMul, 2, {kActivation}},
    {kScalarMul, ir::OpKind::kSMul, 2, {}},
    {kEnlarge, ir::OpKind::kEnlarge, 2, {}},
};

std::string taso_op_name(int type) {
  const int count = static_cast<int>(sizeof kTasoOpNames / sizeof kTasoOpNames[0]);
  return type >= 0 && type < count ? kTasoOpNames[type] : "type " + std::to_string(type);
}

const OpTranslation& translation_of(const GraphSubst::Operator& op) {
  for (const OpTranslation& translation : kTranslations) {
    if (translation.type == op.type()) return translation;
  }
  throw Untranslatable{"operator " + taso_op_name(op.type()) + " has no translation"};
}

using Params = std::map<int, int>;

Params params_of(const GraphSubst::Operator& op) {
  Params params;
  for (const GraphSubst::Parameter& para : op.para()) params[para.key()] = para.value();
  return params;
}

int param(const Params& params, int key, const std::string& op) {
  const auto it = params.find(key);
  if (it == params.end()) throw Untranslatable{op + " lacks parameter " + std::to_string(key)};
  return it->second;
}

/// Rejects parameters the translation would silently ignore.
void allow_only(const Params& params, const std::set<int>& keys, const std::string& op) {
  for (const auto& [key, value] : params) {
    if (keys.count(key) == 0) throw Untranslatable{op + " has untranslated parameter " + std::to_string(key)};
  }
}

Expr ints(std::vector<int64_t> values) {
  std::vector<Expr> elements;
  for (int64_t value : values) elements.push_back(Expr::integer(value));
  return Expr::list(std::move(elements));
}

Expr dim_of(const std::string& value, int64_t axis) {
  return Expr::index(Expr::call(Expr::Kind::kShape, value), Expr::integer(axis));
}

/// One TASO operator list (srcOp or dstOp) as seen by the translation.
struct OpList {
  const google::protobuf::RepeatedPtrField<GraphSubst::Operator>* ops;
  std::string prefix;  ///< "s" for the source, "t" for the target.
};

class RuleTranslator {
 public:
  RuleTranslator(const GraphSubst::Rule& proto, int index) : proto_(proto) {
    rule_.name = "taso-" + std::to_string(index);
    rule_.origin = Origin::kTaso;
  }

  Rule translate() {
    name_outputs({&proto_.srcop(), "s"});
    name_outputs({&proto_.dstop(), "t"});
    infer_ranks();
    for (int i = 0; i < proto_.srcop_size(); ++i) rule_.source.push_back(source_node(i));
    add_rank_conditions();
    for (int i = 0; i < proto_.dstop_size(); ++i) rule_.target.push_back(target_node(i));
    for (const GraphSubst::MapOutput& map : proto_.mappedoutput()) {
      rule_.outputs.push_back(
          {output_name("s", map.srcopid(), map.srctsid()), output_name("t", map.dstopid(), map.dsttsid())});
    }
    rule_.comment = {describe()};
    return rule_;
  }

 private:
  // ---- Names ----

  static int output_count(const GraphSubst::Operator& op) {
    if (op.type() != kSplit) return 1;
    const int count = param(params_of(op), kNumOutputs, "SPLIT");
    if (count < 1 || count > kMaxSplitOutputs) {
      throw Untranslatable{"SPLIT into " + std::to_string(count) + " parts"};
    }
    return count;
  }

  void name_outputs(const OpList& list) {
    for (int i = 0; i < list.ops->size(); ++i) counts_[list.prefix].push_back(output_count(list.ops->Get(i)));
  }

  std::string output_name(const std::string& prefix, int op, int ts) const {
    const std::vector<int>& counts = counts_.at(prefix);
    if (op < 0 || op >= static_cast<int>(counts.size()) || ts < 0 || ts >= counts[op]) {
      throw Untranslatable{"refers to output " + std::to_string(ts) + " of missing operator " +
                           std::to_string(op)};
    }
    return prefix + std::to_string(op) + "_" + std::to_string(ts);
  }

  std::vector<std::string> inputs_of(const GraphSubst::Operator& op, const std::string& prefix,
                                     int index) const {
    std::vector<std::string> inputs;
    for (const GraphSubst::Tensor& tensor : op.input()) {
      if (tensor.opid() < 0) {
        inputs.push_back("in" + std::to_string(-tensor.opid()));
      } else if (tensor.opid() >= index) {
        throw Untranslatable{"operator " + std::to_string(index) + " reads a later operator"};
      } else {
        inputs.push_back(output_name(prefix, tensor.opid(), tensor.tsid()));
      }
    }
    return inputs;
  }

  std::vector<std::string> outputs_of(const std::string& prefix, int index) const {
    std::vector<std::string> outputs;
    for (int ts = 0; ts < counts_.at(prefix)[index]; ++ts) outputs.push_back(output_name(prefix, index, ts));
    return outputs;
  }

  // ---- Ranks: TASO's generator gave every tensor of an operator one rank (4 for conv). ----

  void infer_ranks() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [ops, prefix] : {OpList{&proto_.srcop(), "s"}, OpList{&proto_.dstop(), "t"}}) {
        for (int i = 0; i < ops->size(); ++i) changed |= unify_ranks(ops->Get(i), prefix, i);
      }
    }
  }

  bool unify_ranks(const GraphSubst::Operator& op, const std::string& prefix, int index) {
    std::vector<std::string> values = inputs_of(op, prefix, index);
    for (const std::string& output : outputs_of(prefix, index)) values.push_back(output);
    std::optional<int> rank;
    if (op.type() == kConv2d || op.type() == kEnlarge) rank = 4;
    if (op.type() == kConcat) rank = param(params_of(op), kNumDim, "CONCAT");
    if (op.type() == kScalarMul) values = {values[0], values.back()};  // The scalar has its own rank.
    for (const std::string& value : values) {
      const auto it = ranks_.find(value);
      if (it == ranks_.end()) continue;
      if (rank && *rank != it->second) throw Untranslatable{"inconsistent tensor ranks"};
      rank = it->second;
    }
    bool changed = false;
    if (!rank) return false;
    for (const std::string& value : values) changed |= ranks_.emplace(value, *rank).second;
    return changed;
  }

  void add_rank_conditions() {
    for (const std::string& input : rule_.inputs()) {
      const auto it = ranks_.find(input);
      if (it == ranks_.end()) continue;
      rule_.conditions.push_back(
          Expr::binary("==", Expr::call(Expr::Kind::kRank, input), Expr::integer(it->second)));
    }
  }

  // ---- Nodes ----

  PatternNode source_node(int index) {
    const GraphSubst::Operator& op = proto_.srcop(index);
    if (op.type() == kSplit) {
      throw Untranslatable{"SPLIT in the source (its sizes come from an unseen concat)"};
    }
    PatternNode node = node_of(op, "s", index);
    if (op.type() == kConv2d) {
      node.attrs = conv_attrs(params_of(op), true);
      node.attrs.insert(node.attrs.begin() + 3, {"dilations", ints({1, 1})});
    }
    return node;
  }

  PatternNode target_node(int index) {
    const GraphSubst::Operator& op = proto_.dstop(index);
    PatternNode node = node_of(op, "t", index);
    if (op.type() == kSplit) node.attrs.push_back({"split", split_sizes(node.inputs[0], params_of(op))});
    if (op.type() == kConv2d) {
      if (!kernel_bound_) {
        throw Untranslatable{"a target CONV2D without a source CONV2D to take its kernel from"};
      }
      node.copy_from = equal_source_conv(op);
      if (node.copy_from.empty()) node.attrs = conv_attrs(params_of(op), false);
      if (params_of(op).count(kGroup) == 0) set_inferred_group(node);
    }
    return node;
  }

  /// TASO infers a convolution's groups from its operands (input channels over the kernel's);
  /// a target CONV2D over concatenated inputs and kernels is grouped although its source ones
  /// are not, so its group is that quotient, traced through the target's concats.
  void set_inferred_group(PatternNode& node) const {
    const std::optional<Expr> channels = dim_expr(node.inputs[0], 1);
    const std::optional<Expr> per_group = dim_expr(node.inputs[1], 1);
    if (!channels || !per_group) throw Untranslatable{"a target CONV2D whose groups cannot be traced"};
    auto is_group = [](const AttrSetting& attr) { return attr.name == "group"; };
    node.attrs.erase(std::remove_if(node.attrs.begin(), node.attrs.end(), is_group), node.attrs.end());
    node.attrs.push_back({"group", Expr::binary("/", *channels, *per_group)});
  }

  /// The node with its kind, inputs, outputs and every attribute but Conv's and Split's sizes.
  PatternNode node_of(const GraphSubst::Operator& op, const std::string& prefix, int index) const {
    const OpTranslation& translation = translation_of(op);
    const Params params = params_of(op);
    const std::string name = taso_op_name(op.type());
    PatternNode node;
    node.op = translation.kind;
    node.inputs = inputs_of(op, prefix, index);
    node.outputs = outputs_of(prefix, index);
    const int arity = translation.arity == kVariadic ? param(params, kNumInputs, name) : translation.arity;
    if (static_cast<int>(node.inputs.size()) != arity) {
      throw Untranslatable{name + " with " + std::to_string(node.inputs.size()) + " inputs"};
    }
    allow_only(params, translation.params, name);
    if (op.type() == kMatMul) {
      // graphsub's MatMul fuses an activation as Conv does: a rule must say which one it matches.
      const int activation = params.count(kActivation) != 0 ? params.at(kActivation) : 0;
      node.attrs.push_back({"activation", activation_expr(activation, name)});
    }
    if (op.type() == kConcat || op.type() == kSplit) {
      node.attrs.push_back({"axis", Expr::integer(param(params, kAxis, name))});
    }
    if (op.type() == kEnlarge) enlarge_to_reference(node);
    return node;
  }

  /// TASO's enlarge(w1, w2) pads w1's kernel to w2's; graphsub's Enlarge takes the size as kernel_shape.
  static void enlarge_to_reference(PatternNode& node) {
    const std::string reference = node.inputs[1];
    if (reference.rfind("t", 0) == 0) throw Untranslatable{"ENLARGE to the size of a computed kernel"};
    node.attrs.push_back({"kernel_shape", Expr::list({dim_of(reference, 2), dim_of(reference, 3)})});
    node.inputs.pop_back();
  }

  /// TASO's activation parameter (none, sigmoid, relu, tanh) as graphsub's activation name.
  static Expr activation_expr(int activation, const std::string& op_name) {
    static const char* const kActivations[] = {"none", "sigmoid", "relu", "tanh"};
    if (activation < 0 || activation > 3) {
      throw Untranslatable{op_name + " with activation " + std::to_string(activation)};
    }
    return Expr::string(kActivations[activation]);
  }

  /// Conv's attributes. Every conv of a rule shares one kernel `?k` (TASO's generator used one
  /// kernel size; TASO's matcher did not check it): SAME padding is then ?k / 2 on each side.
  std::vector<AttrSetting> conv_attrs(const Params& params, bool in_source) {
    const std::string name = "CONV2D";
    const int pad = param(params, kPad, name);
    if (pad != 0 && pad != 1) throw Untranslatable{"CONV2D with padding mode " + std::to_string(pad)};
    const std::vector<int64_t> strides{param(params, kStrideH, name), param(params, kStrideW, name)};
    if (pad == 0 && strides != std::vector<int64_t>{1, 1}) {
      throw Untranslatable{"CONV2D with SAME padding and a stride > 1 (its pads depend on the input size)"};
    }
    const Expr kernel = Expr::variable("k");
    const Expr half = Expr::binary("/", kernel, Expr::integer(2));
    std::vector<AttrSetting> attrs;
    attrs.push_back({"kernel_shape", kernel});
    attrs.push_back({"strides", ints(strides)});
    attrs.push_back({"pads", pad == 0 ? Expr::binary("++", half, half) : ints({0, 0, 0, 0})});
    attrs.push_back({"group", Expr::integer(params.count(kGroup) != 0 ? params.at(kGroup) : 1)});
    attrs.push_back({"activation", activation_expr(param(params, kActivation, name), name)});
    if (in_source) kernel_bound_ = true;
    return attrs;
  }

  /// The output of the first source CONV2D whose parameters equal `op`'s, or "".
  std::string equal_source_conv(const GraphSubst::Operator& op) const {
    for (int i = 0; i < proto_.srcop_size(); ++i) {
      const GraphSubst::Operator& candidate = proto_.srcop(i);
      if (candidate.type() == kConv2d && params_of(candidate) == params_of(op)) return output_name("s", i, 0);
    }
    return {};
  }

  // ---- Split sizes: a split undoes the most recent concat along its axis. ----

  const GraphSubst::Operator* target_producer(const std::string& value) const {
    if (value.rfind("t", 0) != 0) return nullptr;
    return &proto_.dstop(std::stoi(value.substr(1, value.find('_') - 1)));
  }

  int producer_index(const std::string& value) const {
    return std::stoi(value.substr(1, value.find('_') - 1));
  }

  std::optional<int> rank_of(const std::string& value) const {
    const auto it = ranks_.find(value);
    return it == ranks_.end() ? std::nullopt : std::optional<int>(it->second);
  }

  /// Which input of `op` carries `axis` of its output into which axis, for the ops whose split
  /// trees pass through; nullopt where TASO's tracking is not modelled here.
  std::optional<std::pair<int, int64_t>> axis_source(const GraphSubst::Operator& op,
                                                     const std::string& output, int64_t axis) const {
    switch (op.type()) {
      case kRelu:
      case kSigmoid:
      case kTanh:
        return std::make_pair(0, axis);
      case kConv2d:
        if (axis == 0) return std::make_pair(0, int64_t{0});
        if (axis == 1) return std::make_pair(1, int64_t{0});
        return std::nullopt;
      case kMatMul: {
        const std::optional<int> rank = rank_of(output);
        if (!rank) return std::nullopt;
        if (axis == *rank - 1) return std::make_pair(1, axis);
        if (axis == *rank - 2) return std::make_pair(0, axis);
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }

  std::optional<Expr> dim_expr(const std::string& value, int64_t axis) const {
    const GraphSubst::Operator* op = target_producer(value);
    if (op == nullptr) return dim_of(value, axis);
    const std::vector<std::string> inputs = inputs_of(*op, "t", producer_index(value));
    if (op->type() == kConcat && param(params_of(*op), kAxis, "CONCAT") == axis) {
      std::optional<Expr> total;
      for (const std::string& input : inputs) {
        std::optional<Expr> part = dim_expr(input, axis);
        if (!part) return std::nullopt;
        total = total ? Expr::binary("+", *total, *part) : *part;
      }
      return total;
    }
    if (op->type() == kConcat || op->type() == kEwAdd || op->type() == kEwMul) {
      return dim_expr(inputs[0], axis);
    }
    const auto from = axis_source(*op, value, axis);
    if (!from) return std::nullopt;
    return dim_expr(inputs[from->first], from->second);
  }

  std::optional<std::vector<Expr>> concat_sizes(const std::string& value, int64_t axis) const {
    const GraphSubst::Operator* op = target_producer(value);
    if (op == nullptr) return std::nullopt;
    const std::vector<std::string> inputs = inputs_of(*op, "t", producer_index(value));
    if (op->type() == kConcat) {
      if (param(params_of(*op), kAxis, "CONCAT") != axis) return std::nullopt;
      std::vector<Expr> sizes;
      for (const std::string& input : inputs) {
        std::optional<Expr> size = dim_expr(input, axis);
        if (!size) return std::nullopt;
        sizes.push_back(*size);
      }
      return sizes;
    }
    const auto from = axis_source(*op, value, axis);
    if (!from) return std::nullopt;
    return concat_sizes(inputs[from->first], from->second);
  }

  Expr split_sizes(const std::string& input, const Params& params) const {
    const int axis = param(params, kAxis, "SPLIT");
    const std::optional<std::vector<Expr>> sizes = concat_sizes(input, axis);
    if (!sizes) throw Untranslatable{"SPLIT whose concat cannot be traced"};
    if (static_cast<int>(sizes->size()) != param(params, kNumOutputs, "SPLIT")) {
      throw Untranslatable{"SPLIT into a different number of parts than its concat"};
    }
    return Expr::list(*sizes);
  }

  // ---- The comment: each mapped output before → after. ----

  std::string term(const std::string& value) const {
    if (value.rfind("in", 0) == 0) return value;
    const std::vector<PatternNode>& nodes = value[0] == 's' ? rule_.source : rule_.target;
    const PatternNode& node = nodes[producer_index(value)];
    std::string text = ops::kind_name(node.op);
    if (node.outputs.size() > 1) text += value.substr(value.find('_'));
    text += "(";
    for (std::size_t i = 0; i < node.inputs.size(); ++i) text += (i > 0 ? ", " : "") + term(node.inputs[i]);
    return text + ")";
  }

  std::string describe() const {
    std::string before;
    std::string after;
    for (const OutputMap& map : rule_.outputs) {
      before += (before.empty() ? "" : ", ") + term(map.source);
      after += (after.empty() ? "" : ", ") + term(map.target);
    }
    return before + " → " + after;
  }

  const GraphSubst::Rule& proto_;
  Rule rule_;
  std::map<std::string, std::vector<int>> counts_;
  std::map<std::string, int> ranks_;
  bool kernel_bound_ = false;
};

/// Translates and checks one rule: it must survive the text form unchanged.
Rule translate(const GraphSubst::Rule& proto, int index) {
  Rule rule = RuleTranslator(proto, index).translate();
  try {
    const std::vector<Rule> reparsed = parse_rules(print_rule(rule), rule.name);
    if (reparsed.size() != 1 || reparsed[0] != rule) throw Untranslatable{"does not survive printing"};
  } catch (const Error& error) {
    const std::string message = error.what();
    throw Untranslatable{message.substr(message.find(": ") + 2)};
  }
  return rule;
}

}  // namespace

TasoRules parse_taso_rules(const std::string& bytes, const std::string& file) {
  GraphSubst::RuleCollection collection;
  if (!collection.ParseFromString(bytes)) throw Error(file + " is not a TASO RuleCollection");
  TasoRules result;
  for (int i = 0; i < collection.rule_size(); ++i) {
    try {
      result.rules.push_back(translate(collection.rule(i), i));
    } catch (const Untranslatable& skip) {
      result.skipped.push_back("taso-" + std::to_string(i) + ": " + skip.reason);
    }
  }
  return result;
}

TasoRules read_taso_rules(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw Error("cannot read TASO rule file " + path);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  return parse_taso_rules(buffer.str(), path);
}

}  // namespace graphsub::rules
