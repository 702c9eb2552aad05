// The tensors of the enumeration: exact integer values for fingerprints (TASO §2.2), and the
// facts about their dims that a written rule needs (which input dims they are, where a split cuts).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "generate/op_set.h"

namespace graphsub::generate {

/// Mixes `value` into `hash`: the one step of every hash the generator makes (slots, terms, keys).
inline uint64_t mix(uint64_t hash, uint64_t value) {
  hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
  return hash * 0xff51afd7ed558ccdULL;
}

/// Arithmetic modulo a prime: sums, products and division by a constant are exact, so two
/// graphs computing one polynomial of their inputs get equal values whatever their order.
struct Field {
  static constexpr uint32_t kMersenne31 = 2147483647;  ///< 2^31 - 1, the default.
  uint32_t modulus = kMersenne31;
  /// a + b of residues (both below the modulus, as every value is).
  uint32_t add(uint32_t a, uint32_t b) const {
    const uint64_t sum = uint64_t{a} + b;
    return static_cast<uint32_t>(sum >= modulus ? sum - modulus : sum);
  }
  uint32_t mul(uint32_t a, uint32_t b) const { return reduce(uint64_t{a} * b); }
  /// x modulo the prime: for 2^31 - 1 by folding the high bits onto the low ones (2^31 is 1
  /// there), which the fingerprints of every graph spend their time in; else by division.
  uint32_t reduce(uint64_t x) const {
    if (modulus != kMersenne31) return static_cast<uint32_t>(x % modulus);
    x = (x & kMersenne31) + (x >> 31);  // below 2^34
    x = (x & kMersenne31) + (x >> 31);  // below 2^31 + 8
    return static_cast<uint32_t>(x >= kMersenne31 ? x - kMersenne31 : x);
  }
  /// a^(p-2): the inverse of a non-zero a.
  uint32_t inverse(uint32_t a) const;
};

/// Throws: an InlineVec is full.
[[noreturn]] void throw_inline_full();

/// A vector of at most N elements held inline: a tensor of the enumeration has rank 4 at most,
/// and an operator two outputs. As std::vectors, a slot's dims and facts were four allocations of
/// every operator the enumeration applies, most of its time with the kernels.
template <class T, std::size_t N>
class InlineVec {
 public:
  InlineVec() = default;
  InlineVec(std::initializer_list<T> items) {
    for (const T& item : items) push_back(item);
  }
  template <class It>
  InlineVec(It first, It last) {
    for (; first != last; ++first) push_back(*first);
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return items_[i]; }
  const T& operator[](std::size_t i) const { return items_[i]; }
  T* begin() { return items_.data(); }
  T* end() { return items_.data() + size_; }
  const T* begin() const { return items_.data(); }
  const T* end() const { return items_.data() + size_; }
  T& back() { return items_[size_ - 1]; }
  void push_back(T item) {
    if (size_ == N) throw_full();
    items_[size_++] = std::move(item);
  }
  void resize(std::size_t size) {
    if (size > N) throw_full();
    for (std::size_t i = size; i < size_; ++i) items_[i] = T{};
    size_ = static_cast<uint8_t>(size);
  }
  bool operator==(const InlineVec& other) const { return std::equal(begin(), end(), other.begin(), other.end()); }
  bool operator!=(const InlineVec& other) const { return !(*this == other); }

 private:
  [[noreturn]] static void throw_full() { throw_inline_full(); }
  std::array<T, N> items_{};
  uint8_t size_ = 0;
};

/// The most axes an enumerated tensor has.
constexpr std::size_t kMaxRank = 4;

/// A dim as the rule language writes it: a sum of pattern inputs' dims and a constant. Held
/// inline (every enumerated tensor carries one per axis, and its split points two more: as
/// vectors they were most of the enumeration's allocations): the distinct input dims of a sum,
/// sorted, each with how often it is added. A sum of dims is made by concatenations only, so a
/// graph of n operators adds at most n + 1 distinct ones.
struct DimExpr {
  struct Term {
    uint8_t input = 0;
    uint8_t axis = 0;
    uint16_t count = 0;  ///< How often shape(input)[axis] is added.
  };
  static constexpr std::size_t kCapacity = 8;
  std::array<Term, kCapacity> terms{};  ///< The first `size`, sorted by (input, axis).
  uint8_t size = 0;
  int64_t constant = 0;

  /// shape(input)[axis].
  static DimExpr of_input(int input, int axis);
  /// A constant dim.
  static DimExpr of_constant(int64_t value);
  bool operator==(const DimExpr& other) const;
  bool operator!=(const DimExpr& other) const { return !(*this == other); }
};

DimExpr operator+(const DimExpr& a, const DimExpr& b);

/// `shape(a)[0] + shape(b)[0]`, inputs named by `names`.
std::string to_rule_text(const DimExpr& dim, const std::vector<std::string>& names);

/// Where a split along one axis cuts: the sizes of the two tensors last concatenated there
/// (TASO's split tree, one level deep).
struct SplitPoint {
  int64_t first = 0;  ///< The first part's size.
  DimExpr first_expr;
  DimExpr second_expr;
  bool operator==(const SplitPoint& other) const {
    return first == other.first && first_expr == other.first_expr && second_expr == other.second_expr;
  }
};

/// One tensor of an enumerated graph.
struct Slot {
  InlineVec<int64_t, kMaxRank> dims;
  std::vector<uint32_t> values;  ///< Row-major, modulo the field's prime.
  InlineVec<DimExpr, kMaxRank> dim_exprs;
  InlineVec<std::optional<SplitPoint>, kMaxRank> splits;  ///< Per axis.
  Role role = Role::kActivation;
  bool is_input = false;
  uint64_t hash = 0;  ///< TASO's hash1: dims and values.
};

/// The input tensor `index` of a universe, its values drawn from `seed`.
Slot input_slot(const InputSpec& spec, int index, uint64_t seed, const Field& field);

/// An operator's outputs (two at most: a split's).
using Outputs = InlineVec<Slot, 2>;

/// The inputs of an operator (`arity` of them).
using Inputs = std::array<const Slot*, 2>;

/// The outputs of `op` on `inputs`, or nullopt when they do not fit it (shapes, roles, a split
/// without a split point, enlarge of a computed tensor). Relu is fingerprinted as x(x+1)+1
/// (TASO's non-linear stand-in), max pooling as the largest residue of each window.
std::optional<Outputs> apply(const OpChoice& op, const Inputs& inputs, const Field& field);

}  // namespace graphsub::generate
