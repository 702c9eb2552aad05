// Deterministic 64-bit hash combinators for structural hashing (no std::hash: its values vary by platform).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace graphsub::ir {

/// Mixes `word` into `hash`.
inline uint64_t hash_combine(uint64_t hash, uint64_t word) {
  word *= 0xff51afd7ed558ccdULL;
  word ^= word >> 33;
  return hash ^ (word + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2));
}

/// Mixes a byte range into `hash`, eight bytes at a time.
inline uint64_t hash_bytes(uint64_t hash, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    hash = hash_combine(hash, word);
  }
  uint64_t tail = 0;
  if (i < size) std::memcpy(&tail, bytes + i, size - i);
  return hash_combine(hash_combine(hash, tail), size);
}

/// Mixes a string into `hash`.
inline uint64_t hash_string(uint64_t hash, std::string_view text) {
  return hash_bytes(hash, text.data(), text.size());
}

/// The seed every structural hash starts from.
inline constexpr uint64_t kHashSeed = 0xcbf29ce484222325ULL;

}  // namespace graphsub::ir
