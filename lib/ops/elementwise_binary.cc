// Element-wise binary arithmetic with numpy broadcasting: Add, Sub, Mul, Div, Mod, Pow, Max, Min;
// and PRelu, whose slope broadcasts one way, to the input's shape.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/common.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Operand types of Add, Sub, Mul, Div, Max and Min (both operands alike), and of Pow's exponent.
const std::vector<DataType> kNumericTypes = {DataType::kFloat, DataType::kDouble, DataType::kInt32,
                                             DataType::kInt64};
/// Pow's base types (integer powers would need exact integer arithmetic) and PRelu's operands.
const std::vector<DataType> kFloatTypes = {DataType::kFloat, DataType::kDouble};

/// `op` on two's-complement integers (overflow wraps instead of being undefined) or on floats.
template <class T, class Op>
T wrapping(T a, T b, Op op) {
  if constexpr (std::is_integral_v<T>) {
    using Unsigned = std::make_unsigned_t<T>;
    return static_cast<T>(op(static_cast<Unsigned>(a), static_cast<Unsigned>(b)));
  } else {
    return op(a, b);
  }
}

template <class T>
bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  return false;
}

struct AddFn {
  template <class T> T operator()(T a, T b) const { return wrapping(a, b, std::plus<>()); }
};
struct SubFn {
  template <class T> T operator()(T a, T b) const { return wrapping(a, b, std::minus<>()); }
};
struct MulFn {
  template <class T> T operator()(T a, T b) const { return wrapping(a, b, std::multiplies<>()); }
};
/// Integer division truncates toward zero (as C++ and ONNX Runtime); x / 0 is defined as 0, and
/// INT_MIN / -1 wraps to INT_MIN.
struct DivFn {
  template <class T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if (b == -1) return wrapping(T{0}, a, std::minus<>());
    }
    return a / b;
  }
};
/// NaN wins either way round, so Max and Min stay commutative.
struct MaxFn {
  template <class T> T operator()(T a, T b) const { return is_nan(a) || b < a ? a : b; }
};
struct MinFn {
  template <class T> T operator()(T a, T b) const { return is_nan(a) || a < b ? a : b; }
};
/// slope * x below zero, x elsewhere (NaN included).
struct PReluFn {
  template <class T> T operator()(T x, T slope) const { return x < T{0} ? slope * x : x; }
};

/// Walks a broadcast output in row-major order, keeping the matching offset into each operand.
class BroadcastCursor {
 public:
  BroadcastCursor(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                  const std::vector<int64_t>& out)
      : sizes_(out), strides_a_(broadcast_strides(a, out)), strides_b_(broadcast_strides(b, out)),
        index_(out.size(), 0) {}

  int64_t offset_a() const { return offset_a_; }
  int64_t offset_b() const { return offset_b_; }

  /// Steps to the next output element, carrying into outer axes like an odometer.
  void next() {
    for (std::size_t axis = sizes_.size(); axis-- > 0;) {
      offset_a_ += strides_a_[axis];
      offset_b_ += strides_b_[axis];
      if (++index_[axis] < sizes_[axis]) return;
      offset_a_ -= strides_a_[axis] * sizes_[axis];
      offset_b_ -= strides_b_[axis] * sizes_[axis];
      index_[axis] = 0;
    }
  }

 private:
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_a_;
  std::vector<int64_t> strides_b_;
  std::vector<int64_t> index_;
  int64_t offset_a_ = 0;
  int64_t offset_b_ = 0;
};

/// out = fn(a, b) element-wise over the broadcast of `a` (type T) and `b` (type U).
template <class T, class U, class Fn>
void broadcast_apply(const ir::Tensor& a, const ir::Tensor& b, ir::Tensor& out, Fn fn) {
  const T* a_data = a.data<T>();
  const U* b_data = b.data<U>();
  T* out_data = out.mutable_data<T>();
  BroadcastCursor cursor(a.dims(), b.dims(), out.dims());
  for (int64_t i = 0; i < out.num_elements(); ++i, cursor.next()) {
    out_data[i] = fn(a_data[cursor.offset_a()], b_data[cursor.offset_b()]);
  }
}

template <class Fn>
void same_type_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                      std::vector<ir::Tensor>& outputs) {
  dispatch_numeric(inputs[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    broadcast_apply<T, T>(*inputs[0], *inputs[1], outputs[0], Fn{});
  });
}

