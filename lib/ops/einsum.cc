// Einsum (opset 12): sums of products over labelled axes, as numpy.einsum (ONNX's reference)
// computes them: repeated labels in one operand take its diagonal, ellipses broadcast, labels
// missing from the output are summed.
#include "ops/einsum.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

constexpr int kLetters = 52;
constexpr const char* kEllipsis = "...";

/// 0-25 for a-z, 26-51 for A-Z; -1 for anything else.
int letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

/// A term split into the letters before and after its ellipsis (all in `before` when it has none).
struct Term {
  std::vector<int> before;
  std::vector<int> after;
  bool has_ellipsis = false;
};

/// Parses one term (spaces already removed), or sets `error`.
Term parse_term(const std::string& text, std::string& error) {
  Term term;
  for (std::size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, kEllipsis) == 0) {
      if (term.has_ellipsis) error = "more than one ellipsis in '" + text + "'";
      term.has_ellipsis = true;
      i += 3;
      continue;
    }
    const int label = letter_label(text[i]);
    if (label < 0) {
      error = std::string("invalid character '") + text[i] + "' in '" + text + "'";
      return term;
    }
    (term.has_ellipsis ? term.after : term.before).push_back(label);
    ++i;
  }
  return term;
}

struct Parsed {
  std::vector<Term> inputs;
  Term output;
  bool explicit_output = false;
};

/// The equation split into terms, or `error` set.
Parsed split_equation(const std::string& equation, std::string& error) {
  std::string text;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) text += c;
  }
  Parsed parsed;
  std::string left = text;
  const std::size_t arrow = text.find("->");
  if (arrow != std::string::npos) {
    parsed.explicit_output = true;
    left = text.substr(0, arrow);
    parsed.output = parse_term(text.substr(arrow + 2), error);
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = left.find(',', start);
    parsed.inputs.push_back(parse_term(left.substr(start, comma - start), error));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parsed;
}

/// The labels of a term for an operand of `rank`, the ellipsis axes numbered from the right
/// within `ellipsis_rank`; empty optional when the term does not fit the rank.
std::optional<std::vector<int>> expand(const Term& term, std::size_t rank, int ellipsis_rank) {
  const std::size_t letters = term.before.size() + term.after.size();
  if (!term.has_ellipsis) {
    if (letters != rank) return std::nullopt;
    return term.before;
  }
  if (letters > rank) return std::nullopt;
  const auto covered = static_cast<int>(rank - letters);
  std::vector<int> labels = term.before;
  for (int k = ellipsis_rank - covered; k < ellipsis_rank; ++k) labels.push_back(kLetters + k);
  labels.insert(labels.end(), term.after.begin(), term.after.end());
  return labels;
}

}  // namespace

std::string check_einsum_equation(const std::string& equation, std::size_t operands) {
  std::string error;
  const Parsed parsed = split_equation(equation, error);
  if (!error.empty()) return error;
  if (parsed.inputs.size() != operands) {
    return "equation has " + std::to_string(parsed.inputs.size()) + " terms for " + std::to_string(operands) +
           " operands";
  }
  if (!parsed.explicit_output) return {};
  std::array<bool, kLetters> in_inputs{};
  bool any_ellipsis = false;
  for (const Term& term : parsed.inputs) {
    for (int label : term.before) in_inputs[label] = true;
    for (int label : term.after) in_inputs[label] = true;
    any_ellipsis = any_ellipsis || term.has_ellipsis;
  }
  if (parsed.output.has_ellipsis && !any_ellipsis) return "output has an ellipsis and no input has one";
  std::array<bool, kLetters> seen{};
  std::vector<int> labels = parsed.output.before;
  labels.insert(labels.end(), parsed.output.after.begin(), parsed.output.after.end());
  for (int label : labels) {
    if (!in_inputs[label]) return "output label not in any input";
    if (seen[label]) return "output label repeated";
    seen[label] = true;
  }
  return {};
}

