// The generator's stages: pairs of equal fingerprint, renaming, the float check, common subgraphs.
#include "generate/generator.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "generate/generalise.h"
#include "generate/implied.h"
#include "generate/key_table.h"
#include "ir/error.h"
#include "ir/log.h"
#include "ir/parallel.h"
#include "rewrite/expr_eval.h"
#include "runtime/equivalence.h"
#include "verify/instance_dims.h"
#include "verify/instance_generator.h"

namespace graphsub::generate {
namespace {

/// Seconds since `start`, and `start` moved to now: each stage's time in turn.
double lap(std::chrono::steady_clock::time_point& start) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

EnumerateOptions enumerate_options(const GenerateOptions& options) {
  EnumerateOptions result;
  result.max_ops = options.max_ops;
  result.jobs = options.jobs;
  result.shard = options.shard;
  result.shards = options.shards;
  result.seed = options.seed;
  result.field.modulus = options.modulus;
  return result;
}

/// True when every operator of `graph` is linked to the others through the slots they share
/// (the rule language's sources must be connected).
bool connected(const Universe& universe, const CompactGraph& graph) {
  std::vector<int> parent(universe.inputs.size() + 2 * kMaxOps);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[static_cast<std::size_t>(x)] != x) x = parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    return x;
  };
  int next = static_cast<int>(universe.inputs.size());
  std::vector<int> firsts;
  for (int i = 0; i < graph.num_ops; ++i) {
    const OpRecord& record = graph.ops[static_cast<std::size_t>(i)];
    const OpChoice& op = universe.ops[record.choice];
    firsts.push_back(next);
    for (int k = 0; k < op.arity; ++k) parent[static_cast<std::size_t>(find(record.inputs[static_cast<std::size_t>(k)]))] = find(next);
    for (int k = 1; k < op.outputs; ++k) parent[static_cast<std::size_t>(find(next + k))] = find(next);
    next += op.outputs;
  }
  for (int first : firsts) {
    if (find(first) != find(firsts.front())) return false;
  }
  return true;
}

/// One graph of a fingerprint class, evaluated once its class has two distinct graphs. Slots are
/// compared by their hash of dims and values (64 bits, trusted as the fingerprints are).
struct ClassMember {
  CompactGraph graph;
  std::vector<uint64_t> values;  ///< Each slot's Slot::hash.
  std::vector<int> outputs;
  std::vector<std::pair<int, int>> producers;   ///< slot_producers of the graph.
  std::vector<uint64_t> renamed;  ///< Per renaming of the universe, each slot's term hash (renaming-major).
  uint64_t outputs_hash = 0;  ///< Its output terms' hashes, in either order: equal for a graph enumerated twice.
  uint32_t reads = 0;         ///< The inputs it reads, as bits.
  bool connected = false;
};

/// The inputs a graph reads, as bits (every operator's output reaches an output, so these are
/// the inputs its output terms read).
uint32_t reads(const Universe& universe, const CompactGraph& graph) {
  const auto inputs = static_cast<int>(universe.inputs.size());
  uint32_t bits = graph.input_outputs;
  for (int i = 0; i < graph.num_ops; ++i) {
    const OpRecord& record = graph.ops[static_cast<std::size_t>(i)];
    for (int k = 0; k < universe.ops[record.choice].arity; ++k) {
      if (record.inputs[static_cast<std::size_t>(k)] < inputs) bits |= 1u << record.inputs[static_cast<std::size_t>(k)];
    }
  }
  return bits;
}

/// A class member with what deduplication needs: its outputs and their terms' hash.
ClassMember member(const Universe& universe, const CompactGraph& graph) {
  ClassMember result;
  result.graph = graph;
  result.outputs = output_slots(universe, graph);
  result.producers = slot_producers(universe, graph);
  std::vector<uint64_t> own;
  slot_hashes(universe, graph, result.producers, nullptr, own);
  std::vector<uint64_t> hashes;
  for (int slot : result.outputs) hashes.push_back(own[static_cast<std::size_t>(slot)]);
  std::sort(hashes.begin(), hashes.end());
  for (uint64_t hash : hashes) result.outputs_hash = result.outputs_hash * 0x100000001b3ULL ^ hash;
  return result;
}

/// The rest of a member, once its class has two distinct graphs to pair: values, renamed hashes.
void complete(const Universe& universe, ClassMember& member, Evaluator& evaluator,
              const std::vector<std::vector<int>>& all_renamings) {
  for (const Slot& slot : evaluator.evaluate(member.graph)) member.values.push_back(slot.hash);
  member.renamed.reserve(all_renamings.size() * member.producers.size());
  for (const std::vector<int>& renaming : all_renamings) {
    slot_hashes(universe, member.graph, member.producers, &renaming, member.renamed);
  }
  member.reads = reads(universe, member.graph);
  member.connected = member.graph.num_ops > 0 && connected(universe, member.graph);
}

/// Output slots (source, target) of a pair, on the stack: pairing maps the outputs of 19 million
/// pairs at 4 operators (a graph has at most 2 * kMaxOps outputs).
struct OutputMap {
  std::array<std::pair<int, int>, 2 * kMaxOps> pairs{};
  std::size_t size = 0;
  const std::pair<int, int>* begin() const { return pairs.data(); }
  const std::pair<int, int>* end() const { return pairs.data() + size; }
};

