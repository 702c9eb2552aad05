// Term rewriting with the smaller candidates: one step forward from the source, one step back
// from the target, and a meeting point.
#include "generate/implied.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <unordered_map>

#include "generate/key_table.h"
#include "ir/error.h"
#include "ir/parallel.h"

namespace graphsub::generate {
namespace {

/// One direction of a single-output candidate, as a term rewrite.
struct Rewrite {
  const Term* from;
  const Term* to;
  std::size_t size;  ///< Operators of source and target together.
};

/// Each pattern input's binding: a sub-term of the term matched, which outlives the match. An
/// array of pointers, since a match saves and restores its bindings at every commutative
/// operator: copying bound terms was two thirds of this stage's time.
constexpr std::size_t kMaxInputs = 16;  // CompactGraph::input_outputs has 16 bits
using Bindings = std::array<const Term*, kMaxInputs>;

Role role_of(const Universe& universe, const Term& term) {
  if (term.is_input()) return universe.inputs[static_cast<std::size_t>(term.input)].role;
  const ir::OpKind kind = universe.ops[static_cast<std::size_t>(term.op)].kind;
  if (kind == ir::OpKind::kConv) return Role::kActivation;
  if (kind == ir::OpKind::kEnlarge) return Role::kWeight;
  return role_of(universe, term.args.front());
}

bool match(const Universe& universe, const Term& pattern, const Term& term, Bindings& bound);

/// Matches the arguments in order, or swapped for a commutative operator.
bool match_args(const Universe& universe, const Term& pattern, const Term& term, Bindings& bound) {
  const Bindings saved = bound;
  bool ok = true;
  for (std::size_t k = 0; k < pattern.args.size() && ok; ++k) ok = match(universe, pattern.args[k], term.args[k], bound);
  if (ok) return true;
  bound = saved;
  if (pattern.args.size() != 2 || !universe.ops[static_cast<std::size_t>(pattern.op)].commutative) return false;
  if (match(universe, pattern.args[0], term.args[1], bound) && match(universe, pattern.args[1], term.args[0], bound)) {
    return true;
  }
  bound = saved;
  return false;
}

/// Binds the pattern's inputs to sub-terms of `term` (an input only to a term of its role).
bool match(const Universe& universe, const Term& pattern, const Term& term, Bindings& bound) {
  if (pattern.is_input()) {
    const Term*& slot = bound[static_cast<std::size_t>(pattern.input)];
    if (slot) return slot == &term || *slot == term;
    if (role_of(universe, term) != universe.inputs[static_cast<std::size_t>(pattern.input)].role) return false;
    slot = &term;
    return true;
  }
  if (term.is_input() || pattern.op != term.op || pattern.output != term.output) return false;
  return match_args(universe, pattern, term, bound);
}

/// The term_hash of each sub-term of the term being rewritten, by address (a term of a few
/// operators has a few dozen sub-terms at most, a value computed twice being two: a list is the
/// fastest map).
using SubtermHashes = std::vector<std::pair<const Term*, uint64_t>>;

/// Fills `hashes` with every sub-term of `term`, and returns term_hash(term).
uint64_t hash_subterms(const Universe& universe, const Term& term, SubtermHashes& hashes) {
  uint64_t hash = 0;
  if (term.is_input()) {
    hash = input_hash(term.input);
  } else {
    std::array<uint64_t, 2> args{};
    for (std::size_t k = 0; k < term.args.size(); ++k) args[k] = hash_subterms(universe, term.args[k], hashes);
    hash = node_hash(universe, term.op, term.output, args, term.args.size());
  }
  hashes.emplace_back(&term, hash);
  return hash;
}

/// The hash of `term`, a sub-term hash_subterms filled `hashes` with.
uint64_t hash_of(const SubtermHashes& hashes, const Term& term) {
  for (const auto& [known, hash] : hashes) {
    if (known == &term) return hash;
  }
  throw Error("implied: a bound term outside the term rewritten");
}

/// The part of a concatenation a split of it on the same axis gives back, or null.
const Term* split_of_concat(const Universe& universe, const Term& term) {
  if (term.is_input() || term.args.front().is_input()) return nullptr;
  const OpChoice& op = universe.ops[static_cast<std::size_t>(term.op)];
  const Term& inner = term.args.front();
  const OpChoice& inner_op = universe.ops[static_cast<std::size_t>(inner.op)];
  if (op.kind != ir::OpKind::kSplit || inner_op.kind != ir::OpKind::kConcat || op.axis != inner_op.axis) return nullptr;
  return &inner.args[static_cast<std::size_t>(term.output)];
}

/// What a pattern input hashes to in a skeleton: any term.
constexpr uint64_t kAnyTerm = 0x2545f4914f6cdd1dULL;

/// A pattern's skeleton: its operators, each input a wildcard (term_hash's node hashes, so the
/// order of commutative arguments does not count).
uint64_t skeleton(const Universe& universe, const Term& pattern) {
  return hash_with(universe, pattern, [](const Term&) { return kAnyTerm; });
}

/// The skeletons of every pattern rooted at operator `term` that could match it: each argument
/// either a wildcard or, when an operator, one of its own skeletons. A pattern matching `term`
/// has one of these (its operators map onto a prefix of `term`'s), so they are the index keys
/// to look up; a term of four operators has at most eight.
void skeletons_of(const Universe& universe, const Term& term, std::vector<uint64_t>& out) {
  std::array<std::vector<uint64_t>, 2> choices;
  for (std::size_t k = 0; k < term.args.size(); ++k) {
    choices[k].push_back(kAnyTerm);
    if (!term.args[k].is_input()) skeletons_of(universe, term.args[k], choices[k]);
  }
  if (term.args.size() == 1) {
    for (uint64_t a : choices[0]) out.push_back(node_hash(universe, term.op, term.output, {a, 0}, 1));
    return;
  }
  for (uint64_t a : choices[0]) {
    for (uint64_t b : choices[1]) out.push_back(node_hash(universe, term.op, term.output, {a, b}, 2));
  }
}

/// The rewrites of one direction, by the skeleton of what they match (a discrimination index:
/// a term is tried only against the rewrites whose source has the shape of a prefix of it).
class RewriteIndex {
 public:
  void add(const Universe& universe, const Rewrite& rewrite) {
    std::vector<Group>& bucket = *buckets_.try_emplace(skeleton(universe, *rewrite.from)).first;
    const uint64_t hash = term_hash(universe, *rewrite.from);
    // The group of an equal source: looked up by hash, its term compared.
    const auto [first, last] = group_of_.equal_range(hash);
    for (auto it = first; it != last; ++it) {
      if (it->second < bucket.size() && *bucket[it->second].from == *rewrite.from) {
        bucket[it->second].rewrites.push_back(rewrite);
        return;
      }
    }
    group_of_.emplace(hash, bucket.size());
    bucket.push_back(Group{rewrite.from, {rewrite}});
  }