std::optional<EinsumTerms> parse_einsum(const std::string& equation, const std::vector<std::size_t>& ranks) {
  std::string error;
  const Parsed parsed = split_equation(equation, error);
  if (!error.empty() || parsed.inputs.size() != ranks.size()) return std::nullopt;
  EinsumTerms terms;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const Term& term = parsed.inputs[i];
    const std::size_t letters = term.before.size() + term.after.size();
    if (term.has_ellipsis && ranks[i] >= letters) {
      terms.ellipsis_rank = std::max(terms.ellipsis_rank, static_cast<int>(ranks[i] - letters));
    }
  }
  std::array<int, kLetters> counts{};
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::optional<std::vector<int>> labels = expand(parsed.inputs[i], ranks[i], terms.ellipsis_rank);
    if (!labels) return std::nullopt;
    for (int label : *labels) {
      if (label < kLetters) ++counts[label];
    }
    terms.inputs.push_back(std::move(*labels));
  }
  if (parsed.explicit_output) {
    Term output = parsed.output;
    if (!output.has_ellipsis && terms.ellipsis_rank > 0) return std::nullopt;  // numpy: ellipsis axes kept
    std::vector<int> labels = output.before;
    if (output.has_ellipsis) {
      for (int k = 0; k < terms.ellipsis_rank; ++k) labels.push_back(kLetters + k);
    }
    labels.insert(labels.end(), output.after.begin(), output.after.end());
    terms.output = std::move(labels);
  } else {
    for (int k = 0; k < terms.ellipsis_rank; ++k) terms.output.push_back(kLetters + k);
    // ASCII order: upper case (26-51) before lower case (0-25).
    for (int label = 26; label < kLetters; ++label) {
      if (counts[label] == 1) terms.output.push_back(label);
    }
    for (int label = 0; label < 26; ++label) {
      if (counts[label] == 1) terms.output.push_back(label);
    }
  }
  return terms;
}

namespace {

std::string equation_of(const ir::Node& node) { return node.attrs.get_string("equation", ""); }

std::string canonicalize(ImportContext& context) {
  if (context.input_types.empty()) return "Einsum takes at least one operand";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  if (std::string reason = require_dtypes(context, {ir::DataType::kFloat, ir::DataType::kDouble}); !reason.empty()) {
    return reason;
  }
  for (const ir::TensorType& input : context.input_types) {
    if (input.dtype != context.input_types[0].dtype) return "mixed element types";
  }
  if (!context.attrs.has("equation")) return "Einsum without an equation";
  return check_einsum_equation(context.attrs.get_string("equation", ""), context.input_types.size());
}

/// The dim a label has, merged over the operands: a known size wins over a symbol, a size of 1
/// on an ellipsis axis broadcasts.
struct LabelDims {
  std::map<int, ir::Dim> dims;
  std::string error;

  void add(int label, const ir::Dim& dim) {
    auto [entry, added] = dims.emplace(label, dim);
    if (added || entry->second == dim) return;
    ir::Dim& have = entry->second;
    const bool broadcast = label >= kLetters;
    if (broadcast && dim.is_known() && dim.value == 1) return;
    if (broadcast && have.is_known() && have.value == 1) {
      have = dim;
      return;
    }
    if (have.is_known() && dim.is_known()) {
      error = "label sizes " + std::to_string(have.value) + " and " + std::to_string(dim.value) + " differ";
    } else if (dim.is_known()) {
      have = dim;
    }
  }
};

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.empty()) return InferResult::failure("Einsum takes at least one operand");
  const ir::DataType dtype = inputs[0].dtype;
  for (const ir::TensorType& input : inputs) {
    if (input.dtype != dtype) return InferResult::failure("mixed element types");
    if (input.dtype != ir::DataType::kFloat && input.dtype != ir::DataType::kDouble &&
        input.dtype != ir::DataType::kUndefined) {
      return InferResult::failure("no kernel for element type " + ir::to_string(input.dtype));
    }
  }
  const std::string equation = equation_of(node);
  if (std::string error = check_einsum_equation(equation, inputs.size()); !error.empty()) {
    return InferResult::failure(error);
  }
  std::vector<std::size_t> ranks;
  for (const ir::TensorType& input : inputs) {
    if (!input.shape.rank_known) return InferResult{{ir::TensorType{dtype, ir::Shape::unknown()}}, {}};
    ranks.push_back(input.shape.rank());
  }
  const std::optional<EinsumTerms> terms = parse_einsum(equation, ranks);
  if (!terms) return InferResult::failure("equation '" + equation + "' does not fit the operands' ranks");
  LabelDims labels;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t axis = 0; axis < ranks[i]; ++axis) labels.add(terms->inputs[i][axis], inputs[i].shape.dims[axis]);
  }
  if (!labels.error.empty()) return InferResult::failure(labels.error);
  ir::Shape out;
  out.rank_known = true;
  for (int label : terms->output) out.dims.push_back(labels.dims.at(label));
  return InferResult{{ir::TensorType{dtype, out}}, {}};
}

/// The sizes of every label, from the operands' static sizes.
std::map<int, int64_t> label_sizes(const EinsumTerms& terms, const std::vector<const ir::Tensor*>& inputs) {
  std::map<int, int64_t> sizes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t axis = 0; axis < terms.inputs[i].size(); ++axis) {
      int64_t& size = sizes[terms.inputs[i][axis]];
      size = std::max(size, inputs[i]->dims()[axis]);
    }
  }
  return sizes;
}

