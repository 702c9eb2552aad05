// Evaluating rule expressions: one switch over the expression kinds, numbers as scalars or lists.
#include "rewrite/expr_eval.h"

#include <sstream>

namespace graphsub::rewrite {
namespace {

using rules::Expr;

EvalResult failure(std::string message) { return EvalResult{int64_t{0}, std::move(message)}; }
EvalResult success(EvalValue value) { return EvalResult{std::move(value), {}}; }

/// A number or a list of numbers; every element is also kept as a double.
struct Numbers {
  bool is_list = false;
  bool is_float = false;
  std::vector<int64_t> ints;   ///< The elements, when !is_float.
  std::vector<double> floats;  ///< The elements as doubles.
};

std::optional<Numbers> numbers_of(const EvalValue& value) {
  Numbers numbers;
  if (const auto* i = std::get_if<int64_t>(&value)) {
    numbers.ints = {*i};
  } else if (const auto* f = std::get_if<double>(&value)) {
    numbers.is_float = true;
    numbers.floats = {*f};
  } else if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) {
    numbers.is_list = true;
    numbers.ints = *is;
  } else if (const auto* fs = std::get_if<std::vector<double>>(&value)) {
    numbers.is_list = numbers.is_float = true;
    numbers.floats = *fs;
  } else {
    return std::nullopt;
  }
  if (!numbers.is_float) numbers.floats.assign(numbers.ints.begin(), numbers.ints.end());
  return numbers;
}

EvalValue value_of(const Numbers& numbers) {
  if (numbers.is_list) return numbers.is_float ? EvalValue(numbers.floats) : EvalValue(numbers.ints);
  return numbers.is_float ? EvalValue(numbers.floats.at(0)) : EvalValue(numbers.ints.at(0));
}

/// One element of `+ - * /` on ints; empty on success.
std::string int_op(char op, int64_t a, int64_t b, int64_t& out) {
  bool overflow = false;
  switch (op) {
    case '+': overflow = __builtin_add_overflow(a, b, &out); break;
    case '-': overflow = __builtin_sub_overflow(a, b, &out); break;
    case '*': overflow = __builtin_mul_overflow(a, b, &out); break;
    default:
      if (b == 0) return "integer division by zero";
      if (a == INT64_MIN && b == -1) return "integer overflow";
      out = a / b;
  }
  return overflow ? "integer overflow" : std::string();
}

/// One element of `+ - * /` on floats; empty on success.
std::string float_op(char op, double a, double b, double& out) {
  switch (op) {
    case '+': out = a + b; break;
    case '-': out = a - b; break;
    case '*': out = a * b; break;
    default:
      if (b == 0) return "division by zero";
      out = a / b;
  }
  return {};
}

/// The element of a scalar-or-list at `i` (a scalar broadcasts).
std::size_t at(const Numbers& numbers, std::size_t i) { return numbers.is_list ? i : 0; }

EvalResult arithmetic(char op, const EvalValue& lhs, const EvalValue& rhs) {
  const std::optional<Numbers> a = numbers_of(lhs);
  const std::optional<Numbers> b = numbers_of(rhs);
  if (!a || !b) return failure(std::string("'") + op + "' needs numbers or lists of numbers");
  if (a->is_list && b->is_list && a->floats.size() != b->floats.size()) {
    return failure(std::string("'") + op + "' on lists of different lengths");
  }
  Numbers out;
  out.is_list = a->is_list || b->is_list;
  out.is_float = a->is_float || b->is_float;
  const std::size_t count = !out.is_list ? 1 : a->is_list ? a->floats.size() : b->floats.size();
  for (std::size_t i = 0; i < count; ++i) {
    std::string error;
    if (out.is_float) {
      double element = 0;
      error = float_op(op, a->floats[at(*a, i)], b->floats[at(*b, i)], element);
      out.floats.push_back(element);
    } else {
      int64_t element = 0;
      error = int_op(op, a->ints[at(*a, i)], b->ints[at(*b, i)], element);
      out.ints.push_back(element);
    }
    if (!error.empty()) return failure(error);
  }
  return success(value_of(out));
}

EvalResult concatenate(const EvalValue& lhs, const EvalValue& rhs) {
  std::optional<Numbers> a = numbers_of(lhs);
  const std::optional<Numbers> b = numbers_of(rhs);
  if (!a || !b || !a->is_list || !b->is_list) return failure("'++' needs two lists");
  a->is_float = a->is_float || b->is_float;
  a->ints.insert(a->ints.end(), b->ints.begin(), b->ints.end());
  a->floats.insert(a->floats.end(), b->floats.begin(), b->floats.end());
  return success(value_of(*a));
}

/// -1, 0 or 1 as a < b, a == b, a > b; exact for two ints.
int order_of(const Numbers& a, std::size_t i, const Numbers& b, std::size_t j) {
  if (!a.is_float && !b.is_float) return (a.ints[i] > b.ints[j]) - (a.ints[i] < b.ints[j]);
  return (a.floats[i] > b.floats[j]) - (a.floats[i] < b.floats[j]);
}

/// Element-wise equality of two numbers or two lists.
bool numbers_equal(const Numbers& a, const Numbers& b) {
  if (a.is_list != b.is_list || a.floats.size() != b.floats.size()) return false;
  for (std::size_t i = 0; i < a.floats.size(); ++i) {
    if (order_of(a, i, b, i) != 0) return false;
  }
  return true;
}

bool compare_order(const std::string& op, int order) {
  if (op == "<") return order < 0;
  if (op == "<=") return order <= 0;
  if (op == ">") return order > 0;
  return order >= 0;
}

EvalResult comparison(const std::string& op, const EvalValue& lhs, const EvalValue& rhs) {
  const bool equality = op == "==" || op == "!=";
  const auto* ls = std::get_if<std::string>(&lhs);
  const auto* rs = std::get_if<std::string>(&rhs);
  if (ls && rs && equality) return success(int64_t{(*ls == *rs) == (op == "==")});
  const std::optional<Numbers> a = numbers_of(lhs);
  const std::optional<Numbers> b = numbers_of(rhs);
  if (!a || !b) return failure("cannot compare " + to_string(lhs) + " " + op + " " + to_string(rhs));
  if (equality) return success(int64_t{numbers_equal(*a, *b) == (op == "==")});
  // An order between lists, or a list and a number, holds when it holds for every element.
  const std::size_t n = std::max(a->floats.size(), b->floats.size());
  if (a->floats.size() != b->floats.size() && a->is_list && b->is_list) {
    return failure("'" + op + "' needs lists of one length");
  }
  bool all = true;
  for (std::size_t i = 0; i < n; ++i) {
    all = all && compare_order(op, order_of(*a, a->is_list ? i : 0, *b, b->is_list ? i : 0));
  }
  return success(int64_t{all});
}

EvalResult binary(const std::string& op, const EvalValue& lhs, const EvalValue& rhs) {
  if (op == "++") return concatenate(lhs, rhs);
  if (op.size() == 1 && std::string("+-*/").find(op[0]) != std::string::npos) {
    return arithmetic(op[0], lhs, rhs);
  }
  if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") {
    return comparison(op, lhs, rhs);
  }
  return failure("unknown operator '" + op + "'");
}

