// The cost cache file: measured operator times keyed by op signature and backend.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace graphsub::cost {

/// Sizes given to symbolic dims (`--dim N=8`); a dim not named here has size 1.
using DimSizes = std::map<std::string, int64_t>;

/// Where and how the measurements of a cache were taken: numbers are comparable only between
/// caches whose headers are equal.
struct CacheHeader {
  std::string target;  ///< The target measured: "onnxruntime-cpu", "cuda".
  std::string device;  ///< The measured device, e.g. "NVIDIA H100 80GB HBM3" or a CPU model.
  std::string driver;  ///< Driver version (the CUDA driver; empty on a CPU).
  std::map<std::string, std::string> libraries;  ///< Library name → version ("onnxruntime" → "1.23.2").
  std::map<std::string, std::string> settings;   ///< Session settings ("intra_op_threads" → "1").

  bool operator==(const CacheHeader& other) const {
    return target == other.target && device == other.device && driver == other.driver &&
           libraries == other.libraries && settings == other.settings;
  }
  bool operator!=(const CacheHeader& other) const { return !(*this == other); }
};

/// One line describing a header ("onnxruntime-cpu on Intel Xeon ..., onnxruntime 1.23.2,
/// graph_optimization_level=all, intra_op_threads=1"), for messages and reports.
std::string describe(const CacheHeader& header);

/// One measured operator or graph: the median of `runs` timed executions and their spread; or,
/// when the target could not run it, the error (and no times).
struct CacheEntry {
  std::string signature;  ///< op_signature of the node, or graph_signature of a graph.
  std::string backend;    ///< What ran it: "onnxruntime-cpu", "cudnn", "cublas", ...
  double median_ms = 0;   ///< Median time, milliseconds.
  double spread_ms = 0;   ///< Robust spread of the time (interquartile range / 1.349), milliseconds.
  int64_t runs = 0;       ///< Timed runs behind the median (warm-up excluded); 0 with an error.
  std::string error;      ///< Why it could not be measured; empty for a measurement.
  /// What the target chose to run it with, where it chooses: cuDNN's convolution algorithm
  /// ("IMPLICIT_PRECOMP_GEMM"); empty otherwise.
  std::string algorithm = {};

  bool failed() const { return !error.empty(); }
  bool operator==(const CacheEntry& other) const {
    return signature == other.signature && backend == other.backend && median_ms == other.median_ms &&
           spread_ms == other.spread_ms && runs == other.runs && error == other.error && algorithm == other.algorithm;
  }
};

/// Two graphs timed alternately, run by run: the median over the rounds of the candidate's time
/// divided by the original's, and the spread of that ratio's logarithm. Pairing the runs of one
/// round cancels the machine's drift, which moves both: on a busy machine the ratio spreads a
/// third as much as either time.
struct Comparison {
  std::string original;   ///< graph_signature of the original graph.
  std::string candidate;  ///< graph_signature of the candidate.
  std::string backend;
  double median_ratio = 1;  ///< Median of candidate time / original time over the rounds.
  double spread = 0;        ///< Interquartile range / 1.349 of the log of the ratio.
  int64_t runs = 0;         ///< Rounds; 0 with an error.
  std::string error;        ///< Why the target could not run the two; empty for a measurement.
  /// Each graph's own median time and spread over the same rounds, milliseconds; 0 where not
  /// recorded (comparisons cached before 2026-11-29). A graph's own entry in the cache is its
  /// last timing, which another comparison may have made; these are the times of this one.
  double original_ms = 0;
  double original_spread_ms = 0;
  double candidate_ms = 0;
  double candidate_spread_ms = 0;

  bool failed() const { return !error.empty(); }
  bool has_times() const { return original_ms > 0 && candidate_ms > 0; }
  bool operator==(const Comparison& other) const {
    return original == other.original && candidate == other.candidate && backend == other.backend &&
           median_ratio == other.median_ratio && spread == other.spread && runs == other.runs &&
           error == other.error && original_ms == other.original_ms &&
           original_spread_ms == other.original_spread_ms && candidate_ms == other.candidate_ms &&
           candidate_spread_ms == other.candidate_spread_ms;
  }
};

/// A value as one run of a whole graph computed it: its sizes and, for an integer tensor of at
/// most profile::kObservedElements elements (a shape, a Reshape target), its elements.
struct ObservedValue {
  std::vector<int64_t> shape;
  std::optional<std::vector<int64_t>> integers;
  bool operator==(const ObservedValue& other) const { return shape == other.shape && integers == other.integers; }
};
/// Observed values by name.
using Observed = std::map<std::string, ObservedValue>;

/// One run of a measuring instance (pipeline::measuring_instance): the values asked for, as the
/// target computed them. Kept so that a warm run, or a run with the cache pinned on a machine
/// without the target's runtime, sizes the graph's parts as the run that measured them did.
struct Observation {
  /// graph_signature of the instance, then `;observing=<hash of the values' names>`.
  std::string signature;
  std::string backend;  ///< What ran it: the target's backend, or "reference" (graphsub's executor).
  Observed values;
  bool operator==(const Observation& other) const {
    return signature == other.signature && backend == other.backend && values == other.values;
  }
};

