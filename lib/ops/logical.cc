// Boolean logic on bool bytes (0 or 1): Not, and And and Or with numpy broadcasting (opset 7+).
#include <cstdint>
#include <string>
#include <vector>

#include "ops/bool_binary.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

const std::vector<ir::DataType> kBoolOnly = {ir::DataType::kBool};

std::string canonicalize_not(ImportContext& context) {
  if (context.input_types.size() != 1) return "expects 1 input";
  if (std::string reason = require_outputs(context, 1); !reason.empty()) return reason;
  return require_dtypes(context, kBoolOnly);
}

InferResult infer_not(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("expects 1 input");
  const ir::DataType dtype = inputs[0].dtype;
  if (dtype != ir::DataType::kBool && dtype != ir::DataType::kUndefined) {
    return InferResult::failure("Not takes bool, not " + ir::to_string(dtype));
  }
  return InferResult{{ir::TensorType{ir::DataType::kBool, inputs[0].shape}}, {}};
}

void not_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                std::vector<ir::Tensor>& outputs) {
  const uint8_t* in = inputs[0]->data<uint8_t>();
  uint8_t* out = outputs[0].mutable_data<uint8_t>();
  for (int64_t i = 0; i < inputs[0]->num_elements(); ++i) out[i] = in[i] ? 0 : 1;
}

struct AndFn {
  bool operator()(uint8_t a, uint8_t b) const { return a && b; }
};
struct OrFn {
  bool operator()(uint8_t a, uint8_t b) const { return a || b; }
};

std::string canonicalize_binary(ImportContext& context) {
  return canonicalize_bool_binary(context, kBoolOnly);
}

InferResult infer_binary(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  return infer_bool_binary(inputs, kBoolOnly);
}

template <class Fn>
void binary_kernel(const ir::Node&, const std::vector<const ir::Tensor*>& inputs,
                   std::vector<ir::Tensor>& outputs) {
  broadcast_predicate<uint8_t>(*inputs[0], *inputs[1], outputs[0], Fn{});
}

/// One operation per element.
CostFeatures not_features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                          const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 1);
}

}  // namespace

OpDef not_op() {
  return OpDef{ir::OpKind::kNot, "Not",     true,       1,           {},
               canonicalize_not, infer_not, not_kernel, not_features};
}

OpDef and_op() {
  return OpDef{ir::OpKind::kAnd,
               "And",
               true,
               7,
               {},
               canonicalize_binary,
               infer_binary,
               binary_kernel<AndFn>,
               bool_binary_features};
}

OpDef or_op() {
  return OpDef{ir::OpKind::kOr,
               "Or",
               true,
               7,
               {},
               canonicalize_binary,
               infer_binary,
               binary_kernel<OrFn>,
               bool_binary_features};
}

}  // namespace graphsub::ops
