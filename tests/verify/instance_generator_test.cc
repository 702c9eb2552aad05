// Every shipped rule gets small instances whose source it matches whole and whose target computes
// the same; a seed gives the same instances; a rule that never matches gets none and a reason.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "rewrite/matcher.h"
#include "rules/parser.h"
#include "runtime/equivalence.h"
#include "verify/instance_generator.h"

namespace graphsub {
namespace {

const std::vector<std::string> kRuleFiles = {"algebra", "depthwise", "enlarge", "fusion", "group", "merge"};

std::vector<rules::Rule> rules_of(const std::string& file) {
  return rules::read_rules_file(std::string(GRAPHSUB_SOURCE_DIR) + "/rules/" + file + ".rules");
}

const rules::Rule& rule_named(const std::vector<rules::Rule>& rules, const std::string& name) {
  const auto it = std::find_if(rules.begin(), rules.end(), [&](const rules::Rule& rule) { return rule.name == name; });
  REQUIRE(it != rules.end());
  return *it;
}

/// True when some match of the rule in the instance's source binds every node of it.
bool matches_whole(const rules::Rule& rule, const ir::Graph& source) {
  for (const rewrite::Match& match : rewrite::Matcher::find(source, rule)) {
    std::vector<ir::NodeId> bound = match.nodes;
    std::sort(bound.begin(), bound.end());
    if (bound == source.node_ids()) return true;
  }
  return false;
}

void check_instance(const rules::Rule& rule, const verify::Instance& instance) {
  INFO(instance.description);
  CHECK(matches_whole(rule, instance.source));
  CHECK(instance.target.structural_hash() != instance.source.structural_hash());
  CHECK(instance.target.output_names() == instance.source.output_names());
  runtime::CheckOptions options;
  options.rtol = 1e-4;
  CHECK(runtime::check_equivalent(instance.source, instance.target, options).passed());
}

std::vector<std::string> descriptions(const std::vector<verify::Instance>& instances) {
  std::vector<std::string> result;
  for (const verify::Instance& instance : instances) result.push_back(instance.description);
  return result;
}

TEST_CASE("every shipped rule has instances that match whole and rewrite to the same values") {
  verify::InstanceOptions options;
  options.count = 3;
  for (const std::string& file : kRuleFiles) {
    for (const rules::Rule& rule : rules_of(file)) {
      DYNAMIC_SECTION(file << ": " << rule.name) {
        std::string why_none;
        const std::vector<verify::Instance> instances = verify::make_instances(rule, options, &why_none);
        INFO(why_none);
        CHECK(instances.size() == 3);
        for (const verify::Instance& instance : instances) check_instance(rule, instance);
      }
    }
  }
}

TEST_CASE("instances are distinct and the same for the same seed") {
  const std::vector<rules::Rule> rules = rules_of("group");
  const rules::Rule& rule = rule_named(rules, "merge-sliced-convs-to-group");
  verify::InstanceOptions options;
  options.seed = 7;
  const std::vector<std::string> first = descriptions(verify::make_instances(rule, options));
  REQUIRE(first.size() == 6);
  CHECK(descriptions(verify::make_instances(rule, options)) == first);
  std::vector<std::string> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
}

TEST_CASE("weight and value conditions decide which inputs are weights and which are free") {
  const std::vector<rules::Rule> algebra = rules_of("algebra");
  verify::InstanceOptions options;
  options.count = 1;
  const std::vector<verify::Instance> one =
      verify::make_instances(rule_named(algebra, "distribute-one-minus"), options);
  REQUIRE(one.size() == 1);
  CHECK(one[0].free_weights.empty());
  CHECK(one[0].description.find("one [") != std::string::npos);
  CHECK(one[0].description.find(" = 1") != std::string::npos);
  const std::vector<rules::Rule> fusion = rules_of("fusion");
  const std::vector<verify::Instance> bias = verify::make_instances(rule_named(fusion, "fold-conv-add-bias"), options);
  REQUIRE(bias.size() == 1);
  CHECK(bias[0].free_weights == std::set<std::string>{"b"});
  CHECK(bias[0].source.inputs().size() == 2);
}

TEST_CASE("a rule whose conditions never hold gets no instance and a reason") {
  const std::vector<rules::Rule> rules = rules::parse_rules(R"(rule never
  source
    y = Relu(x)
  where 1 == 0
  target
    y2 = Relu(x)
  map y -> y2
end
)",
                                                            "never.rules");
  REQUIRE(rules.size() == 1);
  verify::InstanceOptions options;
  options.attempts = 200;
  std::string why_none;
  CHECK(verify::make_instances(rules[0], options, &why_none).empty());
  CHECK(why_none.find("no small instance found") != std::string::npos);
  CHECK(why_none.find("1 == 0") != std::string::npos);
}

TEST_CASE("instances can be asked to bind a variable to another value than one given") {
  const std::vector<rules::Rule> rules = rules::parse_rules(R"(rule pool-sum
  source
    a = AveragePool(x) [kernel_shape = [3, 3], strides = ?s, pads = [1, 1, 1, 1], ceil_mode = 0, count_include_pad = 1]
    b = AveragePool(y) [kernel_shape = [3, 3], strides = ?s, pads = [1, 1, 1, 1], ceil_mode = 0, count_include_pad = 1]
    r = Add(a, b)
  where shape(x) == shape(y)
  target
    c = Add(x, y)
    r2 = AveragePool(c) [kernel_shape = [3, 3], strides = ?s, pads = [1, 1, 1, 1], ceil_mode = 0, count_include_pad = 1]
  map r -> r2
end
)",
                                                            "moved.rules");
  REQUIRE(rules.size() == 1);
  verify::InstanceOptions options;
  options.max_dim = 5;
  const ir::AttrValue unit_strides = std::vector<int64_t>{1, 1};
  const auto unit = [&](const verify::Instance& instance) { return instance.match.variables.at("s") == unit_strides; };
  // Drawn freely, some instances bind the strides to 1.
  const std::vector<verify::Instance> free = verify::make_instances(rules[0], options);
  REQUIRE(free.size() == 6);
  CHECK(std::any_of(free.begin(), free.end(), unit));
  // Asked for another value than [1, 1], none does, and each is still an instance of the rule.
  options.other_than = {{"s", unit_strides}};
  options.min_dim_limit = 3;
  const std::vector<verify::Instance> moved = verify::make_instances(rules[0], options);
  REQUIRE(moved.size() == 6);
  CHECK(std::none_of(moved.begin(), moved.end(), unit));
  for (const verify::Instance& instance : moved) check_instance(rules[0], instance);
  // A variable no instance binds cannot be moved: none is kept, and the search stops after a run
  // of fruitless attempts instead of spending them all.
  options.other_than = {{"t", unit_strides}};
  CHECK(verify::make_instances(rules[0], options).empty());
}


