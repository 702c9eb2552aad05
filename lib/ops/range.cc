// Range: the numbers start, start + delta, ... short of limit (ONNX Range, opset 11).
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

const std::vector<DataType> kRangeTypes = {DataType::kFloat, DataType::kDouble, DataType::kInt32,
                                           DataType::kInt64};

/// The most elements a Range may produce before the kernel refuses (as tensor files do).
constexpr uint64_t kMaxLength = uint64_t{1} << 40;

/// Empty when start, limit and delta share one of kRangeTypes and are scalars (where known).
std::string operand_error(const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 3) return "Range takes start, limit and delta";
  for (const ir::TensorType& type : inputs) {
    if (type.dtype != inputs[0].dtype) return "start, limit and delta differ in type";
    if (type.shape.rank_known && type.shape.rank() != 0) {
      return "start, limit and delta must be scalars";
    }
  }
  const DataType dtype = inputs[0].dtype;
  if (dtype == DataType::kUndefined) return {};
  for (DataType allowed : kRangeTypes) {
    if (dtype == allowed) return {};
  }
  return "Range of " + ir::to_string(dtype) + " has no reference kernel";
}

std::string canonicalize(ImportContext& context) {
  return first_reason({check_attributes(context.attrs, {}), require_outputs(context, 1),
                       operand_error(context.input_types)});
}

/// A 1-D tensor whose length depends on the operands' values.
InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (std::string error = operand_error(inputs); !error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{inputs[0].dtype, ir::Shape{true, {ir::Dim{}}}}}, {}};
}

/// ceil(distance / step) for a positive distance and step, in unsigned arithmetic (the distance
/// between two int64s may not fit an int64).
uint64_t steps_to_cover(uint64_t distance, uint64_t step) {
  return distance / step + (distance % step != 0);
}

/// max(ceil((limit - start) / delta), 0), exactly, for integers.
uint64_t integer_count(int64_t start, int64_t limit, int64_t delta) {
  if (delta > 0 && limit > start) {
    return steps_to_cover(static_cast<uint64_t>(limit) - static_cast<uint64_t>(start),
                          static_cast<uint64_t>(delta));
  }
  if (delta < 0 && limit < start) {
    return steps_to_cover(static_cast<uint64_t>(start) - static_cast<uint64_t>(limit),
                          uint64_t{0} - static_cast<uint64_t>(delta));
  }
  return 0;
}

/// max(ceil((limit - start) / delta), 0) for floats: the difference in T, the quotient in double,
/// as ONNX Runtime computes it.
template <class T>
uint64_t float_count(T start, T limit, T delta) {
  const double difference = static_cast<double>(limit - start);
  const double quotient = std::ceil(difference / static_cast<double>(delta));
  if (std::isnan(quotient) || quotient >= static_cast<double>(kMaxLength)) {
    throw Error("Range from " + std::to_string(start) + " to " + std::to_string(limit) + " by " +
                std::to_string(delta) + " has no finite length");
  }
  return quotient > 0 ? static_cast<uint64_t>(quotient) : 0;
}

/// Element i: start + i * delta (for integers in wrapping arithmetic, exact since the result is
/// between start and limit).
template <class T>
T element(T start, T delta, int64_t i) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<uint64_t>(start) +
                          static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
  } else {
    return start + static_cast<T>(i) * delta;
  }
}

/// Allocates the output from the operands' values and fills it.
void kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  dispatch_numeric(inputs[0]->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T start = inputs[0]->data<T>()[0];
    const T limit = inputs[1]->data<T>()[0];
    const T delta = inputs[2]->data<T>()[0];
    if (delta == 0) throw Error("Range: delta is 0");
    uint64_t count = 0;
    if constexpr (std::is_integral_v<T>) {
      count = integer_count(start, limit, delta);
    } else {
      count = float_count(start, limit, delta);
    }
    if (count > kMaxLength) {
      throw Error("Range would produce " + std::to_string(count) + " elements");
    }
    outputs[0] = ir::Tensor(inputs[0]->dtype(), {static_cast<int64_t>(count)});
    T* out = outputs[0].mutable_data<T>();
    for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) out[i] = element(start, delta, i);
  });
}

/// One multiply-add per element.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

}  // namespace

OpDef range_op() {
  return OpDef{ir::OpKind::kRange, "Range", true, 11, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
