// Resize: nearest and n-d linear interpolation to sizes given as scales or as sizes (ONNX Resize,
// opsets 11 to 19, opset 18's attributes at their defaults). Cubic interpolation,
// tf_crop_and_resize, exclude_outside, antialias and partial axes stay opaque.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"
#include "ops/sliding_window.h"

namespace graphsub::ops {
namespace {

using ir::DataType;

/// Opset 13 removed coordinate_transformation_mode tf_half_pixel_for_nn.
constexpr int64_t kWithoutTfHalfPixelOpset = 13;

enum class Mode { kNearest, kLinear };
/// coordinate_transformation_mode: how an output coordinate maps to an input coordinate.
enum class Transform { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn };
/// nearest_mode: how nearest rounds an input coordinate to an index.
enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

template <class E> using Names = std::vector<std::pair<const char*, E>>;

const Names<Mode> kModes = {{"nearest", Mode::kNearest}, {"linear", Mode::kLinear}};
const Names<Transform> kTransforms = {{"half_pixel", Transform::kHalfPixel},
                                      {"pytorch_half_pixel", Transform::kPytorchHalfPixel},
                                      {"align_corners", Transform::kAlignCorners},
                                      {"asymmetric", Transform::kAsymmetric},
                                      {"tf_half_pixel_for_nn", Transform::kTfHalfPixelForNn}};
const Names<Rounding> kRoundings = {{"round_prefer_floor", Rounding::kRoundPreferFloor},
                                    {"round_prefer_ceil", Rounding::kRoundPreferCeil},
                                    {"floor", Rounding::kFloor},
                                    {"ceil", Rounding::kCeil}};

template <class E> std::optional<E> lookup(const Names<E>& names, const std::string& name) {
  for (const auto& [text, value] : names) {
    if (name == text) return value;
  }
  return std::nullopt;
}

/// How a node interpolates, read from its attributes with ONNX's defaults.
struct Method {
  Mode mode;
  Transform transform;
  Rounding rounding;

  /// Nullopt when a name is not one of the modelled ones.
  static std::optional<Method> from(const ir::Attributes& attrs) {
    const auto mode = lookup(kModes, attrs.get_string("mode", "nearest"));
    const auto transform =
        lookup(kTransforms, attrs.get_string("coordinate_transformation_mode", "half_pixel"));
    const auto rounding = lookup(kRoundings, attrs.get_string("nearest_mode", "round_prefer_floor"));
    if (!mode || !transform || !rounding) return std::nullopt;
    return Method{*mode, *transform, *rounding};
  }
  /// True for the transforms that read the resized length, not only the scale.
  bool reads_resized_length() const {
    return transform == Transform::kAlignCorners || transform == Transform::kPytorchHalfPixel;
  }
};

/// The requested output: a scale per axis or a size per axis. The operands' attributes may hold
/// an empty list for an omitted operand (opsets 11 and 12 require roi and scales to be given), and
/// roi, which only tf_crop_and_resize reads, is ignored.
struct Target {
  std::vector<float> scales;
  std::vector<int64_t> sizes;

  static Target from(const ir::Attributes& attrs) {
    return Target{attrs.get_floats("scales", {}), attrs.get_ints("sizes", {})};
  }
  std::size_t rank() const { return scales.empty() ? sizes.size() : scales.size(); }
  /// Empty when exactly one of scales and sizes is given, positive scales or non-negative sizes,
  /// one per axis of a known `rank`.
  std::string check(std::optional<int64_t> rank) const {
    if (scales.empty() == sizes.empty()) return "exactly one of scales and sizes must be given";
    if (std::any_of(scales.begin(), scales.end(), [](float s) { return !(s > 0); }))
      return "scales must be positive";
    if (std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s < 0; }))
      return "sizes must not be negative";
    if (rank && static_cast<int64_t>(this->rank()) != *rank) {
      return "scales or sizes have " + std::to_string(this->rank()) + " entries for rank " +
             std::to_string(*rank);
    }
    return {};
  }
  /// The output size of `axis` for an input of `in`: floor(in * scale) in float, as ONNX's shape
  /// inference and onnxruntime compute it, or the size given.
  int64_t output_size(std::size_t axis, int64_t in) const {
    if (!sizes.empty()) return sizes[axis];
    return static_cast<int64_t>(std::floor(static_cast<float>(in) * scales[axis]));
  }
  /// True when the scale of `axis` yields a resized length in * scale that is not whole (or not
  /// known), which align_corners and pytorch_half_pixel read: ONNX's reference takes that length,
  /// onnxruntime the whole output size, so the two disagree.
  bool fractional_length(std::size_t axis, const ir::Dim& in) const {
    if (scales.empty()) return false;
    const double scale = scales[axis];
    if (scale == std::floor(scale)) return false;
    if (!in.is_known()) return true;
    const double length = static_cast<double>(in.value) * scale;
    return length != std::floor(length);
  }
};

