// Semantics: exact numbers, variables, uninterpreted functions, and the dispatch of ops to meanings.
#include "verify/semantics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/indexing.h"
#include "ops/operands.h"
#include "ops/registry.h"
#include "verify/symbolic_ops.h"

namespace graphsub::verify {
namespace {

/// The decimal digits of `decimal` times 2^count.
std::string doubled(std::string decimal, int count) {
  for (; count > 0; --count) {
    int carry = 0;
    for (auto digit = decimal.rbegin(); digit != decimal.rend(); ++digit) {
      const int twice = (*digit - '0') * 2 + carry;
      *digit = static_cast<char>('0' + twice % 10);
      carry = twice / 10;
    }
    if (carry) decimal.insert(decimal.begin(), '1');
  }
  return decimal;
}

/// "[1,0,2]": the index of row-major position `flat` in a tensor of `dims`.
std::string index_text(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (std::size_t axis = dims.size(); axis-- > 0;) {
    index[axis] = flat % dims[axis];
    flat /= dims[axis];
  }
  std::string text = "[";
  for (std::size_t axis = 0; axis < index.size(); ++axis) {
    text += (axis ? "," : "") + std::to_string(index[axis]);
  }
  return text + "]";
}

/// The meaning of `kind`, or nullptr: the explicit list of ops with symbolic semantics.
symbolic::SymbolicOp find_op(ir::OpKind kind) {
  using ir::OpKind;
  namespace s = symbolic;
  switch (kind) {
    case OpKind::kAdd: return s::add;
    case OpKind::kSub: return s::sub;
    case OpKind::kMul: return s::mul;
    case OpKind::kDiv: return s::div;
    case OpKind::kPow: return s::pow;
    case OpKind::kMax: return s::max;
    case OpKind::kMin: return s::min;
    case OpKind::kSum: return s::sum;
    case OpKind::kMean: return s::mean;
    case OpKind::kSMul: return s::s_mul;
    case OpKind::kNeg: return s::neg;
    case OpKind::kReciprocal: return s::reciprocal_op;
    case OpKind::kIdentity: return s::identity;
    case OpKind::kDropout: return s::dropout;
    case OpKind::kCast: return s::cast;
    case OpKind::kRelu: return s::uninterpreted;
    case OpKind::kSigmoid: return s::uninterpreted;
    case OpKind::kTanh: return s::uninterpreted;
    case OpKind::kExp: return s::uninterpreted;
    case OpKind::kLog: return s::uninterpreted;
    case OpKind::kSqrt: return s::uninterpreted;
    case OpKind::kErf: return s::uninterpreted;
    case OpKind::kAbs: return s::uninterpreted;
    case OpKind::kFloor: return s::uninterpreted;
    case OpKind::kCeil: return s::uninterpreted;
    case OpKind::kSin: return s::uninterpreted;
    case OpKind::kCos: return s::uninterpreted;
    case OpKind::kSign: return s::uninterpreted;
    case OpKind::kSoftplus: return s::uninterpreted;
    case OpKind::kGelu: return s::uninterpreted;
    case OpKind::kLeakyRelu: return s::uninterpreted;
    case OpKind::kElu: return s::uninterpreted;
    case OpKind::kHardSigmoid: return s::uninterpreted;
    case OpKind::kHardSwish: return s::uninterpreted;
    case OpKind::kClip: return s::uninterpreted;
    case OpKind::kConv: return s::conv;
    case OpKind::kMatMul: return s::mat_mul;
    case OpKind::kGemm: return s::gemm;
    case OpKind::kAveragePool: return s::average_pool;
    case OpKind::kMaxPool: return s::max_pool;
    case OpKind::kGlobalAveragePool: return s::global_average_pool;
    case OpKind::kBatchNormalization: return s::batch_normalization;
    case OpKind::kLayerNormalization: return s::layer_normalization;
    case OpKind::kReduceSum: return s::reduce_sum;
    case OpKind::kReduceMean: return s::reduce_mean;
    case OpKind::kReduceMax: return s::reduce_max;
    case OpKind::kSoftmax: return s::softmax;
    case OpKind::kTranspose: return s::movement;
    case OpKind::kConcat: return s::movement;
    case OpKind::kSplit: return s::movement;
    case OpKind::kReshape: return s::movement;
    case OpKind::kFlatten: return s::movement;
    case OpKind::kSqueeze: return s::movement;
    case OpKind::kUnsqueeze: return s::movement;
    case OpKind::kExpand: return s::movement;
    case OpKind::kSlice: return s::movement;
    case OpKind::kTile: return s::movement;
    case OpKind::kEnlarge: return s::movement;
    case OpKind::kGather: return s::movement;
    case OpKind::kResize: return s::resize_nearest;
    case OpKind::kPad: return s::pad;
    case OpKind::kShape: return s::shape;
    case OpKind::kConstantOfShape: return s::constant_of_shape;
    case OpKind::kRange: return s::range;
    case OpKind::kConstIdentityConv: return s::constant;
    case OpKind::kConstIdentityMatrix: return s::constant;
    case OpKind::kConstOnes: return s::constant;
    case OpKind::kConstPool: return s::const_pool;
    default: return nullptr;
  }
}

/// The op_type of a node, opaque ones included.
std::string op_label(const ir::Node& node) {
  return node.opaque ? node.opaque->op_type : ops::kind_name(node.op);
}

/// The node with its run-time operands (which must be numerals) read into attributes, as the
/// executor binds them (ops/operands.h).
ir::Node read_operands(const ops::OpDef& def, const ir::Node& node,
                       const std::vector<const SymTensor*>& inputs) {
  std::vector<ir::Tensor> tensors(inputs.size());
  std::vector<const ir::Tensor*> pointers(inputs.size(), nullptr);
  for (const ops::AttrInput& entry : def.attr_inputs) {
    const auto index = static_cast<std::size_t>(entry.input_index);
    if (index >= inputs.size() || !inputs[index]) continue;
    const ir::DataType dtype = entry.as_floats ? ir::DataType::kDouble : ir::DataType::kInt64;
    tensors[index] = symbolic::numbers_of(*inputs[index], dtype, std::string(def.name) + "'s " + entry.attr);
    pointers[index] = &tensors[index];
  }
  return ops::bind_operands(def, node, pointers).node;
}

}  // namespace

int64_t SymTensor::size() const { return ir::num_elements(dims); }

Semantics::Semantics() = default;

z3::expr exact_number(z3::context& context, double value) {
  if (!std::isfinite(value)) throw NoSemantics("no exact number for " + std::to_string(value));
  if (value == 0) return context.real_val(0);
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(value), &exponent);
  auto mantissa = static_cast<int64_t>(std::ldexp(fraction, 53));
  exponent -= 53;
  for (; mantissa % 2 == 0; mantissa /= 2) ++exponent;
  std::string text = doubled(std::to_string(mantissa), std::max(exponent, 0));
  if (exponent < 0) text += "/" + doubled("1", -exponent);
  return context.real_val(((value < 0 ? "-" : "") + text).c_str());
}