/// The target's output slot for each source output, by equal values; nullopt when they differ.
std::optional<OutputMap> map_outputs(const ClassMember& source, const ClassMember& target) {
  if (source.outputs.size() != target.outputs.size() || source.outputs.size() > 2 * kMaxOps) return std::nullopt;
  uint32_t taken = 0;
  OutputMap map;
  for (int s : source.outputs) {
    bool found = false;
    for (std::size_t t = 0; t < target.outputs.size() && !found; ++t) {
      if ((taken >> t & 1u) || source.values[static_cast<std::size_t>(s)] != target.values[static_cast<std::size_t>(target.outputs[t])]) continue;
      taken |= 1u << t;
      found = true;
      map.pairs[map.size++] = {s, target.outputs[t]};
    }
    if (!found) return std::nullopt;
  }
  return map;
}

std::set<int> inputs_read(const TermPairs& terms, bool source) {
  std::set<int> read;
  for (const auto& pair : terms) {
    for (int input : inputs_of(source ? pair.first : pair.second)) read.insert(input);
  }
  return read;
}

/// True when output `s` of the source and `t` of the target are one computation, or the same
/// operator on arguments of equal values: TASO's second common-subgraph form then gives a
/// smaller candidate that covers this one (decided here by fingerprints, before any rule exists).
bool common_output(const Universe& universe, const ClassMember& source, const ClassMember& target, int s, int t) {
  const auto [source_op, source_output] = source.producers[static_cast<std::size_t>(s)];
  const auto [target_op, target_output] = target.producers[static_cast<std::size_t>(t)];
  if (source_op < 0 || target_op < 0) return false;
  const OpRecord& a = source.graph.ops[static_cast<std::size_t>(source_op)];
  const OpRecord& b = target.graph.ops[static_cast<std::size_t>(target_op)];
  if (a.choice != b.choice || source_output != target_output) return false;
  const OpChoice& op = universe.ops[a.choice];
  auto arg = [](const ClassMember& m, const OpRecord& r, int k) { return m.values[r.inputs[static_cast<std::size_t>(k)]]; };
  bool aligned = true;
  for (int k = 0; k < op.arity; ++k) aligned = aligned && arg(source, a, k) == arg(target, b, k);
  return aligned || (op.commutative && arg(source, a, 0) == arg(target, b, 1) && arg(source, a, 1) == arg(target, b, 0));
}

/// Whether `a` is chosen over `b` among candidates of one key: the least by its graphs, so the
/// choice does not depend on the order candidates came in (threads, shards).
bool chosen_over(const CompactGraph& source_a, const CompactGraph& target_a, const CompactGraph& source_b,
                 const CompactGraph& target_b) {
  if (!(source_a == source_b)) return source_a < source_b;
  return target_a < target_b;
}

bool chosen_over(const Candidate& a, const Candidate& b) {
  return chosen_over(a.pair.source, a.pair.target, b.pair.source, b.pair.target);
}

/// One candidate per key (input renaming), kept as pairing goes: at 4 operators the classes give
/// 19 million pairs and 1.3 million keys, and holding every pair's terms took 7.4 GB.
using ByKey = KeyTable<Candidate>;

/// What pairing a source with a target gave.
enum class Pairing { kNone, kCut, kCandidate };

/// Pairs `source -> target`: kNone when no rule can be written of it, kCut when a common output
/// makes a smaller candidate cover it. A candidate's key (the least over the renamings) comes
/// from the members' slot hashes; its terms are built after pairing (with_terms), for the
/// candidate each key keeps.
Pairing make_candidate(const std::shared_ptr<const Universe>& universe, const std::vector<std::vector<int>>& all_renamings,
                       const ClassMember& source, const ClassMember& target, ByKey& kept) {
  if (source.graph.num_ops == 0 || !source.connected) return Pairing::kNone;
  const std::optional<OutputMap> outputs = map_outputs(source, target);
  if (!outputs) return Pairing::kNone;
  if ((target.reads & ~source.reads) != 0) return Pairing::kNone;
  for (const auto& [s, t] : *outputs) {
    if (common_output(*universe, source, target, s, t)) return Pairing::kCut;
  }
  std::array<std::pair<uint64_t, uint64_t>, 2 * kMaxOps> hashes{};
  const std::size_t source_slots = source.producers.size(), target_slots = target.producers.size();
  const auto [key, least] = least_key(all_renamings.size(), [&](std::size_t r) {
    for (std::size_t i = 0; i < outputs->size; ++i) {
      hashes[i] = {source.renamed[r * source_slots + static_cast<std::size_t>(outputs->pairs[i].first)],
                   target.renamed[r * target_slots + static_cast<std::size_t>(outputs->pairs[i].second)]};
    }
    return key_of_hashes(hashes.data(), outputs->size);
  });
  Candidate* found = kept.find(key);
  if (found && !chosen_over(source.graph, target.graph, found->pair.source, found->pair.target)) {
    return Pairing::kCandidate;
  }
  Candidate candidate;  // its terms are built once pairing is done, for the candidates kept
  candidate.key = key;
  candidate.pair = GraphPair{universe, source.graph, target.graph, {outputs->begin(), outputs->end()}, all_renamings[least]};
  *(found ? found : kept.try_emplace(key).first) = std::move(candidate);
  return Pairing::kCandidate;
}

/// Builds the candidate's terms from its graphs (pairing keeps a candidate per key without them:
/// most are replaced by a smaller pair of the same key before pairing ends).
void with_terms(Candidate& candidate) {
  const Universe& universe = *candidate.pair.universe;
  for (const auto& [s, t] : candidate.pair.outputs) {
    candidate.terms.emplace_back(normalise(universe, term_of(universe, candidate.pair.source, s)),
                                 normalise(universe, term_of(universe, candidate.pair.target, t)));
  }
}

/// How many ordered pairs of one class a rule can be written of, cut ones included.
struct ClassPairs {
  uint64_t pairs = 0;
  uint64_t cut = 0;
};

