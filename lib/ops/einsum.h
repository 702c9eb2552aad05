// Einsum's equation, parsed: shared by the operator (ops/einsum.cc) and the pass that writes
// two-operand contractions as MatMul (rewrite/einsum_lowering.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace graphsub::ops {

/// An equation with its ellipses expanded for given operand ranks. Labels are numbers: 0-51 for
/// the letters a-z and A-Z, 52 + k for the k-th axis covered by an ellipsis (counted from the
/// left of the broadcast ellipsis axes, which align on the right as in numpy).
struct EinsumTerms {
  std::vector<std::vector<int>> inputs;  ///< One label per axis of each operand.
  std::vector<int> output;               ///< One label per axis of the output.
  int ellipsis_rank = 0;                 ///< Axes the ellipsis stands for in the output.
};

/// Checks the equation's syntax against the operand count: letters, "..." at most once per
/// term, terms separated by commas, an optional "->" and output term whose letters occur in an
/// input and at most once. Spaces are ignored. Returns why it is invalid, or an empty string.
std::string check_einsum_equation(const std::string& equation, std::size_t operands);

/// The terms of `equation` for operands of these ranks, or nullopt when a term's letters and
/// ellipsis do not fit its operand's rank. Implicit output (no "->"): the ellipsis axes, then the
/// letters occurring once in all inputs in ASCII order, as numpy and onnxruntime read it.
std::optional<EinsumTerms> parse_einsum(const std::string& equation, const std::vector<std::size_t>& ranks);

}  // namespace graphsub::ops
