// The target's layout forms (rules/layout.rules): equivalent forms a runtime lays out better,
// applied after the search wherever they match.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rules/rule.h"

namespace graphsub::pipeline {

/// `graph` with `rules` applied at every place they match, one rewrite at a time (each at the
/// first match, in the matcher's order, that the rewriter accepts) until none applies or
/// `max_rewrites` were made; `*applied` (when given) counts them. Nullopt when none applied.
std::optional<ir::Graph> apply_everywhere(const ir::Graph& graph, const std::vector<rules::Rule>& rules,
                                          int* applied = nullptr, int max_rewrites = 10000);

/// The forms of one kind (rules::Rule::kind) applied to a graph.
struct FormsOfKind {
  std::string kind;
  ir::Graph graph;  ///< The graph with that kind's forms applied wherever they match.
  int applied = 0;  ///< How many.
};

/// `graph` with the forms of each kind of `rules` applied alone (apply_everywhere with that
/// kind's rules), for the kinds that match somewhere, in the order the kinds first appear in
/// `rules`. A rule without a kind is a kind of its own, named after the rule. A runtime may gain
/// from one kind and lose from another (a dynamic image size keeps onnxruntime from fusing the
/// sums the concatenation form writes, while the split form still gains: YOLOv8n exported with
/// `dynamic=True`), which the forms applied all together hide.
std::vector<FormsOfKind> apply_each_kind(const ir::Graph& graph, const std::vector<rules::Rule>& rules);

}  // namespace graphsub::pipeline
