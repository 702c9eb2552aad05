// Shared parts of the broadcasting binary ops with a bool result.
#include "ops/bool_binary.h"

#include <algorithm>

namespace graphsub::ops {
namespace {

/// Opset 7 replaced the broadcast/axis attributes by numpy broadcasting.
constexpr int64_t kNumpyBroadcastOpset = 7;

std::string dtype_error(ir::DataType dtype, const std::vector<ir::DataType>& allowed) {
  if (dtype == ir::DataType::kUndefined) return {};
  if (std::find(allowed.begin(), allowed.end(), dtype) != allowed.end()) return {};
  return "element type " + ir::to_string(dtype) + " has no reference kernel";
}

}  // namespace

std::string canonicalize_bool_binary(const ImportContext& context,
                                     const std::vector<ir::DataType>& allowed) {
  if (context.opset < kNumpyBroadcastOpset) return "before opset 7 (legacy broadcast semantics)";
  if (context.input_types.size() != 2) return "expects 2 inputs";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  if (context.input_types[0].dtype != context.input_types[1].dtype) return "mixed element types";
  return require_dtypes(context, allowed);
}

InferResult infer_bool_binary(const std::vector<ir::TensorType>& inputs,
                              const std::vector<ir::DataType>& allowed) {
  if (inputs.size() != 2) return InferResult::failure("expects 2 inputs");
  const ir::DataType a = inputs[0].dtype;
  const ir::DataType b = inputs[1].dtype;
  if (a != b && a != ir::DataType::kUndefined && b != ir::DataType::kUndefined) {
    return InferResult::failure("element types " + ir::to_string(a) + " and " + ir::to_string(b) +
                                " differ");
  }
  std::string error = dtype_error(a, allowed);
  if (error.empty()) error = dtype_error(b, allowed);
  if (!error.empty()) return InferResult::failure(error);
  ir::Shape shape = broadcast_shapes(inputs[0].shape, inputs[1].shape, error);
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{ir::DataType::kBool, shape}}, {}};
}

CostFeatures bool_binary_features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                                  const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

}  // namespace graphsub::ops
