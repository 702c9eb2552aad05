// Element-wise unary operators: one functor per op, sharing canonicalization, inference and loop.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Element types an op has kernels for: kFloat is float32 and float64, kSigned adds int32, int64.
enum class Types { kFloat, kSigned };

/// A float attribute and its ONNX default.
struct FloatAttr {
  const char* name;
  float fallback;
};

/// The attribute values a functor reads (canonical nodes carry those their op has).
struct Params {
  float alpha;
  float beta;
  float min;
  float max;
  bool tanh_approximation;  ///< Gelu's approximate = "tanh".
};

/// What most unary ops share: modelled from opset 6, which dropped the legacy `consumed_inputs`
/// attribute; float kernels; no attributes. Each op below overrides what differs.
struct Unary {
  static constexpr int64_t kSinceOpset = 6;
  static constexpr Types kTypes = Types::kFloat;
  static constexpr std::array<FloatAttr, 0> kAttrs{};
};

/// -x with two's-complement wrap for integers (-INT_MIN is INT_MIN, not undefined).
template <class T>
T negate(T x) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(x));
  } else {
    return -x;
  }
}

struct Relu : Unary {
  static constexpr Types kTypes = Types::kSigned;
  template <class T> static T apply(T x, const Params&) { return x > T{0} ? x : T{0}; }
};
struct Sigmoid : Unary {
  template <class T> static T apply(T x, const Params&) { return T{1} / (T{1} + std::exp(-x)); }
};
struct Tanh : Unary {
  template <class T> static T apply(T x, const Params&) { return std::tanh(x); }
};
struct Exp : Unary {
  template <class T> static T apply(T x, const Params&) { return std::exp(x); }
};
struct Log : Unary {
  template <class T> static T apply(T x, const Params&) { return std::log(x); }
};
struct Neg : Unary {
  static constexpr Types kTypes = Types::kSigned;
  template <class T> static T apply(T x, const Params&) { return negate(x); }
};
struct Abs : Unary {
  static constexpr Types kTypes = Types::kSigned;
  template <class T> static T apply(T x, const Params&) { return x < T{0} ? negate(x) : x; }
};
struct Sqrt : Unary {
  template <class T> static T apply(T x, const Params&) { return std::sqrt(x); }
};
struct Reciprocal : Unary {
  template <class T> static T apply(T x, const Params&) { return T{1} / x; }
};
struct Erf : Unary {
  static constexpr int64_t kSinceOpset = 9;
  template <class T> static T apply(T x, const Params&) { return std::erf(x); }
};
struct Floor : Unary {
  template <class T> static T apply(T x, const Params&) { return std::floor(x); }
};
struct Ceil : Unary {
  template <class T> static T apply(T x, const Params&) { return std::ceil(x); }
};
struct Sin : Unary {
  static constexpr int64_t kSinceOpset = 7;
  template <class T> static T apply(T x, const Params&) { return std::sin(x); }
};
struct Cos : Unary {
  static constexpr int64_t kSinceOpset = 7;
  template <class T> static T apply(T x, const Params&) { return std::cos(x); }
};
/// -1, 0 or 1; NaN stays NaN (as numpy's sign).
struct Sign : Unary {
  static constexpr int64_t kSinceOpset = 9;
  static constexpr Types kTypes = Types::kSigned;
  template <class T> static T apply(T x, const Params&) {
    if (x > T{0}) return T{1};
    if (x < T{0}) return T{-1};
    return x == T{0} ? T{0} : x;
  }
};
struct LeakyRelu : Unary {
  static constexpr std::array kAttrs{FloatAttr{"alpha", 0.01f}};
  template <class T> static T apply(T x, const Params& p) { return x < T{0} ? T(p.alpha) * x : x; }
};
struct Elu : Unary {
  static constexpr std::array kAttrs{FloatAttr{"alpha", 1.0f}};
  template <class T> static T apply(T x, const Params& p) {
    return x < T{0} ? T(p.alpha) * std::expm1(x) : x;
  }
};
/// log(1 + e^x), written so that neither branch overflows.
struct Softplus : Unary {
  static constexpr int64_t kSinceOpset = 1;
  template <class T> static T apply(T x, const Params&) {
    return x > T{0} ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }
};
struct HardSigmoid : Unary {
  static constexpr std::array kAttrs{FloatAttr{"alpha", 0.2f}, FloatAttr{"beta", 0.5f}};
  template <class T> static T apply(T x, const Params& p) {
    return std::max(T{0}, std::min(T{1}, T(p.alpha) * x + T(p.beta)));
  }
};
/// x·max(0, min(1, x/6 + 1/2)) (opset 14): x times HardSigmoid with ONNX's HardSwish constants,
/// rounded as onnxruntime rounds it (the float product 1/6·x, then + 0.5).
struct HardSwish : Unary {
  static constexpr int64_t kSinceOpset = 14;
  template <class T> static T apply(T x, const Params&) {
    return x * std::max(T{0}, std::min(T{1}, T(1.0 / 6) * x + T(0.5)));
  }
};
/// min(max(x, min), max): NaN stays NaN, and min > max gives max everywhere, as ONNX says.
struct Clip : Unary {
  template <class T> static T apply(T x, const Params& p) {
    return std::min(std::max(x, T(p.min)), T(p.max));
  }
};

