// Typed operator parameters: a small map from name to value, kept sorted so equal nodes hash equal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace graphsub::ir {

/// One parameter value. Floats are float32, as in ONNX.
using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                               std::vector<std::string>, TensorPtr>;

/// The parameters of a modelled node, in canonical form: each op's `canonicalize` fills in every
/// default, so two nodes that compute the same thing carry equal attributes.
class Attributes {
 public:
  /// Sets (or replaces) a parameter.
  void set(std::string_view name, AttrValue value);
  /// Removes a parameter if present.
  void erase(std::string_view name);
  /// The value, or nullptr when absent.
  const AttrValue* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  /// Typed reads with a default for absent names; a present value of another type throws
  /// std::invalid_argument naming the parameter.
  int64_t get_int(std::string_view name, int64_t fallback) const;
  float get_float(std::string_view name, float fallback) const;
  std::string get_string(std::string_view name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(std::string_view name, const std::vector<int64_t>& fallback) const;
  std::vector<float> get_floats(std::string_view name, const std::vector<float>& fallback) const;

  /// Entries sorted by name.
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  /// Deterministic hash of names and values (tensors by content).
  uint64_t hash() const;
  bool operator==(const Attributes& other) const;
  bool operator!=(const Attributes& other) const { return !(*this == other); }

 private:
  /// The entry named `name`, or end(): a node has a handful of parameters, so a scan that
  /// compares lengths first beats a binary search of string comparisons.
  std::vector<std::pair<std::string, AttrValue>>::const_iterator position(std::string_view name) const;

  std::vector<std::pair<std::string, AttrValue>> items_;
};

/// "strides=[2,2]" style rendering of one value, for reports and errors.
std::string to_string(const AttrValue& value);

}  // namespace graphsub::ir
