// Symbolic element-wise ops: broadcast arithmetic, the variadic ones, and the unary functions.
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <string>

#include "ops/common.h"
#include "ops/registry.h"
#include "ops/strided_offset.h"
#include "runtime/cpu_executor.h"
#include "verify/symbolic_ops.h"

namespace graphsub::verify::symbolic {
namespace {

/// The element of `operand` that output position `flat` of a broadcast to `dims` reads.
const z3::expr& broadcast_element(const SymTensor& operand, const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& strides, int64_t flat) {
  return operand.elements[static_cast<std::size_t>(ops::strided_offset(flat, dims, strides))];
}

/// fn(a, b) over the numpy broadcast of `a` and `b` to `dims`.
template <class Fn>
SymTensor broadcast(const SymTensor& a, const SymTensor& b, const std::vector<int64_t>& dims, Fn fn) {
  const std::vector<int64_t> a_strides = ops::broadcast_strides(a.dims, dims);
  const std::vector<int64_t> b_strides = ops::broadcast_strides(b.dims, dims);
  return generate(dims, [&](int64_t i) {
    return fn(broadcast_element(a, dims, a_strides, i), broadcast_element(b, dims, b_strides, i));
  });
}

/// fn(a, b) over the broadcast of inputs 0 and 1.
template <class Fn>
std::vector<SymTensor> broadcast(const OpCall& call, Fn fn) {
  return {broadcast(call.input(0), call.input(1), call.output_dims(0), fn)};
}

/// fn(x) on every element of `x`.
template <class Fn>
SymTensor map(const SymTensor& x, Fn fn) {
  return generate(x.dims, [&](int64_t i) { return fn(x.elements[i]); });
}

/// recip(y) of every element of `y`.
SymTensor reciprocals(Semantics& semantics, const SymTensor& y) {
  return map(y, [&](const z3::expr& element) { return reciprocal(semantics, element); });
}

/// a * b, for broadcast.
z3::expr times(const z3::expr& a, const z3::expr& b) { return a * b; }

/// The sum of every input, each broadcast to the output.
SymTensor broadcast_sum(const OpCall& call) {
  const std::vector<int64_t> dims = call.output_dims(0);
  std::vector<std::vector<int64_t>> strides;
  for (std::size_t k = 0; k < call.inputs.size(); ++k) {
    strides.push_back(ops::broadcast_strides(call.input(k).dims, dims));
  }
  return generate(dims, [&](int64_t i) {
    z3::expr_vector terms(call.semantics.context());
    for (std::size_t k = 0; k < call.inputs.size(); ++k) {
      terms.push_back(broadcast_element(*call.inputs[k], dims, strides[k], i));
    }
    return sum_of(call.semantics.context(), terms);
  });
}

/// The shortest decimal that reads back as `value` (as a float), for function names.
std::string float_text(float value) {
  char text[32];
  for (int digits = 6; digits < 10; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(value));
    if (std::strtof(text, nullptr) == value) break;
  }
  return text;
}

/// "[alpha=0.1,beta=0.5]": the float attributes a unary kernel reads, with its fallback 0.
std::string float_params(const ir::Attributes& attrs, std::initializer_list<const char*> names) {
  std::string text;
  for (const char* name : names) {
    text += (text.empty() ? "[" : ",") + std::string(name) + "=" + float_text(attrs.get_float(name, 0));
  }
  return text + "]";
}

/// "LeakyRelu" -> "leaky_relu".
std::string snake_case(const std::string& name) {
  std::string text;
  for (char c : name) {
    const bool upper = c >= 'A' && c <= 'Z';
    if (upper && !text.empty()) text += '_';
    text += upper ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return text;
}

/// The uninterpreted function of a unary op: its name, and the attribute values that select it.
std::string function_name(const ir::Node& node) {
  const std::string name = snake_case(ops::kind_name(node.op));
  switch (node.op) {
    case ir::OpKind::kLeakyRelu: return name + float_params(node.attrs, {"alpha"});
    case ir::OpKind::kElu: return name + float_params(node.attrs, {"alpha"});
    case ir::OpKind::kHardSigmoid: return name + float_params(node.attrs, {"alpha", "beta"});
    case ir::OpKind::kClip: return name + float_params(node.attrs, {"min", "max"});
    case ir::OpKind::kGelu:
      return name + "[approximate=" + node.attrs.get_string("approximate", "none") + "]";
    default: return name;
  }
}

bool is_floating(ir::DataType dtype) {
  return dtype == ir::DataType::kFloat || dtype == ir::DataType::kDouble || dtype == ir::DataType::kFloat16 ||
         dtype == ir::DataType::kBfloat16;
}

bool all_numerals(const SymTensor& tensor) {
  for (const z3::expr& element : tensor.elements) {
    if (!element.simplify().is_numeral()) return false;
  }
  return true;
}

/// Cast's kernel run on numeral elements, read back as exact numbers.
SymTensor cast_numbers(const OpCall& call) {
  const ir::Tensor numbers = numbers_of(call.input(0), ir::DataType::kDouble, "Cast's input");
  return call.semantics.constant(runtime::CpuExecutor::run_node(call.node, {&numbers}).at(0));
}

}  // namespace

std::vector<SymTensor> add(const OpCall& call) {
  return broadcast(call, [](const z3::expr& a, const z3::expr& b) { return a + b; });
}

std::vector<SymTensor> sub(const OpCall& call) {
  return broadcast(call, [](const z3::expr& a, const z3::expr& b) { return a - b; });
}

std::vector<SymTensor> mul(const OpCall& call) { return broadcast(call, times); }

std::vector<SymTensor> div(const OpCall& call) {
  const SymTensor inverse = reciprocals(call.semantics, call.input(1));
  return {broadcast(call.input(0), inverse, call.output_dims(0), times)};
}

std::vector<SymTensor> pow(const OpCall& call) {
  const ir::Tensor exponents = numbers_of(call.input(1), ir::DataType::kDouble, "Pow's exponent");
  if (exponents.num_elements() == 0) throw NoSemantics("Pow with no exponent");
  const double e = exponents.element_as_double(0);
  for (int64_t i = 1; i < exponents.num_elements(); ++i) {
    if (exponents.element_as_double(i) != e) throw NoSemantics("Pow with several exponents");
  }
  std::ostringstream name;
  name << "pow[" << e << "]";
  Semantics& semantics = call.semantics;
  // Small whole exponents are exact products; any other is the function "pow[e]" of the base.
  return {broadcast(call.input(0), call.input(1), call.output_dims(0), [&](const z3::expr& x, const z3::expr&) {
    if (e == 1) return x;
    if (e == 2) return x * x;
    if (e == 3) return x * x * x;
    return semantics.apply(name.str(), x);
  })};
}

std::vector<SymTensor> max(const OpCall& call) {
  return broadcast(call, [](const z3::expr& a, const z3::expr& b) { return z3::ite(a >= b, a, b); });
}

std::vector<SymTensor> min(const OpCall& call) {
  return broadcast(call, [](const z3::expr& a, const z3::expr& b) { return z3::ite(a <= b, a, b); });
}

std::vector<SymTensor> sum(const OpCall& call) { return {broadcast_sum(call)}; }

std::vector<SymTensor> mean(const OpCall& call) {
  const auto count = static_cast<int>(call.inputs.size());
  const z3::expr scale = exact_inverse(call.semantics.context().real_val(count));
  SymTensor total = broadcast_sum(call);
  for (z3::expr& element : total.elements) element = element * scale;
  return {total};
}

std::vector<SymTensor> s_mul(const OpCall& call) {
  const z3::expr scalar = call.input(1).elements.at(0);
  return {map(call.input(0), [&](const z3::expr& x) { return x * scalar; })};
}

std::vector<SymTensor> neg(const OpCall& call) {
  return {map(call.input(0), [](const z3::expr& x) { return -x; })};
}

std::vector<SymTensor> reciprocal_op(const OpCall& call) {
  return {reciprocals(call.semantics, call.input(0))};
}

std::vector<SymTensor> identity(const OpCall& call) { return {call.input(0)}; }

std::vector<SymTensor> dropout(const OpCall& call) {
  const SymTensor& x = call.input(0);
  if (!call.node.attrs.get_int("mask", 0)) return {x};
  const z3::expr one = call.semantics.context().real_val(1);
  return {x, generate(x.dims, [&](int64_t) { return one; })};
}

std::vector<SymTensor> cast(const OpCall& call) {
  const ir::DataType target = call.output_types.at(0).dtype;
  if (all_numerals(call.input(0))) return {cast_numbers(call)};
  if (is_floating(target)) return {call.input(0)};
  throw NoSemantics("no symbolic semantics for Cast to " + ir::to_string(target) + " of a variable");
}

std::vector<SymTensor> uninterpreted(const OpCall& call) {
  const std::string name = function_name(call.node);
  return {map(call.input(0), [&](const z3::expr& x) { return call.semantics.apply(name, x); })};
}

}  // namespace graphsub::verify::symbolic
