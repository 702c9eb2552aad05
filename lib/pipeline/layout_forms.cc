// Applying a rule set wherever it matches.
#include "pipeline/layout_forms.h"

#include <algorithm>
#include <utility>

#include "ir/log.h"
#include "rewrite/matcher.h"
#include "rewrite/rewriter.h"

namespace graphsub::pipeline {

std::optional<ir::Graph> apply_everywhere(const ir::Graph& graph, const std::vector<rules::Rule>& rules, int* applied,
                                          int max_rewrites) {
  const rewrite::Matcher matcher(rules);
  std::optional<ir::Graph> current;
  int count = 0;
  for (bool rewrote = true; rewrote && count < max_rewrites;) {
    rewrote = false;
    const std::vector<rewrite::Match> matches = matcher.find_all(current ? *current : graph);
    logger("pipeline")->debug("layout forms: {} matches", matches.size());
    for (const rewrite::Match& match : matches) {
      std::string refusal;
      std::optional<ir::Graph> next = rewrite::apply(current ? *current : graph, match, &refusal);
      if (!next) {
        logger("pipeline")->debug("layout form {} refused: {}", match.rule->name, refusal);
        continue;
      }
      current = std::move(next);
      ++count;
      rewrote = true;
      break;
    }
  }
  if (applied) *applied = count;
  return current;
}

std::vector<FormsOfKind> apply_each_kind(const ir::Graph& graph, const std::vector<rules::Rule>& rules) {
  std::vector<std::pair<std::string, std::vector<rules::Rule>>> kinds;  // in order of first appearance
  for (const rules::Rule& rule : rules) {
    const std::string& kind = rule.kind.empty() ? rule.name : rule.kind;
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& entry) { return entry.first == kind; });
    if (it == kinds.end()) it = kinds.insert(kinds.end(), {kind, {}});
    it->second.push_back(rule);
  }
  std::vector<FormsOfKind> formed;
  for (const auto& [kind, of_kind] : kinds) {
    int applied = 0;
    if (std::optional<ir::Graph> graph_of_kind = apply_everywhere(graph, of_kind, &applied)) {
      formed.push_back({kind, std::move(*graph_of_kind), applied});
    }
  }
  return formed;
}

}  // namespace graphsub::pipeline
