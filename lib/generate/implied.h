// The last pruning stage: substitutions the smaller ones already make, in one or two rewrites.
#pragma once

#include <vector>

#include "generate/generator.h"

namespace graphsub::generate {

/// Drops each single-output candidate whose source the strictly smaller single-output candidates
/// (fewer operators in source and target together) rewrite into its target in one or two steps,
/// each step a rule applied at any sub-term (TASO's guarantee holds: whatever a dropped rule
/// does, a sequence of kept ones does). Rules are tried only where their inputs' roles fit.
/// Also dropped, whatever its outputs: a candidate whose target is not in normal form, holding a
/// split that undoes a concatenation or what a smaller rule removes (transpose(transpose(x)));
/// the same source with the reduced target is a smaller candidate. The verdict of each candidate depends only on the smaller
/// ones, so `jobs` threads give the same result.
std::vector<Candidate> drop_implied(std::vector<Candidate> candidates, int jobs);

}  // namespace graphsub::generate
