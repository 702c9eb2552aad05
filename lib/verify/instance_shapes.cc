// Proposers: for each op, small random input shapes and attributes that make a valid node.
#include "verify/instance_shapes.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <numeric>
#include <utility>
#include <variant>

#include "ops/registry.h"

namespace graphsub::verify {

int64_t draw_free_dim(const DrawSettings& settings, std::size_t axis) {
  if (axis < settings.usual_dims.size() && std::bernoulli_distribution(0.75)(*settings.rng)) {
    return settings.usual_dims[axis];
  }
  return std::uniform_int_distribution<int64_t>(1, settings.dim_limit)(*settings.rng);
}

namespace {

using Dims = std::vector<int64_t>;

// ---- Random draws.

int64_t uniform(const NodeDraw& draw, int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(*draw.settings.rng);
}

bool chance(const NodeDraw& draw, double probability) {
  return std::bernoulli_distribution(probability)(*draw.settings.rng);
}

template <class T>
T one_of(const NodeDraw& draw, const std::vector<T>& choices) {
  return choices[static_cast<std::size_t>(uniform(draw, 0, static_cast<int64_t>(choices.size()) - 1))];
}

int64_t draw_dim(const NodeDraw& draw, std::size_t axis) { return draw_free_dim(draw.settings, axis); }

Dims draw_dims(const NodeDraw& draw, int64_t rank) {
  Dims dims;
  for (int64_t axis = 0; axis < rank; ++axis) dims.push_back(draw_dim(draw, static_cast<std::size_t>(axis)));
  return dims;
}

/// A one-element shape: [], [1] or [1, 1], of rank at most `max_rank`.
Dims size_one_dims(const NodeDraw& draw, std::size_t max_rank) {
  const auto rank = uniform(draw, 0, static_cast<int64_t>(std::min<std::size_t>(max_rank, 2)));
  return Dims(static_cast<std::size_t>(rank), 1);
}

// ---- Inputs.

bool is_free(const NodeDraw& draw, std::size_t input) { return !draw.inputs[input].type; }

/// The sizes of a known input (the generator proposes only with static known shapes).
Dims dims_of(const NodeDraw& draw, std::size_t input) {
  return draw.inputs[input].type->shape.sizes().value_or(Dims{});
}

std::optional<Dims> known_dims(const NodeDraw& draw, std::size_t input) {
  if (input >= draw.inputs.size() || is_free(draw, input)) return std::nullopt;
  return dims_of(draw, input);
}

int64_t rank_for(const NodeDraw& draw, std::size_t input) {
  return draw.inputs[input].rank.value_or(draw.settings.default_rank);
}

void set_dims(NodeDraw& draw, std::size_t input, const Dims& dims) {
  draw.inputs[input].type = ir::TensorType{ir::DataType::kFloat, ir::Shape::of(dims)};
}

/// Gives a free input a drawn shape (one-element where the rule asks); returns its sizes.
Dims shape_input(NodeDraw& draw, std::size_t input) {
  if (!is_free(draw, input)) return dims_of(draw, input);
  const int64_t rank = rank_for(draw, input);
  const bool size_one = draw.inputs[input].size_one;
  set_dims(draw, input, size_one ? size_one_dims(draw, static_cast<std::size_t>(rank)) : draw_dims(draw, rank));
  return dims_of(draw, input);
}

std::optional<std::size_t> first_known(const NodeDraw& draw) {
  for (std::size_t i = 0; i < draw.inputs.size(); ++i) {
    if (!is_free(draw, i)) return i;
  }
  return std::nullopt;
}

// ---- Attributes.

/// Sets attribute `name` to the rule's fixed value when it has one of type T, else to `drawn`.
template <class T>
T pick(NodeDraw& draw, std::string_view name, T drawn) {
  const ir::AttrValue* fixed = draw.fixed.find(name);
  const T* given = fixed ? std::get_if<T>(fixed) : nullptr;
  T chosen = given ? *given : std::move(drawn);
  draw.attrs.set(name, chosen);
  return chosen;
}

void pick_activation(NodeDraw& draw) {
  pick(draw, "activation", one_of<std::string>(draw, {"none", "relu", "sigmoid", "tanh"}));
}

/// A drawn or fixed axis of a rank-`rank` tensor, made non-negative; nullopt when out of range.
std::optional<std::size_t> pick_axis(NodeDraw& draw, std::size_t rank) {
  const auto size = static_cast<int64_t>(rank);
  int64_t axis = pick(draw, "axis", uniform(draw, 0, std::max<int64_t>(size - 1, 0)));
  if (axis < 0) axis += size;
  if (axis < 0 || axis >= size) return std::nullopt;
  return static_cast<std::size_t>(axis);
}

std::string axis_error(std::size_t rank) { return "axis is out of range for rank " + std::to_string(rank); }

// ---- Broadcasting operands.

/// `dims` with some dims set to 1 and some leading dims dropped.
Dims masked(const NodeDraw& draw, const Dims& dims) {
  const auto dropped = uniform(draw, 0, static_cast<int64_t>(dims.size()));
  Dims result(dims.begin() + dropped, dims.end());
  for (int64_t& dim : result) {
    if (chance(draw, 0.5)) dim = 1;
  }
  return result;
}

/// A per-channel shape for [N, C, ...]: [C, 1, ...] or [1, C, 1, ...].
Dims per_channel(const NodeDraw& draw, const Dims& dims) {
  Dims result(dims.size(), 1);
  result[1] = dims[1];
  if (chance(draw, 0.5)) result.erase(result.begin());
  return result;
}

/// A shape that broadcasts to `dims` without changing it: most often `dims` itself.
Dims broadcast_variant(const NodeDraw& draw, const Dims& dims) {
  const int64_t kind = uniform(draw, 0, 5);
  if (kind <= 2) return dims;
  if (kind == 3) return chance(draw, 0.5) ? Dims{} : Dims{1};
  if (kind == 4 && dims.size() >= 2) return per_channel(draw, dims);
  return masked(draw, dims);
}

/// The shape of a free operand beside a known one: one-element where the rule asks; beside a
/// one-element operand a fresh shape; else one that broadcasts to the other's.
Dims operand_beside(const NodeDraw& draw, std::size_t input, std::size_t other) {
  const Dims others = dims_of(draw, other);
  if (draw.inputs[input].size_one) return size_one_dims(draw, others.size());
  if (!draw.inputs[other].size_one) return broadcast_variant(draw, others);
  return draw_dims(draw, std::max<int64_t>(rank_for(draw, input), static_cast<int64_t>(others.size())));
}

/// Add, Sub, Mul, Div, Sum of two: one operand drawn, the other broadcasting to it (or one-element).
std::string propose_binary(NodeDraw& draw) {
  if (is_free(draw, 0) && is_free(draw, 1)) {
    const bool second_first = draw.inputs[0].size_one || (!draw.inputs[1].size_one && chance(draw, 0.5));
    shape_input(draw, second_first ? 1 : 0);
  }
  for (std::size_t input : {std::size_t{0}, std::size_t{1}}) {
    if (is_free(draw, input)) set_dims(draw, input, operand_beside(draw, input, 1 - input));
  }
  return {};
}

// ---- Element-wise and data movement.

/// Relu, Sigmoid, Identity, Dropout, ...: any shape.
std::string propose_unary(NodeDraw& draw) {
  shape_input(draw, 0);
  return {};
}

/// Cast to float32 (to itself) or int64.
std::string propose_cast(NodeDraw& draw) {
  shape_input(draw, 0);
  const ir::DataType to = one_of<ir::DataType>(draw, {ir::DataType::kFloat, ir::DataType::kInt64});
  pick(draw, "to", static_cast<int64_t>(to));
  return {};
}

/// `dims` with one entry, drawn, replaced by `entry`.
Dims with_entry(const NodeDraw& draw, Dims dims, int64_t entry) {
  if (!dims.empty()) dims[static_cast<std::size_t>(uniform(draw, 0, static_cast<int64_t>(dims.size()) - 1))] = entry;
  return dims;
}

/// A Reshape's target for `dims`: most often the same sizes, perhaps with a -1 or a 0 (copy) in
/// one place, else every element in one row or one column, or in one dim of 1 to 4 whose others
/// are 1 (a bias [M] as [M, 1, 1], and back), its size perhaps written -1.
Dims reshape_target(const NodeDraw& draw, const Dims& dims) {
  const int64_t elements = ir::num_elements(dims);
  switch (uniform(draw, 0, 4)) {
    case 0: return dims;
    case 1: return with_entry(draw, dims, -1);
    case 2: return with_entry(draw, dims, 0);
    case 3: return chance(draw, 0.5) ? Dims{elements} : Dims{1, elements};
    default: {
      Dims units(static_cast<std::size_t>(uniform(draw, 1, 4)), 1);
      units[static_cast<std::size_t>(uniform(draw, 0, static_cast<int64_t>(units.size()) - 1))] =
          chance(draw, 0.5) ? elements : -1;
      return units;
    }
  }
}

/// Reshape: any shape, a target of as many elements.
std::string propose_reshape(NodeDraw& draw) {
  pick(draw, "shape", reshape_target(draw, shape_input(draw, 0)));
  return {};
}

/// Expand's shape operand, a constant: most often sizes the input has already (each dim or 1,
/// leading dims perhaps left out), else one that adds a leading dim.
std::string propose_expand(NodeDraw& draw) {
  const Dims dims = shape_input(draw, 0);
  if (!is_free(draw, 1)) return {};
  Dims target = chance(draw, 0.25) ? dims : masked(draw, dims);
  if (target == dims && chance(draw, 0.5)) target.insert(target.begin(), 2);
  const Dims length{static_cast<int64_t>(target.size())};
  draw.inputs[1].type = ir::TensorType{ir::DataType::kInt64, ir::Shape::of(length)};
  draw.inputs[1].data = ir::share(ir::Tensor::from_int64s(length, target));
  return {};
}

/// Concat: the free inputs are the known one (or a drawn shape) with their own size on the axis.
std::string propose_concat(NodeDraw& draw) {
  const std::optional<std::size_t> known = first_known(draw);
  const Dims reference = known ? dims_of(draw, *known) : draw_dims(draw, rank_for(draw, 0));
  const std::optional<std::size_t> axis = pick_axis(draw, reference.size());
  if (!axis) return axis_error(reference.size());
  for (std::size_t input = 0; input < draw.inputs.size(); ++input) {
    if (!is_free(draw, input)) continue;
    Dims dims = reference;
    dims[*axis] = draw_dim(draw, *axis);
    set_dims(draw, input, dims);
  }
  return {};
}

/// `parts` sizes of at least 1 that sum to `total`; empty when `total` is less than `parts`.
Dims composition(const NodeDraw& draw, int64_t total, int parts) {
  if (parts < 1 || total < parts) return {};
  Dims cuts(static_cast<std::size_t>(total - 1));
  std::iota(cuts.begin(), cuts.end(), 1);
  std::shuffle(cuts.begin(), cuts.end(), *draw.settings.rng);
  cuts.resize(static_cast<std::size_t>(parts - 1));
  cuts.push_back(total);
  std::sort(cuts.begin(), cuts.end());
  Dims sizes;
  std::adjacent_difference(cuts.begin(), cuts.end(), std::back_inserter(sizes));
  return sizes;
}

/// Split: one part per output, cut from a known input or summed into a drawn one.
std::string propose_split(NodeDraw& draw) {
  const bool free = is_free(draw, 0);
  Dims dims = free ? draw_dims(draw, rank_for(draw, 0)) : dims_of(draw, 0);
  const std::optional<std::size_t> axis = pick_axis(draw, dims.size());
  if (!axis) return axis_error(dims.size());
  Dims parts;
  for (int part = 0; free && part < draw.num_outputs; ++part) {
    parts.push_back(uniform(draw, 1, draw.settings.dim_limit));
  }
  if (!free) parts = composition(draw, dims[*axis], draw.num_outputs);
  if (parts.empty() && !draw.fixed.has("split")) {
    return "an axis of size " + std::to_string(dims[*axis]) + " does not split into " +
           std::to_string(draw.num_outputs) + " parts";
  }
  parts = pick(draw, "split", parts);
  dims[*axis] = std::accumulate(parts.begin(), parts.end(), int64_t{0});
  if (free) set_dims(draw, 0, dims);
  return {};
}

/// The rank of a Transpose's input: the fixed perm's length, the known input's, or the one asked for.
int64_t transpose_rank(const NodeDraw& draw) {
  const ir::AttrValue* fixed = draw.fixed.find("perm");
  if (const Dims* perm = fixed ? std::get_if<Dims>(fixed) : nullptr) return static_cast<int64_t>(perm->size());
  return is_free(draw, 0) ? rank_for(draw, 0) : static_cast<int64_t>(dims_of(draw, 0).size());
}

/// Transpose: a random permutation of the input's rank, unless the rule gives the perm.
/// Gather: the data drawn, an axis of size 2 or more, and constant int64 indices inside it, a
/// scalar or a short list (what a classifier picking one token writes, and a few picks).
std::string propose_gather(NodeDraw& draw) {
  const Dims x = shape_input(draw, 0);
  const std::optional<std::size_t> axis = pick_axis(draw, x.size());
  if (!axis) return axis_error(x.size());
  if (!is_free(draw, 1)) return "Gather's indices must be drawn with it";
  const int64_t size = x[*axis];
  const Dims length = chance(draw, 0.6) ? Dims{} : Dims{uniform(draw, 1, std::max<int64_t>(size - 1, 1))};
  std::vector<int64_t> indices(static_cast<std::size_t>(ir::num_elements(length)));
  for (int64_t& index : indices) index = uniform(draw, 0, size - 1);
  draw.inputs[1].type = ir::TensorType{ir::DataType::kInt64, ir::Shape::of(length)};
  draw.inputs[1].data = ir::share(ir::Tensor::from_int64s(length, indices));
  return {};
}

/// ReduceMean: the data drawn, a sorted set of axes of it and keepdims.
std::string propose_reduce(NodeDraw& draw) {
  const Dims x = shape_input(draw, 0);
  Dims axes;
  for (int64_t axis = 0; axis < static_cast<int64_t>(x.size()); ++axis) {
    if (chance(draw, 0.5)) axes.push_back(axis);
  }
  if (axes.empty() && !x.empty()) axes.push_back(static_cast<int64_t>(x.size()) - 1);
  pick(draw, "axes", axes);
  pick(draw, "keepdims", int64_t{chance(draw, 0.5) ? 1 : 0});
  return {};
}

/// Softmax: the data drawn and one of its axes.
std::string propose_softmax(NodeDraw& draw) {
  const Dims x = shape_input(draw, 0);
  if (!pick_axis(draw, x.size())) return axis_error(x.size());
  return {};
}

/// LayerNormalization: X drawn, an axis, and Scale and B of X's normalized dims.
std::string propose_layer_norm(NodeDraw& draw) {
  pick(draw, "epsilon", one_of<float>(draw, {1e-5f, 1e-3f}));
  const Dims x = shape_input(draw, 0);
  const std::optional<std::size_t> axis = pick_axis(draw, x.size());
  if (!axis) return axis_error(x.size());
  for (std::size_t input = 1; input < draw.inputs.size(); ++input) {
    if (is_free(draw, input)) set_dims(draw, input, Dims(x.begin() + static_cast<std::ptrdiff_t>(*axis), x.end()));
  }
  return {};
}

std::string propose_transpose(NodeDraw& draw) {
  Dims perm(static_cast<std::size_t>(transpose_rank(draw)));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), *draw.settings.rng);
  perm = pick(draw, "perm", perm);
  if (is_free(draw, 0)) set_dims(draw, 0, draw_dims(draw, static_cast<int64_t>(perm.size())));
  return {};
}