ClassPairs pair_class(const std::shared_ptr<const Universe>& universe, const std::vector<Enumerated>& graphs,
                      std::size_t begin, std::size_t end, Evaluator& evaluator,
                      const std::vector<std::vector<int>>& all_renamings, ByKey& kept) {
  std::vector<ClassMember> members;
  for (std::size_t i = begin; i < end; ++i) {
    ClassMember next = member(*universe, graphs[i].graph);
    const bool seen = std::any_of(members.begin(), members.end(), [&](const ClassMember& m) { return m.outputs_hash == next.outputs_hash; });
    if (!seen) members.push_back(std::move(next));
  }
  ClassPairs result;
  if (members.size() < 2) return result;  // one graph enumerated in several orders
  for (ClassMember& m : members) complete(*universe, m, evaluator, all_renamings);
  for (const ClassMember& source : members) {
    for (const ClassMember& target : members) {
      if (&source == &target) continue;
      const Pairing pairing = make_candidate(universe, all_renamings, source, target, kept);
      result.pairs += pairing != Pairing::kNone;
      result.cut += pairing == Pairing::kCut;
    }
  }
  return result;
}

void keep(ByKey& kept, Candidate&& candidate) {
  const auto [found, added] = kept.try_emplace(candidate.key);
  if (added || chosen_over(candidate, *found)) *found = std::move(candidate);
}

/// Pairs every class of equal fingerprint (several graphs), classes shared among `jobs` threads,
/// and appends one candidate per key to `out`, in key order.
void pair_classes(const std::shared_ptr<const Universe>& universe, const std::vector<Enumerated>& graphs,
                  const EnumerateOptions& options, std::vector<Candidate>& out, StageCounts& counts) {
  std::vector<std::pair<std::size_t, std::size_t>> classes;
  for (std::size_t begin = 0, end = 0; begin < graphs.size(); begin = end) {
    for (end = begin + 1; end < graphs.size() && graphs[end].fingerprint == graphs[begin].fingerprint; ++end) {
    }
    if (end - begin > 1) classes.emplace_back(begin, end);
  }
  const std::vector<std::vector<int>> all_renamings = renamings(*universe);
  const auto jobs = static_cast<std::size_t>(std::max(options.jobs, 1));
  std::vector<ByKey> kept(jobs);
  std::vector<uint64_t> pairs(jobs, 0), cut(jobs, 0);
  std::vector<Evaluator> evaluators(jobs, Evaluator(*universe, options));
  run_parallel(classes.size(), static_cast<int>(jobs), [&](std::size_t i, std::size_t job) {
    const ClassPairs paired =
        pair_class(universe, graphs, classes[i].first, classes[i].second, evaluators[job], all_renamings, kept[job]);
    pairs[job] += paired.pairs;
    cut[job] += paired.cut;
  });
  for (std::size_t job = 1; job < jobs; ++job) {
    for (Candidate& candidate : kept[job].values()) keep(kept[0], std::move(candidate));
    kept[job] = ByKey();
  }
  for (std::size_t job = 0; job < jobs; ++job) {
    counts.candidates += pairs[job];
    counts.cut += cut[job];
  }
  const std::size_t first = out.size();
  for (Candidate& candidate : kept[0].values()) out.push_back(std::move(candidate));
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [](const Candidate& a, const Candidate& b) { return a.key < b.key; });
  run_parallel(out.size() - first, options.jobs, [&](std::size_t i) { with_terms(out[first + i]); });
}

/// Sorts by key and keeps one of each key (chosen_over), as pairing did within a run: shards
/// merged give what one run gives.
void keep_one_per_key(std::vector<Candidate>& candidates) {
  const auto order = [](const Candidate& a, const Candidate& b) {
    if (a.pair.universe->name != b.pair.universe->name) return a.pair.universe->name < b.pair.universe->name;
    if (a.key != b.key) return a.key < b.key;
    return chosen_over(a, b);
  };
  if (!std::is_sorted(candidates.begin(), candidates.end(), order)) {  // finish after one run: sorted
    std::sort(candidates.begin(), candidates.end(), order);
  }
  candidates.erase(std::unique(candidates.begin(), candidates.end(),
                               [](const Candidate& a, const Candidate& b) {
                                 return a.pair.universe->name == b.pair.universe->name && a.key == b.key;
                               }),
                   candidates.end());
}

enum class FloatVerdict { kEqual, kDifferent, kNoInstance };

/// The runs of the drawn source graphs one InstanceCache gave, by Instance::source_id: the rules
/// of one source pattern rewrite the same source graphs, run once.
using SourceRuns = std::map<uint64_t, runtime::ReferenceRuns>;

/// Source and target of each instance run through the reference kernels on random floats in
/// [-1, 1] (TASO: 1e-5); the first instance that differs, or that the kernels refuse, decides.
FloatVerdict run_on_floats(const std::vector<verify::Instance>& instances, SourceRuns& source_runs) {
  if (instances.empty()) return FloatVerdict::kNoInstance;
  runtime::CheckOptions check;
  check.samples = 2;
  check.atol = 1e-5;
  check.rtol = 1e-5;
  for (const verify::Instance& instance : instances) {
    try {
      auto [runs, fresh] = source_runs.try_emplace(instance.source_id);
      if (fresh || instance.source_id == 0) runs->second = runtime::run_reference(instance.source, check);
      if (!runtime::check_against(instance.source, runs->second, instance.target, check).passed()) {
        return FloatVerdict::kDifferent;
      }
    } catch (const Error&) {
      return FloatVerdict::kNoInstance;
    }
  }
  return FloatVerdict::kEqual;
}