/// x·Φ(x), or its tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (opset 20).
struct Gelu : Unary {
  static constexpr int64_t kSinceOpset = 20;
  template <class T> static T apply(T x, const Params& p) {
    if (p.tanh_approximation) {
      const T inner = T(0.7978845608028654) * (x + T(0.044715) * x * x * x);
      return T(0.5) * x * (T{1} + std::tanh(inner));
    }
    return T(0.5) * x * (T{1} + std::erf(x * T(0.7071067811865476)));
  }
};

/// Calls `body` with a value of the C++ element type of `dtype`, among those of kTypes: the
/// integer instantiations exist only for kSigned ops.
template <Types kTypes, class Body>
void dispatch(DataType dtype, Body&& body) {
  if constexpr (kTypes == Types::kSigned) {
    dispatch_numeric(dtype, body);
  } else {
    dispatch_floating(dtype, body);
  }
}

std::vector<DataType> allowed_types(Types types) {
  if (types == Types::kFloat) return {DataType::kFloat, DataType::kDouble};
  return {DataType::kFloat, DataType::kDouble, DataType::kInt32, DataType::kInt64};
}

/// True when `dtype` has a kernel among `types`, or is not known yet.
bool is_allowed(DataType dtype, Types types) {
  const std::vector<DataType> allowed = allowed_types(types);
  return dtype == DataType::kUndefined ||
         std::find(allowed.begin(), allowed.end(), dtype) != allowed.end();
}

/// Empty when the node is one input to one output at a modelled opset and element type.
std::string check_signature(const ImportContext& context, int64_t since_opset, Types types) {
  if (context.opset < since_opset) return "before opset " + std::to_string(since_opset);
  if (context.input_types.size() != 1) return "expects 1 input";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  return require_dtypes(context, allowed_types(types));
}

template <class Op>
std::string canonicalize_unary(ImportContext& context) {
  if (std::string reason = check_signature(context, Op::kSinceOpset, Op::kTypes); !reason.empty()) {
    return reason;
  }
  for (const FloatAttr& attr : Op::kAttrs) {
    context.attrs.set(attr.name, context.attrs.get_float(attr.name, attr.fallback));
  }
  return {};
}

/// One Clip bound as a float attribute: an opset-11 input arrives as a one-element float list, an
/// older attribute as a float; an absent bound becomes `fallback`.
std::string canonicalize_bound(ir::Attributes& attrs, const std::string& name, float fallback) {
  const ir::AttrValue* value = attrs.find(name);
  if (!value) {
    attrs.set(name, fallback);
  } else if (const auto* list = std::get_if<std::vector<float>>(value)) {
    if (list->size() != 1) return "Clip " + name + " is not a scalar";
    const float bound = list->front();
    attrs.set(name, bound);
  } else if (!std::holds_alternative<float>(*value)) {
    return "Clip " + name + " is not a float";
  }
  return {};
}

/// Before opset 11 absent bounds are ONNX's documented lowest() and max() of float; from 11 an
/// omitted bound input means no bound, so -inf and +inf (equal results except on infinities).
std::string canonicalize_clip(ImportContext& context) {
  std::string reason = check_signature(context, Clip::kSinceOpset, Clip::kTypes);
  if (!reason.empty()) return reason;
  using Limits = std::numeric_limits<float>;
  const bool legacy = context.opset < 11;
  const float lowest = legacy ? Limits::lowest() : -Limits::infinity();
  const float highest = legacy ? Limits::max() : Limits::infinity();
  reason = canonicalize_bound(context.attrs, "min", lowest);
  return reason.empty() ? canonicalize_bound(context.attrs, "max", highest) : reason;
}

/// Gelu's `approximate` is "none" (the default) or "tanh"; anything else stays opaque.
std::string canonicalize_gelu(ImportContext& context) {
  std::string reason = check_signature(context, Gelu::kSinceOpset, Gelu::kTypes);
  if (!reason.empty()) return reason;
  const std::string approximate = context.attrs.get_string("approximate", "none");
  if (approximate != "none" && approximate != "tanh") return "approximate = " + approximate;
  context.attrs.set("approximate", approximate);
  return {};
}

/// Identity copies any tensor, but not ONNX sequences or optionals (which have no element type).
std::string canonicalize_identity(ImportContext& context) {
  if (context.input_types.size() != 1) return "expects 1 input";
  if (context.input_types[0].dtype == DataType::kUndefined) return "input is not a plain tensor";
  return require_outputs(context, 1);
}