// ---- Matrix products.

/// The contracted size: A's last dim, or B's second to last (its only one for a vector).
int64_t inner_size(const NodeDraw& draw) {
  if (const std::optional<Dims> a = known_dims(draw, 0); a && !a->empty()) return a->back();
  if (const std::optional<Dims> b = known_dims(draw, 1); b && !b->empty()) {
    return (*b)[b->size() < 2 ? 0 : b->size() - 2];
  }
  return draw_dim(draw, 1);
}

/// MatMul's summand C: a shape that broadcasts to the product's without changing it.
std::string shape_summand(NodeDraw& draw) {
  ir::Node product;
  product.op = ir::OpKind::kMatMul;
  const ops::InferResult inferred =
      ops::op_def(ir::OpKind::kMatMul).infer(product, {*draw.inputs[0].type, *draw.inputs[1].type});
  if (!inferred.ok()) return inferred.error;
  set_dims(draw, 2, broadcast_variant(draw, inferred.outputs[0].shape.sizes().value_or(Dims{})));
  return {};
}

/// MatMul: A [..., M, K] and B [K, N] (or [..., K, N]) around one inner size; C broadcasts to the product.
std::string propose_mat_mul(NodeDraw& draw) {
  pick_activation(draw);
  const int64_t inner = inner_size(draw);
  if (is_free(draw, 0)) {
    Dims a = draw_dims(draw, std::max<int64_t>(rank_for(draw, 0), 1));
    a.back() = inner;
    set_dims(draw, 0, a);
  }
  if (is_free(draw, 1)) {
    Dims b = draw_dims(draw, std::max<int64_t>(rank_for(draw, 1), 1));
    b[b.size() < 2 ? 0 : b.size() - 2] = inner;
    set_dims(draw, 1, b);
  }
  return draw.inputs.size() > 2 && is_free(draw, 2) ? shape_summand(draw) : std::string{};
}

