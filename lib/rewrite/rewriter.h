// Applying one match: the only way a rule changes a graph.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op_def.h"
#include "rewrite/match.h"

namespace graphsub::rewrite {

/// The ONNX opset whose defaults fill the attributes of target nodes (their canonical form).
inline constexpr int64_t kTargetOpset = 17;

/// The opset a target node of `def` is canonicalized at: kTargetOpset, or the op's first opset
/// where that is newer (Gelu, 20: a rule makes one only where its source matched one, so the
/// model's opset has it).
inline int64_t target_opset(const ops::OpDef& def) { return std::max(kTargetOpset, def.since_opset); }

/// Adds a node of `op` on `inputs` to `graph`, its attributes filled to canonical form at
/// target_opset and its one output typed by shape inference; nullopt (the graph untouched) when
/// the op refuses them. For the fixed rewrites made before the search (Einsum lowering, channel
/// shuffles), which build nodes without a rule.
std::optional<ir::ValueId> add_canonical_node(ir::Graph& graph, ir::OpKind op, std::vector<ir::ValueId> inputs,
                                              ir::Attributes attrs, const std::string& name);

/// Applies `match` (found in `graph`) to a copy of `graph`, which stays untouched:
///   1. adds the target's constants as weights and its nodes, with attributes copied (`@v`),
///      set, and filled to canonical form, and output types from shape inference;
///   2. checks that each mapped pair of values has the same type (dtype and dims, symbolic
///      dims by name);
///   3. points every use of each mapped source value at its target value (graph outputs keep
///      their names), rejects a result with a cycle (TASO Fig. 6) and removes dead nodes.
/// New values are unnamed (export names them). Returns nullopt when the rule cannot apply here,
/// with the reason in `*why_not` when given; never throws.
std::optional<ir::Graph> apply(const ir::Graph& graph, const Match& match, std::string* why_not = nullptr);

}  // namespace graphsub::rewrite
