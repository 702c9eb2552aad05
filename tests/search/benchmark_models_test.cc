// The optimizer on every benchmark model (models/): splitting, searching and stitching keep what
// the model computes, and on MetaFlow Table 3's models backtracking finds exhaustive search's optimum.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/builders/models.h"
#include "cost/analytical_model.h"
#include "cost/device.h"
#include "rewrite/matcher.h"
#include "rules/shipped_rules.h"
#include "runtime/equivalence.h"
#include "search/optimizer.h"
#include "search/search_testing.h"

namespace graphsub {
namespace {

search::OptimizeResult optimize(const ir::Graph& graph, search::SearchMode mode, std::size_t threshold) {
  search::OptimizerOptions options;
  options.mode = mode;
  options.split_threshold = threshold;
  options.threads = 2;
  options.search.budget = 1000000;
  options.search.time_limit_s = 600;
  if (mode == search::SearchMode::kExhaustive) options.part_budget = 0;  // an oracle's parts are never split again
  return search::optimize(graph, testing::shipped_matcher(), testing::v100(), options);
}

/// Optimizes the model with the default split and checks the result on the reference executor.
void check_split_keeps_outputs(const std::string& name, const models::ModelConfig& config) {
  const ir::Graph graph = models::build_model(name, config);
  const search::OptimizeResult result = optimize(graph, search::SearchMode::kBacktrack, 30);
  INFO(result.split.parts << " parts (" << result.split.resplit_parts << " split again), "
                          << result.search.steps.size() << " steps, " << result.search.initial_cost.time_ms
                          << " -> " << result.search.best_cost.time_ms << " ms");
  CHECK(result.search.best_cost.time_ms <= result.search.initial_cost.time_ms);
  CHECK(result.search.stop == search::StopReason::kExhausted);
  if (graph.node_count() > 30) CHECK(result.split.parts > 1);
  runtime::CheckOptions check;
  check.atol = 1e-4;  // folded batch norms and merged sums round differently through 50+ layers
  check.rtol = 1e-3;
  const runtime::CheckReport report = runtime::check_equivalent(graph, result.search.best, check);
  for (const runtime::OutputCheck& output : report.outputs) {
    INFO(output.name << ": max abs error " << output.max_abs_error << ", max rel error " << output.max_rel_error);
    CHECK(output.passed);
  }
}

}  // namespace

TEST_CASE("split, search and stitch keep what every benchmark model computes", "[search][split][models]") {
  for (const std::string& name : models::model_names()) {
    DYNAMIC_SECTION(name) { check_split_keeps_outputs(name, models::small_config(name)); }
  }
}

TEST_CASE("split, search and stitch keep what the CNNs compute without batch norms", "[search][split][models]") {
  // The papers' TASO graphs, and what PyTorch exports once it has folded the batch norms: a bias
  // on every Conv. Inception-v3 in this form has a part whose search reached the part budget.
  for (const std::string name : {"resnet50", "resnext50", "inception_v3", "nasnet_a", "inception_e", "resnet18"}) {
    DYNAMIC_SECTION(name) {
      models::ModelConfig config = models::small_config(name);
      config.batch_norm = false;
      check_split_keeps_outputs(name, config);
    }
  }
}

TEST_CASE("on MetaFlow Table 3's models backtracking finds exhaustive search's optimum", "[search][models]") {
  // MetaFlow compared the two on whole graphs (exhaustive: 5 s for AlexNet to 3.1 hours for
  // ResNet-18). Here the whole-graph exhaustive search finishes on AlexNet (32 graphs) and VGG-16
  // (8192), and the default optimizer (split at 30, backtracking) must match it. On ResNet-18 and
  // the Inception-E module it does not finish in minutes (millions of graphs), so there both
  // searches run on the same parts of at most 10 nodes, and the default optimizer must do at
  // least as well as the exhaustive search of those parts. What made backtracking fall short here
  // before: ResNet-18's downsampling blocks, where merging the shortcut into the 3x3 conv before
  // folding their batch norms was a dead end until merge-batchnorms-of-split, and Inception-E,
  // whose parts read merged kernels as plain inputs until extraction carried folded weights
  // along (lib/search/README.md). The Inception-E module runs at its own size (1280x8x8), as in
  // MetaFlow; at the 4x4 test size its launch-bound optimum needs a three-way merge that climbs
  // beyond α = 1.1 (backtracking 12 % above).
  struct Case {
    const char* name;
    std::size_t exhaustive_threshold;  // 0: the whole graph
  };
  for (const Case& c : {Case{"alexnet", 0}, Case{"vgg16", 0}, Case{"resnet18", 10}, Case{"inception_e", 10}}) {
    const std::string name = c.name;
    DYNAMIC_SECTION(name) {
      const models::ModelConfig config = name == "inception_e" ? models::ModelConfig{} : models::small_config(name);
      const ir::Graph graph = models::build_model(name, config);
      const search::OptimizeResult exhaustive = optimize(graph, search::SearchMode::kExhaustive, c.exhaustive_threshold);
      REQUIRE(exhaustive.search.stop == search::StopReason::kExhausted);
      const double optimum = exhaustive.search.best_cost.time_ms;
      const search::OptimizeResult by_default = optimize(graph, search::SearchMode::kBacktrack, 30);
      INFO("exhaustive " << optimum << " ms, default optimizer " << by_default.search.best_cost.time_ms << " ms");
      CHECK(by_default.search.best_cost.time_ms <= optimum * (1 + 1e-9));
      CHECK(by_default.search.best_cost.time_ms < by_default.search.initial_cost.time_ms);
      if (c.exhaustive_threshold != 0) {
        const search::OptimizeResult same_parts = optimize(graph, search::SearchMode::kBacktrack, c.exhaustive_threshold);
        INFO("backtracking on the same parts " << same_parts.search.best_cost.time_ms << " ms");
        CHECK(same_parts.search.best_cost.time_ms <= optimum * (1 + 1e-9));
      }
    }
  }
}

}  // namespace graphsub