// ---- Sliding windows: Conv and pools.

/// The geometry of a Conv or pool.
struct Window {
  Dims kernel;
  Dims strides;
  Dims pads;  ///< Begins, then ends.
  Dims dilations;

  std::size_t rank() const { return kernel.size(); }
  int64_t extent(std::size_t axis) const { return dilations[axis] * (kernel[axis] - 1) + 1; }
  int64_t padding(std::size_t axis) const { return pads[axis] + pads[axis + rank()]; }
  /// The smallest input size the window fits along `axis`.
  int64_t least_input(std::size_t axis) const { return std::max<int64_t>(1, extent(axis) - padding(axis)); }
  /// Output size along `axis` (without ceil_mode).
  int64_t output(std::size_t axis, int64_t input) const {
    return (input + padding(axis) - extent(axis)) / strides[axis] + 1;
  }
};

/// Pads of 0 or 1 (below the kernel for pools), most often equal at both ends of an axis; for a
/// convolution of a kernel larger than 3, up to half of it (a 7x7 kernel's pads of 3, which a
/// 3x3 one's of 1 plus 2 makes, where a rule sums the two).
Dims draw_pads(const NodeDraw& draw, const Dims& kernel, bool is_conv) {
  const std::size_t rank = kernel.size();
  Dims pads(2 * rank);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    const int64_t most =
        is_conv ? std::max<int64_t>(1, (kernel[axis] - 1) / 2) : std::min<int64_t>(1, kernel[axis] - 1);
    pads[axis] = uniform(draw, 0, most);
    pads[axis + rank] = chance(draw, 0.75) ? pads[axis] : uniform(draw, 0, most);
  }
  return pads;
}

