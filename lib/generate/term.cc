// Terms of enumerated graphs, their text, and renaming of inputs.
#include "generate/term.h"

#include <algorithm>
#include <array>
#include <set>
#include <stdexcept>

namespace graphsub::generate {
namespace {

Term build(const Universe& universe, const CompactGraph& graph, const std::vector<std::pair<int, int>>& made, int slot) {
  const auto inputs = static_cast<int>(universe.inputs.size());
  Term term;
  if (slot < inputs) {
    term.input = slot;
    return term;
  }
  const auto [op_index, output] = made[static_cast<std::size_t>(slot)];
  const OpRecord& record = graph.ops[static_cast<std::size_t>(op_index)];
  term.op = record.choice;
  term.output = output;
  for (int k = 0; k < universe.ops[record.choice].arity; ++k) {
    term.args.push_back(build(universe, graph, made, record.inputs[static_cast<std::size_t>(k)]));
  }
  return term;
}

void collect_inputs(const Term& term, std::set<int>& found) {
  if (term.is_input()) found.insert(term.input);
  for (const Term& arg : term.args) collect_inputs(arg, found);
}

void collect_subterms(const Term& term, std::vector<Term>& found) {
  if (term.is_input()) return;
  for (const Term& arg : term.args) collect_subterms(arg, found);
  if (std::find(found.begin(), found.end(), term) == found.end()) found.push_back(term);
}

void permute(const Universe& universe, std::vector<int>& current, std::vector<bool>& used,
             std::vector<std::vector<int>>& out) {
  const std::size_t i = current.size();
  if (i == universe.inputs.size()) {
    out.push_back(current);
    return;
  }
  for (std::size_t j = 0; j < universe.inputs.size(); ++j) {
    if (used[j] || universe.inputs[j].role != universe.inputs[i].role ||
        universe.inputs[j].dims != universe.inputs[i].dims) {
      continue;
    }
    used[j] = true;
    current.push_back(static_cast<int>(j));
    permute(universe, current, used, out);
    current.pop_back();
    used[j] = false;
  }
}

}  // namespace

std::vector<std::pair<int, int>> slot_producers(const Universe& universe, const CompactGraph& graph) {
  std::vector<std::pair<int, int>> result(universe.inputs.size(), {-1, 0});
  for (int i = 0; i < graph.num_ops; ++i) {
    for (int k = 0; k < universe.ops[graph.ops[static_cast<std::size_t>(i)].choice].outputs; ++k) result.emplace_back(i, k);
  }
  return result;
}

bool Term::operator==(const Term& other) const {
  return op == other.op && output == other.output && input == other.input && args == other.args;
}

Term term_of(const Universe& universe, const CompactGraph& graph, int slot) {
  return build(universe, graph, slot_producers(universe, graph), slot);
}

std::string to_text(const Universe& universe, const Term& term, const std::vector<std::string>& names) {
  if (term.is_input()) return names[static_cast<std::size_t>(term.input)];
  const OpChoice& op = universe.ops[static_cast<std::size_t>(term.op)];
  std::vector<std::string> args;
  for (const Term& arg : term.args) args.push_back(to_text(universe, arg, names));
  if (op.commutative) std::sort(args.begin(), args.end());
  std::string text = op.name + (op.outputs > 1 ? "#" + std::to_string(term.output) : "") + "(";
  for (std::size_t i = 0; i < args.size(); ++i) text += (i > 0 ? ", " : "") + args[i];
  return text + ")";
}

uint64_t input_hash(int input) { return mix(0x1b873593, static_cast<uint64_t>(input)); }

uint64_t node_hash(const Universe& universe, int op, int output, std::array<uint64_t, 2> args, std::size_t count) {
  uint64_t hash = mix(static_cast<uint64_t>(op) + 1, static_cast<uint64_t>(output));
  if (count == 2 && universe.ops[static_cast<std::size_t>(op)].commutative && args[1] < args[0]) std::swap(args[0], args[1]);
  for (std::size_t k = 0; k < count; ++k) hash = mix(hash, args[k]);
  return hash;
}

uint64_t term_hash(const Universe& universe, const Term& term, const std::vector<int>* renaming) {
  return hash_with(universe, term, [renaming](const Term& input) {
    return input_hash(renaming ? (*renaming)[static_cast<std::size_t>(input.input)] : input.input);
  });
}

uint64_t key_of_hashes(const std::vector<std::pair<uint64_t, uint64_t>>& pairs) {
  return key_of_hashes(pairs.data(), pairs.size());
}

uint64_t key_of_hashes(const std::pair<uint64_t, uint64_t>* pairs, std::size_t count) {
  // A graph has at most 2 * kMaxOps outputs: sorted on the stack, the hot path of pairing.
  std::array<uint64_t, 2 * kMaxOps> parts{};
  if (count > parts.size()) throw std::length_error("a substitution of more than 12 outputs");
  for (std::size_t i = 0; i < count; ++i) parts[i] = mix(pairs[i].first, pairs[i].second);
  std::sort(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(count));
  uint64_t key = 0x85ebca6b;
  for (std::size_t i = 0; i < count; ++i) key = mix(key, parts[i]);
  return key;
}

uint64_t key_under(const Universe& universe, const TermPairs& pairs, const std::vector<int>& renaming) {
  std::vector<std::pair<uint64_t, uint64_t>> hashes;
  for (const auto& [source, target] : pairs) {
    hashes.emplace_back(term_hash(universe, source, &renaming), term_hash(universe, target, &renaming));
  }
  return key_of_hashes(hashes);
}

void slot_hashes(const Universe& universe, const CompactGraph& graph, const std::vector<std::pair<int, int>>& producers,
                 const std::vector<int>* renaming, std::vector<uint64_t>& out) {
  const std::size_t first = out.size();
  out.resize(first + producers.size());
  uint64_t* hashes = out.data() + first;
  for (std::size_t s = 0; s < producers.size(); ++s) {
    const auto [op_index, output] = producers[s];
    if (op_index < 0) {
      hashes[s] = input_hash(renaming ? (*renaming)[s] : static_cast<int>(s));
      continue;
    }
    const OpRecord& record = graph.ops[static_cast<std::size_t>(op_index)];
    const int arity = universe.ops[record.choice].arity;
    std::array<uint64_t, 2> args{};
    for (int k = 0; k < arity; ++k) args[static_cast<std::size_t>(k)] = hashes[record.inputs[static_cast<std::size_t>(k)]];
    hashes[s] = node_hash(universe, record.choice, output, args, static_cast<std::size_t>(arity));
  }
}

std::vector<std::vector<int>> renamings(const Universe& universe) {
  std::vector<std::vector<int>> out;
  std::vector<int> current;
  std::vector<bool> used(universe.inputs.size(), false);
  permute(universe, current, used, out);
  return out;
}

uint64_t merged_key(const Universe& universe, const TermPairs& pairs, const std::vector<int>& to,
                    const std::vector<std::vector<int>>& all) {
  std::vector<int> composed(to.size());
  return least_key(all.size(), [&](std::size_t r) {
           for (std::size_t i = 0; i < to.size(); ++i) composed[i] = all[r][static_cast<std::size_t>(to[i])];
           return key_under(universe, pairs, composed);
         }).first;
}

std::pair<uint64_t, std::vector<int>> canonical_key(const Universe& universe, const TermPairs& pairs) {
  std::vector<std::vector<int>> all = renamings(universe);
  const auto [key, r] = least_key(all.size(), [&](std::size_t i) { return key_under(universe, pairs, all[i]); });
  return {key, std::move(all[r])};
}

Term normalise(const Universe& universe, Term term) {
  for (Term& arg : term.args) arg = normalise(universe, std::move(arg));
  if (!term.is_input() && universe.ops[static_cast<std::size_t>(term.op)].commutative &&
      term_hash(universe, term.args[1]) < term_hash(universe, term.args[0])) {
    std::swap(term.args[0], term.args[1]);
  }
  return term;
}

std::vector<int> inputs_of(const Term& term) {
  std::set<int> found;
  collect_inputs(term, found);
  return {found.begin(), found.end()};
}

std::vector<Term> operator_subterms(const Term& term) {
  std::vector<Term> found;
  collect_subterms(term, found);
  return found;
}

Term replace(const Term& term, const Term& from, const Term& to) {
  if (term == from) return to;
  Term copy = term;
  for (Term& arg : copy.args) arg = replace(arg, from, to);
  return copy;
}

}  // namespace graphsub::generate
