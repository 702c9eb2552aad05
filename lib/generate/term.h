// Graph outputs as terms over the inputs: what the pruning stages (TASO §4) compare, rename and cut.
#pragma once

#include <array>
#include <cstdint>
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

/// For each slot of `graph`, the operator computing it and which of its outputs it is
/// ((-1, 0) for an input).
std::vector<std::pair<int, int>> slot_producers(const Universe& universe, const CompactGraph& graph);

/// The term of slot `slot` of `graph`.
Term term_of(const Universe& universe, const CompactGraph& graph, int slot);

/// A substitution as terms: each mapped output, source term => target term.
using TermPairs = std::vector<std::pair<Term, Term>>;

/// `matmul(a, add(b, c))`, inputs named by `names` (index by input), commutative arguments sorted.
std::string to_text(const Universe& universe, const Term& term, const std::vector<std::string>& names);

/// A 64-bit structural hash of `term` with input i counted as input renaming[i] (identity when
/// null); the arguments of a commutative operator count in either order.
uint64_t term_hash(const Universe& universe, const Term& term, const std::vector<int>* renaming = nullptr);

/// What term_hash gives an input `input`, and an operator node from its arguments' hashes (`count`
/// of them, at most two): the parts that hash a term rewritten in place without building it.
uint64_t input_hash(int input);
uint64_t node_hash(const Universe& universe, int op, int output, std::array<uint64_t, 2> args, std::size_t count);

/// term_hash's recursion with each input sub-term hashed by `leaf`: term_hash itself (an input's
/// renamed index), a pattern with its inputs bound to terms, a pattern's skeleton (any input alike).
template <class Leaf>
uint64_t hash_with(const Universe& universe, const Term& term, const Leaf& leaf) {
  if (term.is_input()) return leaf(term);
  // Operators take one or two arguments (OpRecord): no allocation here, the hot path of every stage.
  std::array<uint64_t, 2> args{};
  for (std::size_t k = 0; k < term.args.size(); ++k) args[k] = hash_with(universe, term.args[k], leaf);
  return node_hash(universe, term.op, term.output, args, term.args.size());
}

/// The least of key(r) for r in [0, count), and the first r giving it: a key under every renaming.
template <class Key>
std::pair<uint64_t, std::size_t> least_key(std::size_t count, const Key& key) {
  std::pair<uint64_t, std::size_t> least{0, 0};
  for (std::size_t r = 0; r < count; ++r) {
    const uint64_t value = key(r);
    if (r == 0 || value < least.first) least = {value, r};
  }
  return least;
}

/// The substitution's key with the inputs renamed by `renaming`: a hash of its mapped pairs
/// (source, target), in either order of the pairs.
uint64_t key_under(const Universe& universe, const TermPairs& pairs, const std::vector<int>& renaming);

/// Appends to `out` the term_hash of every slot of `graph` (see slot_producers) with input i
/// counted as input renaming[i] (identity when null), computed node by node without building a term.
void slot_hashes(const Universe& universe, const CompactGraph& graph, const std::vector<std::pair<int, int>>& producers,
                 const std::vector<int>* renaming, std::vector<uint64_t>& out);

/// key_under's key from each mapped pair's source and target term hashes.
uint64_t key_of_hashes(const std::vector<std::pair<uint64_t, uint64_t>>& pairs);
uint64_t key_of_hashes(const std::pair<uint64_t, uint64_t>* pairs, std::size_t count);

/// The renamings of a universe's inputs: permutations that keep each input's role and dims.
std::vector<std::vector<int>> renamings(const Universe& universe);

/// The key canonical_key gives `pairs` with each input i read as input `to[i]` (inputs merged),
/// without building the merged terms: hashing under a renaming composed with `to` is hashing the
/// renamed terms (term_hash orders commutative arguments itself). `all` is renamings(universe).
uint64_t merged_key(const Universe& universe, const TermPairs& pairs, const std::vector<int>& to,
                    const std::vector<std::vector<int>>& all);

/// The least key over every renaming (TASO's input tensor renaming), and the renaming giving it.
/// Keys are hashes, compared for equality (64 bits: a collision among the millions of candidates
/// of 4 operators has odds below 1e-6); the rules written are ordered by their text instead.
std::pair<uint64_t, std::vector<int>> canonical_key(const Universe& universe, const TermPairs& pairs);

/// `term` with the arguments of commutative operators in the order of their hashes, so equal
/// computations are equal terms.
Term normalise(const Universe& universe, Term term);

/// The inputs a term reads, by index, sorted and unique.
std::vector<int> inputs_of(const Term& term);

/// Every sub-term (operators only, each once), in post-order.
std::vector<Term> operator_subterms(const Term& term);

/// `term` with every occurrence of `from` replaced by `to`.
Term replace(const Term& term, const Term& from, const Term& to);

}  // namespace graphsub::generate
