// Sampling search over substitution sequences (OCGGS Alg. 3).
#pragma once

#include "cost/cost_model.h"
#include "ir/graph.h"
#include "rewrite/matcher.h"
#include "search/search_options.h"

namespace graphsub::search {

/// Searches for the cheapest graph reachable from `input` by the matcher's rules with OCGGS's
/// sampling heuristic (Alg. 3): round by round, every sequence in the sample is extended by one
/// substitution; the next sample is the Q/2 cheapest extensions that did not raise the cost, and
/// the Q/2 cheapest graphs found past the extensions that did: those are explored (at most η
/// successive increases, at most Q/2 of them at a time, the ones of best potential first) until
/// they end in a step that does not raise the cost. A sequence's potential is the cheapest graph
/// that a chain of dependent substitutions (each touching the nodes the previous one made), all
/// raising the cost but the last, reaches from it. The search ends when a round has nothing to
/// extend; sequences stop at max_length substitutions.
///
/// Reads sample_size (Q), exploration_depth (η), max_length (K), budget, time_limit_s and
/// node_cap_factor of `options`. Every graph is visited once (by structural hash). The result is
/// never costlier than the input, and the same input, rules, options and cost model give the
/// same result: there is no randomness, ties in cost or potential go to the earlier sequence.
SearchResult sampling_search(const ir::Graph& input, const rewrite::Matcher& matcher,
                             const cost::CostModel& model, const SearchOptions& options);

}  // namespace graphsub::search