  /// Orders each group by size, so a lookup stops at the first rewrite too large.
  void seal() {
    for (std::vector<Group>& bucket : buckets_.values()) {
      for (Group& group : bucket) {
        std::stable_sort(group.rewrites.begin(), group.rewrites.end(),
                         [](const Rewrite& a, const Rewrite& b) { return a.size < b.size; });
      }
    }
  }

  /// True when a sub-term of `term` is a split of a concatenation it undoes, or the source of a
  /// rewrite smaller than `limit` whose target is one of its inputs (transpose(transpose(x))).
  bool reducible(const Universe& universe, const Term& term, std::size_t limit) const {
    if (term.is_input()) return false;
    if (split_of_concat(universe, term)) return true;
    return visit(universe, term, limit, [&](const Group& group, const Bindings&) {
             return std::any_of(group.rewrites.begin(), group.rewrites.end(), [&](const Rewrite& rewrite) {
               return rewrite.size < limit && rewrite.to->is_input();
             });
           }) ||
           std::any_of(term.args.begin(), term.args.end(), [&](const Term& arg) { return reducible(universe, arg, limit); });
  }

  /// Calls `made` with the hash of each term one rewrite smaller than `limit` makes of `term`, at
  /// any position, the root's first; stops and returns true at the first hash `made` returns true for.
  template <class Made>
  bool step(const Universe& universe, const Term& term, std::size_t limit, const Made& made) const {
    SubtermHashes hashes;
    hash_subterms(universe, term, hashes);
    std::vector<Parent> path;
    return rewrite_anywhere(universe, term, limit, hashes, path, made);
  }