EvalResult list(const std::vector<Expr>& elements, const EvalContext& context) {
  Numbers out;
  out.is_list = true;
  for (const Expr& element : elements) {
    EvalResult result = evaluate(element, context);
    if (!result.ok()) return result;
    const std::optional<Numbers> number = numbers_of(result.value);
    if (!number || number->is_list) return failure("a list element must be a number");
    out.is_float = out.is_float || number->is_float;
    out.ints.push_back(number->is_float ? 0 : number->ints[0]);
    out.floats.push_back(number->floats[0]);
  }
  return success(value_of(out));
}

EvalResult index(const EvalValue& container, const EvalValue& position) {
  std::optional<Numbers> numbers = numbers_of(container);
  const auto* i = std::get_if<int64_t>(&position);
  if (!numbers || !numbers->is_list || !i) return failure("indexing needs a list and an int");
  const auto size = static_cast<int64_t>(numbers->floats.size());
  const int64_t k = *i < 0 ? *i + size : *i;
  if (k < 0 || k >= size) {
    return failure("index " + std::to_string(*i) + " is out of range for " + to_string(container));
  }
  const auto u = static_cast<std::size_t>(k);
  if (numbers->is_float) return success(numbers->floats[u]);
  return success(numbers->ints[u]);
}

EvalResult negate(const EvalValue& value) {
  if (!numbers_of(value)) return failure("'-' needs a number or a list of numbers");
  return arithmetic('*', value, int64_t{-1});
}

