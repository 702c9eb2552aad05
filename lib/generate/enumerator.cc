// Depth-first enumeration of graphs (TASO Alg. 1, BUILD), one thread per share of first operators.
#include "generate/enumerator.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <tuple>

namespace graphsub::generate {
namespace {

/// A symmetric combination of output hashes needs each one spread over all 64 bits first.
uint64_t avalanche(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

auto key_of(const OpRecord& op) { return std::make_tuple(op.choice, op.inputs[0], op.inputs[1]); }

/// The state of one depth-first walk: the graph so far and its evaluated slots.
class Builder {
 public:
  Builder(const Universe& universe, const EnumerateOptions& options) : universe_(universe), options_(options) {
    for (std::size_t i = 0; i < universe.inputs.size(); ++i) {
      slots_.push_back(input_slot(universe.inputs[i], static_cast<int>(i), options.seed, options.field));
    }
    uses_.assign(slots_.size(), 0);
  }

  /// Every operator that may come next, in enumeration order.
  std::vector<OpRecord> next_ops() const {
    std::vector<OpRecord> candidates;
    const auto count = static_cast<int>(slots_.size());
    for (std::size_t c = 0; c < universe_.ops.size(); ++c) {
      const OpChoice& op = universe_.ops[c];
      for (int a = 0; a < count; ++a) {
        if (op.arity == 1) {
          add_if_canonical(OpRecord{static_cast<uint8_t>(c), {static_cast<uint8_t>(a), 0}}, candidates);
          continue;
        }
        for (int b = op.commutative ? a : 0; b < count; ++b) {
          add_if_canonical(OpRecord{static_cast<uint8_t>(c), {static_cast<uint8_t>(a), static_cast<uint8_t>(b)}},
                           candidates);
        }
      }
    }
    return candidates;
  }

  /// Adds `record` when its inputs fit; false when they do not.
  bool push(const OpRecord& record) {
    const OpChoice& op = universe_.ops[record.choice];
    Inputs inputs{};
    for (int i = 0; i < op.arity; ++i) inputs[static_cast<std::size_t>(i)] = &slots_[record.inputs[static_cast<std::size_t>(i)]];
    std::optional<Outputs> outputs = apply(op, inputs, options_.field);
    if (!outputs) return false;
    for (int i = 0; i < op.arity; ++i) uses_[record.inputs[static_cast<std::size_t>(i)]] += 1;
    first_output_.push_back(static_cast<int>(slots_.size()));
    for (Slot& slot : *outputs) {
      slots_.push_back(std::move(slot));
      uses_.push_back(0);
    }
    ops_.push_back(record);
    return true;
  }

  void pop() {
    const OpRecord record = ops_.back();
    const OpChoice& op = universe_.ops[record.choice];
    for (int i = 0; i < op.arity; ++i) uses_[record.inputs[static_cast<std::size_t>(i)]] -= 1;
    slots_.resize(static_cast<std::size_t>(first_output_.back()));
    uses_.resize(slots_.size());
    first_output_.pop_back();
    ops_.pop_back();
  }

  /// BUILD: records the graph so far, then every extension by one operator.
  void build(std::vector<Enumerated>& out, uint64_t& visited) {
    record(out, visited);
    if (static_cast<int>(ops_.size()) >= options_.max_ops) return;
    for (const OpRecord& next : next_ops()) {
      if (!push(next)) continue;
      build(out, visited);
      pop();
    }
  }

 private:
  void add_if_canonical(const OpRecord& record, std::vector<OpRecord>& candidates) const {
    if (std::find(ops_.begin(), ops_.end(), record) != ops_.end()) return;  // duplicated computation
    if (!ops_.empty() && !reads_last_op(record) && !(key_of(ops_.back()) < key_of(record))) return;
    candidates.push_back(record);
  }

  bool reads_last_op(const OpRecord& record) const {
    const int first = first_output_.back();
    const int arity = universe_.ops[record.choice].arity;
    for (int i = 0; i < arity; ++i) {
      if (record.inputs[static_cast<std::size_t>(i)] >= first) return true;
    }
    return false;
  }

  void record(std::vector<Enumerated>& out, uint64_t& visited) {
    ++visited;
    uint64_t fingerprint = 0;
    for (std::size_t s = universe_.inputs.size(); s < slots_.size(); ++s) {
      if (uses_[s] == 0) fingerprint += avalanche(slots_[s].hash);
    }
    if (static_cast<int>((fingerprint >> 32) % static_cast<uint64_t>(options_.shards)) != options_.shard) return;
    Enumerated entry;
    entry.fingerprint = fingerprint;
    entry.graph.num_ops = static_cast<uint8_t>(ops_.size());
    std::copy(ops_.begin(), ops_.end(), entry.graph.ops.begin());
    out.push_back(entry);
  }

  const Universe& universe_;
  const EnumerateOptions& options_;
  std::vector<Slot> slots_;
  std::vector<int> uses_;
  std::vector<int> first_output_;
  std::vector<OpRecord> ops_;
};

/// The graphs without operators: each non-empty set of inputs as the outputs.
void add_input_sets(const Universe& universe, const EnumerateOptions& options, Enumeration& result) {
  std::vector<uint64_t> hashes;
  for (std::size_t i = 0; i < universe.inputs.size(); ++i) {
    hashes.push_back(avalanche(input_slot(universe.inputs[i], static_cast<int>(i), options.seed, options.field).hash));
  }
  for (uint32_t mask = 1; mask < (1u << hashes.size()); ++mask) {
    ++result.enumerated;
    uint64_t fingerprint = 0;
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      if (mask & (1u << i)) fingerprint += hashes[i];
    }
    if (static_cast<int>((fingerprint >> 32) % static_cast<uint64_t>(options.shards)) != options.shard) continue;
    Enumerated entry;
    entry.fingerprint = fingerprint;
    entry.graph.input_outputs = static_cast<uint16_t>(mask);
    result.graphs.push_back(entry);
  }
}

}  // namespace

bool CompactGraph::operator<(const CompactGraph& other) const {
  if (num_ops != other.num_ops) return num_ops < other.num_ops;
  if (input_outputs != other.input_outputs) return input_outputs < other.input_outputs;
  for (int i = 0; i < num_ops; ++i) {
    if (!(ops[static_cast<std::size_t>(i)] == other.ops[static_cast<std::size_t>(i)])) {
      return key_of(ops[static_cast<std::size_t>(i)]) < key_of(other.ops[static_cast<std::size_t>(i)]);
    }
  }
  return false;
}

bool CompactGraph::operator==(const CompactGraph& other) const { return !(*this < other) && !(other < *this); }

std::vector<Slot> evaluate(const Universe& universe, const CompactGraph& graph, const EnumerateOptions& options) {
  return Evaluator(universe, options).evaluate(graph);
}

Evaluator::Evaluator(const Universe& universe, const EnumerateOptions& options) : universe_(universe), field_(options.field) {
  for (std::size_t i = 0; i < universe.inputs.size(); ++i) {
    slots_.push_back(input_slot(universe.inputs[i], static_cast<int>(i), options.seed, options.field));
  }
}

const std::vector<Slot>& Evaluator::evaluate(const CompactGraph& graph) {
  int shared = 0;
  while (shared < valid_ && shared < graph.num_ops && last_.ops[static_cast<std::size_t>(shared)] == graph.ops[static_cast<std::size_t>(shared)]) {
    ++shared;
  }
  std::size_t kept = universe_.inputs.size();
  for (int i = 0; i < shared; ++i) kept += static_cast<std::size_t>(universe_.ops[graph.ops[static_cast<std::size_t>(i)].choice].outputs);
  slots_.resize(kept);
  valid_ = shared;
  last_ = graph;
  // The first two operators' slots from the memo, or computed and kept there.
  uint64_t memo_key = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const OpRecord& op = graph.ops[i];
    memo_key = memo_key << 24 | uint64_t{op.choice} << 16 | uint64_t{op.inputs[0]} << 8 | op.inputs[1];
  }
  bool remember = false;
  if (shared < 2 && graph.num_ops >= 2) {
    const auto remembered = memo_.find(memo_key);
    if (remembered != memo_.end()) {
      slots_.resize(universe_.inputs.size());
      slots_.insert(slots_.end(), remembered->second.begin(), remembered->second.end());
      valid_ = 2;
    } else {
      remember = memo_.size() < kMemoEntries;
    }
  }
  for (int i = valid_; i < graph.num_ops; ++i) {
    const OpRecord& record = graph.ops[static_cast<std::size_t>(i)];
    const OpChoice& op = universe_.ops[record.choice];
    Inputs inputs{};
    for (int k = 0; k < op.arity; ++k) inputs[static_cast<std::size_t>(k)] = &slots_[record.inputs[static_cast<std::size_t>(k)]];
    std::optional<Outputs> outputs = apply(op, inputs, field_);
    for (Slot& slot : *outputs) slots_.push_back(std::move(slot));
    valid_ = i + 1;
    if (remember && valid_ == 2) {
      memo_.emplace(memo_key, std::vector<Slot>(slots_.begin() + static_cast<std::ptrdiff_t>(universe_.inputs.size()), slots_.end()));
    }
  }
  return slots_;
}