bool all_positive(const Dims& values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v > 0; });
}

/// Picks kernel_shape (drawn: `kernel`), strides, pads and, for Conv, dilations.
std::string pick_window(NodeDraw& draw, const Dims& kernel, bool is_conv, Window& window) {
  window.kernel = pick(draw, "kernel_shape", kernel);
  const std::size_t rank = window.rank();
  window.strides = pick(draw, "strides", Dims(rank, uniform(draw, 1, 2)));
  window.pads = pick(draw, "pads", draw_pads(draw, window.kernel, is_conv));
  const Dims dilations(rank, is_conv && chance(draw, 0.2) ? 2 : 1);
  window.dilations = is_conv ? pick(draw, "dilations", dilations) : dilations;
  if (window.strides.size() != rank || window.pads.size() != 2 * rank || window.dilations.size() != rank) {
    return "strides, pads and dilations do not fit kernel_shape";
  }
  const bool valid = rank > 0 && all_positive(window.kernel) && all_positive(window.strides) &&
                     all_positive(window.dilations);
  return valid ? std::string{} : "kernel_shape, strides and dilations must be positive";
}

/// A drawn spatial input size along `axis`, at least what the window needs.
int64_t spatial_input(const NodeDraw& draw, const Window& window, std::size_t axis) {
  return std::max(window.least_input(axis), draw_dim(draw, axis + 2));
}