/// The attribute value a literal of the rule language stands for.
ir::AttrValue literal_value(const rules::Expr& literal) {
  std::optional<ir::AttrValue> value = rewrite::literal_attr(literal);
  if (!value) throw Error("generate: a window literal that is no attribute value: " + rules::to_string(literal));
  return *value;
}

/// A candidate's rule once checked: its verdict and, when equal, the rule with every window
/// parameter opened that still holds on floats.
struct Checked {
  FloatVerdict verdict = FloatVerdict::kNoInstance;
  std::optional<rules::Rule> rule;
  bool opened = false;  ///< A parameter was opened.
};

/// Lets the rewriter apply `rule` on random small shapes, source and target run on floats, then
/// opens what still holds. `cache` holds the source graphs of the rules with `rule`'s source,
/// `source_runs` their runs on floats.
Checked check_and_generalise(const rules::Rule& rule, const GenerateOptions& options, verify::InstanceCache& cache,
                             SourceRuns& source_runs) {
  Checked checked;
  verify::InstanceOptions fixed;
  // A condition on a sum of dims (a matrix product of concatenations: the inner dims agree as
  // sums) leaves the parts free, and the rule may hold only where the blocks line up, as they do
  // on the enumeration's square matrices. Such a rule is checked on six instances whose dims are
  // solved from its conditions (verify::DimEquations: the parts drawn from all sizes, one solved
  // for): op by op, the draws rarely agreed as sums and, where they did, mostly lined up, so that
  // verify-rules refuted rules of --max-ops 4 that the float check had let through.
  const bool sums = verify::DimEquations(rule).has_sums();
  fixed.count = sums ? options.sum_instances : options.float_instances;
  fixed.attempts = 2000;
  fixed.solve_dims = sums;
  checked.verdict = run_on_floats(cache.instances(rule, fixed), source_runs);
  if (checked.verdict != FloatVerdict::kEqual) return checked;
  // An opened parameter is checked on larger instances than the first check's: each attempt's
  // dims are drawn up to a limit of 3 to 5, as on images of 1 or 2 pixels a strided 1 x 1
  // convolution commutes with pooling. And each instance binds what the step opens to another
  // value than the literal it replaces: one that binds the literal again checks what the first
  // check did (half of the instances drawn freely bound stride 1 again).
  verify::InstanceOptions open;
  open.count = options.generalise_instances;
  open.attempts = 3000;
  open.max_dim = 5;
  open.min_dim_limit = 3;
  open.max_elements = 4096;
  checked.rule = generalise(rule, [&](const rules::Rule& opened, const std::vector<std::string>&,
                                      const std::vector<Opening>& step) {
    verify::InstanceOptions moved = open;
    for (const Opening& opening : step) moved.other_than.emplace_back(opening.variable, literal_value(opening.literal));
    const std::vector<verify::Instance> instances = cache.instances(opened, moved);
    Trial trial;
    for (const auto& [variable, literal] : moved.other_than) {
      if (std::any_of(instances.begin(), instances.end(), [&](const verify::Instance& instance) {
            return verify::moves_off(instance.match, variable, literal);
          })) {
        trial.varied.push_back(variable);
      }
    }
    trial.held = run_on_floats(instances, source_runs) == FloatVerdict::kEqual;
    return trial;
  });
  checked.opened = checked.rule->source != rule.source;
  return checked;
}

/// The rules of the candidates the float check confirms, counting the others.
std::vector<rules::Rule> confirm(std::vector<Candidate> candidates, const GenerateOptions& options, StageCounts& counts) {
  const EnumerateOptions enumerate = enumerate_options(options);
  std::vector<rules::Rule> rules(candidates.size());
  std::vector<std::string> source_keys(candidates.size());
  // Per thread and universe, the evaluators of sources and targets (made once: each makes the inputs).
  std::vector<std::map<const Universe*, std::pair<Evaluator, Evaluator>>> evaluators(
      static_cast<std::size_t>(std::max(options.jobs, 1)));
  run_parallel(candidates.size(), options.jobs, [&](std::size_t i, std::size_t worker) {
    const Universe& universe = *candidates[i].pair.universe;
    auto found = evaluators[worker].find(&universe);
    if (found == evaluators[worker].end()) {
      found = evaluators[worker].emplace(&universe, std::make_pair(Evaluator(universe, enumerate), Evaluator(universe, enumerate))).first;
    }
    candidates[i].pair.renaming = readable_renaming(candidates[i].pair);
    rules[i] = write_rule(candidates[i].pair, "gen-" + universe.name, found->second.first, found->second.second);
    source_keys[i] = verify::source_key(rules[i]);
    decltype(candidates[i].terms)().swap(candidates[i].terms);  // written: only the key is read below
  });
  // The candidates of one fingerprint class share their sources (about two rules to a source at
  // 4 operators): a group of rules with one source is checked on one thread with one instance
  // cache, which builds and matches each source graph once for the group.
  std::vector<std::vector<std::size_t>> groups;
  {
    std::unordered_map<std::string, std::size_t> group_of;
    for (std::size_t i = 0; i < rules.size(); ++i) {
      const auto [it, fresh] = group_of.emplace(std::move(source_keys[i]), groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
  }
  std::vector<Checked> checked(candidates.size());
  run_parallel(groups.size(), options.jobs, [&](std::size_t g) {
    verify::InstanceCache cache;
    SourceRuns source_runs;
    for (std::size_t i : groups[g]) {
      checked[i] = check_and_generalise(rules[i], options, cache, source_runs);
      rules[i] = rules::Rule{};  // the cache keeps its own copy
    }
  });
  std::vector<rules::Rule> kept;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const FloatVerdict verdict = checked[i].verdict;
    if (verdict != FloatVerdict::kEqual) {
      logger("generate")->debug("{}: {}", verdict == FloatVerdict::kDifferent ? "different on floats" : "no instance",
                                candidates[i].key);
    }
    if (verdict == FloatVerdict::kEqual) {
      counts.generalised += checked[i].opened;
      kept.push_back(std::move(*checked[i].rule));
    }
    counts.float_failed += verdict == FloatVerdict::kDifferent;
    counts.no_instance += verdict == FloatVerdict::kNoInstance;
  }
  counts.confirmed += kept.size();
  return kept;
}

bool has_input_source(const TermPairs& terms) {
  return std::any_of(terms.begin(), terms.end(), [](const auto& pair) { return pair.first.is_input(); });
}


/// A key of the set pruning compares with: the candidate's key and its universe's name.
uint64_t universe_key(const Universe& universe, uint64_t key) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : universe.name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash ^ (key * 0x9e3779b97f4a7c15ULL);
}

