// The target's layout forms (rules/layout.rules): equivalent forms a runtime lays out better,
// applied after the search wherever they match.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "rules/rule.h"

namespace graphsub::pipeline {

/// `graph` with `rules` applied at every place they match, one rewrite at a time (each at the
/// first match, in the matcher's order, that the rewriter accepts) until none applies or
/// `max_rewrites` were made; `*applied` (when given) counts them. Nullopt when none applied.
std::optional<ir::Graph> apply_everywhere(const ir::Graph& graph, const std::vector<rules::Rule>& rules,
                                          int* applied = nullptr, int max_rewrites = 10000);

}  // namespace graphsub::pipeline