/// A small input size whose output along `axis` is `output`; 0 when there is none.
int64_t input_for_output(const NodeDraw& draw, const Window& window, std::size_t axis, int64_t output) {
  const int64_t usual = spatial_input(draw, window, axis);
  if (window.output(axis, usual) == output) return usual;
  const int64_t least = window.least_input(axis);
  for (int64_t input = least; input <= least + output * window.strides[axis]; ++input) {
    if (window.output(axis, input) == output) return input;
  }
  return 0;
}

/// [N, C, spatial...] with spatial sizes the window fits.
Dims pooled_input(const NodeDraw& draw, const Window& window, int64_t channels) {
  Dims dims{std::min<int64_t>(draw_dim(draw, 0), 2), channels};
  for (std::size_t axis = 0; axis < window.rank(); ++axis) dims.push_back(spatial_input(draw, window, axis));
  return dims;
}

Dims square(const NodeDraw& draw, int64_t rank, const std::vector<int64_t>& sizes) {
  return Dims(static_cast<std::size_t>(std::max<int64_t>(rank, 1)), one_of(draw, sizes));
}

/// AveragePool and MaxPool: a square kernel of 1 to 3, pads below it.
std::string propose_pool(NodeDraw& draw) {
  const std::optional<Dims> x = known_dims(draw, 0);
  Window window;
  const int64_t rank = x ? static_cast<int64_t>(x->size()) - 2 : 2;
  std::string reason = pick_window(draw, square(draw, rank, {1, 2, 3}), false, window);
  if (!reason.empty()) return reason;
  pick(draw, "ceil_mode", uniform(draw, 0, 1));
  if (!x) set_dims(draw, 0, pooled_input(draw, window, draw_dim(draw, 1)));
  return {};
}

