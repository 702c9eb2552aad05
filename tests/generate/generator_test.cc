// The generator end to end: known answers, the float check, the pruning stages, shards and
// determinism, and the TASO families it must find by itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "generate/generator.h"
#include "rules/printer.h"
#include "runtime/equivalence.h"
#include "verify/instance_generator.h"

namespace graphsub::generate {
namespace {

/// Each rule's `before -> after` comment line (its last), trimmed.
std::vector<std::string> comments(const std::vector<rules::Rule>& rules) {
  std::vector<std::string> lines;
  for (const rules::Rule& rule : rules) {
    REQUIRE(!rule.comment.empty());
    lines.push_back(rule.comment.back().substr(rule.comment.back().find_first_not_of(' ')));
  }
  return lines;
}

/// The rule whose `before -> after` line is `line`.
const rules::Rule* find_rule(const std::vector<rules::Rule>& rules, const std::string& line) {
  for (const rules::Rule& rule : rules) {
    if (!rule.comment.empty() && rule.comment.back().substr(rule.comment.back().find_first_not_of(' ')) == line) return &rule;
  }
  return nullptr;
}

GenerateOptions options_for(const std::vector<std::string>& ops, int max_ops) {
  GenerateOptions options;
  options.ops = ops;
  options.max_ops = max_ops;
  return options;
}

/// The rule rewritten on small random shapes and run on random floats: source and target agree.
void check_numerically(const rules::Rule& rule) {
  verify::InstanceOptions instance_options;
  instance_options.count = 3;
  instance_options.seed = 7;
  const std::vector<verify::Instance> instances = verify::make_instances(rule, instance_options);
  INFO(rules::print_rule(rule));
  REQUIRE(!instances.empty());
  for (const verify::Instance& instance : instances) {
    runtime::CheckOptions check;
    check.seed = 11;
    CHECK(runtime::check_equivalent(instance.source, instance.target, check).passed());
  }
}

}  // namespace

TEST_CASE("the rules over {add, mul} with two operators", "[generate]") {
  const GenerateResult result = generate(options_for({"matrix.add", "matrix.mul"}, 2));
  CHECK(comments(result.rules) == std::vector<std::string>{
                                      "add(a, add(b, c)) -> add(add(a, b), c)",
                                      "add(mul(a, b), mul(a, b)) -> mul(a, add(b, b))",
                                      "mul(a, add(b, b)) -> add(mul(a, b), mul(a, b))",
                                      "mul(a, add(b, b)) -> mul(add(a, a), b)",
                                      "mul(a, mul(b, c)) -> mul(b, mul(a, c))",
                                  });
  for (const rules::Rule& rule : result.rules) {
    CHECK(rule.origin == rules::Origin::kGenerated);
    CHECK(rule.name.rfind("gen-matrix-", 0) == 0);
    check_numerically(rule);
  }
  const StageCounts& counts = result.counts;
  CHECK(counts.candidates == 60);
  CHECK(counts.renamed == 11);
  CHECK(counts.general == 5);  // add(a, add(a, b)) and the like are instances of add(a, add(b, c))
  CHECK(counts.confirmed == 5);
}

TEST_CASE("each pruning stage keeps fewer, and what it drops a kept rule covers", "[generate]") {
  const GenerateResult result = generate(options_for({"matrix.add", "matrix.mul"}, 3));
  const StageCounts& counts = result.counts;
  CHECK(counts.cut > 0);
  CHECK(counts.renamed < counts.candidates - counts.cut);
  CHECK(counts.general < counts.renamed);
  CHECK(counts.common_subgraph <= counts.general);
  CHECK(counts.implied < counts.common_subgraph);
  CHECK(counts.confirmed == result.rules.size());
  const std::vector<std::string> found = comments(result.rules);
  auto has = [&](const std::string& line) { return std::find(found.begin(), found.end(), line) != found.end(); };
  CHECK(has("add(mul(a, b), mul(a, c)) -> mul(a, add(b, c))"));
  CHECK(has("mul(a, add(b, c)) -> add(mul(a, b), mul(a, c))"));
  // An instance of the distribution with one input merged, and a rewrite in context of one.
  CHECK_FALSE(has("add(mul(a, b), mul(a, a)) -> mul(a, add(a, b))"));
  CHECK_FALSE(has("add(c, add(mul(a, b), mul(a, b))) -> add(c, mul(a, add(b, b)))"));
}

TEST_CASE("a candidate of outputs that are smaller rules side by side is dropped", "[generate]") {
  const GenerateResult result = generate(options_for({"matrix.add", "matrix.transpose"}, 4));
  // Such as add(add(a, b), c), add(transpose(a), transpose(a)) -> add(a, add(b, c)),
  // transpose(add(a, a)): two unrelated rewrites over common inputs.
  CHECK(result.counts.side_by_side > 0);
  CHECK(result.counts.implied < result.counts.common_subgraph - result.counts.side_by_side);
  const std::vector<std::string> found = comments(result.rules);
  CHECK(std::find(found.begin(), found.end(), "add(a, add(b, c)) -> add(add(a, b), c)") != found.end());
  for (const rules::Rule& rule : result.rules) check_numerically(rule);
}

TEST_CASE("candidates whose fingerprints agree but floats do not are left out", "[generate]") {
  // On the 3 x 3 matrices the enumeration uses, [a | b] [a; c] and [b | a] [c; a] agree; on
  // other shapes they do not, and the random-shape float check sees it.
  const GenerateResult square = generate(options_for({"matrix.matmul", "matrix.concat0", "matrix.concat1"}, 3));
  CHECK(square.counts.float_failed > 0);
  for (const rules::Rule& rule : square.rules) check_numerically(rule);

  // Fingerprints modulo 3 collide everywhere; the float check still lets only true rules through.
  GenerateOptions coarse = options_for({"matrix.add", "matrix.mul"}, 2);
  coarse.modulus = 3;
  const GenerateResult collided = generate(coarse);
  CHECK(collided.counts.float_failed > 0);
  for (const rules::Rule& rule : collided.rules) check_numerically(rule);
}

TEST_CASE("a rule that holds only where concatenated blocks line up is left out", "[generate]") {
  // A product of concatenations whose inner dims agree as a sum (the 2 x cols(a) columns of the
  // left against the rows(b) + rows(a) rows of the right) holds with its blocks reordered on the
  // enumeration's 3 x 3 matrices only, where the blocks line up. Random instances drawn op by op
  // did not break it (verify-rules refuted the rule); instances whose dims are solved from the
  // rule's conditions do, even two of them.
  const std::string wrong =
      "matmul(concat1(concat0(a, concat0(b, a)), concat0(a, concat0(b, a))), concat0(b, a)) -> "
      "matmul(concat1(concat0(concat0(a, b), a), concat0(concat0(a, b), a)), concat0(a, b))";
  GenerateOptions options = options_for({"matrix.matmul", "matrix.concat0", "matrix.concat1"}, 4);
  options.jobs = 2;
  options.sum_instances = options.float_instances;
  const GenerateResult result = generate(options);
  CHECK(find_rule(result.rules, wrong) == nullptr);
  CHECK(result.counts.float_failed > 0);
}

TEST_CASE("shards merged give the rules of one run, and jobs do not change them", "[generate]") {
  const GenerateOptions whole = options_for({"matrix.add", "matrix.matmul", "matrix.transpose"}, 3);
  const std::string expected = rules::print_rules(generate(whole).rules);
  GenerateOptions threaded = whole;
  threaded.jobs = 2;
  CHECK(rules::print_rules(generate(threaded).rules) == expected);

  std::vector<Candidate> merged;
  StageCounts counts;
  for (int shard = 0; shard < 2; ++shard) {
    GenerateOptions part = whole;
    part.shard = shard;
    part.shards = 2;
    const GenerateResult result = generate(part);
    CHECK(result.rules.empty());
    GenerateOptions read_back;
    std::vector<Candidate> candidates =
        read_candidates(candidates_text(result.candidates, result.counts, part), "shard", counts, read_back);
    CHECK(read_back.max_ops == 3);
    merged.insert(merged.end(), candidates.begin(), candidates.end());
  }
  CHECK(rules::print_rules(finish(merged, counts, whole)) == expected);
}

TEST_CASE("a candidate file that is not one is refused with its name", "[generate]") {
  StageCounts counts;
  GenerateOptions options;
  CHECK_THROWS_WITH(read_candidates("{\"format\": 3}", "x.json", counts, options), Catch::StartsWith("x.json: "));
  CHECK_THROWS_WITH(read_candidates("not json", "y.json", counts, options), Catch::StartsWith("y.json: "));
}

TEST_CASE("with three operators the generator finds TASO's families by itself", "[generate]") {
  const GenerateResult result = generate(options_for({}, 3));
  const std::vector<std::string> found = comments(result.rules);
  for (const char* family : {
           "split0#0(concat0(a, b)), split0#1(concat0(a, b)) -> a, b",                // split definition
           "add(matmul(a, b), matmul(a, c)) -> matmul(a, add(b, c))",                 // matmul is linear
           "transpose(matmul(a, b)) -> matmul(transpose(b), transpose(a))",           // matmul and transpose
           "transpose(transpose(a)) -> a",                                            // transpose inverse
           "mul(a, add(b, c)) -> add(mul(a, b), mul(a, c))",                          // distributivity
           "add(conv(x, w1), conv(x, w2)) -> conv(x, add(w1, w2))",                   // conv is bilinear
           "add(avgpool3(x), avgpool3(y)) -> avgpool3(add(x, y))",                    // pooling is linear
           "conv(x, v) -> conv(x, enlarge3(v))",                                      // enlarge
           "relu(conv(x, w1)) -> conv-relu(x, w1)",                                   // conv with relu
           "conv(x, w1), conv(x, w2) -> split1#0(conv(x, concat0(w1, w2))), split1#1(conv(x, concat0(w1, w2)))",
           "matmul(a, b), matmul(a, c) -> split1#0(matmul(a, concat1(b, c))), split1#1(matmul(a, concat1(b, c)))",
       }) {
    INFO(family);
    CHECK(std::find(found.begin(), found.end(), std::string(family)) != found.end());
  }
}

TEST_CASE("window parameters are opened where the rule holds for all of them, and only there", "[generate]") {
  const GenerateResult result = generate(options_for({"conv.conv", "conv.avgpool3", "conv.add"}, 3));
  // Pooling is linear whatever its window: every parameter the enumeration fixed becomes a variable.
  const rules::Rule* linear = find_rule(result.rules, "add(avgpool3(x), avgpool3(y)) -> avgpool3(add(x, y))");
  REQUIRE(linear != nullptr);
  const std::string text = rules::print_rule(*linear);
  INFO(text);
  for (const char* open : {"kernel_shape = ?avgpool_kernel_shape", "strides = ?avgpool_strides", "pads = ?avgpool_pads",
                           "ceil_mode = ?avgpool_ceil_mode", "count_include_pad = ?avgpool_count_include_pad"}) {
    CHECK(text.find(open) != std::string::npos);
  }
  CHECK(linear->comment.size() == 2);
  CHECK(linear->comment.front().find("for every ?avgpool_kernel_shape") != std::string::npos);
  check_numerically(*linear);
  // A 1 x 1 convolution commutes with pooling at stride 1 only: on images of the verifier's dims
  // (1-3) a strided one seems to as well, so this is what the larger instances of the check catch.
  const rules::Rule* pointwise = find_rule(result.rules, "avgpool3(conv(x, v)) -> conv(avgpool3(x), v)");
  REQUIRE(pointwise != nullptr);
  const std::string pointwise_text = rules::print_rule(*pointwise);
  INFO(pointwise_text);
  CHECK(pointwise_text.find("strides = [1, 1], pads = [0, 0, 0, 0]") != std::string::npos);
  CHECK(pointwise_text.find("?conv_strides") == std::string::npos);
  CHECK(pointwise_text.find("?avgpool_strides") != std::string::npos);
  check_numerically(*pointwise);
}


TEST_CASE("an instance cache gives each rule of a shared source what make_instances gives", "[generate]") {
  // Generated rules share sources (one fingerprint class, several targets); asked in either order,
  // the cache must give every rule the instances its own search gives, also where another rule's
  // search drew further than this rule's patience allows.
  const GenerateResult result = generate(options_for({"conv.conv", "conv.avgpool3", "conv.concat0", "conv.split0"}, 3));
  std::map<std::string, std::vector<const rules::Rule*>> groups;
  for (const rules::Rule& rule : result.rules) groups[verify::source_key(rule)].push_back(&rule);
  REQUIRE(groups.size() < result.rules.size());
  verify::InstanceOptions fixed;
  fixed.count = 2;
  verify::InstanceOptions moved;
  moved.count = 3;
  moved.max_dim = 5;
  moved.min_dim_limit = 3;
  moved.max_elements = 4096;
  moved.other_than = {{"avgpool_strides", ir::AttrValue(std::vector<int64_t>{1, 1})},
                      {"conv_strides", ir::AttrValue(std::vector<int64_t>{1, 1})}};
  const auto described = [](const std::vector<verify::Instance>& instances) {
    std::vector<std::string> lines;
    for (const verify::Instance& instance : instances) {
      lines.push_back(instance.description + " -> " + std::to_string(instance.target.node_ids().size()) + " nodes");
    }
    return lines;
  };
  std::size_t shared = 0;
  for (const auto& [key, group] : groups) {
    shared += group.size() > 1;
    for (const bool reversed : {false, true}) {
      verify::InstanceCache cache;
      for (std::size_t k = 0; k < group.size(); ++k) {
        const rules::Rule& rule = *group[reversed ? group.size() - 1 - k : k];
        INFO(rules::print_rule(rule));
        for (const verify::InstanceOptions* options : {&fixed, &moved}) {
          const std::vector<verify::Instance> cached = cache.instances(rule, *options);
          CHECK(described(cached) == described(verify::make_instances(rule, *options)));
          for (const verify::Instance& instance : cached) CHECK(instance.match.rule == &rule);
        }
      }
    }
  }
  CHECK(shared > 0);
}

}  // namespace graphsub::generate
