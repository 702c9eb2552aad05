// Printing a match for reports.
#include "rewrite/match.h"

namespace graphsub::rewrite {

std::string describe(const ir::Graph& graph, const Match& match) {
  return (match.rule ? match.rule->name : std::string("?")) + " at " + matched_nodes(graph, match);
}

std::string matched_nodes(const ir::Graph& graph, const Match& match) {
  std::string text;
  for (std::size_t i = 0; i < match.nodes.size(); ++i) {
    const ir::NodeId id = match.nodes[i];
    const std::string& name = graph.has_node(id) ? graph.node(id).name : std::string();
    text += (i ? ", " : "") + (name.empty() ? "#" + std::to_string(id) : name);
  }
  return text;
}

}  // namespace graphsub::rewrite