/// PRelu: the slope is read broadcast to X's shape, which is the output's.
void prelu_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                  std::vector<ir::Tensor>& outputs) {
  dispatch_floating(inputs[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    broadcast_apply<T, T>(*inputs[0], *inputs[1], outputs[0], PReluFn{});
  });
}

/// Mod: with fmod = 1 the remainder takes the dividend's sign (C fmod), with fmod = 0 the divisor's
/// (Python %, integers only). An integer x mod 0 is defined as 0.
template <class T>
T remainder_of(T a, T b, bool c_style) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0 || b == -1) return 0;
    const T r = a % b;
    return !c_style && r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
  } else {
    return static_cast<T>(std::fmod(a, b));
  }
}

void mod_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                std::vector<ir::Tensor>& outputs) {
  const bool c_style = node.attrs.get_int("fmod", 0) == 1;
  dispatch_numeric(inputs[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    broadcast_apply<T, T>(*inputs[0], *inputs[1], outputs[0],
                          [c_style](T a, T b) { return remainder_of(a, b, c_style); });
  });
}

/// Pow in double precision, rounded once to the base's type.
void pow_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                std::vector<ir::Tensor>& outputs) {
  dispatch_numeric(inputs[0]->dtype(), [&](auto base_tag) {
    dispatch_numeric(inputs[1]->dtype(), [&](auto exponent_tag) {
      using T = decltype(base_tag);
      using U = decltype(exponent_tag);
      broadcast_apply<T, U>(*inputs[0], *inputs[1], outputs[0], [](T base, U exponent) {
        return static_cast<T>(std::pow(static_cast<double>(base), static_cast<double>(exponent)));
      });
    });
  });
}

/// Empty when `dtype` is allowed or not known yet; else the reason.
std::string dtype_error(DataType dtype, const std::vector<DataType>& allowed) {
  if (dtype == DataType::kUndefined) return {};
  for (DataType type : allowed) {
    if (type == dtype) return {};
  }
  return "element type " + ir::to_string(dtype) + " has no reference kernel";
}

/// Empty when the node is the two-input, one-output form with no legacy attributes.
std::string check_signature(const ImportContext& context, int64_t since_opset) {
  if (context.opset < since_opset) {
    return "before opset " + std::to_string(since_opset) + " (legacy broadcast semantics)";
  }
  if (context.input_types.size() != 2) return "only the two-input form is modelled";
  return require_outputs(context, 1);
}

/// Add, Sub, Mul, Div (from opset 7) and Max, Min (from opset 8): both operands of one type.
template <int64_t kSinceOpset>
std::string canonicalize_same_type(ImportContext& context) {
  if (std::string reason = check_signature(context, kSinceOpset); !reason.empty()) return reason;
  if (context.input_types[0].dtype != context.input_types[1].dtype) return "mixed element types";
  return require_dtypes(context, kNumericTypes);
}

/// Mod (opset 10): `fmod` 0 or 1; floats require fmod = 1, as ONNX says.
std::string canonicalize_mod(ImportContext& context) {
  if (std::string reason = canonicalize_same_type<10>(context); !reason.empty()) return reason;
  const int64_t fmod = context.attrs.get_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return "fmod must be 0 or 1";
  const DataType dtype = context.input_types[0].dtype;
  if (fmod == 0 && (dtype == DataType::kFloat || dtype == DataType::kDouble)) {
    return "floating-point Mod requires fmod=1";
  }
  context.attrs.set("fmod", fmod);
  return {};
}

/// PRelu from opset 7, whose slope broadcasts one way (before, it was shared or per channel).
std::string canonicalize_prelu(ImportContext& context) {
  if (std::string reason = check_signature(context, 7); !reason.empty()) return reason;
  if (context.input_types[0].dtype != context.input_types[1].dtype) return "mixed element types";
  return require_dtypes(context, kFloatTypes);
}

std::string canonicalize_pow(ImportContext& context) {
  if (std::string reason = check_signature(context, 7); !reason.empty()) return reason;
  std::string reason = dtype_error(context.input_types[0].dtype, kFloatTypes);
  return reason.empty() ? dtype_error(context.input_types[1].dtype, kNumericTypes) : reason;
}

