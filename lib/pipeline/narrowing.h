// Narrowing before the search: a Gather that picks one entry of its axis, moved above
// the ops that made its input (rules/narrow.rules), so they compute only the entry picked.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "rules/rule.h"

namespace graphsub::pipeline {

/// Merges the Gathers of one value that pick the same entries (one axis, and one index value or
/// equal index constants) into the first of them; returns how many were merged away. A value that
/// several ops read is gathered once per reader by the narrowing rules; once those Gathers are
/// one, the value has one reader and the next rule can move the Gather above its producer.
int merge_alike_gathers(ir::Graph& graph);

/// `graph` with `rules` applied wherever they match and alike Gathers merged, in turn, until
/// neither changes anything; `*rewrites` (when given) counts the rules applied. Nullopt when no
/// rule applied (Gathers merged alone are not kept: they serve the rules).
std::optional<ir::Graph> narrow(const ir::Graph& graph, const std::vector<rules::Rule>& rules, int* rewrites = nullptr);

}  // namespace graphsub::pipeline
