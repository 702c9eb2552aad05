// Tables keyed by the generator's 64-bit hash keys, in one flat array each.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace graphsub::generate {

/// A hash table from 64-bit keys that are hashes already (well mixed: their low bits index it) to
/// values held densely in insertion order. Open addressing with linear probing over (key, index)
/// pairs: the pairing of 19 million candidate pairs at 4 operators looks a key up for each, and
/// std::unordered_map's node per entry made every lookup a chain of cache misses.
template <class V>
class KeyTable {
 public:
  /// The value of `key`, or null.
  V* find(uint64_t key) {
    const std::size_t slot = locate(key);
    return slots_.empty() || slots_[slot].index == kEmpty ? nullptr : &values_[slots_[slot].index];
  }
  const V* find(uint64_t key) const { return const_cast<KeyTable*>(this)->find(key); }
  bool contains(uint64_t key) const { return find(key) != nullptr; }

  /// The value of `key`, default-constructed and added when it had none; true when added.
  std::pair<V*, bool> try_emplace(uint64_t key) {
    if (2 * (values_.size() + 1) > slots_.size()) grow();
    Slot& slot = slots_[locate(key)];
    if (slot.index != kEmpty) return {&values_[slot.index], false};
    slot = Slot{key, static_cast<uint32_t>(values_.size())};
    keys_.push_back(key);
    values_.emplace_back();
    return {&values_.back(), true};
  }

  std::size_t size() const { return values_.size(); }
  /// The keys and values, in the order they were added.
  const std::vector<uint64_t>& keys() const { return keys_; }
  std::vector<V>& values() { return values_; }
  const std::vector<V>& values() const { return values_; }

  void reserve(std::size_t count) {
    while (2 * count > slots_.size()) grow();
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t key = 0;
    uint32_t index = kEmpty;
  };

  /// The slot holding `key`, or the empty one where it would go (the table is never full).
  std::size_t locate(uint64_t key) const {
    if (slots_.empty()) return 0;
    const std::size_t mask = slots_.size() - 1;
    std::size_t slot = static_cast<std::size_t>(key ^ (key >> 29)) & mask;
    while (slots_[slot].index != kEmpty && slots_[slot].key != key) slot = (slot + 1) & mask;
    return slot;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
    for (const Slot& slot : old) {
      if (slot.index != kEmpty) slots_[locate(slot.key)] = slot;
    }
  }

  std::vector<Slot> slots_;  ///< A power of two long, at most half used.
  std::vector<uint64_t> keys_;
  std::vector<V> values_;
};

/// A set of 64-bit hash keys (KeyTable without values).
class KeySet {
 public:
  void insert(uint64_t key) { table_.try_emplace(key); }
  bool contains(uint64_t key) const { return table_.contains(key); }
  std::size_t count(uint64_t key) const { return contains(key) ? 1 : 0; }
  std::size_t size() const { return table_.size(); }
  void reserve(std::size_t count) { table_.reserve(count); }

 private:
  struct Nothing {};
  KeyTable<Nothing> table_;
};

}  // namespace graphsub::generate
