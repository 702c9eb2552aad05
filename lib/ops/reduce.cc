// Reductions over a set of axes: ReduceMean, ReduceSum, ReduceMax, ReduceMin, one implementation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"
#include "ops/strided_offset.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Element types of ReduceMean.
const std::vector<DataType> kFloatTypes = {DataType::kFloat, DataType::kDouble};
/// Element types of ReduceSum, ReduceMax and ReduceMin.
const std::vector<DataType> kNumericTypes = {DataType::kFloat, DataType::kDouble, DataType::kInt32,
                                             DataType::kInt64};

/// Floats accumulate in double, integers in int64 (wrapping like two's complement on overflow).
template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <class A> bool is_nan(A x) {
  if constexpr (std::is_floating_point_v<A>) return std::isnan(x);
  return false;
}

/// A reduction is its element types and how it starts, combines and finishes an accumulator; this
/// base holds the defaults: every numeric type, and the accumulator as the result.
struct NumericReduction {
  static const std::vector<DataType>& types() { return kNumericTypes; }
  template <class A> static A finish(A acc, int64_t) { return acc; }
};

struct SumReduction : NumericReduction {
  template <class T> static Accumulator<T> start() { return 0; }
  template <class A> static A combine(A acc, A x) {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(x));
    } else {
      return acc + x;
    }
  }
};

/// The sum over the count; an empty reduction gives NaN (0 / 0).
struct MeanReduction : SumReduction {
  static const std::vector<DataType>& types() { return kFloatTypes; }
  template <class A> static A finish(A acc, int64_t count) { return acc / static_cast<A>(count); }
};

/// NaN wins; an empty reduction gives the lowest value of the type (-inf for floats).
struct MaxReduction : NumericReduction {
  template <class T> static Accumulator<T> start() {
    if constexpr (std::is_floating_point_v<T>) {
      return -std::numeric_limits<double>::infinity();
    } else {
      return std::numeric_limits<T>::lowest();
    }
  }
  template <class A> static A combine(A acc, A x) { return is_nan(acc) || x < acc ? acc : x; }
};

/// NaN wins; an empty reduction gives the highest value of the type (+inf for floats).
struct MinReduction : NumericReduction {
  template <class T> static Accumulator<T> start() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<double>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  template <class A> static A combine(A acc, A x) { return is_nan(acc) || acc < x ? acc : x; }
};

/// Every axis of a known rank; the reason when the rank is unknown.
std::string set_all_axes(const ImportContext& context, std::vector<int64_t>& axes) {
  const std::optional<int64_t> rank = rank_of(context.input_types[0]);
  if (!rank) return "reducing over all axes needs a known rank";
  for (int64_t axis = 0; axis < *rank; ++axis) axes.push_back(axis);
  return {};
}

/// An empty axes list means every axis, or none when noop_with_empty_axes is set (ReduceSum from
/// opset 13): then the node is an identity.
std::string resolve_axes(const ImportContext& context, std::vector<int64_t>& axes) {
  if (axes.empty()) {
    if (context.attrs.get_int("noop_with_empty_axes", 0) != 0) return {};
    return set_all_axes(context, axes);
  }
  return first_reason({reject_negative_before_11(context, axes),
                       normalize_axes(axes, rank_of(context.input_types[0]))});
}

/// Canonical form: `axes` explicit, normalized and sorted (empty = nothing reduced), `keepdims` 0
/// or 1, and `noop_with_empty_axes` = 1 present exactly when `axes` is empty, so that export
/// writes back an empty axes list with its identity meaning.
std::string canonicalize_reduction(ImportContext& context, const std::vector<DataType>& types) {
  std::string reason = first_reason(
      {check_attributes(context.attrs, {{"axes", AttrType::kInts},
                                        {"keepdims", AttrType::kInt},
                                        {"noop_with_empty_axes", AttrType::kInt}}),
       require_inputs(context, 1), require_outputs(context, 1), require_dtypes(context, types)});
  if (!reason.empty()) return reason;
  std::vector<int64_t> axes = context.attrs.get_ints("axes", {});
  reason = resolve_axes(context, axes);
  if (!reason.empty()) return reason;
  context.attrs.set("axes", axes);
  context.attrs.set("keepdims", int64_t{context.attrs.get_int("keepdims", 1) != 0});
  context.attrs.erase("noop_with_empty_axes");
  if (axes.empty()) context.attrs.set("noop_with_empty_axes", int64_t{1});
  return {};
}