/// The graph value bound to `name`, or nullptr.
const ir::Value* bound_value(const std::string& name, const EvalContext& context, ir::ValueId* id) {
  const auto it = context.values.find(name);
  if (it == context.values.end() || !context.graph.has_value(it->second)) return nullptr;
  if (id) *id = it->second;
  return &context.graph.value(it->second);
}

bool is_floating(ir::DataType type) {
  return type == ir::DataType::kFloat || type == ir::DataType::kDouble || type == ir::DataType::kFloat16 ||
         type == ir::DataType::kBfloat16;
}

bool is_numeric(ir::DataType type) {
  return type != ir::DataType::kUndefined && type != ir::DataType::kString &&
         type != ir::DataType::kComplex64 && type != ir::DataType::kComplex128;
}

/// value(x): the number every element of a weight's data holds (a float for floating types).
EvalResult uniform_value(const std::string& name, const ir::Value& value) {
  // A graph input with a default has data too, but a caller may feed it anything.
  if (value.kind != ir::ValueKind::kWeight || !value.data) return failure("'" + name + "' has no constant data");
  const ir::Tensor& tensor = *value.data;
  if (!is_numeric(tensor.dtype()) || tensor.num_elements() == 0) {
    return failure("'" + name + "' holds no numbers");
  }
  const double first = tensor.element_as_double(0);
  for (int64_t i = 1; i < tensor.num_elements(); ++i) {
    if (tensor.element_as_double(i) != first) return failure("the elements of '" + name + "' differ");
  }
  if (is_floating(tensor.dtype())) return success(first);
  return success(static_cast<int64_t>(first));
}

EvalResult call(const Expr& expr, const EvalContext& context) {
  ir::ValueId id = ir::kNoValue;
  const ir::Value* value = bound_value(expr.text, context, &id);
  if (!value) return failure("'" + expr.text + "' is not a bound value");
  if (expr.kind == Expr::Kind::kWeight) {
    return success(int64_t{context.is_weight && context.is_weight(id)});
  }
  if (expr.kind == Expr::Kind::kValue) return uniform_value(expr.text, *value);
  if (expr.kind == Expr::Kind::kDtype) return success(static_cast<int64_t>(value->type.dtype));
  const ir::Shape& shape = value->type.shape;
  if (!shape.rank_known) return failure("the rank of '" + expr.text + "' is unknown");
  if (expr.kind == Expr::Kind::kRank) return success(static_cast<int64_t>(shape.rank()));
  const std::optional<std::vector<int64_t>> sizes = shape.sizes();
  if (!sizes) return failure("the shape of '" + expr.text + "' is not static: " + ir::to_string(shape));
  if (expr.kind == Expr::Kind::kSize) return success(ir::num_elements(*sizes));
  return success(*sizes);
}

/// The dim that shape(x)[i] names, known or not; nullptr with the reason in `*error`, which a
/// symbolic dim also gets in case the caller needs it static.
const ir::Dim* dim_of(const Expr& expr, const EvalContext& context, std::string* error) {
  const std::string& name = expr.operands[0].text;
  const ir::Value* value = bound_value(name, context, nullptr);
  if (!value) return *error = "'" + name + "' is not a bound value", nullptr;
  const ir::Shape& shape = value->type.shape;
  if (!shape.rank_known) return *error = "the rank of '" + name + "' is unknown", nullptr;
  const EvalResult position = evaluate(expr.operands[1], context);
  if (!position.ok()) return *error = position.error, nullptr;
  const auto* i = std::get_if<int64_t>(&position.value);
  if (!i) return *error = "indexing needs a list and an int", nullptr;
  const auto rank = static_cast<int64_t>(shape.rank());
  const int64_t k = *i < 0 ? *i + rank : *i;
  if (k < 0 || k >= rank) {
    return *error = "index " + std::to_string(*i) + " is out of range for shape(" + name + ")", nullptr;
  }
  const ir::Dim& dim = shape.dims[static_cast<std::size_t>(k)];
  if (!dim.is_known()) *error = "dim " + std::to_string(*i) + " of '" + name + "' is not static: " + ir::to_string(shape);
  return dim.is_known() || dim.is_symbolic() ? &dim : nullptr;
}

