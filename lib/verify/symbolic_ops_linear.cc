// Symbolic convolutions, matrix products, pools, batch normalization and reductions.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "ops/common.h"
#include "ops/sliding_window.h"
#include "ops/strided_offset.h"
#include "verify/symbolic_ops.h"

namespace graphsub::verify::symbolic {
namespace {

/// The spatial sizes of [N, C, spatial...].
std::vector<int64_t> spatial_of(const std::vector<int64_t>& dims) { return {dims.begin() + 2, dims.end()}; }

/// The taps of every output position of a window scan, in the kernel's order.
std::vector<std::vector<ops::Tap>> taps_by_position(const ops::WindowScan& scan) {
  std::vector<std::vector<ops::Tap>> taps(static_cast<std::size_t>(scan.positions()));
  for (int64_t position = 0; position < scan.positions(); ++position) scan.taps(position, taps[position]);
  return taps;
}

/// The exact 1/count.
z3::expr inverse_of_count(Semantics& semantics, int64_t count) {
  if (count == 0) throw NoSemantics("an average over no elements");
  return exact_inverse(semantics.context().real_val(count));
}

/// factor · x, or x itself when the factor is 1.
z3::expr scaled(Semantics& semantics, float factor, const z3::expr& x) {
  return factor == 1.0f ? x : semantics.number(factor) * x;
}

/// Sizes of one convolution, read from its operands as the reference kernel reads them.
struct ConvSizes {
  int64_t channels;
  int64_t filters;
  int64_t group;
  int64_t kernel_block;  ///< Elements of one kernel: prod(kernel_shape).
  int64_t input_block;   ///< Elements of one input spatial block.
  int64_t positions;     ///< Elements of one output spatial block.

  int64_t group_channels() const { return channels / group; }
  int64_t group_filters() const { return filters / group; }
};

/// The sum over filter f's group of channels and the taps of one window, for image n.
z3::expr convolve(const OpCall& call, const ConvSizes& sizes, int64_t n, int64_t f,
                  const std::vector<ops::Tap>& taps) {
  const SymTensor& x = call.input(0);
  const SymTensor& w = call.input(1);
  const int64_t first_channel = n * sizes.channels + f / sizes.group_filters() * sizes.group_channels();
  z3::expr_vector terms(call.semantics.context());
  for (int64_t c = 0; c < sizes.group_channels(); ++c) {
    const int64_t kernel = (f * sizes.group_channels() + c) * sizes.kernel_block;
    const int64_t image = (first_channel + c) * sizes.input_block;
    for (const ops::Tap& tap : taps) {
      terms.push_back(w.elements[kernel + tap.kernel] * x.elements[image + tap.input]);
    }
  }
  return sum_of(call.semantics.context(), terms);
}

/// act((value + B[f]) + Z[flat]): the kernel's epilogue, B and Z where present.
z3::expr conv_epilogue(const OpCall& call, z3::expr value, int64_t f, int64_t flat) {
  if (call.has_input(2)) value = value + call.input(2).elements[f];
  if (call.has_input(3)) value = value + call.input(3).elements[flat];
  return activate(call.semantics, call.node.attrs.get_string("activation", "none"), value);
}

/// A matrix operand's sizes: a 1-D left operand is a row, a 1-D right one a column.
std::vector<int64_t> as_matrices(const std::vector<int64_t>& dims, bool is_left) {
  if (dims.size() != 1) return dims;
  return is_left ? std::vector<int64_t>{1, dims[0]} : std::vector<int64_t>{dims[0], 1};
}

/// The batch sizes of a stack of matrices [batch..., rows, columns].
std::vector<int64_t> batch_of(const std::vector<int64_t>& matrices) {
  return {matrices.begin(), matrices.end() - 2};
}

/// The batched product of MatMul's operands, as a stack of [m, n] matrices in row-major order.
struct Product {
  const SymTensor& a;
  const SymTensor& b;
  int64_t m;  ///< Rows of a product matrix.
  int64_t k;  ///< The inner dimension.
  int64_t n;  ///< Columns of a product matrix.
  std::vector<int64_t> batch;
  std::vector<int64_t> a_strides;  ///< In whole matrices, 0 along broadcast batch axes.
  std::vector<int64_t> b_strides;

  Product(const SymTensor& left, const SymTensor& right) : a(left), b(right) {
    const std::vector<int64_t> a_dims = as_matrices(a.dims, true);
    const std::vector<int64_t> b_dims = as_matrices(b.dims, false);
    m = a_dims[a_dims.size() - 2];
    k = a_dims.back();
    n = b_dims.back();
    batch = ops::broadcast_sizes(batch_of(a_dims), batch_of(b_dims));
    a_strides = ops::broadcast_strides(batch_of(a_dims), batch);
    b_strides = ops::broadcast_strides(batch_of(b_dims), batch);
  }

