// Shape: the dims of a tensor as an int64 vector (ONNX Shape, opsets 1, 13, and 15's start/end).
#include <algorithm>
#include <limits>
#include <utility>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// The default end: past the last dim, whatever the rank.
constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();

/// The dims [start, end) that Shape-15 returns for a tensor of `rank`: a negative bound counts
/// from the back, both clamp to [0, rank], and an end before the start gives nothing.
std::pair<int64_t, int64_t> dim_range(const ir::Attributes& attrs, int64_t rank) {
  auto clamp = [rank](int64_t at) { return std::clamp<int64_t>(at < 0 ? at + rank : at, 0, rank); };
  const int64_t start = clamp(attrs.get_int("start", 0));
  return {start, std::max(start, clamp(attrs.get_int("end", kToEnd)))};
}

/// Fills start and end, normalized into [0, rank] when the rank is known.
std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason(
      {check_attributes(context.attrs, {{"start", AttrType::kInt}, {"end", AttrType::kInt}}),
       require_inputs(context, 1), require_outputs(context, 1)});
  if (!reason.empty()) return reason;
  context.attrs.set("start", context.attrs.get_int("start", 0));
  context.attrs.set("end", context.attrs.get_int("end", kToEnd));
  if (std::optional<int64_t> rank = rank_of(context.input_types[0])) {
    auto [start, end] = dim_range(context.attrs, *rank);
    context.attrs.set("start", start);
    context.attrs.set("end", end);
  }
  return {};
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Shape takes one input");
  ir::Dim length;
  if (std::optional<int64_t> rank = rank_of(inputs[0])) {
    auto [start, end] = dim_range(node.attrs, *rank);
    length = ir::Dim::known(end - start);
  }
  return InferResult{{ir::TensorType{ir::DataType::kInt64, ir::Shape{true, {length}}}}, {}};
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const std::vector<int64_t>& dims = inputs[0]->dims();
  auto [start, end] = dim_range(node.attrs, static_cast<int64_t>(dims.size()));
  outputs[0] = ir::Tensor::from_int64s({end - start}, {dims.begin() + start, dims.begin() + end});
}

/// Only the output is written: the dims are metadata, no element of the input is read.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>&,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features({}, outputs, 0);
}

}  // namespace

OpDef shape_op() {
  return OpDef{ir::OpKind::kShape, "Shape", true, 1, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
