// Drawing the pattern inputs' dims from the linear equalities a rule's `where` states, so that
// dims several operators tie together (the inner size of a product of two concatenations) agree
// by construction instead of by chance.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rules/expr.h"
#include "rules/rule.h"
#include "verify/instance_shapes.h"

namespace graphsub::verify {

/// The equalities of a rule's conditions between sums of its pattern inputs' dims and integers:
/// `shape(a)[1] == shape(b)[0]`, `shape(v)[2] == 1`,
/// `shape(a)[1] + shape(b)[1] == shape(c)[0] + shape(d)[0]`; and the spatial dims of the inputs a
/// Conv's weight is made of where the source gives its kernel_shape as a literal (without them,
/// solved weights would fit a literal kernel only where every dim drawn is 1: trivial instances).
/// A condition of another form is not read (the Matcher still checks every condition).
class DimEquations {
 public:
  DimEquations() = default;
  explicit DimEquations(const rules::Rule& rule);

  /// Whether a condition equates sums of more than two dims: where drawing op by op rarely
  /// agrees, and where parts may differ while their sums agree (also where the parts cancel:
  /// `a0 + b0 == b0 + c0` leaves b0 free to differ from a0).
  bool has_sums() const { return has_sums_; }

  /// Dims for each value the equations name whose rank `ranks` gives, all equations satisfied:
  /// each class of dims the equalities join drawn once (a class in a sum from 1..max_dim, any
  /// other as `DrawSettings` draws a free dim: most often the attempt's usual size for its axis),
  /// each sum then solved for one of its dims not fixed before. Axes no equation names are drawn
  /// free. Nullopt when a sum has no solution between 1 and 2 * max_dim.
  std::optional<std::map<std::string, std::vector<int64_t>>> draw(const std::map<std::string, int64_t>& ranks,
                                                                  const DrawSettings& settings, int64_t max_dim) const;

  /// One dim of a pattern input.
  struct Dim {
    std::string value;
    int64_t axis = 0;
    bool operator<(const Dim& other) const {
      return value != other.value ? value < other.value : axis < other.axis;
    }
  };
  /// sum(coefficient * dim) + constant == 0, dims by their index.
  struct Equation {
    std::map<std::size_t, int64_t> terms;
    int64_t constant = 0;
  };

 private:
  std::size_t index_of(const Dim& dim);
  std::optional<Equation> linear(const rules::Expr& expr, int64_t sign);
  void add(Equation equation);
  void add_kernel(const rules::Rule& rule, const rules::PatternNode& conv);
  void settle(const std::set<std::size_t>& summed);

  std::vector<Dim> dims_;
  std::map<Dim, std::size_t> indices_;
  std::vector<Equation> equations_;  ///< As read; `settle` derives what `draw` uses.
  std::set<std::string> named_;      ///< The values the equations read name.
  bool has_sums_ = false;
  // What every draw shares, from `settle`:
  std::vector<std::size_t> class_of_;          ///< Each dim's class (its least equal dim).
  std::vector<std::optional<int64_t>> fixed_;  ///< By class: the integer an equation fixes it to.
  std::vector<char> summed_;                   ///< By class: in a sum of more than two dims.
  std::vector<Equation> sums_;                 ///< The other equations, over classes, in order.
  bool solvable_ = true;                       ///< False when the fixed integers contradict.
};

}  // namespace graphsub::verify
