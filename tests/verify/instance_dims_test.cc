// Dims drawn from a rule's `where` equalities satisfy every one of them, let the parts of a sum
// differ, fit a literal kernel; with them, instances of a rule that holds only where the blocks
// of a product of concatenations line up include ones where they do not, and the bounded check
// refutes it.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "rules/parser.h"
#include "runtime/equivalence.h"
#include "verify/bounded_check.h"
#include "verify/instance_dims.h"
#include "verify/instance_generator.h"

namespace graphsub {
namespace {

rules::Rule parse_one(const std::string& text) {
  const std::vector<rules::Rule> rules = rules::parse_rules(text, "test");
  REQUIRE(rules.size() == 1);
  return rules.front();
}

// [a | b] [c ; c] == [b | a] [c ; c] holds where cols(a) == rows(c) only (then it is
// a c + b c both ways); for cols(a) = 1, cols(b) = 3, rows(c) = 2 the columns pair up differently.
const char* const kBlocksLineUp = R"(
rule blocks-line-up
  source
    s3 = Concat(c, c) [axis = 0]
    s4 = Concat(a, b) [axis = 1]
    s6 = MatMul(s4, s3)
  where rank(a) == 2
  where rank(b) == 2
  where rank(c) == 2
  where shape(a)[0] == shape(b)[0]
  where shape(a)[1] + shape(b)[1] == shape(c)[0] + shape(c)[0]
  target
    t3 = Concat(c, c) [axis = 0]
    t4 = Concat(b, a) [axis = 1]
    t6 = MatMul(t4, t3)
  map s6 -> t6
end
)";

verify::DrawSettings settings_for(std::mt19937& rng, int64_t dim_limit) {
  verify::DrawSettings settings;
  settings.rng = &rng;
  settings.dim_limit = dim_limit;
  settings.usual_dims = {2, 2, 2, 2, 2};
  return settings;
}

TEST_CASE("solved dims satisfy the equalities and let the parts of a sum differ", "[verify]") {
  const rules::Rule rule = parse_one(kBlocksLineUp);
  const verify::DimEquations equations(rule);
  CHECK(equations.has_sums());
  const std::map<std::string, int64_t> ranks = {{"a", 2}, {"b", 2}, {"c", 2}};
  std::mt19937 rng(7);
  int solved = 0, misaligned = 0;
  for (int draw = 0; draw < 200; ++draw) {
    const verify::DrawSettings settings = settings_for(rng, 3);
    const auto dims = equations.draw(ranks, settings, 3);
    if (!dims) continue;
    ++solved;
    const std::vector<int64_t>&a = dims->at("a"), &b = dims->at("b"), &c = dims->at("c");
    REQUIRE(a.size() == 2);
    REQUIRE(c.size() == 2);
    CHECK(a[0] == b[0]);
    CHECK(a[1] + b[1] == c[0] + c[0]);
    for (const std::vector<int64_t>* value : {&a, &b, &c}) {
      for (int64_t dim : *value) CHECK((dim >= 1 && dim <= 6));
    }
    misaligned += a[1] != c[0];
  }
  CHECK(solved > 100);
  CHECK(misaligned > 20);
}

TEST_CASE("a rule without a sum has none to solve, and a cancelled sum still counts", "[verify]") {
  CHECK_FALSE(verify::DimEquations(parse_one(R"(
rule equal-dims
  source
    s = Add(x, y)
  where shape(x)[0] == shape(y)[0]
  target
    t = Add(y, x)
  map s -> t
end
)")).has_sums());
  // b0 cancels, a0 == c0 remains, and b0 may differ from both: still a sum of parts.
  CHECK(verify::DimEquations(parse_one(R"(
rule cancelled
  source
    s1 = Concat(a, b) [axis = 0]
    s2 = Concat(b, c) [axis = 0]
    s3 = Mul(s1, s2)
  where rank(a) == 2
  where rank(b) == 2
  where rank(c) == 2
  where shape(a)[0] + shape(b)[0] == shape(b)[0] + shape(c)[0]
  target
    t1 = Concat(a, b) [axis = 0]
    t2 = Concat(b, c) [axis = 0]
    t3 = Mul(t2, t1)
  map s3 -> t3
end
)")).has_sums());
}

TEST_CASE("the weights a literal kernel convolves get its spatial size", "[verify]") {
  const verify::DimEquations equations(parse_one(R"(
rule concatenated-weights
  source
    s1 = Concat(w1, w2) [axis = 0]
    s2 = Conv(x, s1) [kernel_shape = [3, 3], pads = [1, 1, 1, 1]]
    s3 = Conv(s2, v) [kernel_shape = [1, 1]]
  where rank(x) == 4
  where rank(w1) == 4
  where rank(w2) == 4
  where rank(v) == 4
  where shape(w1)[1] == shape(x)[1]
  where shape(w2)[1] == shape(x)[1]
  where shape(w1)[2] == shape(w2)[2]
  where shape(w1)[3] == shape(w2)[3]
  where shape(v)[1] + shape(v)[1] == shape(w1)[0] + shape(w2)[0]
  target
    t1 = Concat(w1, w2) [axis = 0]
    t2 = Conv(x, t1) [kernel_shape = [3, 3], pads = [1, 1, 1, 1]]
    t3 = Conv(t2, v) [kernel_shape = [1, 1]]
  map s3 -> t3
end
)"));
  std::mt19937 rng(3);
  for (int draw = 0; draw < 20; ++draw) {
    const auto dims = equations.draw({{"x", 4}, {"w1", 4}, {"w2", 4}, {"v", 4}}, settings_for(rng, 3), 3);
    if (!dims) continue;
    CHECK(dims->at("w1")[2] == 3);
    CHECK(dims->at("w2")[3] == 3);
    CHECK(dims->at("v")[2] == 1);
    CHECK(dims->at("v")[1] * 2 == dims->at("w1")[0] + dims->at("w2")[0]);
  }
}

TEST_CASE("instances with solved dims break a rule that holds only where blocks line up", "[verify]") {
  const rules::Rule rule = parse_one(kBlocksLineUp);
  verify::InstanceOptions options;
  options.count = 6;
  options.solve_dims = true;
  const std::vector<verify::Instance> instances = verify::make_instances(rule, options);
  REQUIRE(instances.size() == 6);
  int different = 0;
  for (const verify::Instance& instance : instances) {
    different += !runtime::check_equivalent(instance.source, instance.target, {}).passed();
  }
  CHECK(different > 0);
}

TEST_CASE("the bounded check refutes a rule that holds only where blocks line up", "[verify]") {
  const rules::Rule rule = parse_one(kBlocksLineUp);
  CHECK(verify::check_bounded(rule, verify::BoundedOptions{}).verdict == verify::BoundedVerdict::kRefuted);
}

}  // namespace
}  // namespace graphsub
