// Unique, deterministic names for the values and nodes export writes.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace graphsub::onnx_io {

/// One namespace of unique names. Names are claimed first come, first served; fresh names are
/// "<prefix>_<n>" with the smallest free n, and also avoid the reserved names.
class NameTable {
 public:
  NameTable() = default;
  /// `reserved`: names fresh() must not produce (the names defined inside subgraphs).
  explicit NameTable(std::unordered_set<std::string> reserved) : reserved_(std::move(reserved)) {}

  /// Claims `name`; false when it is empty or claimed already.
  bool claim(const std::string& name);
  /// Claims and returns a fresh name "<prefix>_<n>".
  std::string fresh(const std::string& prefix);
  /// Claims `name` when possible, else a fresh name from `prefix`.
  std::string keep_or_fresh(const std::string& name, const std::string& prefix);

 private:
  std::unordered_set<std::string> used_;
  std::unordered_set<std::string> reserved_;
  std::unordered_map<std::string, int64_t> next_;
};

/// The names of everything export writes: one table for values, one for nodes, and the name
/// chosen for each value id.
class ExportNames {
 public:
  ExportNames(std::size_t value_count, std::unordered_set<std::string> reserved)
      : values_(std::move(reserved)), by_value_(value_count) {}

  /// The name given to a value; "" for kNoValue and for values not named (yet).
  const std::string& value(ir::ValueId id) const;
  bool is_named(ir::ValueId id) const { return !value(id).empty(); }
  /// Records the name of a value; the caller has claimed it in values().
  void set(ir::ValueId id, std::string name) { by_value_.at(id) = std::move(name); }
  /// The table of value names, for claiming and fresh names.
  NameTable& values() { return values_; }
  /// A node's own name when it is unique, else a fresh "<op_type>_<n>".
  std::string node(const std::string& name, const std::string& op_type);

 private:
  NameTable values_;
  NameTable nodes_;
  std::vector<std::string> by_value_;
};

}  // namespace graphsub::onnx_io