z3::expr Semantics::number(double value) { return exact_number(context_, value); }

SymTensor Semantics::constant(const ir::Tensor& tensor) {
  return symbolic::generate(tensor.dims(), [&](int64_t i) { return number(tensor.element_as_double(i)); });
}

SymTensor Semantics::variables(const std::string& name, const std::vector<int64_t>& dims) {
  return symbolic::generate(
      dims, [&](int64_t i) { return context_.real_const((name + index_text(i, dims)).c_str()); });
}

z3::expr Semantics::apply(const std::string& name, const z3::expr& x) {
  auto found = functions_.find(name);
  if (found == functions_.end()) {
    z3::func_decl function = context_.function(name.c_str(), context_.real_sort(), context_.real_sort());
    found = functions_.emplace(name, function).first;
  }
  // The argument as a sum of monomials: equal polynomials become one term, so the function's
  // applications to them are equal by congruence alone (no nonlinear arithmetic in Z3, which
  // could run for hours past its timeout on such a query).
  z3::params params(context_);
  params.set("som", true);
  return found->second(x.simplify(params));
}

std::vector<SymTensor> Semantics::run(const ir::Node& node, const std::vector<const SymTensor*>& inputs,
                                      const std::vector<ir::TensorType>& output_types) {
  const symbolic::SymbolicOp op = find_op(node.op);
  if (!op) throw NoSemantics("no symbolic semantics for " + op_label(node));
  const ops::OpDef& def = ops::op_def(node.op);
  if (!ops::is_runtime_form(def, inputs.size())) return op({*this, node, inputs, output_types});
  const ir::Node bound = read_operands(def, node, inputs);
  const std::vector<const SymTensor*> data(inputs.begin(), inputs.begin() + ops::first_operand_slot(def));
  return op({*this, bound, data, output_types});
}

bool Semantics::covers(ir::OpKind kind) { return find_op(kind) != nullptr; }

namespace symbolic {

const SymTensor& OpCall::input(std::size_t index) const {
  if (!has_input(index)) throw NoSemantics(op_name() + " has no input " + std::to_string(index));
  return *inputs[index];
}

std::vector<int64_t> OpCall::output_dims(std::size_t index) const {
  const std::optional<std::vector<int64_t>> sizes = output_types.at(index).shape.sizes();
  if (!sizes) throw Error(op_name() + " output " + ir::to_string(output_types[index]) + " is not static");
  return *sizes;
}

std::string OpCall::op_name() const { return op_label(node); }

z3::expr sum_of(z3::context& context, const z3::expr_vector& terms) {
  if (terms.empty()) return context.real_val(0);
  return terms.size() == 1 ? terms[0] : z3::sum(terms);
}

z3::expr exact_inverse(const z3::expr& numeral) { return (numeral.ctx().real_val(1) / numeral).simplify(); }

z3::expr reciprocal(Semantics& semantics, const z3::expr& x) {
  const z3::expr simplified = x.simplify();
  int64_t integer = 1;
  const bool is_number = simplified.is_numeral() && !(simplified.is_numeral_i64(integer) && integer == 0);
  return is_number ? exact_inverse(simplified) : semantics.apply("recip", x);
}

z3::expr activate(Semantics& semantics, const std::string& activation, const z3::expr& x) {
  if (!ops::parse_activation(activation)) throw NoSemantics("unknown activation " + activation);
  return activation == "none" ? x : semantics.apply(activation, x);
}

ir::Tensor numbers_of(const SymTensor& tensor, ir::DataType dtype, const std::string& what) {
  ir::Tensor exact(ir::DataType::kDouble, tensor.dims);
  for (std::size_t i = 0; i < tensor.elements.size(); ++i) {
    const z3::expr element = tensor.elements[i].simplify();
    if (!element.is_numeral()) throw NoSemantics(what + " is read as numbers but is not constant");
    exact.mutable_data<double>()[i] = element.as_double();
  }
  ir::Tensor converted(dtype, tensor.dims);
  ops::convert_elements(exact, converted);
  return converted;
}

}  // namespace symbolic
}  // namespace graphsub::verify