std::string propose_average_pool(NodeDraw& draw) {
  pick(draw, "count_include_pad", uniform(draw, 0, 1));
  return propose_pool(draw);
}

/// Group, input channels and filters of a Conv.
struct ConvChannels {
  int64_t group = 1;
  int64_t channels = 1;
  int64_t filters = 1;
};

Dims divisors(int64_t value) {
  Dims result;
  for (int64_t d = 1; d <= value; ++d) {
    if (value % d == 0) result.push_back(d);
  }
  return result.empty() ? Dims{1} : result;
}

/// The group: a divisor of a count a known operand gives, else 1 to 3 (an odd group above one
/// for the regrouping of odd groups, rules/group.rules).
int64_t draw_group(const NodeDraw& draw, std::optional<int64_t> count) {
  if (count) return one_of(draw, divisors(*count));
  return uniform(draw, 1, std::min<int64_t>(3, draw.settings.dim_limit));
}

/// Channels and filters from the known X, W or residual Z, else drawn as multiples of the group.
std::string conv_channels(NodeDraw& draw, ConvChannels& sizes) {
  const std::optional<Dims> x = known_dims(draw, 0);
  const std::optional<Dims> w = known_dims(draw, 1);
  const std::optional<Dims> z = known_dims(draw, 3);
  std::optional<int64_t> count;
  if (z) count = (*z)[1];
  if (w) count = (*w)[0];
  if (x) count = (*x)[1];
  sizes.group = pick(draw, "group", draw_group(draw, count));
  if (sizes.group < 1) return "group must be positive";
  sizes.channels = x ? (*x)[1] : w ? (*w)[1] * sizes.group : sizes.group * draw_dim(draw, 1);
  sizes.filters = w ? (*w)[0] : z ? (*z)[1] : sizes.group * draw_dim(draw, 1);
  const std::string group = "group " + std::to_string(sizes.group) + " does not divide ";
  if (sizes.channels % sizes.group != 0) return group + std::to_string(sizes.channels) + " channels";
  if (sizes.filters % sizes.group != 0) return group + std::to_string(sizes.filters) + " filters";
  return {};
}

/// X [N, C, spatial...]: batch and spatial sizes from a known residual Z (which the output must
/// equal), else drawn.
std::string shape_conv_input(NodeDraw& draw, const Window& window, const ConvChannels& sizes) {
  const std::optional<Dims> z = known_dims(draw, 3);
  if (!z) {
    set_dims(draw, 0, pooled_input(draw, window, sizes.channels));
    return {};
  }
  Dims x{(*z)[0], sizes.channels};
  for (std::size_t axis = 0; axis < window.rank(); ++axis) {
    x.push_back(input_for_output(draw, window, axis, (*z)[axis + 2]));
    if (x.back() == 0) return "no small input gives the residual's size " + ir::to_string(ir::Shape::of(*z));
  }
  set_dims(draw, 0, x);
  return {};
}

/// Y's sizes for the input X; empty when the window does not fit X.
Dims conv_output(const NodeDraw& draw, const Window& window, int64_t filters) {
  const Dims x = dims_of(draw, 0);
  Dims y{x[0], filters};
  for (std::size_t axis = 0; axis < window.rank(); ++axis) y.push_back(window.output(axis, x[axis + 2]));
  return all_positive(y) ? y : Dims{};
}

/// The kernel Conv is drawn with: W's spatial sizes when W is known, else square, 1 or 3.
Dims conv_kernel(const NodeDraw& draw) {
  if (const std::optional<Dims> w = known_dims(draw, 1); w && w->size() > 2) return Dims(w->begin() + 2, w->end());
  const std::optional<Dims> x = known_dims(draw, 0);
  return square(draw, x ? static_cast<int64_t>(x->size()) - 2 : 2, {1, 3});
}