/// The input's dims less the reduced ones, or with them as 1 under keepdims; symbols kept.
InferResult infer_reduction(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                            const std::vector<DataType>& types) {
  if (inputs.size() != 1) return InferResult::failure("expects 1 input");
  const ir::TensorType& in = inputs[0];
  if (in.dtype != DataType::kUndefined &&
      std::find(types.begin(), types.end(), in.dtype) == types.end()) {
    return InferResult::failure("no kernel for element type " + ir::to_string(in.dtype));
  }
  if (!in.shape.rank_known)
    return InferResult{{ir::TensorType{in.dtype, ir::Shape::unknown()}}, {}};
  std::vector<int64_t> axes = node.attrs.get_ints("axes", {});
  if (std::string error = normalize_axes(axes, rank_of(in)); !error.empty()) {
    return InferResult::failure(error);
  }
  const bool keepdims = node.attrs.get_int("keepdims", 1) != 0;
  ir::TensorType out{in.dtype, ir::Shape{true, {}}};
  for (std::size_t i = 0, next = 0; i < in.shape.rank(); ++i) {
    const bool reduced = next < axes.size() && axes[next] == static_cast<int64_t>(i);
    if (!reduced) out.shape.dims.push_back(in.shape.dims[i]);
    if (reduced && keepdims) out.shape.dims.push_back(ir::Dim::known(1));
    next += reduced ? 1 : 0;
  }
  return InferResult{{out}, {}};
}

/// `sizes` with the reduced axes set to 1: the output's layout under keepdims.
std::vector<int64_t> kept_sizes(std::vector<int64_t> sizes, const std::vector<int64_t>& axes) {
  for (int64_t axis : axes) sizes[axis] = 1;
  return sizes;
}

/// Accumulates every input element into its output slot, then finishes each slot.
template <class T, class Reduction>
void reduce(const ir::Tensor& input, const std::vector<int64_t>& axes, ir::Tensor& output) {
  const std::vector<int64_t>& sizes = input.dims();
  const std::vector<int64_t> kept = kept_sizes(sizes, axes);
  const std::vector<int64_t> strides = broadcast_strides(kept, sizes);
  std::vector<Accumulator<T>> slots(static_cast<std::size_t>(output.num_elements()),
                                    Reduction::template start<T>());
  for (int64_t i = 0; i < input.num_elements(); ++i) {
    Accumulator<T>& slot = slots[strided_offset(i, sizes, strides)];
    slot = Reduction::combine(slot, static_cast<Accumulator<T>>(input.data<T>()[i]));
  }
  const int64_t count = ir::num_elements(sizes) / std::max<int64_t>(ir::num_elements(kept), 1);
  for (std::size_t j = 0; j < slots.size(); ++j) {
    output.mutable_data<T>()[j] = static_cast<T>(Reduction::finish(slots[j], count));
  }
}

template <class Reduction> std::string canonicalize(ImportContext& context) {
  return canonicalize_reduction(context, Reduction::types());
}

template <class Reduction>
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  return infer_reduction(node, inputs, Reduction::types());
}

template <class Reduction>
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const std::vector<int64_t> axes = node.attrs.get_ints("axes", {});
  dispatch_numeric(inputs[0]->dtype(), [&](auto tag) {
    reduce<decltype(tag), Reduction>(*inputs[0], axes, outputs[0]);
  });
}

/// One operation per input element; the input read, the output written.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  CostFeatures cost;
  cost.flops = elements_or_one(inputs[0]);
  cost.bytes_read = bytes_or_one(inputs[0]);
  cost.bytes_written = bytes_or_one(outputs[0]);
  return cost;
}

/// `axes` is an ONNX input from `axes_input_opset` on (ReduceSum 13, the others 18).
template <class Reduction>
OpDef reduction_def(ir::OpKind kind, const char* name, int64_t axes_input_opset) {
  return OpDef{kind,
               name,
               true,
               1,
               {{1, "axes", axes_input_opset, false}},
               canonicalize<Reduction>,
               infer<Reduction>,
               kernel<Reduction>,
               features};
}

}  // namespace

OpDef reduce_mean_op() {
  return reduction_def<MeanReduction>(ir::OpKind::kReduceMean, "ReduceMean", 18);
}
OpDef reduce_sum_op() {
  return reduction_def<SumReduction>(ir::OpKind::kReduceSum, "ReduceSum", 13);
}
OpDef reduce_max_op() {
  return reduction_def<MaxReduction>(ir::OpKind::kReduceMax, "ReduceMax", 18);
}
OpDef reduce_min_op() {
  return reduction_def<MinReduction>(ir::OpKind::kReduceMin, "ReduceMin", 18);
}

}  // namespace graphsub::ops
