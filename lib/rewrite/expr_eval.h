// Evaluation of rule expressions (rules/expr.h) against a match: attribute values, shape
// arithmetic and `where` conditions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/attributes.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "rules/expr.h"

namespace graphsub::rewrite {

/// The value of an expression: an int, a float, a string, an int list or a float list.
using EvalValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

/// What an expression may refer to: the values and variables bound so far.
struct EvalContext {
  const ir::Graph& graph;
  const std::map<std::string, ir::ValueId>& values;
  const std::map<std::string, ir::AttrValue>& variables;
  /// `weight(x)`: whether a value is a weight or computed from weights only. Null means no value
  /// is (every `weight(x)` is 0).
  std::function<bool(ir::ValueId)> is_weight;
  /// The value lists bound so far (`xs...`), for `sizes`; null when there are none.
  const std::map<std::string, std::vector<ir::ValueId>>* lists = nullptr;
};

/// An evaluated expression, or why it has no value.
struct EvalResult {
  EvalValue value;
  std::string error;  ///< Empty on success.
  bool ok() const { return error.empty(); }
};

/// Evaluates `expr` (rules/README.md, "Expressions"). Never throws: a failure (an unbound name, an
/// unknown dim, a type mismatch, division by zero, an index out of range) is an error string.
EvalResult evaluate(const rules::Expr& expr, const EvalContext& context);

/// True when `condition` evaluates to a non-zero int. When it cannot be evaluated (or is not an
/// int) the result is false and `error`, if given, says why.
bool holds(const rules::Expr& condition, const EvalContext& context, std::string* error = nullptr);

/// An attribute value as an expression value; nullopt for string lists and tensors.
std::optional<EvalValue> from_attr(const ir::AttrValue& value);

/// An expression value as an attribute. With `like`, the result has `like`'s type where the value
/// converts (an int to a float, an int list to a float list); else ints are int64, floats float32.
std::optional<ir::AttrValue> to_attr(const EvalValue& value, const ir::AttrValue* like = nullptr);

/// The attribute value of an expression that reads nothing a match binds (a literal, or
/// arithmetic on literals); nullopt for one that does.
std::optional<ir::AttrValue> literal_attr(const rules::Expr& expr);

/// The constant tensor of `const NAME = EXPR`: a number is rank 0, a list 1-D; float32 when the
/// value is a float, int64 otherwise. Nullopt for a string.
std::optional<ir::Tensor> to_tensor(const EvalValue& value);

/// The value as the rule language writes it ("3", "0.5", "\"relu\"", "[1, 2]").
std::string to_string(const EvalValue& value);

}  // namespace graphsub::rewrite
