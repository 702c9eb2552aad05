// Expressions of the rule language: attribute values, shape arithmetic and match conditions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphsub::rules {

/// An expression tree (see rules/README.md, "Expressions"). One struct for every kind keeps the
/// parser, printer and evaluator to one switch each.
struct Expr {
  enum class Kind {
    kInt,       ///< int_value
    kFloat,     ///< float_value
    kString,    ///< text
    kList,      ///< operands are the elements
    kVariable,  ///< text is the variable name without '?'
    kShape,     ///< shape(text): dims of a bound value, as an int list
    kRank,      ///< rank(text)
    kWeight,    ///< weight(text): 1 when the bound value is constant-computable, else 0
    kValue,     ///< value(text): the one number every element of a bound weight holds
    kSize,      ///< size(text): the number of elements of a bound value
    kDtype,     ///< dtype(text): the element type of a bound value, as ONNX numbers it (float: 1)
    kSizes,     ///< sizes(text, operands[0]): each dim at an axis of a bound value list
    kIndex,     ///< operands[0][operands[1]]
    kNegate,    ///< -operands[0]
    kBinary,    ///< operands[0] text operands[1]; text is one of + - * / ++ == != < <= > >=
  };

  Kind kind = Kind::kInt;
  int64_t int_value = 0;
  double float_value = 0;
  std::string text;
  std::vector<Expr> operands;

  static Expr integer(int64_t value);
  static Expr floating(double value);
  static Expr string(std::string value);
  static Expr list(std::vector<Expr> elements);
  static Expr variable(std::string name);
  static Expr call(Kind kind, std::string value_name);  ///< shape(x), rank(x), weight(x), ...
  static Expr sizes(std::string list_name, Expr axis);   ///< sizes(xs..., axis)
  static Expr index(Expr list, Expr position);
  static Expr negate(Expr operand);
  static Expr binary(std::string op, Expr lhs, Expr rhs);

  bool operator==(const Expr& other) const;
  bool operator!=(const Expr& other) const { return !(*this == other); }
};

/// Whether `expr` is made of literals only (numbers, strings, lists and arithmetic of them): its
/// value needs nothing bound.
bool is_literal(const Expr& expr);

/// The expression as the rule language writes it (fully parenthesized only where needed), so
/// parse(to_string(e)) == e.
std::string to_string(const Expr& expr);

}  // namespace graphsub::rules