/// Empty when every attribute is one of Resize's (opsets 11 to 17) with its type, or an operand.
std::string check_attribute_types(const ir::Attributes& attrs) {
  for (const auto& [name, value] : attrs.items()) {
    const bool text = name == "mode" || name == "coordinate_transformation_mode" || name == "nearest_mode";
    const bool real = name == "cubic_coeff_a" || name == "extrapolation_value";
    const bool fits =
        (text && std::holds_alternative<std::string>(value)) ||
        (real && std::holds_alternative<float>(value)) ||
        (name == "exclude_outside" && std::holds_alternative<int64_t>(value)) ||
        ((name == "roi" || name == "scales") && std::holds_alternative<std::vector<float>>(value)) ||
        (name == "sizes" && std::holds_alternative<std::vector<int64_t>>(value));
    if (!fits) return "attribute '" + name + "' is not modelled with that type";
  }
  return {};
}

/// Why the interpolation attributes are not modelled, if they are not.
std::string method_reason(const ImportContext& context) {
  const std::string mode = context.attrs.get_string("mode", "nearest");
  const std::string transform = context.attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (mode == "cubic") return "cubic interpolation is not modelled";
  if (!lookup(kModes, mode)) return "unknown mode " + mode;
  if (transform == "tf_crop_and_resize")
    return "coordinate_transformation_mode tf_crop_and_resize is not modelled";
  if (transform == "tf_half_pixel_for_nn" && context.opset >= kWithoutTfHalfPixelOpset) {
    return "tf_half_pixel_for_nn is not defined from opset 13";
  }
  if (!lookup(kTransforms, transform)) return "unknown coordinate_transformation_mode " + transform;
  if (!Method::from(context.attrs))
    return "unknown nearest_mode " + context.attrs.get_string("nearest_mode", "");
  if (context.attrs.get_int("exclude_outside", 0) != 0) return "exclude_outside is not modelled";
  return {};
}

/// Empty when the element type has a kernel for the mode: nearest copies any fixed-size element,
/// linear interpolates float32 and float64.
std::string dtype_reason(Mode mode, DataType dtype) {
  if (dtype == DataType::kUndefined) return {};
  if (mode == Mode::kLinear && dtype != DataType::kFloat && dtype != DataType::kDouble) {
    return "linear interpolation of " + ir::to_string(dtype) + " has no reference kernel";
  }
  return ir::element_size(dtype) == 0 ? "no kernel for element type " + ir::to_string(dtype) : std::string{};
}

/// Sets every interpolation attribute; those the mode does not read take their defaults, so nodes
/// that compute the same thing carry equal attributes.
void fill_method(ir::Attributes& attrs, const Method& method) {
  attrs.set("mode", std::string(method.mode == Mode::kNearest ? "nearest" : "linear"));
  attrs.set("coordinate_transformation_mode",
            attrs.get_string("coordinate_transformation_mode", "half_pixel"));
  const std::string rounding = attrs.get_string("nearest_mode", "round_prefer_floor");
  attrs.set("nearest_mode", method.mode == Mode::kNearest ? rounding : std::string("round_prefer_floor"));
  attrs.set("cubic_coeff_a", -0.75f);
  attrs.set("exclude_outside", int64_t{0});
  attrs.set("extrapolation_value", 0.0f);
}

/// Empty unless the node reads a fractional resized length (see Target::fractional_length).
std::string length_reason(const Method& method, const Target& target, const ir::Shape& input) {
  if (!method.reads_resized_length()) return {};
  for (std::size_t axis = 0; axis < target.rank(); ++axis) {
    if (target.fractional_length(axis, dim_at(input, axis))) {
      return "a scale that does not give a whole resized length: ONNX and onnxruntime disagree on it";
    }
  }
  return {};
}

