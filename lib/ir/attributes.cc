// Typed operator parameters.
#include "ir/attributes.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "ir/hash.h"

namespace graphsub::ir {
namespace {

template <class T>
const T& typed(const AttrValue& value, std::string_view name) {
  const T* typed_value = std::get_if<T>(&value);
  if (!typed_value) throw std::invalid_argument("attribute '" + std::string(name) + "' has an unexpected type");
  return *typed_value;
}

template <class T>
std::string join(const std::vector<T>& values) {
  std::ostringstream out;
  out << "[";
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  out << "]";
  return out.str();
}

/// Integers without a stream: the rule generator describes every instance it draws with these,
/// and a stream's construction cost more than the digits.
std::string join(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(values[i]);
  }
  return text + "]";
}

uint64_t hash_value(uint64_t hash, const AttrValue& value) {
  hash = hash_combine(hash, value.index());
  if (const auto* v = std::get_if<int64_t>(&value)) return hash_combine(hash, static_cast<uint64_t>(*v));
  if (const auto* v = std::get_if<float>(&value)) return hash_bytes(hash, v, sizeof(float));
  if (const auto* v = std::get_if<std::string>(&value)) return hash_string(hash, *v);
  if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) {
    return hash_bytes(hash, v->data(), v->size() * sizeof(int64_t));
  }
  if (const auto* v = std::get_if<std::vector<float>>(&value)) {
    return hash_bytes(hash, v->data(), v->size() * sizeof(float));
  }
  if (const auto* v = std::get_if<std::vector<std::string>>(&value)) {
    for (const std::string& s : *v) hash = hash_string(hash, s);
    return hash;
  }
  const TensorPtr& tensor = std::get<TensorPtr>(value);
  return hash_combine(hash, tensor ? tensor->content_hash() : 0);
}

bool equal_values(const AttrValue& a, const AttrValue& b) {
  const auto* ta = std::get_if<TensorPtr>(&a);
  const auto* tb = std::get_if<TensorPtr>(&b);
  if (ta && tb) {
    if (*ta == *tb) return true;
    if (!*ta || !*tb) return false;
    return (*ta)->content_hash() == (*tb)->content_hash();
  }
  return a == b;
}

}  // namespace

std::vector<std::pair<std::string, AttrValue>>::const_iterator Attributes::position(std::string_view name) const {
  for (auto it = items_.begin(); it != items_.end(); ++it) {
    if (it->first.size() == name.size() && std::string_view(it->first) == name) return it;
  }
  return items_.end();
}

void Attributes::set(std::string_view name, AttrValue value) {
  if (const auto found = position(name); found != items_.end()) {
    items_[static_cast<std::size_t>(found - items_.begin())].second = std::move(value);
    return;
  }
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, std::string_view key) { return std::string_view(item.first) < key; });
  items_.insert(it, {std::string(name), std::move(value)});
}

void Attributes::erase(std::string_view name) {
  if (const auto found = position(name); found != items_.end()) items_.erase(found);
}

const AttrValue* Attributes::find(std::string_view name) const {
  const auto found = position(name);
  return found != items_.end() ? &found->second : nullptr;
}

int64_t Attributes::get_int(std::string_view name, int64_t fallback) const {
  const AttrValue* value = find(name);
  return value ? typed<int64_t>(*value, name) : fallback;
}

float Attributes::get_float(std::string_view name, float fallback) const {
  const AttrValue* value = find(name);
  return value ? typed<float>(*value, name) : fallback;
}

std::string Attributes::get_string(std::string_view name, const std::string& fallback) const {
  const AttrValue* value = find(name);
  return value ? typed<std::string>(*value, name) : fallback;
}

std::vector<int64_t> Attributes::get_ints(std::string_view name, const std::vector<int64_t>& fallback) const {
  const AttrValue* value = find(name);
  return value ? typed<std::vector<int64_t>>(*value, name) : fallback;
}

std::vector<float> Attributes::get_floats(std::string_view name, const std::vector<float>& fallback) const {
  const AttrValue* value = find(name);
  return value ? typed<std::vector<float>>(*value, name) : fallback;
}

uint64_t Attributes::hash() const {
  uint64_t hash = kHashSeed;
  for (const auto& [name, value] : items_) hash = hash_value(hash_string(hash, name), value);
  return hash;
}

bool Attributes::operator==(const Attributes& other) const {
  if (items_.size() != other.items_.size()) return false;
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].first != other.items_[i].first) return false;
    if (!equal_values(items_[i].second, other.items_[i].second)) return false;
  }
  return true;
}

std::string to_string(const AttrValue& value) {
  if (const auto* v = std::get_if<int64_t>(&value)) return std::to_string(*v);
  if (const auto* v = std::get_if<float>(&value)) {
    std::ostringstream out;
    out << *v;
    return out.str();
  }
  if (const auto* v = std::get_if<std::string>(&value)) return "\"" + *v + "\"";
  if (const auto* v = std::get_if<std::vector<int64_t>>(&value)) return join(*v);
  if (const auto* v = std::get_if<std::vector<float>>(&value)) return join(*v);
  if (const auto* v = std::get_if<std::vector<std::string>>(&value)) return join(*v);
  const TensorPtr& tensor = std::get<TensorPtr>(value);
  return tensor ? "tensor" + join(tensor->dims()) : "tensor(null)";
}

}  // namespace graphsub::ir
