// Enumeration and fingerprints: counts with known answers, fingerprints of equal and different
// computations, the integer kernels' algebra, and determinism across jobs and shards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "generate/enumerator.h"
#include "generate/op_set.h"
#include "generate/slot.h"
#include "generate/term.h"

namespace graphsub::generate {
namespace {

Universe only(const std::vector<std::string>& ops) {
  std::vector<Universe> universes = select_universes(ops);
  REQUIRE(universes.size() == 1);
  return universes.front();
}

/// The fingerprint of the enumerated graph whose output terms read `text` (one output).
uint64_t fingerprint_of(const Universe& universe, const Enumeration& enumeration, const std::string& text) {
  std::vector<std::string> names;
  for (const InputSpec& input : universe.inputs) names.push_back(input.name);
  for (const Enumerated& entry : enumeration.graphs) {
    const std::vector<int> outputs = output_slots(universe, entry.graph);
    if (outputs.size() == 1 && to_text(universe, normalise(universe, term_of(universe, entry.graph, outputs[0])), names) == text) {
      return entry.fingerprint;
    }
  }
  FAIL("no enumerated graph computes " << text);
  return 0;
}

}  // namespace

TEST_CASE("one commutative operator over three inputs: 7 input sets and 6 additions", "[generate]") {
  const Universe universe = only({"matrix.add"});
  EnumerateOptions options;
  options.max_ops = 1;
  const Enumeration enumeration = enumerate(universe, options);
  CHECK(enumeration.enumerated == 13);
  CHECK(enumeration.graphs.size() == 13);
}

TEST_CASE("graphs computing one polynomial share a fingerprint, others do not", "[generate]") {
  const Universe universe = only({"matrix.add", "matrix.mul"});
  EnumerateOptions options;
  options.max_ops = 3;
  const Enumeration enumeration = enumerate(universe, options);
  CHECK(fingerprint_of(universe, enumeration, "add(a, add(b, c))") ==
        fingerprint_of(universe, enumeration, "add(add(a, b), c)"));
  CHECK(fingerprint_of(universe, enumeration, "mul(a, add(b, c))") ==
        fingerprint_of(universe, enumeration, "add(mul(a, b), mul(a, c))"));
  CHECK(fingerprint_of(universe, enumeration, "mul(a, b)") != fingerprint_of(universe, enumeration, "add(a, b)"));
  CHECK(fingerprint_of(universe, enumeration, "mul(a, add(b, c))") !=
        fingerprint_of(universe, enumeration, "add(c, mul(a, b))"));
}

TEST_CASE("relu is fingerprinted by a non-linear stand-in, so it does not distribute", "[generate]") {
  const Universe universe = only({"matrix.add", "matrix.relu", "matrix.transpose"});
  EnumerateOptions options;
  options.max_ops = 3;
  const Enumeration enumeration = enumerate(universe, options);
  CHECK(fingerprint_of(universe, enumeration, "relu(add(a, b))") !=
        fingerprint_of(universe, enumeration, "add(relu(a), relu(b))"));
  CHECK(fingerprint_of(universe, enumeration, "relu(transpose(a))") ==
        fingerprint_of(universe, enumeration, "transpose(relu(a))"));
}

TEST_CASE("the field adds, multiplies and reduces residues as division does, for 2^31 - 1 and another prime", "[generate]") {
  for (const uint32_t modulus : {Field::kMersenne31, 4294967291u}) {
    const Field field{modulus};
    const std::vector<uint32_t> residues{0, 1, 2, 12345, 2147483646u, modulus - 2, modulus - 1};
    for (const uint32_t a : residues) {
      for (const uint32_t b : residues) {
        CHECK(field.add(a, b) == (uint64_t{a} + b) % modulus);
        CHECK(field.mul(a, b) == uint64_t{a} * b % modulus);
      }
    }
    for (const uint64_t x : {uint64_t{0}, uint64_t{modulus}, uint64_t{1} << 62, ~uint64_t{0}, ~uint64_t{0} - modulus}) {
      CHECK(field.reduce(x) == x % modulus);
    }
  }
}

TEST_CASE("pooling and convolution are linear in the integer kernels, enlarge keeps a 1x1 conv", "[generate]") {
  const Universe universe = only({"conv.avgpool3", "conv.add", "conv.conv", "conv.enlarge3"});
  EnumerateOptions options;
  options.max_ops = 3;
  // Both the default prime and one whose residues fill 32 bits (a convolution's sums then pass 2^64).
  const uint32_t modulus = GENERATE(Field::kMersenne31, 4294967291u);
  options.field.modulus = modulus;
  const Enumeration enumeration = enumerate(universe, options);
  CHECK(fingerprint_of(universe, enumeration, "add(avgpool3(x), avgpool3(y))") ==
        fingerprint_of(universe, enumeration, "avgpool3(add(x, y))"));
  CHECK(fingerprint_of(universe, enumeration, "add(conv(x, w1), conv(x, w2))") ==
        fingerprint_of(universe, enumeration, "conv(x, add(w1, w2))"));
  CHECK(fingerprint_of(universe, enumeration, "conv(x, v)") == fingerprint_of(universe, enumeration, "conv(x, enlarge3(v))"));
  CHECK(fingerprint_of(universe, enumeration, "conv(x, w1)") != fingerprint_of(universe, enumeration, "conv(x, w2)"));
}

TEST_CASE("a split undoes the concatenation it cuts, and only that one", "[generate]") {
  const Universe universe = only({"matrix.concat0", "matrix.split0", "matrix.split1", "matrix.transpose"});
  EnumerateOptions options;
  options.max_ops = 2;
  const Enumeration enumeration = enumerate(universe, options);
  std::vector<std::string> names{"a", "b", "c"};
  bool split_of_concat = false, split_along_axis_1 = false;
  for (const Enumerated& entry : enumeration.graphs) {
    for (int slot : output_slots(universe, entry.graph)) {
      const std::string text = to_text(universe, term_of(universe, entry.graph, slot), names);
      split_along_axis_1 = split_along_axis_1 || text.rfind("split1", 0) == 0;  // nothing was concatenated there
      split_of_concat = split_of_concat || text == "split0#1(concat0(a, b))";
    }
  }
  CHECK(split_of_concat);
  CHECK_FALSE(split_along_axis_1);
}

TEST_CASE("enumeration is the same for any number of jobs, and shards partition it", "[generate]") {
  const Universe universe = only({"matrix.add", "matrix.matmul", "matrix.concat1", "matrix.split1"});
  EnumerateOptions options;
  options.max_ops = 3;
  const Enumeration one = enumerate(universe, options);
  options.jobs = 2;
  const Enumeration two = enumerate(universe, options);
  REQUIRE(one.graphs.size() == two.graphs.size());
  CHECK(std::equal(one.graphs.begin(), one.graphs.end(), two.graphs.begin(), [](const Enumerated& a, const Enumerated& b) {
    return a.fingerprint == b.fingerprint && a.graph == b.graph;
  }));
  std::vector<Enumerated> shards;
  for (int shard = 0; shard < 3; ++shard) {
    options.shard = shard;
    options.shards = 3;
    const Enumeration part = enumerate(universe, options);
    CHECK(part.enumerated == one.enumerated);
    shards.insert(shards.end(), part.graphs.begin(), part.graphs.end());
  }
  std::sort(shards.begin(), shards.end(), [](const Enumerated& a, const Enumerated& b) {
    return a.fingerprint != b.fingerprint ? a.fingerprint < b.fingerprint : a.graph < b.graph;
  });
  REQUIRE(shards.size() == one.graphs.size());
  CHECK(std::equal(shards.begin(), shards.end(), one.graphs.begin(),
                   [](const Enumerated& a, const Enumerated& b) { return a.graph == b.graph; }));
}

TEST_CASE("an evaluator reusing earlier graphs' first operators gives what a fresh evaluation gives", "[generate]") {
  const Universe universe = only({"conv.conv", "conv.avgpool3", "conv.add", "conv.concat1", "conv.split1"});
  EnumerateOptions options;
  options.max_ops = 3;
  std::vector<Enumerated> graphs = enumerate(universe, options).graphs;
  // In fingerprint order neighbours rarely share first operators: the memo of first pairs serves.
  Evaluator evaluator(universe, options);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < graphs.size(); i += 7) {
    const std::vector<Slot>& reused = evaluator.evaluate(graphs[i].graph);
    const std::vector<Slot> fresh = evaluate(universe, graphs[i].graph, options);
    REQUIRE(reused.size() == fresh.size());
    for (std::size_t s = 0; s < fresh.size(); ++s) {
      CHECK(reused[s].hash == fresh[s].hash);
      CHECK(reused[s].dims == fresh[s].dims);
      CHECK(reused[s].dim_exprs == fresh[s].dim_exprs);
    }
    ++checked;
  }
  CHECK(checked > 100);
}

TEST_CASE("an unknown op name is refused with the known ones named", "[generate]") {
  CHECK_THROWS_WITH(select_universes({"matrix.softmax"}), Catch::Contains("unknown op 'matrix.softmax'"));
  CHECK(select_universes({}).size() == 2);
}

}  // namespace graphsub::generate
