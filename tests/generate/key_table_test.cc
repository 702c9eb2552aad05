// The generator's flat tables: lookups, growth past many entries, keys that collide in their low
// bits, and the values kept in the order they were added.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "generate/key_table.h"
#include "generate/slot.h"

namespace graphsub::generate {
namespace {

TEST_CASE("a key table finds what was added, and only that", "[generate][key_table]") {
  KeyTable<std::string> table;
  CHECK(table.find(7) == nullptr);
  CHECK_FALSE(table.contains(0));
  auto [value, added] = table.try_emplace(7);
  REQUIRE(added);
  *value = "seven";
  const auto again = table.try_emplace(7);
  CHECK_FALSE(again.second);
  CHECK(*again.first == "seven");
  REQUIRE(table.find(7) != nullptr);
  CHECK(*table.find(7) == "seven");
  *table.try_emplace(0).first = "zero";  // key 0 is a key like any other
  CHECK(*table.find(0) == "zero");
  CHECK(table.size() == 2);
}

TEST_CASE("a key table keeps every entry through growth, keys colliding in their low bits", "[generate][key_table]") {
  KeyTable<uint64_t> table;
  constexpr uint64_t kCount = 5000;
  // Multiples of 2^40: equal low bits, so the table's index comes from the bits it folds in,
  // and else from probing.
  for (uint64_t i = 0; i < kCount; ++i) *table.try_emplace(i << 40).first = i;
  REQUIRE(table.size() == kCount);
  for (uint64_t i = 0; i < kCount; ++i) {
    const uint64_t* value = table.find(i << 40);
    REQUIRE(value != nullptr);
    CHECK(*value == i);
  }
  CHECK(table.find((kCount + 1) << 40) == nullptr);
  CHECK(table.find(1) == nullptr);
  // Values and keys in the order they were added.
  CHECK(table.values().front() == 0);
  CHECK(table.values().back() == kCount - 1);
  CHECK(table.keys()[3] == (uint64_t{3} << 40));
}

TEST_CASE("a key set answers membership", "[generate][key_table]") {
  KeySet set;
  set.reserve(100);
  for (uint64_t key = 1; key < 1000; key += 3) set.insert(key * 0x9e3779b97f4a7c15ULL);
  set.insert(4 * 0x9e3779b97f4a7c15ULL);  // already there
  CHECK(set.size() == 333);
  CHECK(set.contains(4 * 0x9e3779b97f4a7c15ULL));
  CHECK_FALSE(set.contains(5 * 0x9e3779b97f4a7c15ULL));
  CHECK(set.count(1 * 0x9e3779b97f4a7c15ULL) == 1);
}

TEST_CASE("an inline vector holds up to its capacity and refuses more", "[generate][key_table]") {
  InlineVec<int64_t, 4> dims{2, 3};
  dims.push_back(5);
  CHECK(dims.size() == 3);
  CHECK(dims == InlineVec<int64_t, 4>{2, 3, 5});
  CHECK(dims != InlineVec<int64_t, 4>{2, 3});
  dims.resize(1);
  CHECK(dims.size() == 1);
  CHECK(dims[0] == 2);
  dims.resize(4);
  CHECK(dims[3] == 0);
  CHECK_THROWS(dims.push_back(1));
}

}  // namespace
}  // namespace graphsub::generate