bool known(const Universe& universe, const TermPairs& terms, const KeySet& keys) {
  return !terms.empty() && !has_input_source(terms) &&
         keys.count(universe_key(universe, canonical_key(universe, terms).first)) > 0;
}

/// TASO's second form, one output at a time: an output both sides compute alike is dropped, or
/// an output both compute with the same operator is cut there, the differing arguments becoming
/// outputs (both argument orders for a commutative operator).
std::vector<TermPairs> without_common_outputs(const Universe& universe, const TermPairs& terms) {
  std::vector<TermPairs> general;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& [source, target] = terms[i];
    TermPairs rest = terms;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    if (source == target) {
      general.push_back(rest);
      continue;
    }
    if (source.is_input() || target.is_input() || source.op != target.op || source.output != target.output) continue;
    const bool commutative = universe.ops[static_cast<std::size_t>(source.op)].commutative;
    for (bool swap : {false, true}) {
      if (swap && !commutative) break;
      TermPairs cut = rest;
      for (std::size_t k = 0; k < source.args.size(); ++k) {
        const Term& other = target.args[swap ? source.args.size() - 1 - k : k];
        if (!(source.args[k] == other)) cut.emplace_back(source.args[k], other);
      }
      general.push_back(std::move(cut));
    }
  }
  return general;
}

/// The role and rank of the source slot computing `term` (`slots`: the source evaluated), or nullopt.
std::optional<std::pair<Role, std::size_t>> type_of(const Candidate& candidate, const Term& term,
                                                              const std::vector<Slot>& slots) {
  const Universe& universe = *candidate.pair.universe;
  for (std::size_t s = universe.inputs.size(); s < slots.size(); ++s) {
    if (normalise(universe, term_of(universe, candidate.pair.source, static_cast<int>(s))) == term) {
      return std::make_pair(slots[s].role, slots[s].dims.size());
    }
  }
  return std::nullopt;
}

/// `terms` with every `common` replaced by an input of the role and rank `type` gives that the
/// terms then no longer read (rules are written for every shape of a rank, so any such input
/// stands for the fresh one); nullopt when every such input is still read.
std::optional<TermPairs> with_fresh_input(const Universe& universe, const TermPairs& terms, const Term& common,
                                          const std::pair<Role, std::size_t>& type) {
  Term placeholder;
  placeholder.input = static_cast<int>(universe.inputs.size());
  TermPairs general;
  for (const auto& [source, target] : terms) general.emplace_back(replace(source, common, placeholder), replace(target, common, placeholder));
  const std::set<int> read = inputs_read(general, true);
  for (std::size_t fresh = 0; fresh < universe.inputs.size(); ++fresh) {
    const InputSpec& spec = universe.inputs[fresh];
    if (read.count(static_cast<int>(fresh)) || spec.role != type.first || spec.dims.size() != type.second) continue;
    Term input;
    input.input = static_cast<int>(fresh);
    for (auto& [source, target] : general) {
      source = normalise(universe, replace(source, placeholder, input));
      target = normalise(universe, replace(target, placeholder, input));
    }
    return general;
  }
  return std::nullopt;
}

/// TASO's first form: an operator on the same inputs in source and target becomes a fresh input.
bool common_operator_generalises(const Candidate& candidate, const KeySet& keys,
                                 const EnumerateOptions& options) {
  const Universe& universe = *candidate.pair.universe;
  std::vector<Term> in_target;
  for (const auto& pair : candidate.terms) {
    for (Term& term : operator_subterms(pair.second)) in_target.push_back(std::move(term));
  }
  std::vector<Slot> slots;  // evaluated once, when a common operator is found
  for (const auto& pair : candidate.terms) {
    for (const Term& common : operator_subterms(pair.first)) {
      if (std::find(in_target.begin(), in_target.end(), common) == in_target.end()) continue;
      if (slots.empty()) slots = evaluate(universe, candidate.pair.source, options);
      const auto type = type_of(candidate, common, slots);
      if (!type) continue;
      const std::optional<TermPairs> general = with_fresh_input(universe, candidate.terms, common, *type);
      if (general && known(universe, *general, keys)) return true;
    }
  }
  return false;
}

