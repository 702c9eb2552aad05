// Internal to lib/verify: the symbolic operators that Semantics::run dispatches to, by family.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <z3++.h>

#include "ir/data_type.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "verify/semantics.h"

namespace graphsub::verify::symbolic {

/// One node to compute, in its attribute form (run-time operands already read into attributes):
/// its data inputs (nullptr for an omitted optional one) and its output types.
struct OpCall {
  Semantics& semantics;                             ///< Numbers, variables and functions.
  const ir::Node& node;                             ///< Its op and canonical attributes.
  const std::vector<const SymTensor*>& inputs;      ///< Data inputs; nullptr where omitted.
  const std::vector<ir::TensorType>& output_types;  ///< Static types of its outputs.

  /// True when input `index` is given.
  bool has_input(std::size_t index) const { return index < inputs.size() && inputs[index]; }
  /// Input `index`; throws NoSemantics when it is missing.
  const SymTensor& input(std::size_t index) const;
  /// The sizes of output `index`; throws graphsub::Error when one is not known.
  std::vector<int64_t> output_dims(std::size_t index) const;
  /// The op's name, for messages.
  std::string op_name() const;
};

/// The meaning of one op: the node's outputs, one per output type.
using SymbolicOp = std::vector<SymTensor> (*)(const OpCall& call);

/// A tensor of `dims` whose element at row-major position i is `element(i)`.
template <class Element>
SymTensor generate(std::vector<int64_t> dims, Element element) {
  SymTensor out{std::move(dims), {}};
  const int64_t size = out.size();
  out.elements.reserve(static_cast<std::size_t>(size));
  for (int64_t i = 0; i < size; ++i) out.elements.push_back(element(i));
  return out;
}

/// The sum of `terms`, 0 when there are none.
z3::expr sum_of(z3::context& context, const z3::expr_vector& terms);
/// 1/c exactly, for a numeral c != 0.
z3::expr exact_inverse(const z3::expr& numeral);
/// 1/x: exact when x simplifies to a numeral other than 0, else the uninterpreted "recip".
z3::expr reciprocal(Semantics& semantics, const z3::expr& x);
/// Conv's and MatMul's fused `activation` applied to x: the function of the Relu, Sigmoid or
/// Tanh op ("relu", "sigmoid", "tanh"), or x itself for "none".
z3::expr activate(Semantics& semantics, const std::string& activation, const z3::expr& x);
/// The elements of `tensor`, which must all be numerals, as a tensor of `dtype` (converted as
/// Cast converts): what a kernel reads as numbers (indices, shapes). Throws NoSemantics naming
/// `what` otherwise.
ir::Tensor numbers_of(const SymTensor& tensor, ir::DataType dtype, const std::string& what);

// Element-wise arithmetic (symbolic_ops_elementwise.cc).

/// a + b with numpy broadcasting.
std::vector<SymTensor> add(const OpCall& call);
/// a - b, broadcast.
std::vector<SymTensor> sub(const OpCall& call);
/// a * b, broadcast.
std::vector<SymTensor> mul(const OpCall& call);
/// a * recip(b), broadcast.
std::vector<SymTensor> div(const OpCall& call);
/// base ** e for a numeral exponent, broadcast: exact products for 1, 2 and 3, else the
/// uninterpreted function "pow[e]" of the base.
std::vector<SymTensor> pow(const OpCall& call);
/// ite(a >= b, a, b), broadcast.
std::vector<SymTensor> max(const OpCall& call);
/// ite(a <= b, a, b), broadcast.
std::vector<SymTensor> min(const OpCall& call);
/// Every operand added, broadcast.
std::vector<SymTensor> sum(const OpCall& call);
/// Their sum times the exact 1/count.
std::vector<SymTensor> mean(const OpCall& call);
/// x times the one element of s (graphsub's SMul).
std::vector<SymTensor> s_mul(const OpCall& call);
/// -x.
std::vector<SymTensor> neg(const OpCall& call);
/// recip(x) element by element.
std::vector<SymTensor> reciprocal_op(const OpCall& call);
/// x unchanged (Identity).
std::vector<SymTensor> identity(const OpCall& call);
/// x, and with `mask` the all-true mask (1s).
std::vector<SymTensor> dropout(const OpCall& call);
/// x for a cast to a floating type, the kernel's numbers for numerals; else NoSemantics.
std::vector<SymTensor> cast(const OpCall& call);
/// The op's uninterpreted function, named after the op and the attribute values its kernel
/// reads ("relu", "leaky_relu[alpha=0.1]"), applied to each element.
std::vector<SymTensor> uninterpreted(const OpCall& call);

// Convolutions, products, pools, normalization and reductions (symbolic_ops_linear.cc).

/// act(conv(X, W) + B + Z), grouped, any spatial rank, windows as the reference kernel scans them.
std::vector<SymTensor> conv(const OpCall& call);
/// act(A · B + C), numpy batch broadcasting and 1-D operands.
std::vector<SymTensor> mat_mul(const OpCall& call);
/// alpha · A' · B' + beta · C.
std::vector<SymTensor> gemm(const OpCall& call);
/// The window's sum times the exact 1/count the kernel divides by.
std::vector<SymTensor> average_pool(const OpCall& call);
/// MaxPool (no Indices output): the largest tap inside the input, exactly (nested ite).
std::vector<SymTensor> max_pool(const OpCall& call);
/// Each plane's sum times the exact 1/(plane size).
std::vector<SymTensor> global_average_pool(const OpCall& call);
/// (x - mean) · recip(sqrt(var + epsilon)) · scale + B per channel.
std::vector<SymTensor> batch_normalization(const OpCall& call);
/// (x - mean) · recip(sqrt(var + epsilon)) · Scale + B over the axes from `axis` on, Scale and B
/// broadcast to X.
std::vector<SymTensor> layer_normalization(const OpCall& call);
/// The sum over `axes` (none when empty).
std::vector<SymTensor> reduce_sum(const OpCall& call);
/// ReduceMax: the largest element of each reduced slot, exactly (a chain of ite, as MaxPool's).
std::vector<SymTensor> reduce_max(const OpCall& call);
/// Softmax along its axis: exp(x - max) times the reciprocal of their sum, exp and the
/// reciprocal uninterpreted, the max exact, as the kernel computes it.
std::vector<SymTensor> softmax(const OpCall& call);
/// That sum times the exact 1/count.
std::vector<SymTensor> reduce_mean(const OpCall& call);

// Data movement and constants, by the reference kernels (symbolic_ops_movement.cc).

/// The kernel run on element numbers; each output element is the input element it copied.
/// Expand's shape and Gather's indices must be numerals.
std::vector<SymTensor> movement(const OpCall& call);
/// Resize in nearest mode: each output element is one input element (the kernel picks which);
/// the interpolating modes have no semantics here.
std::vector<SymTensor> resize_nearest(const OpCall& call);
/// movement, with the constant mode's border the fill `value`.
std::vector<SymTensor> pad(const OpCall& call);
/// The dims of the input as numbers.
std::vector<SymTensor> shape(const OpCall& call);
/// The kernel's output, as exact numbers, for a numeral shape.
std::vector<SymTensor> constant_of_shape(const OpCall& call);
/// The kernel's output, as exact numbers, for numeral start, limit and delta.
std::vector<SymTensor> range(const OpCall& call);
/// The kernel's output, as exact numbers (ConstIdentityConv, ConstIdentityMatrix, ConstOnes).
std::vector<SymTensor> constant(const OpCall& call);
/// [C, 1, k...] filled with the exact 1/prod(k): the ideal of the kernel's float 1/prod(k), as
/// AveragePool's division is.
std::vector<SymTensor> const_pool(const OpCall& call);

}  // namespace graphsub::verify::symbolic
