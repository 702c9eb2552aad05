// Applying a rule set wherever it matches.
#include "pipeline/layout_forms.h"

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

}  // namespace graphsub::pipeline
