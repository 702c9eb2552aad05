// ArgMax and ArgMin: the int64 position of the largest or smallest element along one axis (ONNX
// opsets 1, 11 and 12: negative axes from 11, select_last_index from 12).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Element types with a kernel.
const std::vector<DataType> kNumericTypes = {DataType::kFloat, DataType::kDouble, DataType::kInt32,
                                             DataType::kInt64};

template <class T> bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  return false;
}

/// ArgMax's order: `a` goes before `b`.
struct Larger {
  template <class T> static bool before(T a, T b) { return a > b; }
};
/// ArgMin's order.
struct Smaller {
  template <class T> static bool before(T a, T b) { return a < b; }
};

/// True when `x`, met after `best`, takes its place: it comes first in the order, or ties with it
/// and the last index is selected. NaN comes before every number, as in numpy's argmax and argmin.
template <class Order, class T> bool replaces(T x, T best, bool last) {
  if (is_nan(best)) return last && is_nan(x);
  if (is_nan(x)) return true;
  return Order::before(x, best) || (last && x == best);
}

/// Fills axis (0), keepdims (1) and select_last_index (0), the axis normalized.
std::string canonicalize(ImportContext& context) {
  const std::vector<AttrSpec> attributes = {
      {"axis", AttrType::kInt}, {"keepdims", AttrType::kInt}, {"select_last_index", AttrType::kInt}};
  std::string reason = first_reason({check_attributes(context.attrs, attributes), require_inputs(context, 1),
                                     require_outputs(context, 1), require_dtypes(context, kNumericTypes)});
  if (!reason.empty()) return reason;
  std::vector<int64_t> axes{context.attrs.get_int("axis", 0)};
  const std::optional<int64_t> rank = rank_of(context.input_types[0]);
  reason = first_reason({reject_negative_before_11(context, axes), normalize_axes(axes, rank)});
  if (!reason.empty()) return reason;
  context.attrs.set("axis", axes[0]);
  context.attrs.set("keepdims", int64_t{context.attrs.get_int("keepdims", 1) != 0});
  context.attrs.set("select_last_index", int64_t{context.attrs.get_int("select_last_index", 0) != 0});
  return {};
}

/// The input's dims without the axis, or with it as 1 under keepdims; int64.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("expects 1 input");
  const ir::TensorType& in = inputs[0];
  if (in.dtype != DataType::kUndefined &&
      std::find(kNumericTypes.begin(), kNumericTypes.end(), in.dtype) == kNumericTypes.end()) {
    return InferResult::failure("no kernel for element type " + ir::to_string(in.dtype));
  }
  if (!in.shape.rank_known) return InferResult{{ir::TensorType{DataType::kInt64, ir::Shape::unknown()}}, {}};
  const int64_t axis = node.attrs.get_int("axis", 0);
  if (axis < 0 || axis >= static_cast<int64_t>(in.shape.rank())) {
    return InferResult::failure("axis " + std::to_string(axis) + " is out of range for " +
                                ir::to_string(in.shape));
  }
  const ir::Dim& reduced = in.shape.dims[axis];
  if (reduced.is_known() && reduced.value == 0) return InferResult::failure("the axis is empty");
  ir::Shape out = in.shape;
  if (node.attrs.get_int("keepdims", 1) != 0) {
    out.dims[axis] = ir::Dim::known(1);
  } else {
    out.dims.erase(out.dims.begin() + axis);
  }
  return InferResult{{ir::TensorType{DataType::kInt64, out}}, {}};
}

/// For each position off the axis, scans the axis for the winning element's index.
template <class Order, class T>
void arg_reduce(const ir::Tensor& input, std::size_t axis, bool last, ir::Tensor& output) {
  const int64_t size = input.dims()[axis];
  const int64_t inner = product_of_sizes(input.dims(), axis + 1, input.rank());
  const T* data = input.data<T>();
  int64_t* out = output.mutable_data<int64_t>();
  for (int64_t slot = 0; slot < output.num_elements(); ++slot) {
    const T* line = data + (slot / inner) * size * inner + slot % inner;
    int64_t best = 0;
    for (int64_t k = 1; k < size; ++k) {
      if (replaces<Order>(line[k * inner], line[best * inner], last)) best = k;
    }
    out[slot] = best;
  }
}

template <class Order> void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                                   std::vector<ir::Tensor>& outputs) {
  const auto axis = static_cast<std::size_t>(node.attrs.get_int("axis", 0));
  const bool last = node.attrs.get_int("select_last_index", 0) != 0;
  dispatch_numeric(inputs[0]->dtype(),
                   [&](auto tag) { arg_reduce<Order, decltype(tag)>(*inputs[0], axis, last, outputs[0]); });
}

/// One comparison per input element; the input read, the output written.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  CostFeatures cost;
  cost.flops = elements_or_one(inputs[0]);
  cost.bytes_read = bytes_or_one(inputs[0]);
  cost.bytes_written = bytes_or_one(outputs[0]);
  return cost;
}

template <class Order> OpDef arg_def(ir::OpKind kind, const char* name) {
  return OpDef{kind, name, true, 1, {}, canonicalize, infer, kernel<Order>, features};
}

}  // namespace

OpDef arg_max_op() { return arg_def<Larger>(ir::OpKind::kArgMax, "ArgMax"); }
OpDef arg_min_op() { return arg_def<Smaller>(ir::OpKind::kArgMin, "ArgMin"); }

}  // namespace graphsub::ops
