// `generate-rules`: TASO Alg. 1 and §4 — enumerate, pair by fingerprint, confirm on floats, prune.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generate/rule_writer.h"
#include "generate/term.h"
#include "rules/rule.h"

namespace graphsub::generate {

/// How to generate.
struct GenerateOptions {
  int max_ops = 3;
  std::vector<std::string> ops;  ///< `universe.op` names; empty: every op of the default universes.
  int jobs = 1;
  int shard = 0;                 ///< This run keeps the fingerprints of shard `shard` of `shards`.
  int shards = 1;
  uint64_t seed = 1;             ///< Fingerprint inputs.
  uint32_t modulus = Field::kMersenne31;  ///< The prime fingerprints are computed modulo.
  int float_instances = 2;       ///< Random-shape instances each candidate is confirmed on.
  int sum_instances = 6;         ///< Instances for a rule with a condition on a sum of dims.
  /// Instances each opening of a fixed parameter is checked on, each binding what the step opens
  /// to another value than its literal (lib/generate/README.md, "Opening fixed parameters").
  int generalise_instances = 3;
};

/// Where a run's time went, by stage (wall-clock seconds; reported, never written to a rule file).
struct StageSeconds {
  double pairing = 0;      ///< Enumeration, fingerprints, pairing and renaming.
  double pruning = 0;      ///< Merging inputs and the common-subgraph forms.
  double implied = 0;      ///< The implied stage.
  double float_check = 0;  ///< The float check and the opening of window parameters.
};

/// How many substitutions remain after each stage, in order (TASO Table 3 reports candidates,
/// renaming and common subgraph).
struct StageCounts {
  uint64_t enumerated = 0;      ///< Graphs visited (all shards).
  uint64_t graphs = 0;          ///< Graphs kept by this shard.
  uint64_t candidates = 0;      ///< Ordered pairs of equal fingerprint a rule can be written of.
  uint64_t cut = 0;             ///< Of those, covered by a smaller one at a common output.
  uint64_t renamed = 0;         ///< The rest after input tensor renaming.
  uint64_t general = 0;         ///< After dropping those a more general one gives by merging inputs.
  uint64_t common_subgraph = 0; ///< After both common-subgraph forms.
  uint64_t side_by_side = 0;    ///< Dropped as single-output candidates side by side (counted in `implied`).
  uint64_t implied = 0;         ///< After dropping those smaller ones make: side by side, or in one or two rewrites.
  uint64_t confirmed = 0;       ///< Of those, equal on random float inputs of random shapes: the rules.
  uint64_t float_failed = 0;    ///< Equal fingerprints, but the float check found them different.
  uint64_t no_instance = 0;     ///< No small instance the rewriter applies to: not confirmed.
  uint64_t generalised = 0;     ///< Rules with a fixed window parameter opened into a variable.
  StageSeconds seconds;
};

/// A candidate substitution: its graphs, terms and canonical key.
struct Candidate {
  GraphPair pair;
  TermPairs terms;   ///< Normalised: commutative arguments in text order.
  uint64_t key = 0;  ///< canonical_key of `terms`.
};

/// The candidates whose `drop` flag is 0, in order; the dropped ones are freed on `jobs` threads
/// (at 4 operators each pruning stage frees hundreds of thousands of term trees).
std::vector<Candidate> kept_where_not(std::vector<Candidate> candidates, const std::vector<char>& drop, int jobs);

/// What a run found.
struct GenerateResult {
  std::vector<Candidate> candidates;  ///< A shard's output: one per key, by key (empty for a whole run).
  std::vector<rules::Rule> rules;     ///< Pruned, confirmed and named, in key order (empty for a shard).
  StageCounts counts;
};

/// Enumerates every universe, pairs graphs of equal fingerprint and keeps one pair per key (input
/// renaming); when `options.shards` is 1, finishes them (`finish`). Deterministic for any number
/// of jobs. Throws graphsub::Error for bad options.
GenerateResult generate(const GenerateOptions& options);

/// The rules of the candidates of every shard: one per key; pruned (merged inputs, common
/// subgraphs, implied), pruning trusting fingerprints as TASO does; then each survivor written as
/// a rule, applied by the rewriter on random small shapes and checked on random floats through the
/// reference kernels (TASO's threshold, 1e-5); named `gen-<universe>-<n>` in the order of their
/// `before -> after` comments. The union
/// of the shards gives the file one run gives.
std::vector<rules::Rule> finish(std::vector<Candidate> candidates, StageCounts& counts,
                                const GenerateOptions& options);

/// Candidates as JSON (`--shard` output) and back; throws graphsub::Error on text that is
/// not such a file or names a universe the default op set lacks.
std::string candidates_text(const std::vector<Candidate>& candidates, const StageCounts& counts,
                            const GenerateOptions& options);
std::vector<Candidate> read_candidates(const std::string& text, const std::string& file, StageCounts& counts,
                                       GenerateOptions& options);

}  // namespace graphsub::generate
