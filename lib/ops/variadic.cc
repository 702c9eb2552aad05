// Variadic element-wise arithmetic with multidirectional (numpy) broadcasting: Sum and Mean of one
// or more operands (opset 8+).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/common.h"
#include "ops/op_list.h"
#include "ops/strided_offset.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Opset 8 replaced equal shapes by multidirectional broadcasting.
constexpr int64_t kBroadcastOpset = 8;

/// Element types of both ops.
const std::vector<DataType> kFloatTypes = {DataType::kFloat, DataType::kDouble};

/// Sum: the operands added, one after the other.
struct SumOp {
  static constexpr double kFinishFlops = 0;
  static double finish(double sum, std::size_t) { return sum; }
};
/// Mean: their sum divided by their count.
struct MeanOp {
  static constexpr double kFinishFlops = 1;
  static double finish(double sum, std::size_t count) { return sum / static_cast<double>(count); }
};

/// Empty when the node has operands of one float type at a broadcasting opset, and one output.
std::string canonicalize(ImportContext& context) {
  if (context.opset < kBroadcastOpset) return "before opset 8 (no broadcasting)";
  if (context.input_types.empty()) return "expects at least 1 input";
  if (!context.attrs.empty()) return "attribute '" + context.attrs.items()[0].first + "' is not modelled";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  for (const ir::TensorType& type : context.input_types) {
    if (type.dtype != context.input_types[0].dtype) return "mixed or unknown element types";
  }
  return require_dtypes(context, kFloatTypes);
}

/// The broadcast of every operand's shape (symbols kept), of their common element type.
InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.empty()) return InferResult::failure("expects at least 1 input");
  ir::TensorType out = inputs[0];
  for (const ir::TensorType& input : inputs) {
    if (out.dtype == DataType::kUndefined) out.dtype = input.dtype;
    if (input.dtype != DataType::kUndefined && input.dtype != out.dtype) {
      return InferResult::failure("element types " + ir::to_string(out.dtype) + " and " +
                                  ir::to_string(input.dtype) + " differ");
    }
    std::string error;
    out.shape = broadcast_shapes(out.shape, input.shape, error);
    if (!error.empty()) return InferResult::failure(error);
  }
  if (out.dtype != DataType::kUndefined && out.dtype != DataType::kFloat && out.dtype != DataType::kDouble) {
    return InferResult::failure("no kernel for element type " + ir::to_string(out.dtype));
  }
  return InferResult{{out}, {}};
}

/// Sums every operand, read broadcast, into a double per output element, then finishes each.
template <class T, class Op>
void accumulate(const std::vector<const ir::Tensor*>& inputs, ir::Tensor& output) {
  const std::vector<int64_t>& sizes = output.dims();
  std::vector<double> sums(static_cast<std::size_t>(output.num_elements()), 0.0);
  for (const ir::Tensor* input : inputs) {
    const std::vector<int64_t> strides = broadcast_strides(input->dims(), sizes);
    for (int64_t i = 0; i < output.num_elements(); ++i) {
      sums[i] += static_cast<double>(input->data<T>()[strided_offset(i, sizes, strides)]);
    }
  }
  T* out = output.mutable_data<T>();
  for (std::size_t i = 0; i < sums.size(); ++i) out[i] = static_cast<T>(Op::finish(sums[i], inputs.size()));
}

template <class Op>
void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs, std::vector<ir::Tensor>& outputs) {
  dispatch_floating(inputs[0]->dtype(), [&](auto tag) { accumulate<decltype(tag), Op>(inputs, outputs[0]); });
}

/// One addition per output element and operand after the first (Mean: one division more); every
/// operand read, the output written.
template <class Op>
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  const auto additions = static_cast<double>(inputs.size()) - 1;
  return elementwise_features(inputs, outputs, additions + Op::kFinishFlops);
}

template <class Op> OpDef variadic_def(ir::OpKind kind, const char* name) {
  return OpDef{kind, name, true, kBroadcastOpset, {}, canonicalize, infer, kernel<Op>, features<Op>};
}

}  // namespace

OpDef sum_op() { return variadic_def<SumOp>(ir::OpKind::kSum, "Sum"); }
OpDef mean_op() { return variadic_def<MeanOp>(ir::OpKind::kMean, "Mean"); }

}  // namespace graphsub::ops
