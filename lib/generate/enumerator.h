// TASO Alg. 1, step 1: every graph of up to N operators over a universe, with its fingerprint.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "generate/op_set.h"
#include "generate/slot.h"

namespace graphsub::generate {

/// The most operators a graph may have.
constexpr int kMaxOps = 6;

/// One operator of a compact graph: its choice in the universe and the slots it reads (inputs
/// are slots 0 .. I-1, each operator's outputs follow in order).
struct OpRecord {
  uint8_t choice = 0;
  std::array<uint8_t, 2> inputs{};
  bool operator==(const OpRecord& other) const { return choice == other.choice && inputs == other.inputs; }
};

/// A graph in 20 bytes: its operators in order; a graph without operators outputs the inputs
/// `input_outputs` marks (bit i: input i), so `split(concat(a, b)) -> a, b` can be found.
struct CompactGraph {
  uint8_t num_ops = 0;
  uint16_t input_outputs = 0;
  std::array<OpRecord, kMaxOps> ops{};
  bool operator<(const CompactGraph& other) const;
  bool operator==(const CompactGraph& other) const;
};

/// An enumerated graph and its fingerprint (TASO's hash2 of the hash1 of each output).
struct Enumerated {
  uint64_t fingerprint = 0;
  CompactGraph graph;
};

/// How to enumerate.
struct EnumerateOptions {
  int max_ops = 3;
  int jobs = 1;
  int shard = 0;        ///< Keep the graphs whose fingerprint's top 32 bits % shards == shard.
  int shards = 1;
  uint64_t seed = 1;    ///< Input values.
  Field field;
};

/// What enumerate found.
struct Enumeration {
  std::vector<Enumerated> graphs;  ///< This shard's graphs, by (fingerprint, graph).
  uint64_t enumerated = 0;         ///< Graphs visited in all shards (0-operator ones included).
};

/// The slots of `graph` evaluated over `universe`'s inputs (inputs first, then each op's outputs).
std::vector<Slot> evaluate(const Universe& universe, const CompactGraph& graph, const EnumerateOptions& options);

/// Evaluates graph after graph, the inputs made once and the slots of the operators a graph
/// begins with like the one before kept (the graphs of a fingerprint class are sorted, so
/// neighbours often share their first operators), and the slots of the first two operators kept
/// for every pair met (up to kMemoEntries: a universe has a few thousand such pairs, and pairing
/// evaluates millions of graphs that begin with one of them).
class Evaluator {
 public:
  Evaluator(const Universe& universe, const EnumerateOptions& options);
  /// evaluate(universe, graph, options); valid until the next call.
  const std::vector<Slot>& evaluate(const CompactGraph& graph);

 private:
  static constexpr std::size_t kMemoEntries = 20000;

  const Universe& universe_;
  Field field_;
  std::vector<Slot> slots_;
  CompactGraph last_;        ///< The graph `slots_` holds, its first `valid_` operators evaluated.
  int valid_ = 0;
  /// The output slots of a graph's first two operators, by the two operators (memo_key).
  std::unordered_map<uint64_t, std::vector<Slot>> memo_;
};

/// Indices of the slots `graph` outputs: operator outputs nothing reads, or the marked inputs.
std::vector<int> output_slots(const Universe& universe, const CompactGraph& graph);

/// Every graph of 0 .. max_ops operators over `universe` without duplicated computation (two
/// operators with one choice on the same inputs), each once up to the order of independent
/// operators as far as a local order check finds (a new operator reads the previous one's output
/// or sorts after it). Deterministic for any number of jobs.
Enumeration enumerate(const Universe& universe, const EnumerateOptions& options);

}  // namespace graphsub::generate