template <Types kTypes>
InferResult infer_unary(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("expects 1 input");
  if (!is_allowed(inputs[0].dtype, kTypes)) {
    return InferResult::failure("no kernel for element type " + ir::to_string(inputs[0].dtype));
  }
  return InferResult{{inputs[0]}, {}};
}

InferResult infer_identity(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("expects 1 input");
  return InferResult{{inputs[0]}, {}};
}

Params params_of(const ir::Attributes& attrs) {
  return Params{attrs.get_float("alpha", 0), attrs.get_float("beta", 0), attrs.get_float("min", 0),
                attrs.get_float("max", 0), attrs.get_string("approximate", "none") == "tanh"};
}

template <class Op>
void unary_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                  std::vector<ir::Tensor>& outputs) {
  const Params params = params_of(node.attrs);
  dispatch<Op::kTypes>(inputs[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = inputs[0]->data<T>();
    T* out = outputs[0].mutable_data<T>();
    for (int64_t i = 0; i < inputs[0]->num_elements(); ++i) out[i] = Op::apply(in[i], params);
  });
}

/// Copies the tensor whole, strings included.
void copy_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                 std::vector<ir::Tensor>& outputs) {
  outputs[0] = *inputs[0];
}

/// One FLOP per element (transcendental functions included); input read, output written.
CostFeatures unary_features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                            const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

CostFeatures copy_features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                           const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 0);
}

template <class Op>
OpDef unary_def(ir::OpKind kind, const char* name) {
  return OpDef{kind, name, true, Op::kSinceOpset, {}, canonicalize_unary<Op>,
               infer_unary<Op::kTypes>, unary_kernel<Op>, unary_features};
}

}  // namespace

OpDef relu_op() { return unary_def<Relu>(ir::OpKind::kRelu, "Relu"); }
OpDef sigmoid_op() { return unary_def<Sigmoid>(ir::OpKind::kSigmoid, "Sigmoid"); }
OpDef tanh_op() { return unary_def<Tanh>(ir::OpKind::kTanh, "Tanh"); }
OpDef exp_op() { return unary_def<Exp>(ir::OpKind::kExp, "Exp"); }
OpDef log_op() { return unary_def<Log>(ir::OpKind::kLog, "Log"); }
OpDef neg_op() { return unary_def<Neg>(ir::OpKind::kNeg, "Neg"); }
OpDef abs_op() { return unary_def<Abs>(ir::OpKind::kAbs, "Abs"); }
OpDef sqrt_op() { return unary_def<Sqrt>(ir::OpKind::kSqrt, "Sqrt"); }
OpDef reciprocal_op() { return unary_def<Reciprocal>(ir::OpKind::kReciprocal, "Reciprocal"); }
OpDef erf_op() { return unary_def<Erf>(ir::OpKind::kErf, "Erf"); }
OpDef floor_op() { return unary_def<Floor>(ir::OpKind::kFloor, "Floor"); }
OpDef ceil_op() { return unary_def<Ceil>(ir::OpKind::kCeil, "Ceil"); }
OpDef sin_op() { return unary_def<Sin>(ir::OpKind::kSin, "Sin"); }
OpDef cos_op() { return unary_def<Cos>(ir::OpKind::kCos, "Cos"); }
OpDef sign_op() { return unary_def<Sign>(ir::OpKind::kSign, "Sign"); }
OpDef leaky_relu_op() { return unary_def<LeakyRelu>(ir::OpKind::kLeakyRelu, "LeakyRelu"); }
OpDef elu_op() { return unary_def<Elu>(ir::OpKind::kElu, "Elu"); }
OpDef softplus_op() { return unary_def<Softplus>(ir::OpKind::kSoftplus, "Softplus"); }
OpDef hard_sigmoid_op() { return unary_def<HardSigmoid>(ir::OpKind::kHardSigmoid, "HardSigmoid"); }
OpDef hard_swish_op() { return unary_def<HardSwish>(ir::OpKind::kHardSwish, "HardSwish"); }

OpDef clip_op() {
  OpDef def = unary_def<Clip>(ir::OpKind::kClip, "Clip");
  def.attr_inputs = {{1, "min", 11, true}, {2, "max", 11, true}};
  def.canonicalize = canonicalize_clip;
  return def;
}

OpDef gelu_op() {
  OpDef def = unary_def<Gelu>(ir::OpKind::kGelu, "Gelu");
  def.canonicalize = canonicalize_gelu;
  return def;
}

OpDef identity_op() {
  return OpDef{ir::OpKind::kIdentity, "Identity", true, 1, {}, canonicalize_identity,
               infer_identity, copy_kernel, copy_features};
}

}  // namespace graphsub::ops