/// Every map of the inputs `used` reads to inputs of the same role and dims that sends two of
/// them to one (other inputs stay): the rules a candidate gives when its inputs are merged. A
/// merged key is the least over every renaming, and the renamings permute each class of inputs
/// of one role and dims freely: maps that differ by such a permutation of their images give one
/// key. So only one map of each is made, the one whose images, in the order of `used`, are each
/// an image taken before or the first of its class not yet taken (at 4 operators 5 maps instead
/// of 27 for three inputs of one class).
void merged_keys(const Candidate& candidate, const std::vector<std::vector<int>>& renamings, const std::vector<int>& used,
                 std::size_t next, std::vector<int>& to, std::set<uint64_t>& keys) {
  const Universe& universe = *candidate.pair.universe;
  if (next == used.size()) {
    std::set<int> images;
    for (int input : used) images.insert(to[static_cast<std::size_t>(input)]);
    if (images.size() == used.size()) return;  // a renaming, not a merge
    keys.insert(merged_key(universe, candidate.terms, to, renamings));
    return;
  }
  const auto input = static_cast<std::size_t>(used[next]);
  bool fresh_tried = false;  // the first image of the class not taken before
  for (std::size_t image = 0; image < universe.inputs.size(); ++image) {
    if (universe.inputs[image].role != universe.inputs[input].role || universe.inputs[image].dims != universe.inputs[input].dims) {
      continue;
    }
    const bool taken = std::any_of(used.begin(), used.begin() + static_cast<std::ptrdiff_t>(next),
                                   [&](int earlier) { return to[static_cast<std::size_t>(earlier)] == static_cast<int>(image); });
    if (!taken) {
      if (fresh_tried) continue;
      fresh_tried = true;
    }
    to[input] = static_cast<int>(image);
    merged_keys(candidate, renamings, used, next + 1, to, keys);
  }
  to[input] = static_cast<int>(input);
}

/// TASO's input tensor renaming, for renamings that merge inputs (Fig. 4a: C renamed A): a
/// candidate that a more general one gives that way is dropped.
std::vector<Candidate> drop_merged_instances(std::vector<Candidate> candidates, int jobs) {
  std::map<const Universe*, std::vector<std::vector<int>>> renamings_of;  // once per universe
  for (const Candidate& candidate : candidates) {
    const Universe& universe = *candidate.pair.universe;
    if (!renamings_of.count(&universe)) renamings_of.emplace(&universe, renamings(universe));
  }
  std::vector<std::vector<uint64_t>> merged(candidates.size());
  run_parallel(candidates.size(), jobs, [&](std::size_t i) {
    const Candidate& candidate = candidates[i];
    const Universe& universe = *candidate.pair.universe;
    const std::set<int> read = inputs_read(candidate.terms, true);
    std::vector<int> to(universe.inputs.size());
    std::iota(to.begin(), to.end(), 0);
    std::set<uint64_t> keys;
    merged_keys(candidate, renamings_of.at(&universe), {read.begin(), read.end()}, 0, to, keys);
    keys.erase(candidate.key);
    for (uint64_t key : keys) merged[i].push_back(universe_key(universe, key));
  });
  KeySet instances;
  for (const std::vector<uint64_t>& keys : merged) {
    for (uint64_t key : keys) instances.insert(key);
  }
  std::vector<char> drop(candidates.size(), 0);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    drop[i] = instances.count(universe_key(*candidates[i].pair.universe, candidates[i].key)) > 0;
  }
  return kept_where_not(std::move(candidates), drop, jobs);
}

/// Drops the candidates a more general confirmed one (`keys`) covers by TASO's two
/// common-subgraph forms.
std::vector<Candidate> prune_common_subgraphs(std::vector<Candidate> candidates, const KeySet& keys,
                                              const EnumerateOptions& options) {
  std::vector<char> covered(candidates.size(), 0);
  run_parallel(candidates.size(), options.jobs, [&](std::size_t i) {
    const Candidate& candidate = candidates[i];
    const Universe& universe = *candidate.pair.universe;
    const std::vector<TermPairs> cut = without_common_outputs(universe, candidate.terms);
    covered[i] = std::any_of(cut.begin(), cut.end(), [&](const TermPairs& terms) { return known(universe, terms, keys); }) ||
                 common_operator_generalises(candidate, keys, options);
  });
  return kept_where_not(std::move(candidates), covered, options.jobs);
}

/// True when no operator sub-term of one output is a sub-term of another: the outputs share no
/// computation.
bool independent_outputs(const std::vector<const Term*>& outputs) {
  std::vector<std::vector<Term>> parts;
  for (const Term* output : outputs) parts.push_back(operator_subterms(*output));
  for (std::size_t i = 0; i < parts.size(); ++i) {
    for (std::size_t j = i + 1; j < parts.size(); ++j) {
      for (const Term& term : parts[i]) {
        if (std::find(parts[j].begin(), parts[j].end(), term) != parts[j].end()) return false;
      }
    }
  }
  return true;
}

/// True when `candidate` is single-output candidates side by side (drop_side_by_side).
bool side_by_side(const Candidate& candidate, const KeySet& keys) {
  const Universe& universe = *candidate.pair.universe;
  bool side_by_side = candidate.terms.size() > 1;
  std::vector<const Term*> sources, targets;
  for (const auto& [source, target] : candidate.terms) {
    sources.push_back(&source);
    targets.push_back(&target);
  }
  side_by_side = side_by_side && independent_outputs(sources) && independent_outputs(targets);
  for (std::size_t i = 0; side_by_side && i < candidate.terms.size(); ++i) {
    const TermPairs one{candidate.terms[i]};
    side_by_side = one.front().first == one.front().second || known(universe, one, keys);
  }
  if (side_by_side) {
    std::vector<std::string> names;
    for (const InputSpec& input : universe.inputs) names.push_back(input.name);
    std::string text;
    for (const auto& [source, target] : candidate.terms) {
      text += (text.empty() ? "" : ", ") + to_text(universe, source, names) + " -> " + to_text(universe, target, names);
    }
    logger("generate")->debug("side by side: {}", text);
  }
  return side_by_side;
}

