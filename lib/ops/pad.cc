// Pad: grows each axis at both ends (or crops it, for negative pads), filling with a constant, the
// edge value or a reflection (ONNX Pad, opsets 2, 11, 13 and 18, whose axes input is read into
// pads for every axis; opset 19's "wrap" mode stays opaque).
#include <algorithm>
#include <variant>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when the attributes are those of Pad with their types: mode, pads, and value (a float
/// attribute before opset 11, a one-element list read from the constant_value input after).
std::string check_pad_attributes(const ir::Attributes& attrs) {
  for (const auto& [name, value] : attrs.items()) {
    const bool fits = (name == "mode" && std::holds_alternative<std::string>(value)) ||
                      ((name == "pads" || name == "axes") && std::holds_alternative<std::vector<int64_t>>(value)) ||
                      (name == "value" && (std::holds_alternative<float>(value) ||
                                           std::holds_alternative<std::vector<float>>(value)));
    if (!fits) return "attribute '" + name + "' is not modelled with that type";
  }
  return {};
}

/// Empty when `mode` is one ONNX defines up to opset 17.
std::string check_mode(const std::string& mode) {
  if (mode == "constant" || mode == "reflect" || mode == "edge") return {};
  return "mode '" + mode + "' is not modelled";
}

/// Empty when `pads` holds a begin and an end per axis of an input of `rank` (when known).
std::string check_pads(const std::vector<int64_t>& pads, std::optional<int64_t> rank) {
  if (pads.size() % 2 != 0) return "pads has an odd length";
  if (rank && static_cast<int64_t>(pads.size()) != 2 * *rank) {
    return "pads does not fit the input rank";
  }
  return {};
}

/// Reads the fill value: a float, or the one element of the constant_value input (0 when absent).
std::string read_value(const ir::Attributes& attrs, float& value) {
  const ir::AttrValue* given = attrs.find("value");
  value = 0;
  if (!given) return {};
  if (const auto* scalar = std::get_if<float>(given)) {
    value = *scalar;
    return {};
  }
  const auto& list = std::get<std::vector<float>>(*given);
  if (list.size() != 1) return "constant_value is not a scalar";
  value = list[0];
  return {};
}

/// Empty when the data can be filled with a converted constant (or the mode needs none).
std::string check_fill_type(const std::string& mode, ir::DataType dtype) {
  if (mode != "constant" || dtype == ir::DataType::kUndefined || is_convertible(dtype)) return {};
  return "constant padding of " + ir::to_string(dtype) + " has no reference kernel";
}

/// Opset 18's axes: `pads` then holds a begin and an end per listed axis; rewritten as the pads of
/// every axis (0 for the others), so the node is the same as one without axes.
std::string expand_axes(ir::Attributes& attrs, std::optional<int64_t> rank) {
  if (!attrs.has("axes")) return {};
  std::vector<int64_t> axes = attrs.get_ints("axes", {});
  attrs.erase("axes");
  if (!rank) return "pads of listed axes need the input rank";
  for (int64_t& axis : axes) {  // in their order, which pads follows (normalize_axes sorts)
    if (axis < -*rank || axis >= *rank) return "axes has an axis out of range";
    if (axis < 0) axis += *rank;
  }
  const std::vector<int64_t> pads = attrs.get_ints("pads", {});
  if (pads.size() != 2 * axes.size()) return "pads does not fit the axes";
  std::vector<int64_t> full(static_cast<std::size_t>(2 * *rank), 0);
  std::vector<char> seen(static_cast<std::size_t>(*rank), 0);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto axis = static_cast<std::size_t>(axes[i]);
    if (seen[axis]) return "axes repeats an axis";
    seen[axis] = 1;
    full[axis] = pads[i];
    full[axis + static_cast<std::size_t>(*rank)] = pads[i + axes.size()];
  }
  attrs.set("pads", full);
  return {};
}