/// Empty when the known X, W and residual Z have the rank of the window plus 2.
std::string check_conv_ranks(const NodeDraw& draw, const Window& window) {
  for (std::size_t input : {0, 1, 3}) {
    const std::optional<Dims> dims = known_dims(draw, input);
    if (dims && dims->size() != window.rank() + 2) {
      return "an operand of rank " + std::to_string(dims->size()) + " does not fit a " +
             std::to_string(window.rank()) + "-d kernel";
    }
  }
  return {};
}

/// Shapes W [M, C/group, kernel...], B [M] and the residual Z as the output.
std::string shape_conv_operands(NodeDraw& draw, const Window& window, const ConvChannels& sizes) {
  if (is_free(draw, 1)) {
    Dims w{sizes.filters, sizes.channels / sizes.group};
    w.insert(w.end(), window.kernel.begin(), window.kernel.end());
    set_dims(draw, 1, w);
  }
  if (draw.inputs.size() > 2 && is_free(draw, 2)) set_dims(draw, 2, {sizes.filters});
  if (draw.inputs.size() < 4 || !is_free(draw, 3)) return {};
  const Dims y = conv_output(draw, window, sizes.filters);
  if (y.empty()) return "the window does not fit X " + ir::to_string(draw.inputs[0].type->shape);
  set_dims(draw, 3, y);
  return {};
}

/// Conv: X, W, optional B and residual Z around one window, group and activation.
std::string propose_conv(NodeDraw& draw) {
  pick_activation(draw);
  Window window;
  ConvChannels sizes;
  std::string reason = pick_window(draw, conv_kernel(draw), true, window);
  if (reason.empty()) reason = check_conv_ranks(draw, window);
  if (reason.empty()) reason = conv_channels(draw, sizes);
  if (reason.empty() && is_free(draw, 0)) reason = shape_conv_input(draw, window, sizes);
  return reason.empty() ? shape_conv_operands(draw, window, sizes) : reason;
}

/// Enlarge: W [M, C, k...] that kernel_shape (the rule's, else 3 x 3) grows by an even amount per
/// axis: each kernel size its target or the smallest of the target's parity.
std::string propose_enlarge(NodeDraw& draw) {
  const Dims target = pick(draw, "kernel_shape", Dims{3, 3});
  if (!is_free(draw, 0)) return {};
  Dims w{draw_dim(draw, 0), draw_dim(draw, 1)};
  for (int64_t size : target) w.push_back(chance(draw, 0.5) ? size : 2 - size % 2);
  set_dims(draw, 0, w);
  return {};
}

/// BatchNormalization: per-channel scale, B, mean and var for X [N, C, ...].
std::string propose_batch_norm(NodeDraw& draw) {
  pick(draw, "epsilon", one_of<float>(draw, {1e-5f, 1e-3f}));
  const Dims x = shape_input(draw, 0);
  if (x.size() < 2) return "X must have rank 2 or more";
  for (std::size_t input = 1; input < draw.inputs.size(); ++input) {
    if (is_free(draw, input)) set_dims(draw, input, {x[1]});
  }
  return {};
}

// ---- Rank facts.

/// The length of a literal list setting `name`, if the node has one.
std::optional<int64_t> literal_length(const rules::PatternNode& node, const std::string& name) {
  for (const rules::AttrSetting& setting : node.attrs) {
    if (setting.name == name && setting.value.kind == rules::Expr::Kind::kList) {
      return static_cast<int64_t>(setting.value.operands.size());
    }
  }
  return std::nullopt;
}

RankFacts conv_ranks(const rules::PatternNode& node) {
  const int64_t rank = literal_length(node, "kernel_shape").value_or(2) + 2;
  return RankFacts{{rank, rank, 1, rank}, rank, false};
}

RankFacts pool_ranks(const rules::PatternNode& node) {
  const int64_t rank = literal_length(node, "kernel_shape").value_or(2) + 2;
  return RankFacts{{rank}, rank, false};
}

RankFacts enlarge_ranks(const rules::PatternNode& node) {
  const int64_t rank = literal_length(node, "kernel_shape").value_or(2) + 2;
  return RankFacts{{rank}, rank, false};
}

RankFacts batch_norm_ranks(const rules::PatternNode&) { return RankFacts{{4, 1, 1, 1, 1}, 4, false}; }