/// The measured costs of one target, kept sorted by (signature, backend) so that writing is
/// deterministic. The file format (JSON, schema_version 1) is in lib/cost/README.md. Lookups may
/// run concurrently; insert may not run concurrently with anything else.
class CostCache {
 public:
  /// The schema_version this code reads and writes (1 had no target, settings or errors, and
  /// kept means).
  static constexpr int64_t kSchemaVersion = 2;

  CostCache() = default;
  explicit CostCache(CacheHeader header) : header_(std::move(header)) {}

  /// Reads a cache file. Throws graphsub::Error naming the file when it cannot be read, is not
  /// JSON, has another schema_version, or has a missing or mistyped field or a duplicate entry.
  static CostCache read(const std::string& path);
  /// Writes the cache as JSON, entries sorted by signature then backend, through a temporary file
  /// renamed over `path`, so a reader never sees half a file. Throws graphsub::Error on failure.
  void write(const std::string& path) const;

  const CacheHeader& header() const { return header_; }
  /// The entry for a signature on a backend, or nullptr.
  const CacheEntry* find(const std::string& signature, const std::string& backend) const;
  /// Adds an entry, replacing the one with the same signature and backend.
  void insert(CacheEntry entry);
  /// Adds the entries, comparisons and observations of `other` that this cache lacks (this
  /// cache's own win).
  void merge(const CostCache& other);
  /// The comparison of `candidate` against `original` on a backend, or nullptr.
  const Comparison* find_comparison(const std::string& original, const std::string& candidate,
                                    const std::string& backend) const;
  /// Adds a comparison, replacing the one of the same graphs and backend.
  void insert(Comparison comparison);
  /// Every comparison, sorted by original, candidate, backend.
  std::vector<Comparison> comparisons() const;

  /// The observation of a measuring instance by its signature (whatever ran it), or nullptr.
  const Observation* find_observation(const std::string& signature) const;
  /// Adds an observation, replacing the one of the same signature.
  void insert(Observation observation);
  /// Every observation, sorted by signature.
  std::vector<Observation> observations() const;
  /// Every entry, sorted by signature then backend.
  std::vector<CacheEntry> entries() const;
  /// Entries, comparisons and observations.
  std::size_t size() const { return entries_.size() + comparisons_.size() + observations_.size(); }

 private:
  CacheHeader header_;
  std::map<std::pair<std::string, std::string>, CacheEntry> entries_;
  std::map<std::tuple<std::string, std::string, std::string>, Comparison> comparisons_;
  std::map<std::string, Observation> observations_;
};

/// The canonical text of what determines a node's run time, the key of the cache:
///   Name(attr=value,...;type,...)
/// Name is the op name (an opaque node's domain-qualified ONNX op_type); the attributes are in
/// name order, rendered with ir::to_string (an opaque node has instead one `onnx_node=<hash>` of
/// its serialized NodeProto); the types are the inputs' (an omitted optional input is `none`, a
/// weight is prefixed `const `: a runtime prepacks constant operands), with symbolic dims by name,
/// or by their size when `sizes` is given (size 1 for a dim it does not name). Example:
///   Conv(activation="relu",dilations=[1,1],group=1,kernel_shape=[3,3],pads=[1,1,1,1],
///        strides=[1,1];float32[1,64,56,56],const float32[64,64,3,3],const float32[64])
std::string op_signature(const ir::Graph& graph, ir::NodeId id, const DimSizes* sizes = nullptr);

/// The key of a whole graph's measured time:
///   Graph(<structural hash>;nodes=<live nodes>;<input types>[;name=size]...)
/// with the inputs' types at the given sizes and the size of each symbolic dim the inputs have
/// (sizes of other symbols do not change what runs, so they stay out of the key). The structural
/// hash covers operators, attributes, weights by content and inputs by name, so equal keys mean
/// graphs that run the same computation on inputs of the same types.
std::string graph_signature(const ir::Graph& graph, const DimSizes& sizes);

/// The key of a run of a measuring instance (Observation::signature): graph_signature of the
/// instance, then `;observing=<hash of the names of the values asked for>` (in name order).
std::string observation_signature(const ir::Graph& instance, std::vector<std::string> names, const DimSizes& sizes);
/// graph_signature with the graph's timing_hash in place of its structural hash (`Timing(...)`):
/// equal keys mean graphs that run the same computation on inputs of the same types, up to the
/// values of their large floating-point weights and the names of their inputs, so they take the
/// same time (two layers of a model). Not a cache key: a run reuses a comparison it made of
/// one such pair for another (pipeline::Measurer).
std::string timing_signature(const ir::Graph& graph, const DimSizes& sizes);

}  // namespace graphsub::cost