/// Fills mode and value (0 unless the mode is constant, which alone reads it); pads must be known.
std::string canonicalize(ImportContext& context) {
  std::string reason =
      first_reason({check_pad_attributes(context.attrs), require_inputs(context, 1),
                    require_outputs(context, 1), reject_strings(context)});
  if (!reason.empty()) return reason;
  if (!context.attrs.has("pads")) return "pads are not constants";
  const std::string mode = context.attrs.get_string("mode", "constant");
  const ir::TensorType& input = context.input_types[0];
  if (reason = expand_axes(context.attrs, rank_of(input)); !reason.empty()) return reason;
  float value = 0;
  reason = first_reason({check_mode(mode), read_value(context.attrs, value),
                         check_pads(context.attrs.get_ints("pads", {}), rank_of(input)),
                         check_fill_type(mode, input.dtype)});
  if (!reason.empty()) return reason;
  context.attrs.set("mode", mode);
  context.attrs.set("value", mode == "constant" ? value : 0.0f);
  return {};
}

/// The padded size of an axis of `dim` by `begin` and `end`: known sizes add, a symbol stays
/// when the pads cancel out, anything else is unknown.
ir::Dim padded_dim(const ir::Dim& dim, int64_t begin, int64_t end, bool replicates,
                   std::string& error) {
  if (!dim.is_known()) return dim.is_symbolic() && begin + end == 0 ? dim : ir::Dim{};
  const int64_t size = dim.value + begin + end;
  if (size < 0) error = "pads crop more than the axis holds";
  if (replicates && dim.value == 0 && size > 0) error = "an empty axis has no edge to replicate";
  return ir::Dim::known(size);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Pad takes one data input");
  const std::vector<int64_t> pads = node.attrs.get_ints("pads", {});
  const ir::Shape& in = inputs[0].shape;
  std::string error = check_pads(pads, rank_of(inputs[0]));
  const std::size_t rank = pads.size() / 2;
  const bool replicates = node.attrs.get_string("mode", "constant") != "constant";
  ir::Shape out{true, std::vector<ir::Dim>(rank)};
  for (std::size_t axis = 0; error.empty() && in.rank_known && axis < rank; ++axis) {
    out.dims[axis] = padded_dim(in.dims[axis], pads[axis], pads[rank + axis], replicates, error);
  }
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{inputs[0].dtype, out}}, {}};
}

/// The input coordinate that `at` (possibly outside [0, size)) mirrors to, the edge not
/// repeated, as numpy's "reflect" (several reflections when the pad exceeds the axis).
int64_t reflect(int64_t at, int64_t size) {
  if (size == 1) return 0;
  const int64_t period = 2 * (size - 1);
  const int64_t phase = ((at % period) + period) % period;
  return phase < size ? phase : period - phase;
}

/// The input coordinate each output coordinate of one axis reads.
std::vector<int64_t> axis_map(const std::string& mode, int64_t size, int64_t begin, int64_t end) {
  std::vector<int64_t> map(static_cast<std::size_t>(size + begin + end));
  for (std::size_t j = 0; j < map.size(); ++j) {
    const int64_t at = static_cast<int64_t>(j) - begin;
    if (mode == "edge") {
      map[j] = std::clamp<int64_t>(at, 0, size - 1);
    } else if (mode == "reflect") {
      map[j] = reflect(at, size);
    } else {
      map[j] = at >= 0 && at < size ? at : kFillCoordinate;
    }
  }
  return map;
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& input = *inputs[0];
  const std::vector<int64_t> pads = node.attrs.get_ints("pads", {});
  const std::string mode = node.attrs.get_string("mode", "constant");
  const std::size_t rank = input.rank();
  AxisMaps maps;
  for (std::size_t axis = 0; axis < rank; ++axis) {
    maps.push_back(axis_map(mode, input.dims()[axis], pads[axis], pads[rank + axis]));
  }
  if (mode != "constant") return copy_mapped(input, maps, nullptr, outputs[0]);
  const ir::Tensor fill = scalar_of(input.dtype(), node.attrs.get_float("value", 0));
  copy_mapped(input, maps, &fill, outputs[0]);
}

}  // namespace

OpDef pad_op() {
  return OpDef{ir::OpKind::kPad, "Pad", true, 2, {{1, "pads", 11, false}, {2, "value", 11, true}, {3, "axes", 18, false}},
               canonicalize, infer, kernel, copy_features};
}

}  // namespace graphsub::ops