/// Canonical form: the interpolation attributes all set, and scales or sizes (roi and the
/// omitted one removed). In the run-time form the operands stay inputs.
/// Opset 18's attributes at the values that leave Resize as opset 13 defines it: antialias 0,
/// keep_aspect_ratio_policy "stretch", and axes naming every axis in order. Such attributes are
/// dropped; other values are not modelled (the node stays opaque).
std::string drop_opset18_defaults(ImportContext& context) {
  ir::Attributes& attrs = context.attrs;
  if (attrs.has("antialias")) {
    const ir::AttrValue* value = attrs.find("antialias");
    if (!std::holds_alternative<int64_t>(*value) || std::get<int64_t>(*value) != 0) return "antialias is not modelled";
    attrs.erase("antialias");
  }
  if (attrs.has("keep_aspect_ratio_policy")) {
    const ir::AttrValue* value = attrs.find("keep_aspect_ratio_policy");
    if (!std::holds_alternative<std::string>(*value) || std::get<std::string>(*value) != "stretch") {
      return "keep_aspect_ratio_policy other than stretch is not modelled";
    }
    attrs.erase("keep_aspect_ratio_policy");
  }
  if (attrs.has("axes")) {
    const ir::AttrValue* value = attrs.find("axes");
    const auto* axes = std::get_if<std::vector<int64_t>>(value);
    const std::optional<int64_t> rank = rank_of(context.input_types[0]);
    bool every_axis = axes && rank && static_cast<int64_t>(axes->size()) == *rank;
    for (std::size_t i = 0; every_axis && i < axes->size(); ++i) {
      const auto axis = static_cast<int64_t>(i);
      every_axis = (*axes)[i] == axis || (*axes)[i] == axis - *rank;
    }
    if (!every_axis) return "axes other than every axis in order are not modelled";
    attrs.erase("axes");
  }
  return {};
}

std::string canonicalize(ImportContext& context) {
  ir::Attributes& attrs = context.attrs;
  if (context.input_types.empty()) return "Resize takes an input";
  if (std::string reason = drop_opset18_defaults(context); !reason.empty()) return reason;
  std::string reason = first_reason({check_attribute_types(attrs), require_inputs(context, 1),
                                     require_outputs(context, 1), method_reason(context)});
  if (!reason.empty()) return reason;
  const Method method = *Method::from(attrs);
  const ir::TensorType& input = context.input_types[0];
  if (std::string error = dtype_reason(method.mode, input.dtype); !error.empty()) return error;
  fill_method(attrs, method);
  if (context.runtime_operands) return {};
  const Target target = Target::from(attrs);
  reason = target.check(rank_of(input));
  if (reason.empty()) reason = length_reason(method, target, input.shape);
  if (!reason.empty()) return reason;
  attrs.erase("roi");
  attrs.erase("scales");
  attrs.erase("sizes");
  if (!target.scales.empty()) attrs.set("scales", target.scales);
  if (!target.sizes.empty()) attrs.set("sizes", target.sizes);
  return {};
}

/// The output dim of `axis`: known for sizes or a known input; a scale of 1 keeps the input's dim.
ir::Dim output_dim(const Target& target, std::size_t axis, const ir::Dim& in, std::string& error) {
  if (in.is_known()) {
    const int64_t size = target.output_size(axis, in.value);
    if (in.value == 0 && size > 0) error = "cannot resize an empty axis to " + std::to_string(size);
    return ir::Dim::known(size);
  }
  if (!target.sizes.empty()) return ir::Dim::known(target.sizes[axis]);
  return target.scales[axis] == 1.0f ? in : ir::Dim{};
}

/// Empty when the method is modelled and has a kernel for `dtype`.
std::string check_method(const ir::Node& node, DataType dtype) {
  const std::optional<Method> method = Method::from(node.attrs);
  if (!method) return "unknown interpolation attributes";
  return dtype_reason(method->mode, dtype);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Resize takes one data input besides its operands");
  const ir::TensorType& in = inputs[0];
  const Target target = Target::from(node.attrs);
  std::string error = check_method(node, in.dtype);
  if (error.empty()) error = target.check(rank_of(in));
  ir::Shape out{true, {}};
  for (std::size_t axis = 0; error.empty() && axis < target.rank(); ++axis) {
    out.dims.push_back(output_dim(target, axis, dim_at(in.shape, axis), error));
  }
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{in.dtype, std::move(out)}}, {}};
}