/// shape(x)[i]: one dim, which must be known even where others (a symbolic batch) are not.
EvalResult shape_dim(const Expr& expr, const EvalContext& context) {
  std::string error;
  const ir::Dim* dim = dim_of(expr, context, &error);
  if (!dim || !dim->is_known()) return failure(error);
  return success(dim->value);
}

bool is_shape_dim(const Expr& expr) {
  return expr.kind == Expr::Kind::kIndex && expr.operands.at(0).kind == Expr::Kind::kShape;
}

/// `shape(x)[i] == shape(y)[j]` where a dim is symbolic: true when both are the same symbol (a
/// symbol stands for one size wherever it appears), else evaluated as numbers (which fails on a
/// symbol, so two different symbols never compare equal or unequal).
std::optional<EvalResult> symbolic_dims_equal(const Expr& expr, const EvalContext& context) {
  if (expr.text != "==" || !is_shape_dim(expr.operands.at(0)) || !is_shape_dim(expr.operands.at(1))) return std::nullopt;
  std::string error;
  const ir::Dim* a = dim_of(expr.operands[0], context, &error);
  const ir::Dim* b = a ? dim_of(expr.operands[1], context, &error) : nullptr;
  if (!a || !b) return failure(error);
  if (a->is_symbolic() && b->is_symbolic() && a->symbol == b->symbol) return success(int64_t{1});
  return std::nullopt;
}

/// sizes(xs..., axis): the dim at `axis` (negative from the end) of each value of a bound list.
EvalResult list_sizes(const Expr& expr, const EvalContext& context) {
  const auto list = context.lists ? context.lists->find(expr.text) : decltype(context.lists->end()){};
  if (!context.lists || list == context.lists->end()) return failure("'" + expr.text + "' is not a bound value list");
  const EvalResult axis = evaluate(expr.operands.at(0), context);
  if (!axis.ok()) return axis;
  const auto* a = std::get_if<int64_t>(&axis.value);
  if (!a) return failure("the axis of sizes() must be an int");
  std::vector<int64_t> result;
  for (ir::ValueId id : list->second) {
    const ir::Shape& shape = context.graph.value(id).type.shape;
    const auto rank = static_cast<int64_t>(shape.rank());
    const int64_t k = *a < 0 ? *a + rank : *a;
    if (!shape.rank_known || k < 0 || k >= rank || !shape.dims[k].is_known()) {
      return failure("a value of '" + expr.text + "' has no known dim at axis " + std::to_string(*a));
    }
    result.push_back(shape.dims[k].value);
  }
  return success(result);
}

EvalResult variable(const std::string& name, const EvalContext& context) {
  const auto it = context.variables.find(name);
  if (it == context.variables.end()) return failure("?" + name + " is not bound");
  std::optional<EvalValue> value = from_attr(it->second);
  if (!value) return failure("?" + name + " holds a value expressions cannot use");
  return success(std::move(*value));
}

/// Evaluates both operands, then applies `body` to their values.
template <class Body>
EvalResult with_operands(const Expr& expr, const EvalContext& context, Body body) {
  EvalResult lhs = evaluate(expr.operands.at(0), context);
  if (!lhs.ok()) return lhs;
  EvalResult rhs = evaluate(expr.operands.at(1), context);
  if (!rhs.ok()) return rhs;
  return body(lhs.value, rhs.value);
}

/// A float with at least one decimal ("0.5", "2.0", "1e-05").
std::string float_text(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  std::string text = out.str();
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

}  // namespace