/// Drops each candidate of several outputs that is single-output candidates side by side: its
/// outputs share no computation in source or target, and each output's pair is one of the
/// candidates (`keys`, before pruning: whatever was pruned, the kept ones make), so rewriting
/// the outputs one at a time gives its target. At 4 operators most candidates of two outputs are
/// two unrelated rules over common inputs.
std::vector<Candidate> drop_side_by_side(std::vector<Candidate> candidates, const KeySet& keys, int jobs) {
  std::vector<char> side(candidates.size(), 0);
  run_parallel(candidates.size(), jobs, [&](std::size_t i) { side[i] = side_by_side(candidates[i], keys); });
  return kept_where_not(std::move(candidates), side, jobs);
}

nlohmann::json graph_json(const CompactGraph& graph) {
  nlohmann::json ops = nlohmann::json::array();
  for (int i = 0; i < graph.num_ops; ++i) {
    const OpRecord& op = graph.ops[static_cast<std::size_t>(i)];
    ops.push_back({op.choice, op.inputs[0], op.inputs[1]});
  }
  return {{"ops", ops}, {"input_outputs", graph.input_outputs}};
}

CompactGraph graph_from_json(const nlohmann::json& json) {
  CompactGraph graph;
  const nlohmann::json& ops = json.at("ops");
  if (ops.size() > static_cast<std::size_t>(kMaxOps)) throw Error("a graph with more than 6 operators");
  graph.num_ops = static_cast<uint8_t>(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    graph.ops[i] = OpRecord{ops[i].at(0).get<uint8_t>(), {ops[i].at(1).get<uint8_t>(), ops[i].at(2).get<uint8_t>()}};
  }
  graph.input_outputs = json.at("input_outputs").get<uint16_t>();
  return graph;
}

nlohmann::json counts_json(const StageCounts& counts) {
  return {{"enumerated", counts.enumerated}, {"graphs", counts.graphs}, {"candidates", counts.candidates},
          {"cut", counts.cut}, {"renamed", counts.renamed}};
}

}  // namespace

std::vector<Candidate> kept_where_not(std::vector<Candidate> candidates, const std::vector<char>& drop, int jobs) {
  std::vector<Candidate> kept;
  kept.reserve(static_cast<std::size_t>(std::count(drop.begin(), drop.end(), 0)));
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!drop[i]) kept.push_back(std::move(candidates[i]));
  }
  run_parallel(candidates.size(), jobs, [&](std::size_t i) {
    if (drop[i]) candidates[i] = Candidate{};
  });
  return kept;
}

GenerateResult generate(const GenerateOptions& options) {
  if (options.max_ops < 1 || options.max_ops > kMaxOps) throw Error("--max-ops must be between 1 and 6");
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards) throw Error("--shard I/K needs 0 <= I < K");
  const EnumerateOptions enumerate_with = enumerate_options(options);
  auto start = std::chrono::steady_clock::now();
  GenerateResult result;
  std::vector<Candidate> candidates;
  for (Universe& selected : select_universes(options.ops)) {
    auto universe = std::make_shared<const Universe>(std::move(selected));
    const Enumeration enumeration = enumerate(*universe, enumerate_with);
    logger("generate")->info("{}: {} graphs enumerated, {} kept by this shard", universe->name, enumeration.enumerated,
                             enumeration.graphs.size());
    result.counts.enumerated += enumeration.enumerated;
    result.counts.graphs += enumeration.graphs.size();
    pair_classes(universe, enumeration.graphs, enumerate_with, candidates, result.counts);
  }
  logger("generate")->info("{} candidate pairs of equal fingerprint, {} covered by a smaller one at a common output",
                           result.counts.candidates, result.counts.cut);
  keep_one_per_key(candidates);
  result.counts.renamed = candidates.size();
  result.counts.seconds.pairing = lap(start);
  logger("generate")->info("{} after input renaming ({:.1f} s)", candidates.size(), result.counts.seconds.pairing);
  if (options.shards == 1) {
    result.rules = finish(std::move(candidates), result.counts, options);
  } else {
    result.candidates = std::move(candidates);
  }
  return result;
}

std::vector<rules::Rule> finish(std::vector<Candidate> candidates, StageCounts& counts, const GenerateOptions& options) {
  const EnumerateOptions enumerate_with = enumerate_options(options);
  auto start = std::chrono::steady_clock::now();
  keep_one_per_key(candidates);
  // Pruning trusts fingerprints, as TASO does (it saw no equal fingerprints of different graphs):
  // a more general candidate covers a pruned one before any float check.
  counts.renamed = candidates.size();
  KeySet keys;
  for (const Candidate& candidate : candidates) keys.insert(universe_key(*candidate.pair.universe, candidate.key));
  candidates = drop_merged_instances(std::move(candidates), options.jobs);
  counts.general = candidates.size();
  logger("generate")->info("{} after merging inputs", counts.general);
  candidates = prune_common_subgraphs(std::move(candidates), keys, enumerate_with);
  counts.common_subgraph = candidates.size();
  counts.seconds.pruning = lap(start);
  logger("generate")->info("{} after common subgraphs ({:.1f} s)", counts.common_subgraph, counts.seconds.pruning);
  const std::size_t before_side_by_side = candidates.size();
  candidates = drop_side_by_side(std::move(candidates), keys, options.jobs);
  counts.side_by_side = before_side_by_side - candidates.size();
  candidates = drop_implied(std::move(candidates), options.jobs);
  counts.implied = candidates.size();
  counts.seconds.implied = lap(start);
  logger("generate")->info("{} rules after pruning ({:.1f} s); checking them on floats", candidates.size(),
                           counts.seconds.implied);
  std::vector<rules::Rule> rules = confirm(std::move(candidates), options, counts);
  counts.seconds.float_check = lap(start);
  logger("generate")->info("{} confirmed on floats ({:.1f} s)", counts.confirmed, counts.seconds.float_check);
  // Named in the order of their `before -> after` lines, which is readable and independent of
  // hash values.
  std::sort(rules.begin(), rules.end(), [](const rules::Rule& a, const rules::Rule& b) {
    return a.name != b.name ? a.name < b.name : a.comment < b.comment;
  });
  std::map<std::string, int> numbers;
  for (rules::Rule& rule : rules) rule.name += "-" + std::to_string(++numbers[rule.name]);
  return rules;
}