  /// Element `flat` of the product: sum over k of A[.., row, j] * B[.., j, col].
  z3::expr element(z3::context& context, int64_t flat) const {
    const int64_t matrix = flat / (m * n);
    const int64_t row = flat / n % m;
    const int64_t col = flat % n;
    const int64_t a_first = ops::strided_offset(matrix, batch, a_strides) * m * k + row * k;
    const int64_t b_first = ops::strided_offset(matrix, batch, b_strides) * k * n + col;
    z3::expr_vector terms(context);
    for (int64_t j = 0; j < k; ++j) terms.push_back(a.elements[a_first + j] * b.elements[b_first + j * n]);
    return sum_of(context, terms);
  }
};

/// Element (i, j) of Gemm's A' · B', each operand read through its transpose flag.
z3::expr gemm_product(const OpCall& call, int64_t k, int64_t i, int64_t j) {
  const SymTensor& a = call.input(0);
  const SymTensor& b = call.input(1);
  const bool trans_a = call.node.attrs.get_int("transA", 0) != 0;
  const bool trans_b = call.node.attrs.get_int("transB", 0) != 0;
  z3::expr_vector terms(call.semantics.context());
  for (int64_t t = 0; t < k; ++t) {
    const z3::expr& left = trans_a ? a.elements[t * a.dims[1] + i] : a.elements[i * k + t];
    const z3::expr& right = trans_b ? b.elements[j * k + t] : b.elements[t * b.dims[1] + j];
    terms.push_back(left * right);
  }
  return sum_of(call.semantics.context(), terms);
}

/// The elements of input 0 that each output element of a reduction over the node's `axes`
/// (none reduced when empty) reads, in the input's order.
std::vector<z3::expr_vector> reduced_slots(const OpCall& call) {
  const SymTensor& x = call.input(0);
  std::vector<int64_t> kept = x.dims;
  for (int64_t axis : call.node.attrs.get_ints("axes", {})) kept.at(axis) = 1;
  const std::vector<int64_t> strides = ops::broadcast_strides(kept, x.dims);
  std::vector<z3::expr_vector> slots;
  for (int64_t i = 0; i < ir::num_elements(kept); ++i) slots.emplace_back(call.semantics.context());
  for (int64_t i = 0; i < x.size(); ++i) {
    slots[ops::strided_offset(i, x.dims, strides)].push_back(x.elements[i]);
  }
  return slots;
}

/// The sums of input 0 over the node's `axes`, one per output element, and how many elements
/// each sums.
std::pair<SymTensor, int64_t> reduce(const OpCall& call) {
  const std::vector<z3::expr_vector> slots = reduced_slots(call);
  SymTensor out{call.output_dims(0), {}};
  for (const z3::expr_vector& slot : slots) out.elements.push_back(sum_of(call.semantics.context(), slot));
  const int64_t outputs = std::max<int64_t>(static_cast<int64_t>(slots.size()), 1);
  return {out, call.input(0).size() / outputs};
}

/// The largest of `values` (not empty), exactly: a chain of ite in their order, as the kernels
/// compare them.
z3::expr largest_of(const z3::expr_vector& values) {
  z3::expr best = values[0];
  for (unsigned i = 1; i < values.size(); ++i) best = z3::ite(values[i] > best, values[i], best);
  return best;
}

}  // namespace

std::vector<SymTensor> conv(const OpCall& call) {
  const SymTensor& x = call.input(0);
  const std::vector<int64_t> dims = call.output_dims(0);
  const ops::WindowScan scan(ops::SlidingWindow::from(call.node.attrs), spatial_of(x.dims), spatial_of(dims));
  const ConvSizes sizes{x.dims[1],
                        call.input(1).dims[0],
                        call.node.attrs.get_int("group", 1),
                        ir::num_elements(spatial_of(call.input(1).dims)),
                        scan.input_block(),
                        scan.positions()};
  const std::vector<std::vector<ops::Tap>> taps = taps_by_position(scan);
  return {generate(dims, [&](int64_t flat) {
    const int64_t row = flat / sizes.positions;
    const int64_t f = row % sizes.filters;
    const z3::expr sum = convolve(call, sizes, row / sizes.filters, f, taps[flat % sizes.positions]);
    return conv_epilogue(call, sum, f, flat);
  })};
}

std::vector<SymTensor> mat_mul(const OpCall& call) {
  const Product product(call.input(0), call.input(1));
  const std::vector<int64_t> dims = call.output_dims(0);
  const std::string activation = call.node.attrs.get_string("activation", "none");
  std::vector<int64_t> c_strides;
  if (call.has_input(2)) c_strides = ops::broadcast_strides(call.input(2).dims, dims);
  return {generate(dims, [&](int64_t flat) {
    z3::expr value = product.element(call.semantics.context(), flat);
    if (call.has_input(2)) value = value + call.input(2).elements[ops::strided_offset(flat, dims, c_strides)];
    return activate(call.semantics, activation, value);
  })};
}

std::vector<SymTensor> gemm(const OpCall& call) {
  const std::vector<int64_t> dims = call.output_dims(0);
  const int64_t k = call.input(0).dims[call.node.attrs.get_int("transA", 0) != 0 ? 0 : 1];
  const float alpha = call.node.attrs.get_float("alpha", 1.0f);
  const float beta = call.node.attrs.get_float("beta", 1.0f);
  std::vector<int64_t> c_strides;
  if (call.has_input(2)) c_strides = ops::broadcast_strides(call.input(2).dims, dims);
  return {generate(dims, [&](int64_t flat) {
    const int64_t i = flat / dims[1];
    const int64_t j = flat % dims[1];
    const z3::expr product = scaled(call.semantics, alpha, gemm_product(call, k, i, j));
    if (!call.has_input(2)) return product;
    const z3::expr& c = call.input(2).elements[i * c_strides[0] + j * c_strides[1]];
    return product + scaled(call.semantics, beta, c);
  })};
}

std::vector<SymTensor> average_pool(const OpCall& call) {
  const SymTensor& x = call.input(0);
  const std::vector<int64_t> dims = call.output_dims(0);
  const ops::WindowScan scan(ops::SlidingWindow::from(call.node.attrs), spatial_of(x.dims), spatial_of(dims));
  const bool include_pad = call.node.attrs.get_int("count_include_pad", 0) != 0;
  const std::vector<std::vector<ops::Tap>> taps = taps_by_position(scan);
  return {generate(dims, [&](int64_t flat) {
    const int64_t position = flat % scan.positions();
    const int64_t image = flat / scan.positions() * scan.input_block();
    z3::expr_vector terms(call.semantics.context());
    for (const ops::Tap& tap : taps[position]) terms.push_back(x.elements[image + tap.input]);
    const int64_t count =
        include_pad ? scan.padded_count(position) : static_cast<int64_t>(taps[position].size());
    return sum_of(call.semantics.context(), terms) * inverse_of_count(call.semantics, count);
  })};
}

std::vector<SymTensor> max_pool(const OpCall& call) {
  const SymTensor& x = call.input(0);
  const std::vector<int64_t> dims = call.output_dims(0);
  const ops::WindowScan scan(ops::SlidingWindow::from(call.node.attrs), spatial_of(x.dims), spatial_of(dims));
  const std::vector<std::vector<ops::Tap>> taps = taps_by_position(scan);
  return {generate(dims, [&](int64_t flat) {
    const int64_t position = flat % scan.positions();
    const int64_t image = flat / scan.positions() * scan.input_block();
    // The kernel's max over the taps inside the input, in its order (padding never wins).
    if (taps[position].empty()) throw NoSemantics("a max-pooling window over padding only");
    z3::expr_vector window(call.semantics.context());
    for (const ops::Tap& tap : taps[position]) window.push_back(x.elements[image + tap.input]);
    return largest_of(window);
  })};
}

std::vector<SymTensor> global_average_pool(const OpCall& call) {
  const SymTensor& x = call.input(0);
  const int64_t block = ir::num_elements(spatial_of(x.dims));
  const z3::expr scale = inverse_of_count(call.semantics, block);
  return {generate(call.output_dims(0), [&](int64_t plane) {
    z3::expr_vector terms(call.semantics.context());
    for (int64_t i = 0; i < block; ++i) terms.push_back(x.elements[plane * block + i]);
    return sum_of(call.semantics.context(), terms) * scale;
  })};
}

std::vector<SymTensor> batch_normalization(const OpCall& call) {
  const SymTensor& x = call.input(0);
  const int64_t channels = x.dims[1];
  const int64_t block = ir::num_elements(spatial_of(x.dims));
  const z3::expr epsilon = call.semantics.number(call.node.attrs.get_float("epsilon", 1e-5f));
  std::vector<z3::expr> factors;
  for (int64_t c = 0; c < channels; ++c) {
    const z3::expr root = call.semantics.apply("sqrt", call.input(4).elements[c] + epsilon);
    factors.push_back(reciprocal(call.semantics, root));
  }
  return {generate(x.dims, [&](int64_t flat) {
    const int64_t c = flat / block % channels;
    return (x.elements[flat] - call.input(3).elements[c]) * factors[c] * call.input(1).elements[c] +
           call.input(2).elements[c];
  })};
}

/// The element of `parameter` (broadcast to `dims` from the trailing axes, as LayerNormalization's
/// Scale and B are) that element `flat` of a tensor of `dims` reads.
const z3::expr& broadcast_element(const SymTensor& parameter, const std::vector<int64_t>& dims, int64_t flat) {
  const std::size_t offset = dims.size() - parameter.dims.size();
  int64_t index = 0;
  int64_t stride = 1;
  for (std::size_t axis = dims.size(); axis-- > offset;) {
    const int64_t coordinate = flat % dims[axis];
    flat /= dims[axis];
    const int64_t size = parameter.dims[axis - offset];
    if (size != 1) index += coordinate * stride;
    stride *= size;
  }
  return parameter.elements[static_cast<std::size_t>(index)];
}

std::vector<SymTensor> layer_normalization(const OpCall& call) {
  const SymTensor& x = call.input(0);
  const auto axis = static_cast<std::size_t>(call.node.attrs.get_int("axis", -1));
  if (axis >= x.dims.size()) throw NoSemantics("LayerNormalization's axis is out of range");
  if (call.input(1).dims.size() > x.dims.size() || (call.has_input(2) && call.input(2).dims.size() > x.dims.size())) {
    throw NoSemantics("LayerNormalization's Scale or B has a higher rank than X");
  }
  z3::context& context = call.semantics.context();
  const int64_t block = ir::num_elements(std::vector<int64_t>(x.dims.begin() + static_cast<std::ptrdiff_t>(axis), x.dims.end()));
  const z3::expr scale = inverse_of_count(call.semantics, block);
  const z3::expr epsilon = call.semantics.number(call.node.attrs.get_float("epsilon", 1e-5f));
  std::vector<z3::expr> deviations;
  std::vector<z3::expr> factors;
  for (int64_t row = 0; row * block < x.size(); ++row) {
    z3::expr_vector values(context);
    for (int64_t i = 0; i < block; ++i) values.push_back(x.elements[row * block + i]);
    const z3::expr mean = sum_of(context, values) * scale;
    z3::expr_vector squares(context);
    for (int64_t i = 0; i < block; ++i) {
      deviations.push_back(x.elements[row * block + i] - mean);
      squares.push_back(deviations.back() * deviations.back());
    }
    const z3::expr root = call.semantics.apply("sqrt", sum_of(context, squares) * scale + epsilon);
    factors.push_back(reciprocal(call.semantics, root));
  }
  return {generate(x.dims, [&](int64_t flat) {
    z3::expr y = deviations[flat] * factors[flat / block] * broadcast_element(call.input(1), x.dims, flat);
    return call.has_input(2) ? y + broadcast_element(call.input(2), x.dims, flat) : y;
  })};
}

std::vector<SymTensor> reduce_sum(const OpCall& call) { return {reduce(call).first}; }

std::vector<SymTensor> reduce_max(const OpCall& call) {
  SymTensor out{call.output_dims(0), {}};
  for (const z3::expr_vector& slot : reduced_slots(call)) {
    if (slot.empty()) throw NoSemantics("ReduceMax over no elements");
    out.elements.push_back(largest_of(slot));
  }
  return {out};
}

std::vector<SymTensor> softmax(const OpCall& call) {
  const SymTensor& x = call.input(0);
  const auto rank = static_cast<int64_t>(x.dims.size());
  int64_t axis = call.node.attrs.get_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) throw NoSemantics("Softmax's axis is out of range");
  const int64_t count = x.dims[static_cast<std::size_t>(axis)];
  if (count == 0) return {x};
  const int64_t outer = ir::num_elements(std::vector<int64_t>(x.dims.begin(), x.dims.begin() + axis));
  const int64_t inner = ir::num_elements(std::vector<int64_t>(x.dims.begin() + axis + 1, x.dims.end()));
  // The input as [outer, count, inner], as the kernel sees it: each line of `count` values
  // `inner` apart becomes exp(x - max) over the sum of those.
  SymTensor out{x.dims, std::vector<z3::expr>(x.elements)};
  z3::context& context = call.semantics.context();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t start = o * count * inner + i;
      z3::expr_vector line(context);
      for (int64_t k = 0; k < count; ++k) line.push_back(x.elements[start + k * inner]);
      const z3::expr largest = largest_of(line);
      z3::expr_vector exps(context);
      for (const z3::expr& value : line) exps.push_back(call.semantics.apply("exp", value - largest));
      const z3::expr inverse = reciprocal(call.semantics, sum_of(context, exps));
      for (unsigned k = 0; k < exps.size(); ++k) out.elements[start + k * inner] = exps[k] * inverse;
    }
  }
  return {out};
}

std::vector<SymTensor> reduce_mean(const OpCall& call) {
  auto [sums, count] = reduce(call);
  const z3::expr scale = inverse_of_count(call.semantics, count);
  for (z3::expr& element : sums.elements) element = element * scale;
  return {sums};
}

}  // namespace graphsub::verify::symbolic
