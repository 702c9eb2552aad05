// A match of a rule's source pattern in a graph: the graph nodes, values and attribute variables.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/attributes.h"
#include "ir/graph.h"
#include "rules/rule.h"

namespace graphsub::rewrite {

/// Where a rule's source matched: found by the Matcher, consumed by `apply` (rewriter.h). It
/// refers to the graph it was found in and is only valid for that graph.
struct Match {
  const rules::Rule* rule = nullptr;
  std::vector<ir::NodeId> nodes;                   ///< The graph node of each source node, in order.
  std::map<std::string, ir::ValueId> values;       ///< Every source value name (inputs and outputs).
  std::map<std::string, std::vector<ir::ValueId>> lists;  ///< Every source value list (`xs...`).
  std::map<std::string, ir::AttrValue> variables;  ///< The `?var` attribute variables, without '?'.
};

/// "fuse-conv-relu at conv1, relu1": the rule and the matched nodes (by name, or "#id" when
/// unnamed), for reports and logs.
std::string describe(const ir::Graph& graph, const Match& match);

/// "conv1, relu1": the matched nodes alone, as describe lists them.
std::string matched_nodes(const ir::Graph& graph, const Match& match);

}  // namespace graphsub::rewrite