std::string candidates_text(const std::vector<Candidate>& candidates, const StageCounts& counts,
                            const GenerateOptions& options) {
  const nlohmann::json head = {{"format", "graphsub-generated-candidates-1"},
                               {"options",
                                {{"max_ops", options.max_ops}, {"ops", options.ops}, {"seed", options.seed},
                                 {"modulus", options.modulus}, {"shard", options.shard}, {"shards", options.shards}}},
                               {"counts", counts_json(counts)}};
  // One candidate per line, each made and dropped in turn: a document of every candidate held
  // at once took 20 times the candidates' own memory (a shard of an eighth of --max-ops 4 peaked
  // at 3.2 GB, more than the whole run).
  std::string text = head.dump();
  text.pop_back();  // the closing brace: the candidates go last
  text += ",\"candidates\":[";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    const nlohmann::json entry = {{"universe", candidate.pair.universe->name},
                                  {"source", graph_json(candidate.pair.source)},
                                  {"target", graph_json(candidate.pair.target)},
                                  {"outputs", candidate.pair.outputs},
                                  {"renaming", candidate.pair.renaming}};
    text += (i == 0 ? "\n" : ",\n") + entry.dump();
  }
  text += "\n]}\n";
  return text;
}

std::vector<Candidate> read_candidates(const std::string& text, const std::string& file, StageCounts& counts,
                                       GenerateOptions& options) {
  try {
    // candidates_text's layout: the head and `"candidates":[` on the first line, then one
    // candidate a line, each parsed in turn (a document of them all would take 20 times their
    // memory). Any other layout of the same JSON is parsed whole.
    const std::string marker = ",\"candidates\":[";
    const std::size_t first_end = text.find('\n');
    const bool by_line = first_end != std::string::npos && first_end >= marker.size() &&
                         text.compare(first_end - marker.size(), marker.size(), marker) == 0;
    const nlohmann::json json =
        by_line ? nlohmann::json::parse(text.substr(0, first_end - marker.size()) + "}") : nlohmann::json::parse(text);
    if (json.at("format") != "graphsub-generated-candidates-1") throw Error("not a file of generated candidates");
    const nlohmann::json& saved = json.at("options");
    options.max_ops = saved.at("max_ops").get<int>();
    options.ops = saved.at("ops").get<std::vector<std::string>>();
    options.seed = saved.at("seed").get<uint64_t>();
    options.modulus = saved.at("modulus").get<uint32_t>();
    options.shards = saved.at("shards").get<int>();
    options.shard = saved.at("shard").get<int>();
    const nlohmann::json& saved_counts = json.at("counts");
    counts.enumerated = saved_counts.at("enumerated").get<uint64_t>();
    counts.graphs += saved_counts.at("graphs").get<uint64_t>();
    counts.candidates += saved_counts.at("candidates").get<uint64_t>();
    counts.cut += saved_counts.at("cut").get<uint64_t>();
    counts.renamed += saved_counts.at("renamed").get<uint64_t>();
    std::map<std::string, std::shared_ptr<const Universe>> universes;
    for (Universe& universe : select_universes(options.ops)) {
      const std::string name = universe.name;
      universes[name] = std::make_shared<const Universe>(std::move(universe));
    }
    std::vector<Candidate> candidates;
    auto add = [&](const nlohmann::json& entry) {
      const auto found = universes.find(entry.at("universe").get<std::string>());
      if (found == universes.end()) throw Error("a candidate of an unknown universe");
      Candidate candidate;
      candidate.pair = GraphPair{found->second, graph_from_json(entry.at("source")), graph_from_json(entry.at("target")),
                                 entry.at("outputs").get<std::vector<std::pair<int, int>>>(),
                                 entry.at("renaming").get<std::vector<int>>()};
      with_terms(candidate);
      candidate.key = canonical_key(*found->second, candidate.terms).first;
      candidates.push_back(std::move(candidate));
    };
    if (!by_line) {
      for (const nlohmann::json& entry : json.at("candidates")) add(entry);
      return candidates;
    }
    bool closed = false;
    for (std::size_t begin = first_end + 1; begin < text.size() && !closed;) {
      std::size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + begin, end - begin);
      begin = end + 1;
      if (line == "]}") {
        closed = true;
      } else if (!line.empty()) {
        if (line.back() == ',') line.remove_suffix(1);
        add(nlohmann::json::parse(line));
      }
    }
    if (!closed) throw Error("the candidate list is cut short");
    return candidates;
  } catch (const nlohmann::json::exception& error) {
    throw Error(file + ": not a file of generated candidates (" + error.what() + ")");
  } catch (const Error& error) {
    throw Error(file + ": " + error.what());
  }
}

}  // namespace graphsub::generate