EvalResult evaluate(const Expr& expr, const EvalContext& context) {
  switch (expr.kind) {
    case Expr::Kind::kInt: return success(expr.int_value);
    case Expr::Kind::kFloat: return success(expr.float_value);
    case Expr::Kind::kString: return success(expr.text);
    case Expr::Kind::kList: return list(expr.operands, context);
    case Expr::Kind::kVariable: return variable(expr.text, context);
    case Expr::Kind::kShape:
    case Expr::Kind::kRank:
    case Expr::Kind::kWeight:
    case Expr::Kind::kValue:
    case Expr::Kind::kSize:
    case Expr::Kind::kDtype: return call(expr, context);
    case Expr::Kind::kSizes: return list_sizes(expr, context);
    case Expr::Kind::kIndex:
      if (expr.operands.at(0).kind == Expr::Kind::kShape) return shape_dim(expr, context);
      return with_operands(expr, context, index);
    case Expr::Kind::kNegate: {
      EvalResult operand = expr.operands.empty() ? failure("'-' without operand")
                                                 : evaluate(expr.operands[0], context);
      return operand.ok() ? negate(operand.value) : operand;
    }
    case Expr::Kind::kBinary:
      if (std::optional<EvalResult> equal = symbolic_dims_equal(expr, context)) return *equal;
      return with_operands(expr, context, [&](const EvalValue& lhs, const EvalValue& rhs) {
        return binary(expr.text, lhs, rhs);
      });
  }
  return failure("unknown expression kind");
}

bool holds(const Expr& condition, const EvalContext& context, std::string* error) {
  EvalResult result = evaluate(condition, context);
  if (result.ok() && !std::holds_alternative<int64_t>(result.value)) {
    result.error = "condition " + rules::to_string(condition) + " is not an int";
  }
  if (!result.ok()) {
    if (error) *error = result.error;
    return false;
  }
  return std::get<int64_t>(result.value) != 0;
}

std::optional<EvalValue> from_attr(const ir::AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return EvalValue(*i);
  if (const auto* f = std::get_if<float>(&value)) return EvalValue(static_cast<double>(*f));
  if (const auto* s = std::get_if<std::string>(&value)) return EvalValue(*s);
  if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) return EvalValue(*is);
  if (const auto* fs = std::get_if<std::vector<float>>(&value)) {
    return EvalValue(std::vector<double>(fs->begin(), fs->end()));
  }
  return std::nullopt;
}

std::optional<ir::AttrValue> to_attr(const EvalValue& value, const ir::AttrValue* like) {
  const std::optional<Numbers> numbers = numbers_of(value);
  if (numbers && like && std::holds_alternative<float>(*like) && !numbers->is_list) {
    return ir::AttrValue(static_cast<float>(numbers->floats[0]));
  }
  if (numbers && like && std::holds_alternative<std::vector<float>>(*like) && numbers->is_list) {
    return ir::AttrValue(std::vector<float>(numbers->floats.begin(), numbers->floats.end()));
  }
  if (const auto* s = std::get_if<std::string>(&value)) return ir::AttrValue(*s);
  if (!numbers) return std::nullopt;
  if (!numbers->is_float) return numbers->is_list ? ir::AttrValue(numbers->ints) : ir::AttrValue(numbers->ints[0]);
  if (!numbers->is_list) return ir::AttrValue(static_cast<float>(numbers->floats[0]));
  return ir::AttrValue(std::vector<float>(numbers->floats.begin(), numbers->floats.end()));
}

std::optional<ir::AttrValue> literal_attr(const Expr& expr) {
  const ir::Graph none;
  const std::map<std::string, ir::ValueId> values;
  const std::map<std::string, ir::AttrValue> variables;
  const EvalResult result = evaluate(expr, EvalContext{none, values, variables, nullptr});
  return result.ok() ? to_attr(result.value) : std::nullopt;
}

std::optional<ir::Tensor> to_tensor(const EvalValue& value) {
  const std::optional<Numbers> numbers = numbers_of(value);
  if (!numbers) return std::nullopt;
  std::vector<int64_t> dims;
  if (numbers->is_list) dims.push_back(static_cast<int64_t>(numbers->floats.size()));
  if (!numbers->is_float) return ir::Tensor::from_int64s(dims, numbers->ints);
  return ir::Tensor::from_floats(dims, std::vector<float>(numbers->floats.begin(), numbers->floats.end()));
}

std::string to_string(const EvalValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return "\"" + *s + "\"";
  const std::optional<Numbers> numbers = numbers_of(value);
  std::string text = numbers->is_list ? "[" : "";
  for (std::size_t i = 0; i < numbers->floats.size(); ++i) {
    if (i) text += ", ";
    text += numbers->is_float ? float_text(numbers->floats[i]) : std::to_string(numbers->ints[i]);
  }
  return numbers->is_list ? text + "]" : text;
}

}  // namespace graphsub::rewrite