 private:
  /// Calls `found` with each group of rewrites whose source matches `term` at its root and whose
  /// smallest rewrite is smaller than `limit`, and the match's bindings; stops and returns true
  /// where `found` returns true.
  template <class Found>
  bool visit(const Universe& universe, const Term& term, std::size_t limit, const Found& found) const {
    std::vector<uint64_t> keys;
    skeletons_of(universe, term, keys);
    std::sort(keys.begin(), keys.end());  // a commutative node can give one skeleton twice
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (uint64_t key : keys) {
      const std::vector<Group>* bucket = buckets_.find(key);
      if (!bucket) continue;
      for (const Group& group : *bucket) {
        if (group.rewrites.front().size >= limit) continue;
        Bindings bound{};
        if (!match(universe, *group.from, term, bound)) continue;
        if (found(group, bound)) return true;
      }
    }
    return false;
  }

  /// An operator above the sub-term being rewritten: its arguments' hashes, and which is rewritten.
  struct Parent {
    const Term* term;
    std::array<uint64_t, 2> args;
    std::size_t rewritten;
  };

  /// The hash of the whole term when the sub-term below `path` hashes to `hash`: a rewrite below
  /// the root changes only the hashes of the nodes above it, so results are never built.
  static uint64_t lift(const Universe& universe, uint64_t hash, const std::vector<Parent>& path) {
    for (auto parent = path.rbegin(); parent != path.rend(); ++parent) {
      std::array<uint64_t, 2> args = parent->args;
      args[parent->rewritten] = hash;
      hash = node_hash(universe, parent->term->op, parent->term->output, args, parent->term->args.size());
    }
    return hash;
  }

  /// step's walk: the rewrites at `term` (below `path`), then at each argument in turn.
  template <class Made>
  bool rewrite_anywhere(const Universe& universe, const Term& term, std::size_t limit, const SubtermHashes& hashes,
                        std::vector<Parent>& path, const Made& made) const {
    if (term.is_input()) return false;
    // The smallest rule of all, split(concat(a, b)) -> a, b, has two outputs: applied here.
    if (const Term* part = split_of_concat(universe, term)) {
      if (made(lift(universe, hash_of(hashes, *part), path))) return true;
    }
    const bool stopped = visit(universe, term, limit, [&](const Group& group, const Bindings& bound) {
      // The bound sub-terms' hashes, looked up once for the group's rewrites.
      std::array<uint64_t, kMaxInputs> bound_hashes{};
      for (std::size_t k = 0; k < kMaxInputs; ++k) {
        if (bound[k]) bound_hashes[k] = hash_of(hashes, *bound[k]);
      }
      for (const Rewrite& rewrite : group.rewrites) {
        if (rewrite.size >= limit) break;
        const uint64_t hash = hash_with(universe, *rewrite.to, [&](const Term& input) {
          return bound_hashes[static_cast<std::size_t>(input.input)];
        });
        if (made(lift(universe, hash, path))) return true;
      }
      return false;
    });
    if (stopped) return true;
    std::array<uint64_t, 2> args{};
    for (std::size_t k = 0; k < term.args.size(); ++k) args[k] = hash_of(hashes, term.args[k]);
    for (std::size_t k = 0; k < term.args.size(); ++k) {
      path.push_back(Parent{&term, args, k});
      if (rewrite_anywhere(universe, term.args[k], limit, hashes, path, made)) return true;
      path.pop_back();
    }
    return false;
  }

