// Slice: a strided window of a tensor along some axes (ONNX Slice, opsets 1, 10, 11 and 13).
#include <algorithm>
#include <numeric>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// A bound this far out lies beyond the end of any axis (no tensor has 2^62 entries on one), so
/// a slice with it covers a symbolic axis to its end.
constexpr int64_t kBeyondAnyDim = int64_t{1} << 62;

/// The slice of one axis, as ONNX gives it (bounds may be negative or out of range).
struct AxisSlice {
  int64_t axis;
  int64_t start;
  int64_t end;
  int64_t step;
};

/// Reads the slices, filling ONNX's defaults: axes 0, 1, ... and steps of 1. Returns why the
/// attributes are invalid, else empty.
std::string read_slices(const ir::Attributes& attrs, std::vector<AxisSlice>& slices) {
  if (!attrs.has("starts") || !attrs.has("ends")) return "starts and ends are not constants";
  const std::vector<int64_t> starts = attrs.get_ints("starts", {});
  const std::vector<int64_t> ends = attrs.get_ints("ends", {});
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), int64_t{0});
  axes = attrs.get_ints("axes", axes);
  const std::vector<int64_t> steps = attrs.get_ints("steps", std::vector<int64_t>(axes.size(), 1));
  const std::size_t count = starts.size();
  if (ends.size() != count || axes.size() != count || steps.size() != count) {
    return "starts, ends, axes and steps differ in length";
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (steps[i] == 0) return "a step is 0";
    slices.push_back({axes[i], starts[i], ends[i], steps[i]});
  }
  return {};
}

/// Normalizes the axes into [0, rank) and sorts the slices by axis; returns why they are invalid.
std::string sort_by_axis(std::vector<AxisSlice>& slices, std::optional<int64_t> rank) {
  for (AxisSlice& slice : slices) {
    if (!rank) {
      if (slice.axis < 0) return "negative axis with an unknown rank";
      continue;
    }
    std::optional<int64_t> axis = normalize_axis(slice.axis, *rank);
    if (!axis) return "axis " + std::to_string(slice.axis) + " is out of range";
    slice.axis = *axis;
  }
  auto by_axis = [](const AxisSlice& a, const AxisSlice& b) { return a.axis < b.axis; };
  std::sort(slices.begin(), slices.end(), by_axis);
  auto same_axis = [](const AxisSlice& a, const AxisSlice& b) { return a.axis == b.axis; };
  if (std::adjacent_find(slices.begin(), slices.end(), same_axis) != slices.end()) {
    return "repeated axis";
  }
  return {};
}

/// Writes the slices back as the four attribute lists.
void store(const std::vector<AxisSlice>& slices, ir::Attributes& attrs) {
  std::vector<int64_t> starts, ends, axes, steps;
  for (const AxisSlice& slice : slices) {
    starts.push_back(slice.start);
    ends.push_back(slice.end);
    axes.push_back(slice.axis);
    steps.push_back(slice.step);
  }
  attrs.set("starts", starts);
  attrs.set("ends", ends);
  attrs.set("axes", axes);
  attrs.set("steps", steps);
}

/// Stores the slices with every default filled and the axes normalized and sorted.
std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason(
      {check_attributes(context.attrs, {{"starts", AttrType::kInts}, {"ends", AttrType::kInts},
                                        {"axes", AttrType::kInts}, {"steps", AttrType::kInts}}),
       require_inputs(context, 1), require_outputs(context, 1), reject_strings(context)});
  if (reason.empty() && context.runtime_operands) return {};
  std::vector<AxisSlice> slices;
  if (reason.empty()) reason = read_slices(context.attrs, slices);
  const std::vector<int64_t> given_axes = context.attrs.get_ints("axes", {});
  if (reason.empty()) reason = reject_negative_before_11(context, given_axes);
  if (reason.empty()) reason = sort_by_axis(slices, rank_of(context.input_types[0]));
  if (!reason.empty()) return reason;
  store(slices, context.attrs);
  return {};
}

/// Where a slice starts on an axis and how many entries it takes.
struct Window {
  int64_t start;
  int64_t count;
};

