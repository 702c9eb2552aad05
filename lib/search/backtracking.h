// Cost-based backtracking search over verified substitutions (TASO Alg. 2, MetaFlow Alg. 1).
#pragma once

#include "cost/cost_model.h"
#include "ir/graph.h"
#include "rewrite/matcher.h"
#include "search/search_options.h"

namespace graphsub::search {

/// Searches for the cheapest graph reachable from `input` by the matcher's rules: expands the
/// cheapest waiting graph first and keeps a new one while its cost is below alpha × the best so
/// far. The result is never costlier than the input, and the same input, rules, options and cost
/// model give the same result (ties break by discovery order).
SearchResult backtracking_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                                 const cost::CostModel& model, const SearchOptions& options);

}  // namespace graphsub::search
