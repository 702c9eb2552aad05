// Term rewriting with the smaller candidates: one step forward from the source, one step back
// from the target, and a meeting point.
#include "generate/implied.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"

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

Term substitute(const Term& pattern, const Bindings& bound) {
  if (pattern.is_input()) return *bound[static_cast<std::size_t>(pattern.input)];
  Term copy = pattern;
  for (Term& arg : copy.args) arg = substitute(arg, bound);
  return copy;
}

/// The part of a concatenation a split of it on the same axis gives back, or nullopt.
std::optional<Term> split_of_concat(const Universe& universe, const Term& term) {
  if (term.is_input() || term.args.front().is_input()) return std::nullopt;
  const OpChoice& op = universe.ops[static_cast<std::size_t>(term.op)];
  const Term& inner = term.args.front();
  const OpChoice& inner_op = universe.ops[static_cast<std::size_t>(inner.op)];
  if (op.kind != ir::OpKind::kSplit || inner_op.kind != ir::OpKind::kConcat || op.axis != inner_op.axis) return std::nullopt;
  return inner.args[static_cast<std::size_t>(term.output)];
}

/// The rewrites of one direction, by the operator at the root of what they match.
class RewriteIndex {
 public:
  void add(const Rewrite& rewrite) { buckets_[key(*rewrite.from, 0)].push_back(rewrite); }

  /// Orders each bucket by size, so a lookup stops at the first rewrite too large.
  void seal() {
    for (auto& [key, bucket] : buckets_) {
      std::stable_sort(bucket.begin(), bucket.end(), [](const Rewrite& a, const Rewrite& b) { return a.size < b.size; });
    }
  }

  /// True when a sub-term of `term` is a split of a concatenation it undoes, or the source of a
  /// rewrite smaller than `limit` whose target is one of its inputs (transpose(transpose(x))).
  bool reducible(const Universe& universe, const Term& term, std::size_t limit) const {
    if (term.is_input()) return false;
    if (split_of_concat(universe, term)) return true;
    bool found = false;
    visit(universe, term, limit, [&](const Rewrite& rewrite, const Bindings&) { found = found || rewrite.to->is_input(); });
    return found || std::any_of(term.args.begin(), term.args.end(),
                                [&](const Term& arg) { return reducible(universe, arg, limit); });
  }

  /// Every term one rewrite smaller than `limit` makes of `term`, at any position, by hash.
  void step(const Universe& universe, const Term& term, std::size_t limit, std::unordered_set<uint64_t>& out) const {
    std::vector<Term> made;
    rewrite_anywhere(universe, term, limit, made);
    for (const Term& result : made) out.insert(term_hash(universe, result));
  }

 private:
  /// A bucket: the root's operator and output, and the operator of its argument `arg` (0 when
  /// that argument is an input, which in a pattern matches any term).
  static uint64_t key(const Term& term, std::size_t arg) {
    const Term& first = term.args[arg];
    const uint64_t below = first.is_input() ? 0 : static_cast<uint64_t>(first.op) * 8 + static_cast<uint64_t>(first.output) + 1;
    return (static_cast<uint64_t>(term.op) * 8 + static_cast<uint64_t>(term.output)) << 32 | below;
  }

  /// Calls `found` for each rewrite smaller than `limit` whose source matches `term` at its root:
  /// those whose first argument is an input, or an operator that `term`'s first argument (or, for
  /// a commutative root, its second) has.
  template <class Found>
  void visit(const Universe& universe, const Term& term, std::size_t limit, Found found) const {
    std::array<uint64_t, 3> keys{key(term, 0) & ~0xffffffffULL};
    std::size_t count = 1;
    if (!term.args[0].is_input()) keys[count++] = key(term, 0);
    if (term.args.size() == 2 && universe.ops[static_cast<std::size_t>(term.op)].commutative && !term.args[1].is_input() &&
        key(term, 1) != key(term, 0)) {
      keys[count++] = key(term, 1);
    }
    for (std::size_t k = 0; k < count; ++k) {
      const auto bucket = buckets_.find(keys[k]);
      if (bucket == buckets_.end()) continue;
      for (const Rewrite& rewrite : bucket->second) {
        if (rewrite.size >= limit) break;
        Bindings bound{};
        if (match(universe, *rewrite.from, term, bound)) found(rewrite, bound);
      }
    }
  }

