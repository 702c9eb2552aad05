// Exhaustive search: every graph the rules reach, the cheapest returned. The oracle for small graphs.
#pragma once

#include "cost/cost_model.h"
#include "ir/graph.h"
#include "rewrite/matcher.h"
#include "search/search_options.h"

namespace graphsub::search {

/// Visits every graph reachable from `input` by the matcher's rules, breadth first, each
/// structure once and none over the node cap, and returns the cheapest (as cheap with fewer nodes
/// wins; ties go to the graph found first, so by the fewest steps). No pruning: the number of
/// graphs is exponential in the number of independent matches, so this is for small graphs. Its
/// result is the optimum only when `stop` is kExhausted; with kBudget or kTimeLimit it is the best
/// of the graphs visited. Reads budget, time_limit_s and node_cap_factor of `options`.
SearchResult exhaustive_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                               const cost::CostModel& model, const SearchOptions& options);

}  // namespace graphsub::search
