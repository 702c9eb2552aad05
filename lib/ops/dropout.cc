// Dropout as inference runs it: the identity, with an all-true mask when the node asks for one
// (ONNX Dropout, opsets 7, 10, 12 and 13; training mode stays opaque).
#include <algorithm>
#include <cstring>
#include <variant>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when the attributes are Dropout's with their types: ratio (a float attribute, or a list
/// read from the ratio input), seed, and training_mode (read from its input).
std::string check_dropout_attributes(const ir::Attributes& attrs) {
  for (const auto& [name, value] : attrs.items()) {
    const bool is_float = std::holds_alternative<float>(value) ||
                          std::holds_alternative<std::vector<float>>(value);
    const bool fits = (name == "ratio" && is_float) ||
                      (name == "seed" && std::holds_alternative<int64_t>(value)) ||
                      (name == "training_mode" &&
                       std::holds_alternative<std::vector<int64_t>>(value));
    if (!fits) return "attribute '" + name + "' is not modelled with that type";
  }
  return {};
}

std::string reject_training(const ir::Attributes& attrs) {
  const std::vector<int64_t> training = attrs.get_ints("training_mode", {0});
  if (std::any_of(training.begin(), training.end(), [](int64_t flag) { return flag != 0; })) {
    return "training mode is not modelled";
  }
  return {};
}

/// Empty for one output, or two from opset 10 on (before, the mask had the data's type).
std::string check_outputs(const ImportContext& context) {
  if (context.num_outputs == 1) return {};
  if (context.num_outputs != 2) return require_outputs(context, 1);
  return context.opset >= 10 ? "" : "the mask before opset 10 is not modelled";
}

/// Drops ratio, seed and training_mode (inference ignores them); `mask` says whether the node
/// returns the mask.
std::string canonicalize(ImportContext& context) {
  std::string reason =
      first_reason({check_dropout_attributes(context.attrs), require_inputs(context, 1),
                    reject_strings(context), reject_training(context.attrs),
                    check_outputs(context)});
  if (!reason.empty()) return reason;
  for (const char* unused : {"ratio", "seed", "training_mode"}) context.attrs.erase(unused);
  context.attrs.set("mask", int64_t{context.num_outputs == 2});
  return {};
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Dropout takes one data input");
  InferResult result{{inputs[0]}, {}};
  if (node.attrs.get_int("mask", 0)) {
    result.outputs.push_back({ir::DataType::kBool, inputs[0].shape});
  }
  return result;
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  copy_kernel(node, inputs, outputs);
  if (outputs.size() == 2) std::memset(outputs[1].mutable_bytes(), 1, outputs[1].byte_size());
}

/// The output aliases the input in a real runtime; only the mask is written.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>&,
                      const std::vector<ir::TensorType>& outputs) {
  CostFeatures cost;
  if (outputs.size() == 2) cost.bytes_written = bytes_or_one(outputs[1]);
  return cost;
}

}  // namespace

OpDef dropout_op() {
  return OpDef{ir::OpKind::kDropout, "Dropout", true, 7,
               {{1, "ratio", 12, true}, {2, "training_mode", 12, false}},
               canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