/// The run-time form (X, roi, scales[, sizes]), omitted operands of undefined type: X's rank, every
/// size unknown.
InferResult infer_runtime(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() < 2 || inputs.size() > 4) return InferResult::failure("Resize takes 2 to 4 inputs");
  if (std::string error = check_method(node, inputs[0].dtype); !error.empty())
    return InferResult::failure(error);
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const DataType dtype = inputs[i].dtype;
    const bool fits =
        dtype == DataType::kUndefined ||
        (i == 3 ? dtype == DataType::kInt64
                : dtype == DataType::kFloat || dtype == DataType::kDouble || dtype == DataType::kFloat16);
    if (!fits)
      return InferResult::failure("operand " + std::to_string(i) + " has element type " +
                                  ir::to_string(dtype));
  }
  ir::TensorType out = inputs[0];
  for (ir::Dim& dim : out.shape.dims) dim = ir::Dim{};
  return InferResult{{out}, {}};
}

/// One axis of a resize: its input and output sizes and the scale the coordinates use (the given
/// one, or output / input for sizes).
struct AxisPlan {
  int64_t in;
  int64_t out;
  double scale;
};

std::vector<AxisPlan> plan_axes(const Target& target, const Method& method,
                                const std::vector<int64_t>& dims) {
  std::vector<AxisPlan> plans;
  for (std::size_t axis = 0; axis < dims.size(); ++axis) {
    const int64_t out = target.output_size(axis, dims[axis]);
    if (dims[axis] == 0 && out > 0) throw Error("Resize cannot enlarge an empty axis");
    if (method.reads_resized_length() && target.fractional_length(axis, ir::Dim::known(dims[axis]))) {
      throw Error("Resize: a scale that does not give a whole resized length is ambiguous in ONNX");
    }
    const double scale = target.sizes.empty() ? double{target.scales[axis]}
                                              : static_cast<double>(out) / static_cast<double>(dims[axis]);
    plans.push_back({dims[axis], out, scale});
  }
  return plans;
}

/// The input coordinate that output coordinate `x` samples (ONNX's formulas; pytorch_half_pixel
/// and align_corners read the whole output size, which Target::fractional_length makes equal to
/// the resized length).
double original_coordinate(Transform transform, double x, const AxisPlan& plan) {
  switch (transform) {
    case Transform::kHalfPixel: return (x + 0.5) / plan.scale - 0.5;
    case Transform::kPytorchHalfPixel: return plan.out > 1 ? (x + 0.5) / plan.scale - 0.5 : 0.0;
    case Transform::kAlignCorners:
      return plan.out == 1 ? 0.0 : x * static_cast<double>(plan.in - 1) / static_cast<double>(plan.out - 1);
    case Transform::kAsymmetric: return x / plan.scale;
    case Transform::kTfHalfPixelForNn: return (x + 0.5) / plan.scale;
  }
  return x;
}

/// The index nearest mode reads for input coordinate `x`, clamped into the axis.
int64_t nearest_index(Rounding rounding, double x, int64_t size) {
  const double below = std::floor(x);
  const double fraction = x - below;
  double index = below;
  switch (rounding) {
    case Rounding::kRoundPreferFloor: index = fraction <= 0.5 ? below : below + 1; break;
    case Rounding::kRoundPreferCeil: index = fraction < 0.5 ? below : below + 1; break;
    case Rounding::kFloor: break;
    case Rounding::kCeil: index = std::ceil(x); break;
  }
  return std::clamp(static_cast<int64_t>(index), int64_t{0}, size - 1);
}

/// Nearest: each output axis reads one input index per coordinate.
void resize_nearest(const Method& method, const std::vector<AxisPlan>& plans, const ir::Tensor& input,
                    ir::Tensor& output) {
  AxisMaps maps;
  for (const AxisPlan& plan : plans) {
    std::vector<int64_t> map(static_cast<std::size_t>(plan.out));
    for (int64_t x = 0; x < plan.out; ++x) {
      map[x] = nearest_index(method.rounding,
                             original_coordinate(method.transform, static_cast<double>(x), plan), plan.in);
    }
    maps.push_back(std::move(map));
  }
  copy_mapped(input, maps, nullptr, output);
}

/// One input index an output coordinate reads, and its weight.
struct Weighted {
  int64_t index;
  double weight;
};

/// Linear: per output coordinate, the two neighbours of its input coordinate (clamped into the
/// axis, as ONNX pads with edge values) weighted by distance; zero weights left out.
std::vector<std::vector<Weighted>> linear_weights(Transform transform, const AxisPlan& plan) {
  std::vector<std::vector<Weighted>> weights(static_cast<std::size_t>(plan.out));
  for (int64_t x = 0; x < plan.out; ++x) {
    const double at = original_coordinate(transform, static_cast<double>(x), plan);
    const double below = std::floor(at);
    const double fraction = at - below;
    const auto low = static_cast<int64_t>(below);
    weights[x].push_back({std::clamp(low, int64_t{0}, plan.in - 1), 1.0 - fraction});
    if (fraction != 0.0) weights[x].push_back({std::clamp(low + 1, int64_t{0}, plan.in - 1), fraction});
  }
  return weights;
}