/// The window of a slice on an axis of `dim`: ONNX counts negative bounds from the back, then
/// clamps them into the axis (with a negative step, the start to [0, dim - 1] and the end to
/// [-1, dim - 1]).
Window resolve(const AxisSlice& slice, int64_t dim) {
  int64_t start = slice.start < 0 ? slice.start + dim : slice.start;
  int64_t end = slice.end < 0 ? slice.end + dim : slice.end;
  if (slice.step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    if (dim == 0) return {0, 0};
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  const int64_t distance = slice.step > 0 ? end - start : start - end;
  if (distance <= 0) return {start, 0};
  // |step| as unsigned: -INT64_MIN does not fit an int64.
  const uint64_t stride = slice.step > 0 ? static_cast<uint64_t>(slice.step)
                                         : uint64_t{0} - static_cast<uint64_t>(slice.step);
  return {start, 1 + static_cast<int64_t>(static_cast<uint64_t>(distance - 1) / stride)};
}

/// True when the slice takes a whole axis of any size, forward or reversed.
bool takes_whole_axis(const AxisSlice& slice) {
  const bool from_first = slice.start == 0 || slice.start <= -kBeyondAnyDim;
  const bool from_last = slice.start == -1 || slice.start >= kBeyondAnyDim;
  return (slice.step == 1 && from_first && slice.end >= kBeyondAnyDim) ||
         (slice.step == -1 && from_last && slice.end <= -kBeyondAnyDim);
}

ir::Dim sliced_dim(const AxisSlice& slice, const ir::Dim& dim) {
  if (dim.is_known()) return ir::Dim::known(resolve(slice, dim.value).count);
  return dim.is_symbolic() && takes_whole_axis(slice) ? dim : ir::Dim{};
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Slice takes one data input");
  std::vector<AxisSlice> slices;
  std::string error = read_slices(node.attrs, slices);
  const ir::TensorType& in = inputs[0];
  if (error.empty()) error = sort_by_axis(slices, rank_of(in));
  if (!error.empty()) return InferResult::failure(error);
  ir::TensorType out = in;
  for (const AxisSlice& slice : slices) {
    if (!in.shape.rank_known) break;
    out.shape.dims[slice.axis] = sliced_dim(slice, in.shape.dims[slice.axis]);
  }
  return InferResult{{out}, {}};
}

/// The run-time form (data, starts, ends[, axes[, steps]]): the data's rank, sizes unknown.
InferResult infer_runtime(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() < 3 || inputs.size() > 5) return InferResult::failure("Slice takes 3 to 5 inputs");
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const ir::DataType dtype = inputs[i].dtype;
    if (dtype != ir::DataType::kUndefined && dtype != ir::DataType::kInt64 && dtype != ir::DataType::kInt32) {
      return InferResult::failure("Slice operands must be int32 or int64");
    }
  }
  ir::TensorType out = inputs[0];
  for (ir::Dim& dim : out.shape.dims) dim = ir::Dim{};
  return InferResult{{out}, {}};
}

/// Each output axis reads start, start + step, ... of its input axis.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& input = *inputs[0];
  std::vector<AxisSlice> slices;
  read_slices(node.attrs, slices);
  sort_by_axis(slices, static_cast<int64_t>(input.rank()));
  AxisMaps maps;
  for (int64_t dim : input.dims()) maps.push_back(identity_map(dim));
  for (const AxisSlice& slice : slices) {
    const Window window = resolve(slice, input.dims()[slice.axis]);
    std::vector<int64_t>& map = maps[slice.axis];
    map.resize(static_cast<std::size_t>(window.count));
    for (int64_t j = 0; j < window.count; ++j) map[j] = window.start + j * slice.step;
  }
  copy_mapped(input, maps, nullptr, outputs[0]);
}

/// The elements taken are read once and written once.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>&,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(outputs, outputs, 0);
}

}  // namespace

OpDef slice_op() {
  OpDef def{ir::OpKind::kSlice, "Slice", true, 1,
            {{1, "starts", 10, false}, {2, "ends", 10, false}, {3, "axes", 10, false},
             {4, "steps", 10, false}},
            canonicalize, infer, kernel, features};
  def.infer_runtime = infer_runtime;
  return def;
}

}  // namespace graphsub::ops