std::vector<int> output_slots(const Universe& universe, const CompactGraph& graph) {
  const auto inputs = static_cast<int>(universe.inputs.size());
  if (graph.num_ops == 0) {
    std::vector<int> marked;
    for (int i = 0; i < inputs; ++i) {
      if (graph.input_outputs & (1u << i)) marked.push_back(i);
    }
    return marked;
  }
  int count = inputs;
  for (int i = 0; i < graph.num_ops; ++i) count += universe.ops[graph.ops[static_cast<std::size_t>(i)].choice].outputs;
  std::vector<int> uses(static_cast<std::size_t>(count), 0);
  for (int i = 0; i < graph.num_ops; ++i) {
    const OpRecord& record = graph.ops[static_cast<std::size_t>(i)];
    for (int k = 0; k < universe.ops[record.choice].arity; ++k) uses[record.inputs[static_cast<std::size_t>(k)]] += 1;
  }
  std::vector<int> outputs;
  for (int s = inputs; s < count; ++s) {
    if (uses[static_cast<std::size_t>(s)] == 0) outputs.push_back(s);
  }
  return outputs;
}

Enumeration enumerate(const Universe& universe, const EnumerateOptions& options) {
  Enumeration result;
  add_input_sets(universe, options, result);
  const std::vector<OpRecord> firsts = options.max_ops > 0 ? Builder(universe, options).next_ops() : std::vector<OpRecord>{};
  const int jobs = std::max(1, options.jobs);
  std::vector<std::vector<Enumerated>> found(static_cast<std::size_t>(jobs));
  std::vector<uint64_t> visited(static_cast<std::size_t>(jobs), 0);
  const auto by_fingerprint = [](const Enumerated& a, const Enumerated& b) {
    return a.fingerprint != b.fingerprint ? a.fingerprint < b.fingerprint : a.graph < b.graph;
  };
  // First operators taken in turn from a counter (their subtrees differ in size by orders of
  // magnitude), each thread's graphs sorted by the thread, then merged: the order is the sort's,
  // whichever thread found a graph.
  std::atomic<std::size_t> next{0};
  auto work = [&](int job) {
    Builder builder(universe, options);
    std::vector<Enumerated>& out = found[static_cast<std::size_t>(job)];
    for (std::size_t i = next++; i < firsts.size(); i = next++) {
      if (!builder.push(firsts[i])) continue;
      builder.build(out, visited[static_cast<std::size_t>(job)]);
      builder.pop();
    }
    std::sort(out.begin(), out.end(), by_fingerprint);
  };
  std::vector<std::thread> threads;
  for (int job = 1; job < jobs; ++job) threads.emplace_back(work, job);
  work(0);
  for (std::thread& thread : threads) thread.join();
  std::sort(result.graphs.begin(), result.graphs.end(), by_fingerprint);  // the input sets
  for (int job = 0; job < jobs; ++job) {
    std::vector<Enumerated>& part = found[static_cast<std::size_t>(job)];
    result.enumerated += visited[static_cast<std::size_t>(job)];
    const auto middle = static_cast<std::ptrdiff_t>(result.graphs.size());
    result.graphs.insert(result.graphs.end(), part.begin(), part.end());
    std::vector<Enumerated>().swap(part);
    std::inplace_merge(result.graphs.begin(), result.graphs.begin() + middle, result.graphs.end(), by_fingerprint);
  }
  return result;
}

}  // namespace graphsub::generate
