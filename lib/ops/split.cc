// Split: cuts a tensor into consecutive parts along one axis (ONNX Split, opsets 2, 11, 13 and
// 18, whose num_outputs is read into the sizes it implies).
#include <algorithm>
#include <cstring>
#include <numeric>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `split` is a valid list of sizes for `dim` (whose size may be unknown).
std::string check_sizes(const std::vector<int64_t>& split, const ir::Dim& dim) {
  if (split.empty()) return "split has no sizes";
  if (std::any_of(split.begin(), split.end(), [](int64_t size) { return size < 0; })) {
    return "split has a negative size";
  }
  const int64_t sum = std::accumulate(split.begin(), split.end(), int64_t{0});
  if (dim.is_known() && dim.value != sum) {
    return "split sizes sum to " + std::to_string(sum) + ", the axis has " +
           std::to_string(dim.value);
  }
  return {};
}

/// Empty when the given `split` holds one valid size per declared output.
std::string check_split(const ImportContext& context, const ir::Dim& dim) {
  const std::vector<int64_t> split = context.attrs.get_ints("split", {});
  if (static_cast<int64_t>(split.size()) != context.num_outputs) {
    return "split has " + std::to_string(split.size()) + " sizes for " +
           std::to_string(context.num_outputs) + " outputs";
  }
  return check_sizes(split, dim);
}

/// Fills `split` with equal parts, one per declared output; needs the size of the axis.
std::string set_equal_split(ImportContext& context, const ir::Dim& dim) {
  if (!dim.is_known()) return "an equal split needs the size of the axis";
  const int64_t parts = context.num_outputs;
  if (parts < 1 || dim.value % parts != 0) {
    return "axis size " + std::to_string(dim.value) + " does not split into " +
           std::to_string(parts) + " equal parts";
  }
  const std::vector<int64_t> split(static_cast<std::size_t>(parts), dim.value / parts);
  context.attrs.set("split", split);
  return {};
}

/// Opset 18's num_outputs = n: parts of ceil(size / n), the last one smaller when n does not
/// divide the size; read into `split`, so the node is the same as one with those sizes.
std::string set_split_of_num_outputs(ImportContext& context, const ir::Dim& dim) {
  const int64_t parts = context.attrs.get_int("num_outputs", 0);
  context.attrs.erase("num_outputs");
  if (context.attrs.has("split")) return "split and num_outputs are both given";
  if (parts != context.num_outputs) {
    return "num_outputs is " + std::to_string(parts) + ", the node uses " + std::to_string(context.num_outputs) +
           " outputs";
  }
  if (!dim.is_known()) return "num_outputs needs the size of the axis";
  const int64_t chunk = (dim.value + parts - 1) / parts;
  std::vector<int64_t> split(static_cast<std::size_t>(parts), chunk);
  split.back() = dim.value - chunk * (parts - 1);
  if (split.back() < 0) {
    return "axis size " + std::to_string(dim.value) + " does not split into " + std::to_string(parts) + " parts";
  }
  context.attrs.set("split", split);
  return {};
}

std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason(
      {check_attributes(context.attrs,
                        {{"axis", AttrType::kInt}, {"split", AttrType::kInts}, {"num_outputs", AttrType::kInt}}),
       require_inputs(context, 1), reject_strings(context)});
  if (!reason.empty()) return reason;
  const ir::Shape& shape = context.input_types[0].shape;
  std::vector<int64_t> axes{context.attrs.get_int("axis", 0)};
  reason = first_reason({reject_negative_before_11(context, axes),
                         normalize_axes(axes, rank_of(context.input_types[0]))});
  if (!reason.empty()) return reason;
  context.attrs.set("axis", axes[0]);
  const ir::Dim dim = shape.rank_known ? shape.dims[axes[0]] : ir::Dim{};
  if (context.attrs.has("num_outputs")) {
    reason = set_split_of_num_outputs(context, dim);
    return reason.empty() ? check_split(context, dim) : reason;
  }
  return context.attrs.has("split") ? check_split(context, dim) : set_equal_split(context, dim);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Split takes one input");
  const std::vector<int64_t> split = node.attrs.get_ints("split", {});
  const int64_t axis = node.attrs.get_int("axis", -1);
  const ir::TensorType& in = inputs[0];
  const bool rank_known = in.shape.rank_known;
  if (rank_known && (axis < 0 || axis >= static_cast<int64_t>(in.shape.rank()))) {
    return InferResult::failure("axis is out of range");
  }
  std::string error = check_sizes(split, rank_known ? in.shape.dims[axis] : ir::Dim{});
  if (!error.empty()) return InferResult::failure(error);
  InferResult result;
  for (int64_t size : split) {
    result.outputs.push_back(in);
    if (rank_known) result.outputs.back().shape.dims[axis] = ir::Dim::known(size);
  }
  return result;
}

/// For each index before the axis, copies consecutive blocks of the input into the outputs.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& input = *inputs[0];
  const auto axis = static_cast<std::size_t>(node.attrs.get_int("axis", 0));
  const int64_t outer = product_of_sizes(input.dims(), 0, axis);
  const int64_t inner = product_of_sizes(input.dims(), axis + 1, input.rank()) *
                        static_cast<int64_t>(ir::element_size(input.dtype()));
  const std::byte* in = input.bytes();
  for (int64_t o = 0; o < outer; ++o) {
    for (ir::Tensor& output : outputs) {
      const int64_t block = output.dims()[axis] * inner;
      if (block > 0) {
        std::memcpy(output.mutable_bytes() + o * block, in, static_cast<std::size_t>(block));
      }
      in += block;
    }
  }
}

/// When every dim before the axis is 1 (or symbolic: the cost model prices symbolic dims at 1),
/// each output is one contiguous block of the input, which a runtime hands to consumers as a
/// pointer offset (TASO's split is a view too): no launch, no traffic. Otherwise a strided copy.
CostFeatures features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  const ir::Shape& shape = inputs[0].shape;
  const int64_t axis = node.attrs.get_int("axis", 0);
  bool contiguous = shape.rank_known && axis >= 0 && axis < static_cast<int64_t>(shape.rank());
  for (int64_t i = 0; contiguous && i < axis; ++i) {
    const ir::Dim& dim = shape.dims[i];
    contiguous = dim.is_symbolic() || (dim.is_known() && dim.value == 1);
  }
  return contiguous ? CostFeatures{} : copy_features(node, inputs, outputs);
}

}  // namespace

OpDef split_op() {
  return OpDef{ir::OpKind::kSplit, "Split", true, 2, {{1, "split", 13, false}},
               canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