/// Element strides of operand `dims` per label (summed over a repeated label: the diagonal;
/// 0 on an ellipsis axis of size 1 that broadcasts).
std::map<int, int64_t> label_strides(const std::vector<int>& labels, const std::vector<int64_t>& dims) {
  std::map<int, int64_t> strides;
  const std::vector<int64_t> row_major = strides_of(dims);
  for (std::size_t axis = 0; axis < labels.size(); ++axis) {
    if (dims[axis] != 1) strides[labels[axis]] += row_major[axis];
  }
  return strides;
}

/// For each output element (row-major), the sum over the summed labels of the operands'
/// product, accumulated in double in a fixed order.
template <class T>
void einsum(const EinsumTerms& terms, const std::vector<const ir::Tensor*>& inputs, ir::Tensor& out) {
  const std::map<int, int64_t> sizes = label_sizes(terms, inputs);
  std::vector<int> order = terms.output;  // output labels, then the summed ones
  for (const auto& [label, size] : sizes) {
    if (std::find(order.begin(), order.end(), label) == order.end()) order.push_back(label);
  }
  const std::size_t kept = terms.output.size();
  std::vector<int64_t> extent;
  for (int label : order) extent.push_back(sizes.at(label));
  std::vector<std::vector<int64_t>> strides(inputs.size(), std::vector<int64_t>(order.size(), 0));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::map<int, int64_t> by_label = label_strides(terms.inputs[i], inputs[i]->dims());
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto found = by_label.find(order[k]);
      if (found != by_label.end()) strides[i][k] = found->second;
    }
  }
  int64_t summed_count = 1;
  for (std::size_t k = kept; k < order.size(); ++k) summed_count *= extent[k];
  T* y = out.mutable_data<T>();
  std::vector<int64_t> index(order.size(), 0);
  for (int64_t element = 0; element < out.num_elements(); ++element) {
    std::vector<int64_t> base(inputs.size(), 0);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      for (std::size_t k = 0; k < kept; ++k) base[i] += index[k] * strides[i][k];
    }
    double sum = 0;
    std::fill(index.begin() + static_cast<std::ptrdiff_t>(kept), index.end(), 0);
    for (int64_t step = 0; step < summed_count; ++step) {
      double product = 1;
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        int64_t offset = base[i];
        for (std::size_t k = kept; k < order.size(); ++k) offset += index[k] * strides[i][k];
        product *= static_cast<double>(inputs[i]->data<T>()[offset]);
      }
      sum += product;
      for (std::size_t k = order.size(); k-- > kept;) {  // next summed index
        if (++index[k] < extent[k]) break;
        index[k] = 0;
      }
    }
    y[element] = static_cast<T>(sum);
    for (std::size_t k = kept; k-- > 0;) {  // next output index
      if (++index[k] < extent[k]) break;
      index[k] = 0;
    }
  }
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs, std::vector<ir::Tensor>& outputs) {
  std::vector<std::size_t> ranks;
  for (const ir::Tensor* input : inputs) ranks.push_back(input->dims().size());
  const EinsumTerms terms = *parse_einsum(equation_of(node), ranks);
  dispatch_floating(inputs[0]->dtype(), [&](auto zero) { einsum<decltype(zero)>(terms, inputs, outputs[0]); });
}

/// One multiply-add per combination of all labels' sizes (symbolic sizes count 1); every
/// operand read and the output written once.
CostFeatures features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  CostFeatures result = elementwise_features(inputs, outputs, 0);
  std::vector<std::size_t> ranks;
  for (const ir::TensorType& input : inputs) {
    if (!input.shape.rank_known) return result;
    ranks.push_back(input.shape.rank());
  }
  const std::optional<EinsumTerms> terms = parse_einsum(equation_of(node), ranks);
  if (!terms) return result;
  std::map<int, double> sizes;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t axis = 0; axis < ranks[i]; ++axis) {
      const ir::Dim& dim = inputs[i].shape.dims[axis];
      double& size = sizes.emplace(terms->inputs[i][axis], 1.0).first->second;
      if (dim.is_known()) size = std::max(size, static_cast<double>(dim.value));
    }
  }
  double combinations = 1;
  for (const auto& [label, size] : sizes) combinations *= size;
  result.flops = 2 * combinations;
  return result;
}

}  // namespace

OpDef einsum_op() {
  return OpDef{ir::OpKind::kEinsum, "Einsum", true, 12, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
