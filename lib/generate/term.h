// Graph outputs as terms over the inputs: what the pruning stages (TASO §4) compare, rename and cut.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "generate/enumerator.h"
#include "generate/op_set.h"

namespace graphsub::generate {

/// One output of a graph as a tree: an input (`op < 0`) or an operator's output on sub-terms.
/// Graphs without duplicated computation are determined by their output terms.
struct Term {
  int op = -1;      ///< Choice in the universe; -1 for an input.
  int output = 0;   ///< Which output of the operator (split has two).
  int input = 0;    ///< The input index, for an input.
  std::vector<Term> args;
  bool operator==(const Term& other) const;
  bool is_input() const { return op < 0; }
};

/// The term of slot `slot` of `graph`.
Term term_of(const Universe& universe, const CompactGraph& graph, int slot);

/// A substitution as terms: each mapped output, source term => target term.
using TermPairs = std::vector<std::pair<Term, Term>>;

/// `matmul(a, add(b, c))`, inputs named by `names` (index by input), commutative arguments sorted.
std::string to_text(const Universe& universe, const Term& term, const std::vector<std::string>& names);

/// The substitution's text with the inputs renamed by `renaming` (input i becomes input
/// renaming[i]): its mapped pairs, each `source => target`, sorted and joined by "; ".
std::string key_under(const Universe& universe, const TermPairs& pairs, const std::vector<int>& renaming);

/// The renamings of a universe's inputs: permutations that keep each input's role and dims.
std::vector<std::vector<int>> renamings(const Universe& universe);

/// The least key over every renaming (TASO's input tensor renaming), and the renaming giving it.
std::pair<std::string, std::vector<int>> canonical_key(const Universe& universe, const TermPairs& pairs);

/// `term` with the arguments of commutative operators in text order (by input names), so equal
/// computations are equal terms.
Term normalise(const Universe& universe, Term term);

/// The inputs a term reads, by index, sorted and unique.
std::vector<int> inputs_of(const Term& term);

/// Every sub-term (operators only, each once), in post-order.
std::vector<Term> operator_subterms(const Term& term);

/// `term` with every occurrence of `from` replaced by `to`.
Term replace(const Term& term, const Term& from, const Term& to);

}  // namespace graphsub::generate
