// The cost cache file: measured operator times keyed by op signature and backend.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace graphsub::cost {

/// Where the measurements of a cache were taken; a cache is only meaningful on that setup.
struct CacheHeader {
  std::string device;  ///< The measured device, e.g. "NVIDIA H100 80GB HBM3" or a CPU model.
  std::string driver;  ///< Driver version (the CUDA driver; empty on a CPU).
  std::map<std::string, std::string> libraries;  ///< Library name → version ("cudnn" → "9.1.0").
};

/// One measured operator: mean and standard deviation of `runs` timed executions.
struct CacheEntry {
  std::string signature;  ///< op_signature of the node.
  std::string backend;    ///< What ran it: "reference", "cudnn", "cublas", "onnxruntime-cpu", ...
  double mean_ms = 0;     ///< Mean time, milliseconds.
  double std_ms = 0;      ///< Standard deviation of the time, milliseconds.
  int64_t runs = 0;       ///< Timed runs behind the mean (warm-up excluded).

  bool operator==(const CacheEntry& other) const {
    return signature == other.signature && backend == other.backend && mean_ms == other.mean_ms &&
           std_ms == other.std_ms && runs == other.runs;
  }
};

/// The measured costs of one device, kept sorted by (signature, backend) so that writing is
/// deterministic. The file format (JSON, schema_version 1) is in lib/cost/README.md. Lookups may
/// run concurrently; insert may not run concurrently with anything else.
class CostCache {
 public:
  /// The schema_version this code reads and writes.
  static constexpr int64_t kSchemaVersion = 1;

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
  /// Every entry, sorted by signature then backend.
  std::vector<CacheEntry> entries() const;
  std::size_t size() const { return entries_.size(); }

 private:
  CacheHeader header_;
  std::map<std::pair<std::string, std::string>, CacheEntry> entries_;
};

/// The canonical text of what determines a node's run time, the key of the cache:
///   Name(attr=value,...;type,...)
/// Name is the op name (an opaque node's domain-qualified ONNX op_type); the attributes are in
/// name order, rendered with ir::to_string (an opaque node has instead one `onnx_node=<hash>` of
/// its serialized NodeProto); the types are the inputs' (an omitted optional input is `none`), with
/// symbolic dims by name. Example:
///   Conv(activation="relu",dilations=[1,1],group=1,kernel_shape=[3,3],pads=[1,1,1,1],
///        strides=[1,1];float32[1,64,56,56],float32[64,64,3,3],float32[64])
std::string op_signature(const ir::Graph& graph, ir::NodeId id);

}  // namespace graphsub::cost
