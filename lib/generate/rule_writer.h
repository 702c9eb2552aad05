// A pair of enumerated graphs written as a rule of graphsub's rule language (`origin generated`).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "generate/enumerator.h"
#include "generate/op_set.h"
#include "rules/rule.h"

namespace graphsub::generate {

/// A generated substitution before it is written: two graphs of one universe and which output
/// slot of the target each output slot of the source maps to.
struct GraphPair {
  std::shared_ptr<const Universe> universe;
  CompactGraph source;
  CompactGraph target;
  std::vector<std::pair<int, int>> outputs;  ///< (source slot, target slot).
  std::vector<int> renaming;                 ///< Input i is written as input renaming[i].
};

/// The renaming of `pair`'s inputs that writes its `before -> after` line first in text order
/// (inputs named in the order they are first read, mostly), for rules a person reads.
std::vector<int> readable_renaming(const GraphPair& pair);

/// The rule `name` for `pair`: every parameter the enumeration fixed written as a literal
/// attribute (all of a node's attributes, so the source matches only what was enumerated), a
/// split's sizes as the dims of the tensors it separates (`shape(a)[0]`), `where rank(x) == r`
/// for each pattern input (the ranks the enumeration used), and a comment line
/// `before -> after`. Throws graphsub::Error if the text does not parse (a generator bug). The
/// graphs are evaluated by `sources` and `targets`, Evaluators of the pair's universe (rules
/// written one after another share their first operators' slots).
rules::Rule write_rule(const GraphPair& pair, const std::string& name, Evaluator& sources, Evaluator& targets);

}  // namespace graphsub::generate
