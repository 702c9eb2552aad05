// Dims drawn from a rule's linear `where` equalities: classes of equal dims, then sums solved.
#include "verify/instance_dims.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <random>
#include <utility>


namespace graphsub::verify {
namespace {

using rules::Expr;

/// Classes of dims joined by `a == b`, as indices to their representative.
class Classes {
 public:
  explicit Classes(std::size_t count) : parent_(count) { std::iota(parent_.begin(), parent_.end(), 0); }
  std::size_t find(std::size_t index) {
    while (parent_[index] != index) index = parent_[index] = parent_[parent_[index]];
    return index;
  }
  void join(std::size_t a, std::size_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<std::size_t> parent_;
};

bool is_unit(int64_t coefficient) { return std::abs(coefficient) == 1; }

/// `a == b`: an equality of two dims, which joins their classes.
bool is_equality(const DimEquations::Equation& equation) {
  const auto first = equation.terms.begin();
  return equation.terms.size() == 2 && equation.constant == 0 && first->second == -std::next(first)->second &&
         is_unit(first->second);
}

/// `a == 5`: a dim fixed to an integer.
bool is_fixing(const DimEquations::Equation& equation) {
  return equation.terms.size() == 1 && is_unit(equation.terms.begin()->second);
}

}  // namespace

std::size_t DimEquations::index_of(const Dim& dim) {
  const auto [it, fresh] = indices_.emplace(dim, dims_.size());
  if (fresh) dims_.push_back(dim);
  return it->second;
}

/// `sign * expr` as a linear form; nullopt for anything but sums, differences and negations of
/// integers and `shape(x)[axis]` of a value that is not a list.
std::optional<DimEquations::Equation> DimEquations::linear(const Expr& expr, int64_t sign) {
  if (expr.kind == Expr::Kind::kInt) return Equation{{}, sign * expr.int_value};
  if (expr.kind == Expr::Kind::kNegate) return linear(expr.operands[0], -sign);
  if (expr.kind == Expr::Kind::kIndex) {
    const Expr& shape = expr.operands[0];
    const Expr& axis = expr.operands[1];
    if (shape.kind != Expr::Kind::kShape || axis.kind != Expr::Kind::kInt || axis.int_value < 0 ||
        rules::is_list_name(shape.text)) {
      return std::nullopt;
    }
    return Equation{{{index_of(Dim{shape.text, axis.int_value}), sign}}, 0};
  }
  if (expr.kind != Expr::Kind::kBinary || (expr.text != "+" && expr.text != "-")) return std::nullopt;
  std::optional<Equation> lhs = linear(expr.operands[0], sign);
  const std::optional<Equation> rhs = linear(expr.operands[1], expr.text == "+" ? sign : -sign);
  if (!lhs || !rhs) return std::nullopt;
  for (const auto& [index, coefficient] : rhs->terms) lhs->terms[index] += coefficient;
  lhs->constant += rhs->constant;
  return lhs;
}

void DimEquations::add(Equation equation) {
  for (auto it = equation.terms.begin(); it != equation.terms.end();) {
    it = it->second == 0 ? equation.terms.erase(it) : std::next(it);
  }
  if (equation.terms.empty()) return;
  for (const auto& term : equation.terms) named_.insert(dims_[term.first].value);
  equations_.push_back(std::move(equation));
}

namespace {

/// The axis a source node gives as a literal integer, if it does.
std::optional<int64_t> literal_axis(const rules::PatternNode& node) {
  for (const rules::AttrSetting& setting : node.attrs) {
    if (setting.name == "axis" && setting.value.kind == Expr::Kind::kInt) return setting.value.int_value;
  }
  return std::nullopt;
}

/// The pattern inputs whose dims past axis 1 `name`'s equal: itself when it is an input, else
/// those of the operands of the element-wise node or the Concat on axis 0 or 1 that makes it.
void spatial_sources(const rules::Rule& rule, const std::string& name, std::set<std::string>& found) {
  if (rules::is_list_name(name)) return;
  const auto producer = std::find_if(rule.source.begin(), rule.source.end(), [&](const rules::PatternNode& node) {
    return std::find(node.outputs.begin(), node.outputs.end(), name) != node.outputs.end();
  });
  if (producer == rule.source.end()) {
    found.insert(name);
    return;
  }
  const std::optional<int64_t> axis = literal_axis(*producer);
  const bool keeps = producer->op == ir::OpKind::kAdd || producer->op == ir::OpKind::kMul ||
                     producer->op == ir::OpKind::kRelu ||
                     (producer->op == ir::OpKind::kConcat && axis && (*axis == 0 || *axis == 1));
  if (!keeps) return;
  for (const std::string& input : producer->inputs) spatial_sources(rule, input, found);
}

}  // namespace

/// `shape(w)[2 + i] == kernel_shape[i]` for each pattern input `w` whose spatial dims a Conv's
/// weight has (itself, or the parts of a concatenation of weights) where the Conv gives its
/// kernel_shape as a literal list.
void DimEquations::add_kernel(const rules::Rule& rule, const rules::PatternNode& conv) {
  if (conv.inputs.size() < 2) return;
  std::set<std::string> weights;
  spatial_sources(rule, conv.inputs[1], weights);
  for (const rules::AttrSetting& setting : conv.attrs) {
    if (setting.name != "kernel_shape" || setting.value.kind != Expr::Kind::kList) continue;
    for (const std::string& weight : weights) {
      if (named_.count(weight) == 0) continue;  // a weight the conditions do not name is drawn by its Conv
      for (std::size_t axis = 0; axis < setting.value.operands.size(); ++axis) {
        const Expr& size = setting.value.operands[axis];
        if (size.kind != Expr::Kind::kInt) return;
        add(Equation{{{index_of(Dim{weight, static_cast<int64_t>(axis) + 2}), 1}}, -size.int_value});
      }
    }
  }
}

DimEquations::DimEquations(const rules::Rule& rule) {
  std::set<std::size_t> summed;  // the dims of conditions that sum more than two dims
  for (const Expr& condition : rule.conditions) {
    if (condition.kind != Expr::Kind::kBinary || condition.text != "==") continue;
    std::optional<Equation> equation = linear(condition.operands[0], 1);
    const std::optional<Equation> rhs = equation ? linear(condition.operands[1], -1) : std::nullopt;
    if (!rhs) continue;
    // A sum of parts, even one whose parts cancel (`a0 + b0 == b0 + c0`): its dims are drawn
    // from all sizes, so that the parts differ.
    if (equation->terms.size() + rhs->terms.size() > 2) {
      has_sums_ = true;
      for (const Equation* side : {static_cast<const Equation*>(&*equation), &*rhs}) {
        for (const auto& term : side->terms) summed.insert(term.first);
      }
    }
    for (const auto& [index, coefficient] : rhs->terms) equation->terms[index] += coefficient;
    equation->constant += rhs->constant;
    add(std::move(*equation));
  }
  for (const rules::PatternNode& node : rule.source) {
    if (node.op == ir::OpKind::kConv) add_kernel(rule, node);
  }
  settle(summed);
}

/// Equalities of two dims join classes; a dim equal to an integer fixes its class; every other
/// equation is kept over classes (terms that cancel left out), to be solved per draw.
void DimEquations::settle(const std::set<std::size_t>& summed) {
  Classes classes(dims_.size());
  for (const Equation& equation : equations_) {
    if (is_equality(equation)) classes.join(equation.terms.begin()->first, std::next(equation.terms.begin())->first);
  }
  for (std::size_t index = 0; index < dims_.size(); ++index) class_of_.push_back(classes.find(index));
  fixed_.assign(dims_.size(), std::nullopt);
  summed_.assign(dims_.size(), 0);
  for (std::size_t index : summed) summed_[class_of_[index]] = 1;
  for (const Equation& equation : equations_) {
    if (is_equality(equation)) continue;
    if (is_fixing(equation)) {
      const auto [index, coefficient] = *equation.terms.begin();
      const int64_t value = -equation.constant * coefficient;
      std::optional<int64_t>& slot = fixed_[class_of_[index]];
      solvable_ = solvable_ && value >= 1 && !(slot && *slot != value);
      slot = value;
      continue;
    }
    Equation sum{{}, equation.constant};
    for (const auto& [index, coefficient] : equation.terms) sum.terms[class_of_[index]] += coefficient;
    for (auto it = sum.terms.begin(); it != sum.terms.end();) it = it->second == 0 ? sum.terms.erase(it) : std::next(it);
    sums_.push_back(std::move(sum));
  }
}

std::optional<std::map<std::string, std::vector<int64_t>>> DimEquations::draw(
    const std::map<std::string, int64_t>& ranks, const DrawSettings& settings, int64_t max_dim) const {
  if (!solvable_) return std::nullopt;
  // Each class drawn once; a class in a sum from all sizes up to `max_dim`, not the attempt's
  // usual ones: parts that differ while their sums agree are what such a rule must be checked on.
  std::vector<int64_t> values(dims_.size(), 0);
  std::vector<char> pinned(dims_.size(), 0);
  for (std::size_t index = 0; index < dims_.size(); ++index) {
    if (class_of_[index] != index) continue;
    if (fixed_[index]) {
      values[index] = *fixed_[index];
      pinned[index] = 1;
    } else {
      values[index] = summed_[index] ? std::uniform_int_distribution<int64_t>(1, max_dim)(*settings.rng)
                                     : draw_free_dim(settings, static_cast<std::size_t>(dims_[index].axis));
    }
  }
  // Each sum solved for its last class not pinned by an equation before.
  const int64_t most = 2 * max_dim;
  for (const Equation& sum : sums_) {
    std::optional<std::size_t> solved;
    for (const auto& [root, coefficient] : sum.terms) {
      if (is_unit(coefficient) && !pinned[root]) solved = root;
    }
    int64_t rest = sum.constant;
    for (const auto& [root, coefficient] : sum.terms) {
      if (root != solved) rest += coefficient * values[root];
    }
    if (solved) {
      const int64_t value = -rest * sum.terms.at(*solved);
      if (value < 1 || value > most) return std::nullopt;
      values[*solved] = value;
    } else if (rest != 0) {
      return std::nullopt;
    }
    for (const auto& term : sum.terms) pinned[term.first] = 1;
  }
  std::map<std::string, std::vector<int64_t>> drawn;
  for (const auto& [value, rank] : ranks) {
    if (named_.count(value) == 0) continue;
    std::vector<int64_t>& dims = drawn[value];
    for (int64_t axis = 0; axis < rank; ++axis) {
      const auto it = indices_.find(Dim{value, axis});
      dims.push_back(it != indices_.end() ? values[class_of_[it->second]]
                                          : draw_free_dim(settings, static_cast<std::size_t>(axis)));
    }
  }
  return drawn;
}

}  // namespace graphsub::verify
