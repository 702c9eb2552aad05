// Drawing small valid shapes and attributes for one source pattern node: one proposer per op.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/op_kind.h"
#include "ir/shape.h"
#include "ir/tensor.h"
#include "rules/rule.h"

namespace graphsub::verify {

/// The random choices one attempt shares between its nodes, so that tensors nothing ties together
/// still tend to agree (the parts of a concatenation, the operands of a sum).
struct DrawSettings {
  std::mt19937* rng = nullptr;
  int64_t dim_limit = 3;            ///< Dims are drawn from 1..dim_limit (a window may need more).
  int64_t default_rank = 2;         ///< The rank of a free tensor nothing constrains.
  std::vector<int64_t> usual_dims;  ///< Per axis, the size a drawn dim takes three times in four.
};

/// A dim for `axis` that nothing constrains: three times in four the attempt's usual size there
/// (so free tensors tend to agree), else any size up to the attempt's limit.
int64_t draw_free_dim(const DrawSettings& settings, std::size_t axis);

/// One input of a node being drawn: known when an earlier node or use built it, else free.
struct InputDraw {
  std::optional<ir::TensorType> type;  ///< Nullopt for a free pattern input: the proposer gives it a type.
  std::optional<int64_t> rank;         ///< The rank the rule asks of it (`rank(x) == 4`, a Conv's X, ...).
  bool size_one = false;               ///< The rule asks `size(x) == 1`.
  ir::TensorPtr data;                  ///< Constant data a proposer fixes (Expand's shape operand).
};

/// One source node being drawn. The proposer gives every free input a type and draws the node's
/// attributes in ONNX form (import's canonicalize completes them), taking those in `fixed` as given.
struct NodeDraw {
  const DrawSettings& settings;
  std::vector<InputDraw> inputs;
  int num_outputs = 1;
  ir::Attributes fixed;  ///< What the rule fixes: literal settings and variables bound earlier.
  ir::Attributes attrs;  ///< The attributes drawn.
};

/// Gives every free input of `draw` a float32 type and draws the attributes of an `op` node, small
/// and valid for the op. Returns an empty string, or why no valid node could be drawn ("group 2
/// does not divide 3 channels", or that the op has no proposer).
std::string propose_node(ir::OpKind op, NodeDraw& draw);

/// What an op asks of the ranks of a pattern node's values, so that free inputs are drawn with
/// the rank their uses need before the node that needs it is reached.
struct RankFacts {
  std::vector<std::optional<int64_t>> inputs;  ///< By input position: the rank the op needs, if fixed.
  std::optional<int64_t> outputs;              ///< The rank of every output, if fixed.
  bool keeps_rank = false;                     ///< Inputs and outputs share one rank (Relu, Concat, Add).
};

/// The rank facts of one source pattern node (a Conv's kernel_shape literal sets its rank).
RankFacts rank_facts(const rules::PatternNode& node);

}  // namespace graphsub::verify
