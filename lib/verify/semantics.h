// Operators' meaning for the prover: each modelled op computed on tensors of Z3 real terms.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <z3++.h>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace graphsub::verify {

/// A tensor whose elements are Z3 terms of sort Real (integer tensors hold integral reals),
/// row-major like ir::Tensor.
struct SymTensor {
  std::vector<int64_t> dims;
  std::vector<z3::expr> elements;
  /// Number of elements the dims give (1 for rank 0).
  int64_t size() const;
};

/// Thrown for a node the prover has no meaning for (an op without symbolic semantics, an
/// attribute form or element type it does not cover); the message says which and why.
class NoSemantics : public std::runtime_error {
 public:
  explicit NoSemantics(const std::string& message) : std::runtime_error(message) {}
};

/// The exact rational of a finite float or double value in `context` (floats are dyadic
/// rationals); throws NoSemantics for infinities and NaN.
z3::expr exact_number(z3::context& context, double value);

/// The symbolic semantics of graphsub's operators over one Z3 context (one per thread).
///
/// Linear and polynomial arithmetic is exact: constants are the exact rationals of their float
/// values, + - * are Z3's. Everything else (Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Erf, the
/// reciprocal, ...) is an uninterpreted function of sort Real -> Real, one per op and attribute
/// values ("relu", "leaky_relu[alpha=0.1]"), so `relu(a)` equals `relu(b)` exactly when a = b can
/// be shown. Division x / y is x * recip(y), and recip(c) of a constant c is 1/c. Data movement
/// (Transpose, Concat, Split, Reshape, Slice, Pad, Expand, Enlarge, ...) runs the op's own
/// reference kernel on element numbers, so its meaning is the kernel's by construction.
class Semantics {
 public:
  Semantics();
  Semantics(const Semantics&) = delete;
  Semantics& operator=(const Semantics&) = delete;

  z3::context& context() { return context_; }

  /// The exact rational of a finite float or double value (floats are dyadic rationals).
  z3::expr number(double value);
  /// Every element of `tensor` (any numeric dtype, read as double) as an exact number.
  SymTensor constant(const ir::Tensor& tensor);
  /// Fresh real constants named `name[i,j,...]` (the same name gives the same constant).
  SymTensor variables(const std::string& name, const std::vector<int64_t>& dims);

  /// The uninterpreted function `name`: Real -> Real, made on first use.
  z3::expr apply(const std::string& name, const z3::expr& x);

  /// The outputs of `node` on `inputs` (one per node input; nullptr for an omitted optional
  /// input). `output_types` are the node's output types from shape inference, every dim known.
  /// Throws NoSemantics when the node has no symbolic meaning here.
  std::vector<SymTensor> run(const ir::Node& node, const std::vector<const SymTensor*>& inputs,
                             const std::vector<ir::TensorType>& output_types);

  /// True when `kind` has symbolic semantics (possibly not for every attribute form).
  static bool covers(ir::OpKind kind);

 private:
  z3::context context_;
  std::map<std::string, z3::func_decl> functions_;
};

}  // namespace graphsub::verify