/// The broadcast of the operands, typed `dtype`.
InferResult broadcast_result(const std::vector<ir::TensorType>& inputs, DataType dtype) {
  std::string error;
  ir::Shape shape = broadcast_shapes(inputs[0].shape, inputs[1].shape, error);
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{dtype, shape}}, {}};
}

InferResult infer_same_type(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("expects 2 inputs");
  const DataType a = inputs[0].dtype;
  const DataType b = inputs[1].dtype;
  if (a != b && a != DataType::kUndefined && b != DataType::kUndefined) {
    return InferResult::failure("element types " + ir::to_string(a) + " and " + ir::to_string(b) +
                                " differ");
  }
  const DataType dtype = a != DataType::kUndefined ? a : b;
  if (std::string error = dtype_error(dtype, kNumericTypes); !error.empty()) {
    return InferResult::failure(error);
  }
  return broadcast_result(inputs, dtype);
}

/// Empty when `slope` broadcasts to `x` one way, as far as the dims are known: its rank is no
/// larger and each of its dims is 1 or X's.
std::string unidirectional_error(const ir::Shape& x, const ir::Shape& slope) {
  if (!x.rank_known || !slope.rank_known) return {};
  const std::string error = "slope " + ir::to_string(slope) + " does not broadcast to " + ir::to_string(x);
  if (slope.rank() > x.rank()) return error;
  const std::size_t offset = x.rank() - slope.rank();
  for (std::size_t i = 0; i < slope.rank(); ++i) {
    const ir::Dim& s = slope.dims[i];
    const ir::Dim& d = x.dims[offset + i];
    if (s.is_known() && s.value != 1 && d.is_known() && d.value != s.value) return error;
  }
  return {};
}

/// X's type; the slope must share its element type and broadcast to its shape.
InferResult infer_prelu(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("PRelu takes X and slope");
  const DataType a = inputs[0].dtype;
  const DataType b = inputs[1].dtype;
  if (a != b && a != DataType::kUndefined && b != DataType::kUndefined) {
    return InferResult::failure("element types " + ir::to_string(a) + " and " + ir::to_string(b) +
                                " differ");
  }
  const DataType dtype = a != DataType::kUndefined ? a : b;
  std::string error = dtype_error(dtype, kFloatTypes);
  if (error.empty()) error = unidirectional_error(inputs[0].shape, inputs[1].shape);
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{dtype, inputs[0].shape}}, {}};
}

InferResult infer_pow(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("expects 2 inputs");
  std::string error = dtype_error(inputs[0].dtype, kFloatTypes);
  if (error.empty()) error = dtype_error(inputs[1].dtype, kNumericTypes);
  if (!error.empty()) return InferResult::failure(error);
  return broadcast_result(inputs, inputs[0].dtype);
}

/// One FLOP per output element; both operands read, the output written.
CostFeatures binary_features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                             const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

template <class Fn, int64_t kSinceOpset>
OpDef same_type_def(ir::OpKind kind, const char* name) {
  return OpDef{kind, name, true, kSinceOpset, {}, canonicalize_same_type<kSinceOpset>,
               infer_same_type, same_type_kernel<Fn>, binary_features};
}

}  // namespace

OpDef add_op() { return same_type_def<AddFn, 7>(ir::OpKind::kAdd, "Add"); }
OpDef sub_op() { return same_type_def<SubFn, 7>(ir::OpKind::kSub, "Sub"); }
OpDef mul_op() { return same_type_def<MulFn, 7>(ir::OpKind::kMul, "Mul"); }
OpDef div_op() { return same_type_def<DivFn, 7>(ir::OpKind::kDiv, "Div"); }
OpDef max_op() { return same_type_def<MaxFn, 8>(ir::OpKind::kMax, "Max"); }
OpDef min_op() { return same_type_def<MinFn, 8>(ir::OpKind::kMin, "Min"); }

OpDef mod_op() {
  return OpDef{ir::OpKind::kMod, "Mod", true, 10, {}, canonicalize_mod, infer_same_type, mod_kernel,
               binary_features};
}

OpDef prelu_op() {
  return OpDef{ir::OpKind::kPRelu, "PRelu", true, 7, {}, canonicalize_prelu, infer_prelu, prelu_kernel,
               binary_features};
}

OpDef pow_op() {
  return OpDef{ir::OpKind::kPow, "Pow", true, 7, {}, canonicalize_pow, infer_pow, pow_kernel,
               binary_features};
}

}  // namespace graphsub::ops