TEST_CASE("an instance cache gives a rule what its own search gives, whatever was asked before") {
  // Two rules of one source (two of the generator's, one step into opening the pooling's
  // strides): the first rewrites every graph drawn, the second only those whose pooled image
  // keeps its size, so its own search gives up where the first one's drew on.
  const std::string source = R"(  source
    s5 = Concat(v, v) [axis = 0]
    s6 = Conv(x, s5) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
    s7, s8 = Split(s6) [axis = 1, split = [shape(v)[0], shape(v)[0]]]
    s9 = AveragePool(s7) [kernel_shape = ?k, strides = ?s, pads = ?p, ceil_mode = 0, count_include_pad = 1]
  where rank(v) == 4
  where rank(x) == 4
  where shape(v)[1] == shape(x)[1]
)";
  const std::vector<rules::Rule> rules = rules::parse_rules("rule every\n" + source + R"(  target
    t5 = Conv(x, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
    t6 = AveragePool(x) [kernel_shape = ?k, strides = ?s, pads = ?p, ceil_mode = 0, count_include_pad = 1]
    t7 = Conv(t6, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
  map s8 -> t5, s9 -> t7
end
rule same-size
)" + source + R"(  target
    t5 = AveragePool(x) [kernel_shape = ?k, strides = ?s, pads = ?p, ceil_mode = 0, count_include_pad = 1]
    t6 = Concat(t5, x) [axis = 0]
    t7 = Conv(t6, v) [kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], group = 1, activation = "none"]
    t8, t9 = Split(t7) [axis = 0, split = [shape(x)[0], shape(x)[0]]]
  map s8 -> t9, s9 -> t8
end
)",
                                                            "shared.rules");
  REQUIRE(rules.size() == 2);
  REQUIRE(verify::source_key(rules[0]) == verify::source_key(rules[1]));
  verify::InstanceOptions options;
  options.count = 3;
  options.max_dim = 5;
  options.min_dim_limit = 3;
  options.max_elements = 4096;
  options.other_than = {{"s", ir::AttrValue(std::vector<int64_t>{1, 1})}};
  const std::vector<std::string> every = descriptions(verify::make_instances(rules[0], options));
  const std::vector<std::string> same_size = descriptions(verify::make_instances(rules[1], options));
  CHECK(!every.empty());
  CHECK(same_size.size() < every.size());
  for (const bool reversed : {false, true}) {
    verify::InstanceCache cache;
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t i = reversed ? 1 - k : k;
      const std::vector<verify::Instance> cached = cache.instances(rules[i], options);
      CHECK(descriptions(cached) == (i == 0 ? every : same_size));
      for (const verify::Instance& instance : cached) {
        CHECK(instance.match.rule == &rules[i]);
        check_instance(rules[i], instance);
      }
    }
  }
}

}  // namespace
}  // namespace graphsub
