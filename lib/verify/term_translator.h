// Rules as equations between terms over uninterpreted tensors: what the axiom path reasons about.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <z3++.h>

#include "rules/rule.h"
#include "verify/instance_generator.h"

namespace graphsub::verify {

/// ∀ bound. body, with `name` as the quantifier's id (what Z3's profiles and dumps show), and
/// `pattern`, where given, as its one E-matching trigger (else Z3 picks them).
z3::expr named_forall(z3::context& context, const std::string& name, const std::vector<z3::expr>& bound,
                      const z3::expr& body, const z3::expr* pattern = nullptr);

/// A rule (or an axiom) as an equation: for all `bound` constants, the hypotheses imply that each
/// source term equals its target term.
struct Equation {
  std::vector<z3::expr> bound;       ///< Tensor constants and the attribute values left open.
  std::vector<z3::expr> hypotheses;  ///< The `where` conditions.
  std::vector<std::pair<z3::expr, z3::expr>> sides;  ///< Per mapped output: source, target.
  /// Per open fused activation: the four cases its hypothesis allows (code == none, relu, ...),
  /// for a prover that derives the equation case by case where the whole is beyond its effort.
  std::vector<std::vector<z3::expr>> activation_cases;
};

/// Translates rules into equations over one Z3 context. Tensors are an uninterpreted sort; each
/// op, with its number of inputs, output index and attribute layout, is a function whose first
/// arguments are its attribute values (ints, reals, strings as fixed codes) and then its input
/// tensors. An instance of the rule fixes only the ranks and list lengths: every attribute the
/// rule leaves open (a `?var`, an attribute it does not mention) is a symbolic constant, and
/// `shape(x)[i]` is `dim(x, i)`, an uninterpreted Int function. Split's `split` sizes are
/// arguments of its function, and dim_facts() says what they mean.
/// A rule's equation also assumes what the rewriter checks before applying it: each mapped pair
/// has equal dims and element types (`dtype(x)`, an uninterpreted Int function; a Cast's result
/// has the type it names).
class TermTranslator {
 public:
  explicit TermTranslator(z3::context& context);

  /// The equation `rule` states at the ranks of `instance` (made from `rule`). Throws NoSemantics
  /// for what it cannot translate (an attribute kind, an expression form, unpaired target nodes).
  Equation translate(const rules::Rule& rule, const Instance& instance);

  /// The function of an op at one layout, made on first use; `name` encodes the layout.
  z3::func_decl function(const std::string& name, const std::vector<z3::sort>& domain);

  z3::context& context() { return context_; }
  z3::sort tensor_sort() const { return tensor_; }
  z3::func_decl dim() const { return dim_; }
  z3::func_decl value() const { return value_; }
  /// `weight(x)`: an uninterpreted Int function of a tensor (non-zero for a weight).
  z3::func_decl weight() const { return weight_; }
  /// `dtype(x)`: a tensor's element type, numbered as ONNX does.
  z3::func_decl dtype() const { return dtype_; }
  /// `rank(x)`: a tensor's number of dims. Tensors of all ranks share one sort; an equation
  /// that depends on its instance's ranks assumes them (rank(x) = 2), and a rule's terms state
  /// theirs.
  z3::func_decl rank() const { return rank_; }
  /// What the ranks and dims of some results are, for the functions of `names` (made already):
  /// rank(add(x, y)) = max(rank(x), rank(y)), rank(conv(x, ..)) = rank(x), rank(reshape[s](x)) =
  /// len(s) and the like;
  /// ∀ axis, sizes, x. dim(split#k(axis, sizes, x), axis) = size k;
  /// ∀ axis, xs. dim(concat(axis, xs), axis) = Σ dim(x, axis); an element-wise function of one
  /// tensor keeps its dims.
  std::vector<z3::expr> dim_facts(const std::set<std::string>& names);
  /// The fixed code of a string attribute value ("relu" is the same number in every equation).
  int string_code(const std::string& text);

 private:
  /// The rank of what `function` (named `name`) makes from `args`, where the op determines it.
  std::optional<z3::expr> result_rank(const std::string& name, const z3::func_decl& function,
                                      const std::vector<z3::expr>& args);

  /// The dims of a Reshape function's result, from its shape argument and its input.
  void reshape_dim_facts(const z3::func_decl& function, std::vector<z3::expr>& facts);

  z3::context& context_;
  z3::sort tensor_;
  z3::func_decl dim_;
  z3::func_decl value_;
  z3::func_decl weight_;
  z3::func_decl dtype_;
  z3::func_decl rank_;
  std::map<std::string, z3::func_decl> functions_;
  std::map<std::string, int> strings_;
};

}  // namespace graphsub::verify
