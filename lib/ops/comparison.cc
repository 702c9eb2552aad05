// Comparisons with numpy broadcasting and a bool result: Equal, Less, Greater (opset 7+),
// GreaterOrEqual and LessOrEqual (opset 12+).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/bool_binary.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Operand types of Less, Greater, LessOrEqual and GreaterOrEqual.
const std::vector<DataType> kOrderedTypes = {DataType::kFloat, DataType::kDouble, DataType::kInt32,
                                             DataType::kInt64};
/// Operand types of Equal: the ordered ones and bool.
const std::vector<DataType> kEqualTypes = {DataType::kFloat, DataType::kDouble, DataType::kInt32,
                                           DataType::kInt64, DataType::kBool};

/// Calls `body` with a value of the C++ element type of `dtype`; bool is its byte (0 or 1).
template <class Body> void dispatch(DataType dtype, Body&& body) {
  if (dtype == DataType::kBool) return body(uint8_t{});
  dispatch_numeric(dtype, body);
}

/// Opset 7 replaced the legacy broadcast attributes by numpy broadcasting; GreaterOrEqual and
/// LessOrEqual were added in opset 12 with it.
struct ComparisonFn {
  static constexpr int64_t kSinceOpset = 7;
  static const std::vector<DataType>& types() { return kOrderedTypes; }
};

/// NaN compares unequal to everything, itself included (IEEE 754).
struct EqualFn : ComparisonFn {
  static const std::vector<DataType>& types() { return kEqualTypes; }
  template <class T> bool operator()(T a, T b) const { return a == b; }
};
struct LessFn : ComparisonFn {
  template <class T> bool operator()(T a, T b) const { return a < b; }
};
struct GreaterFn : ComparisonFn {
  template <class T> bool operator()(T a, T b) const { return a > b; }
};
/// False when either side is NaN, as every ordered comparison.
struct GreaterOrEqualFn : ComparisonFn {
  static constexpr int64_t kSinceOpset = 12;
  template <class T> bool operator()(T a, T b) const { return a >= b; }
};
struct LessOrEqualFn : ComparisonFn {
  static constexpr int64_t kSinceOpset = 12;
  template <class T> bool operator()(T a, T b) const { return a <= b; }
};

template <class Fn> std::string canonicalize(ImportContext& context) {
  if (context.opset < Fn::kSinceOpset) return "before opset " + std::to_string(Fn::kSinceOpset);
  return canonicalize_bool_binary(context, Fn::types());
}

template <class Fn> InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  return infer_bool_binary(inputs, Fn::types());
}

template <class Fn>
void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  dispatch(inputs[0]->dtype(), [&](auto tag) {
    broadcast_predicate<decltype(tag)>(*inputs[0], *inputs[1], outputs[0], Fn{});
  });
}

template <class Fn> OpDef comparison_def(ir::OpKind kind, const char* name) {
  return OpDef{kind, name, true, Fn::kSinceOpset, {}, canonicalize<Fn>, infer<Fn>, kernel<Fn>,
               bool_binary_features};
}

}  // namespace

OpDef equal_op() { return comparison_def<EqualFn>(ir::OpKind::kEqual, "Equal"); }
OpDef less_op() { return comparison_def<LessFn>(ir::OpKind::kLess, "Less"); }
OpDef greater_op() { return comparison_def<GreaterFn>(ir::OpKind::kGreater, "Greater"); }
OpDef greater_or_equal_op() {
  return comparison_def<GreaterOrEqualFn>(ir::OpKind::kGreaterOrEqual, "GreaterOrEqual");
}
OpDef less_or_equal_op() {
  return comparison_def<LessOrEqualFn>(ir::OpKind::kLessOrEqual, "LessOrEqual");
}

}  // namespace graphsub::ops
