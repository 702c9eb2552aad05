// Expr factories, equality and printing in the rule language's own syntax.
#include "rules/expr.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace graphsub::rules {

Expr Expr::integer(int64_t value) {
  Expr expr;
  expr.kind = Kind::kInt;
  expr.int_value = value;
  return expr;
}

Expr Expr::floating(double value) {
  Expr expr;
  expr.kind = Kind::kFloat;
  expr.float_value = value;
  return expr;
}

Expr Expr::string(std::string value) {
  Expr expr;
  expr.kind = Kind::kString;
  expr.text = std::move(value);
  return expr;
}

Expr Expr::list(std::vector<Expr> elements) {
  Expr expr;
  expr.kind = Kind::kList;
  expr.operands = std::move(elements);
  return expr;
}

Expr Expr::variable(std::string name) {
  Expr expr;
  expr.kind = Kind::kVariable;
  expr.text = std::move(name);
  return expr;
}

Expr Expr::call(Kind kind, std::string value_name) {
  Expr expr;
  expr.kind = kind;
  expr.text = std::move(value_name);
  return expr;
}

Expr Expr::sizes(std::string list_name, Expr axis) {
  Expr expr;
  expr.kind = Kind::kSizes;
  expr.text = std::move(list_name);
  expr.operands = {std::move(axis)};
  return expr;
}

Expr Expr::index(Expr list, Expr position) {
  Expr expr;
  expr.kind = Kind::kIndex;
  expr.operands = {std::move(list), std::move(position)};
  return expr;
}

Expr Expr::negate(Expr operand) {
  Expr expr;
  expr.kind = Kind::kNegate;
  expr.operands = {std::move(operand)};
  return expr;
}

Expr Expr::binary(std::string op, Expr lhs, Expr rhs) {
  Expr expr;
  expr.kind = Kind::kBinary;
  expr.text = std::move(op);
  expr.operands = {std::move(lhs), std::move(rhs)};
  return expr;
}

bool Expr::operator==(const Expr& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::kInt:
      return int_value == other.int_value;
    case Kind::kFloat:
      return float_value == other.float_value || (std::isnan(float_value) && std::isnan(other.float_value));
    default:
      return text == other.text && operands == other.operands;
  }
}

namespace {

/// Binding strength: comparisons < additive (+ - ++) < multiplicative < unary minus < postfix/atoms.
enum Precedence { kComparison = 1, kAdditive = 2, kMultiplicative = 3, kUnary = 4, kAtom = 5 };

int binary_precedence(const std::string& op) {
  if (op == "+" || op == "-" || op == "++") return kAdditive;
  if (op == "*" || op == "/") return kMultiplicative;
  return kComparison;
}

int precedence(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kBinary:
      return binary_precedence(expr.text);
    case Expr::Kind::kNegate:
      return kUnary;
    case Expr::Kind::kInt:
      return expr.int_value < 0 ? kUnary : kAtom;
    case Expr::Kind::kFloat:
      return std::signbit(expr.float_value) ? kUnary : kAtom;
    default:
      return kAtom;
  }
}

std::string format_float(double value) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string quote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string wrapped(const Expr& expr, bool parenthesize) {
  return parenthesize ? "(" + to_string(expr) + ")" : to_string(expr);
}

std::string list_to_string(const Expr& expr) {
  std::string text = "[";
  for (std::size_t i = 0; i < expr.operands.size(); ++i) {
    if (i > 0) text += ", ";
    text += to_string(expr.operands[i]);
  }
  return text + "]";
}

std::string binary_to_string(const Expr& expr) {
  const int own = binary_precedence(expr.text);
  const bool chain = own != kComparison;  // + - * / associate to the left; comparisons do not chain.
  const std::string lhs = wrapped(expr.operands[0], precedence(expr.operands[0]) < own + (chain ? 0 : 1));
  const std::string rhs = wrapped(expr.operands[1], precedence(expr.operands[1]) <= own);
  return lhs + " " + expr.text + " " + rhs;
}

const char* call_name(Expr::Kind kind) {
  switch (kind) {
    case Expr::Kind::kShape: return "shape";
    case Expr::Kind::kRank: return "rank";
    case Expr::Kind::kValue: return "value";
    case Expr::Kind::kSize: return "size";
    case Expr::Kind::kDtype: return "dtype";
    default: return "weight";
  }
}

}  // namespace

std::string to_string(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kInt:
      return std::to_string(expr.int_value);
    case Expr::Kind::kFloat:
      return format_float(expr.float_value);
    case Expr::Kind::kString:
      return quote(expr.text);
    case Expr::Kind::kList:
      return list_to_string(expr);
    case Expr::Kind::kVariable:
      return "?" + expr.text;
    case Expr::Kind::kShape:
    case Expr::Kind::kRank:
    case Expr::Kind::kWeight:
    case Expr::Kind::kValue:
    case Expr::Kind::kSize:
    case Expr::Kind::kDtype:
      return std::string(call_name(expr.kind)) + "(" + expr.text + ")";
    case Expr::Kind::kSizes:
      return "sizes(" + expr.text + ", " + to_string(expr.operands[0]) + ")";
    case Expr::Kind::kIndex:
      return wrapped(expr.operands[0], precedence(expr.operands[0]) < kAtom) + "[" +
             to_string(expr.operands[1]) + "]";
    case Expr::Kind::kNegate: {
      // A negated literal would re-read as a negative literal, so it keeps its parentheses.
      const Expr& operand = expr.operands[0];
      const bool literal = operand.kind == Expr::Kind::kInt || operand.kind == Expr::Kind::kFloat;
      return "-" + wrapped(operand, literal || precedence(operand) < kUnary);
    }
    case Expr::Kind::kBinary:
      return binary_to_string(expr);
  }
  return {};
}

bool is_literal(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kInt:
    case Expr::Kind::kFloat:
    case Expr::Kind::kString: return true;
    case Expr::Kind::kList:
    case Expr::Kind::kNegate:
    case Expr::Kind::kBinary:
      return std::all_of(expr.operands.begin(), expr.operands.end(), [](const Expr& e) { return is_literal(e); });
    default: return false;
  }
}

}  // namespace graphsub::rules