  /// The rewrites of one source pattern (one source has a target for each graph of its class),
  /// matched once.
  struct Group {
    const Term* from;
    std::vector<Rewrite> rewrites;
  };
  KeyTable<std::vector<Group>> buckets_;
  /// Each group's index in its bucket, by the term_hash of its source (equal sources have one
  /// skeleton, so the bucket is the source's own).
  std::unordered_multimap<uint64_t, std::size_t> group_of_;
};

std::size_t size_of(const Candidate& candidate) {
  return static_cast<std::size_t>(candidate.pair.source.num_ops) + candidate.pair.target.num_ops;
}

bool reads_only(const Term& term, const Term& inputs_from) {
  const std::vector<int> reads = inputs_of(term), available = inputs_of(inputs_from);
  return std::includes(available.begin(), available.end(), reads.begin(), reads.end());
}

/// A hash of a term's structure, arguments in their order (term_hash counts a commutative
/// operator's arguments in either order; a rewrite step's bindings depend on the order).
uint64_t structure_hash(const Term& term) {
  if (term.is_input()) return mix(0x632be59bd9b4e019ULL, static_cast<uint64_t>(term.input));
  uint64_t hash = mix(static_cast<uint64_t>(term.op) + 1, static_cast<uint64_t>(term.output));
  for (const Term& arg : term.args) hash = mix(hash, structure_hash(arg));
  return hash;
}

/// One thread's record of the terms one forward step makes of each source (with its limit): about
/// two candidates in five reaching the two-step test at 4 operators share their source and limit
/// with one tested before (150 K tests, 64 K distinct sources).
class ForwardSteps {
 public:
  /// The term hashes one step smaller than `limit` makes of `source`, sorted, without repeats.
  const std::vector<uint64_t>& of(const Universe& universe, const RewriteIndex& forward, const Term& source,
                                  std::size_t limit) {
    std::vector<Entry>& entries = *table_.try_emplace(mix(structure_hash(source), limit)).first;
    for (const Entry& entry : entries) {
      if (entry.limit == limit && *entry.source == source) return entry.made;
    }
    std::vector<uint64_t> made;
    forward.step(universe, source, limit, [&](uint64_t hash) {
      made.push_back(hash);
      return false;
    });
    std::sort(made.begin(), made.end());
    made.erase(std::unique(made.begin(), made.end()), made.end());
    entries.push_back(Entry{&source, limit, std::move(made)});
    return entries.back().made;
  }

 private:
  struct Entry {
    const Term* source;  ///< A candidate's, which outlives the stage.
    std::size_t limit;
    std::vector<uint64_t> made;
  };
  KeyTable<std::vector<Entry>> table_;
};

/// True when the rewrites smaller than the candidate take its source to its target in one or two
/// steps: one forward from the source meets the target, or one backward from the target.
bool implied(const Candidate& candidate, const RewriteIndex& forward, const RewriteIndex& backward,
             ForwardSteps& steps) {
  const Universe& universe = *candidate.pair.universe;
  const auto& [source, target] = candidate.terms.front();
  const std::size_t limit = size_of(candidate);
  const std::vector<uint64_t>& ahead = steps.of(universe, forward, source, limit);
  const auto is_ahead = [&ahead](uint64_t hash) { return std::binary_search(ahead.begin(), ahead.end(), hash); };
  return is_ahead(term_hash(universe, target)) || backward.step(universe, target, limit, is_ahead);
}

}  // namespace

std::vector<Candidate> drop_implied(std::vector<Candidate> candidates, int jobs) {
  for (const Candidate& candidate : candidates) {
    if (candidate.pair.universe->inputs.size() > kMaxInputs) throw Error("a universe of more than 16 inputs");
  }
  std::map<std::string, std::pair<RewriteIndex, RewriteIndex>> indexes;  // by universe name
  for (const Candidate& candidate : candidates) indexes[candidate.pair.universe->name];
  // The two directions are built side by side, each in the candidates' order.
  run_parallel(2, jobs, [&](std::size_t direction) {
    for (const Candidate& candidate : candidates) {
      if (candidate.terms.size() != 1) continue;
      const auto& [source, target] = candidate.terms.front();
      auto& [forward, backward] = indexes.at(candidate.pair.universe->name);
      if (direction == 0) {
        forward.add(*candidate.pair.universe, Rewrite{&source, &target, size_of(candidate)});
      } else if (!target.is_input() && reads_only(source, target)) {
        backward.add(*candidate.pair.universe, Rewrite{&target, &source, size_of(candidate)});
      }
    }
    for (auto& [name, index] : indexes) (direction == 0 ? index.first : index.second).seal();
  });
  std::vector<char> drop(candidates.size(), 0);
  // Per thread and universe (a universe's terms share operator numbers).
  std::vector<std::map<std::string, ForwardSteps>> steps(static_cast<std::size_t>(std::max(jobs, 1)));
  run_parallel(candidates.size(), jobs, [&](std::size_t i, std::size_t worker) {
    const Candidate& candidate = candidates[i];
    const auto& [forward, backward] = indexes.at(candidate.pair.universe->name);
    drop[i] = std::any_of(candidate.terms.begin(), candidate.terms.end(), [&](const auto& pair) {
      return forward.reducible(*candidate.pair.universe, pair.second, size_of(candidate));
    });
    if (!drop[i] && candidate.terms.size() == 1) {
      drop[i] = implied(candidate, forward, backward, steps[worker][candidate.pair.universe->name]);
    }
  });
  return kept_where_not(std::move(candidates), drop, jobs);
}

}  // namespace graphsub::generate