  void rewrite_anywhere(const Universe& universe, const Term& term, std::size_t limit, std::vector<Term>& made) const {
    if (term.is_input()) return;
    // The smallest rule of all, split(concat(a, b)) -> a, b, has two outputs: applied here.
    if (std::optional<Term> part = split_of_concat(universe, term)) made.push_back(std::move(*part));
    visit(universe, term, limit,
          [&](const Rewrite& rewrite, const Bindings& bound) { made.push_back(substitute(*rewrite.to, bound)); });
    for (std::size_t k = 0; k < term.args.size(); ++k) {
      std::vector<Term> inner;
      rewrite_anywhere(universe, term.args[k], limit, inner);
      for (Term& result : inner) {
        Term copy = term;
        copy.args[k] = std::move(result);
        made.push_back(std::move(copy));
      }
    }
  }

  std::unordered_map<uint64_t, std::vector<Rewrite>> buckets_;
};

std::size_t size_of(const Candidate& candidate) {
  return static_cast<std::size_t>(candidate.pair.source.num_ops) + candidate.pair.target.num_ops;
}

bool reads_only(const Term& term, const Term& inputs_from) {
  const std::vector<int> reads = inputs_of(term), available = inputs_of(inputs_from);
  return std::includes(available.begin(), available.end(), reads.begin(), reads.end());
}

/// True when the rewrites smaller than the candidate take its source to its target in one or two
/// steps: one forward from the source meets the target, or one backward from the target.
bool implied(const Candidate& candidate, const RewriteIndex& forward, const RewriteIndex& backward) {
  const Universe& universe = *candidate.pair.universe;
  const auto& [source, target] = candidate.terms.front();
  const std::size_t limit = size_of(candidate);
  std::unordered_set<uint64_t> ahead, behind;
  forward.step(universe, source, limit, ahead);
  if (ahead.count(term_hash(universe, target))) return true;
  backward.step(universe, target, limit, behind);
  return std::any_of(ahead.begin(), ahead.end(), [&](uint64_t hash) { return behind.count(hash) > 0; });
}

}  // namespace

std::vector<Candidate> drop_implied(std::vector<Candidate> candidates, int jobs) {
  for (const Candidate& candidate : candidates) {
    if (candidate.pair.universe->inputs.size() > kMaxInputs) throw Error("a universe of more than 16 inputs");
  }
  std::map<std::string, std::pair<RewriteIndex, RewriteIndex>> indexes;  // by universe name
  for (const Candidate& candidate : candidates) {
    indexes[candidate.pair.universe->name];
    if (candidate.terms.size() != 1) continue;
    const auto& [source, target] = candidate.terms.front();
    auto& [forward, backward] = indexes[candidate.pair.universe->name];
    forward.add(Rewrite{&source, &target, size_of(candidate)});
    if (!target.is_input() && reads_only(source, target)) backward.add(Rewrite{&target, &source, size_of(candidate)});
  }
  for (auto& [name, index] : indexes) {
    index.first.seal();
    index.second.seal();
  }
  std::vector<char> drop(candidates.size(), 0);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < candidates.size(); i = next++) {
      const Candidate& candidate = candidates[i];
      const auto& [forward, backward] = indexes.at(candidate.pair.universe->name);
      drop[i] = std::any_of(candidate.terms.begin(), candidate.terms.end(), [&](const auto& pair) {
        return forward.reducible(*candidate.pair.universe, pair.second, size_of(candidate));
      });
      if (!drop[i] && candidate.terms.size() == 1) drop[i] = implied(candidate, forward, backward);
    }
  };
  std::vector<std::thread> threads;
  for (int job = 1; job < jobs; ++job) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  std::vector<Candidate> kept;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(candidates[i]));
  }
  return kept;
}

}  // namespace graphsub::generate