RankFacts global_pool_ranks(const rules::PatternNode&) { return RankFacts{{4}, 4, false}; }

RankFacts mat_mul_ranks(const rules::PatternNode&) { return RankFacts{{2, 2}, 2, false}; }

RankFacts transpose_ranks(const rules::PatternNode& node) {
  const std::optional<int64_t> rank = literal_length(node, "perm");
  return rank ? RankFacts{{rank}, rank, false} : RankFacts{{}, std::nullopt, true};
}

RankFacts same_rank(const rules::PatternNode&) { return RankFacts{{}, std::nullopt, true}; }

RankFacts no_ranks(const rules::PatternNode&) { return RankFacts{}; }

// ---- The list.

/// How one op is drawn: how many inputs it takes, its proposer and its rank facts.
struct OpDraw {
  ir::OpKind op;
  std::size_t min_inputs;
  std::size_t max_inputs;
  std::string (*propose)(NodeDraw&);
  RankFacts (*ranks)(const rules::PatternNode&);
};

constexpr std::size_t kAny = std::numeric_limits<std::size_t>::max();

const std::vector<OpDraw>& op_draws() {
  static const std::vector<OpDraw> draws = {
      {ir::OpKind::kConv, 2, 4, propose_conv, conv_ranks},
      {ir::OpKind::kAveragePool, 1, 1, propose_average_pool, pool_ranks},
      {ir::OpKind::kMaxPool, 1, 1, propose_pool, pool_ranks},
      {ir::OpKind::kGlobalAveragePool, 1, 1, propose_unary, global_pool_ranks},
      {ir::OpKind::kEnlarge, 1, 1, propose_enlarge, enlarge_ranks},
      {ir::OpKind::kBatchNormalization, 5, 5, propose_batch_norm, batch_norm_ranks},
      {ir::OpKind::kMatMul, 2, 3, propose_mat_mul, mat_mul_ranks},
      {ir::OpKind::kAdd, 2, 2, propose_binary, same_rank},
      {ir::OpKind::kSub, 2, 2, propose_binary, same_rank},
      {ir::OpKind::kMul, 2, 2, propose_binary, same_rank},
      {ir::OpKind::kDiv, 2, 2, propose_binary, same_rank},
      {ir::OpKind::kSum, 2, 2, propose_binary, same_rank},
      {ir::OpKind::kRelu, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kSigmoid, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kTanh, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kExp, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kErf, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kGelu, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kPow, 2, 2, propose_binary, same_rank},
      {ir::OpKind::kReduceMean, 1, 1, propose_reduce, no_ranks},
      {ir::OpKind::kGather, 2, 2, propose_gather, no_ranks},
      {ir::OpKind::kLayerNormalization, 2, 3, propose_layer_norm, no_ranks},
      {ir::OpKind::kSoftmax, 1, 1, propose_softmax, same_rank},
      {ir::OpKind::kNeg, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kAbs, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kSqrt, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kReciprocal, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kIdentity, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kDropout, 1, 1, propose_unary, same_rank},
      {ir::OpKind::kCast, 1, 1, propose_cast, same_rank},
      {ir::OpKind::kTranspose, 1, 1, propose_transpose, transpose_ranks},
      {ir::OpKind::kConcat, 1, kAny, propose_concat, same_rank},
      {ir::OpKind::kSplit, 1, 1, propose_split, same_rank},
      {ir::OpKind::kReshape, 1, 1, propose_reshape, no_ranks},
      {ir::OpKind::kExpand, 2, 2, propose_expand, no_ranks},
  };
  return draws;
}

const OpDraw* op_draw(ir::OpKind op) {
  for (const OpDraw& draw : op_draws()) {
    if (draw.op == op) return &draw;
  }
  return nullptr;
}

}  // namespace

std::string propose_node(ir::OpKind op, NodeDraw& draw) {
  const OpDraw* entry = op_draw(op);
  if (!entry) return std::string("no proposer draws ") + ops::kind_name(op) + " nodes";
  const std::size_t count = draw.inputs.size();
  if (count < entry->min_inputs || count > entry->max_inputs) {
    return "a node of " + std::to_string(count) + " inputs is not drawn";
  }
  return entry->propose(draw);
}

RankFacts rank_facts(const rules::PatternNode& node) {
  const OpDraw* entry = op_draw(node.op);
  return entry ? entry->ranks(node) : RankFacts{};
}

}  // namespace graphsub::verify