/// True when every output coordinate reads the input coordinate it has, whole.
bool is_identity(const std::vector<std::vector<Weighted>>& weights, int64_t in) {
  if (static_cast<int64_t>(weights.size()) != in) return false;
  for (std::size_t x = 0; x < weights.size(); ++x) {
    if (weights[x].size() != 1 || weights[x][0].index != static_cast<int64_t>(x)) return false;
  }
  return true;
}

/// Interpolates `data` (sizes `dims`) along one axis, in double.
std::vector<double> resize_axis(const std::vector<double>& data, std::vector<int64_t>& dims, std::size_t axis,
                                const std::vector<std::vector<Weighted>>& weights) {
  const int64_t outer = product_of_sizes(dims, 0, axis);
  const int64_t inner = product_of_sizes(dims, axis + 1, dims.size());
  const int64_t in = dims[axis];
  const auto out = static_cast<int64_t>(weights.size());
  std::vector<double> result(static_cast<std::size_t>(outer * out * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t x = 0; x < out; ++x) {
      double* to = result.data() + (o * out + x) * inner;
      for (const Weighted& tap : weights[x]) {
        const double* from = data.data() + (o * in + tap.index) * inner;
        for (int64_t i = 0; i < inner; ++i) to[i] += tap.weight * from[i];
      }
    }
  }
  dims[axis] = out;
  return result;
}

/// Linear in n dimensions: one axis after the other (the weights are a tensor product), in double,
/// rounded once to T.
template <class T> void resize_linear(Transform transform, const std::vector<AxisPlan>& plans,
                                      const ir::Tensor& input, ir::Tensor& output) {
  std::vector<double> data(input.data<T>(), input.data<T>() + input.num_elements());
  std::vector<int64_t> dims = input.dims();
  for (std::size_t axis = 0; axis < plans.size(); ++axis) {
    const std::vector<std::vector<Weighted>> weights = linear_weights(transform, plans[axis]);
    if (!is_identity(weights, plans[axis].in)) data = resize_axis(data, dims, axis, weights);
  }
  std::transform(data.begin(), data.end(), output.mutable_data<T>(),
                 [](double v) { return static_cast<T>(v); });
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const Method method = *Method::from(node.attrs);
  const ir::Tensor& input = *inputs[0];
  const std::vector<AxisPlan> plans = plan_axes(Target::from(node.attrs), method, input.dims());
  if (method.mode == Mode::kNearest) return resize_nearest(method, plans, input, outputs[0]);
  dispatch_floating(input.dtype(), [&](auto tag) {
    resize_linear<decltype(tag)>(method.transform, plans, input, outputs[0]);
  });
}

/// Axes whose size or scale may change: every one, unless the target shows it keeps its size.
int resized_axes(const Target& target, const ir::TensorType& input, const ir::TensorType& output) {
  int count = 0;
  for (std::size_t axis = 0; axis < output.shape.rank(); ++axis) {
    const ir::Dim in = dim_at(input.shape, axis);
    const bool kept =
        axis < target.rank() && (target.sizes.empty() ? target.scales[axis] == 1.0f
                                                      : in.is_known() && in.value == target.sizes[axis]);
    count += kept ? 0 : 1;
  }
  return count;
}

/// Nearest moves elements; linear does a multiply-add per neighbour, 2^k neighbours per output
/// element for k resized axes. The input is read once and the output written once.
CostFeatures features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  CostFeatures cost = elementwise_features({inputs[0]}, outputs, 0);
  if (node.attrs.get_string("mode", "nearest") == "linear") {
    const int axes = resized_axes(Target::from(node.attrs), inputs[0], outputs[0]);
    cost.flops = 2 * std::ldexp(1.0, axes) * elements_or_one(outputs[0]);
  }
  return cost;
}

}  // namespace

OpDef resize_op() {
  OpDef def{ir::OpKind::kResize, "Resize", true, 11,
            {{1, "roi", 11, true}, {2, "scales", 11, true}, {3, "sizes", 11, false}},
            canonicalize, infer, kernel, features};
  def.infer_runtime = infer_runtime;
  return def;
}

}  // namespace graphsub::ops
