// What every search shares: matches whose nodes all compute from weights alone are not tried.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "rewrite/rewrite_testing.h"
#include "search/backtracking.h"
#include "search/search_state.h"
#include "search/search_testing.h"

namespace graphsub {
namespace {

using testing::add_canonical;
using testing::out;

/// h = x · Identity(w1) · Identity(w2) · ... : `count` Identity nodes on weights, as exporters
/// write them, each removable by eliminate-identity.
ir::Graph matmuls_through_identities(int count) {
  ir::Graph graph;
  ir::ValueId h = graph.add_input("x", testing::float_type({1, 8}));
  for (int i = 0; i < count; ++i) {
    const ir::ValueId w = graph.add_weight({}, ir::share(testing::random_tensor({8, 8}, static_cast<uint32_t>(i))));
    const ir::ValueId copy = out(graph, add_canonical(graph, ir::OpKind::kIdentity, {w}));
    h = out(graph, add_canonical(graph, ir::OpKind::kMatMul, {h, copy}));
  }
  graph.set_name(h, "h");
  graph.set_outputs({h});
  return graph;
}

}  // namespace

TEST_CASE("matches whose nodes all compute from weights alone are left out", "[search]") {
  const ir::Graph graph = matmuls_through_identities(3);
  const std::vector<rewrite::Match> all = testing::shipped_matcher().find_all(graph);
  const auto identities = std::count_if(all.begin(), all.end(), [](const rewrite::Match& match) {
    return match.rule->name == "eliminate-identity";
  });
  CHECK(identities == 3);
  for (const rewrite::Match& match : search::without_weight_only(graph, all)) {
    CHECK(match.rule->name != "eliminate-identity");
  }
}

TEST_CASE("k Identity nodes on weights do not make 2^k graphs to search", "[search]") {
  const ir::Graph graph = matmuls_through_identities(12);
  const search::SearchResult result = search::backtracking_search(graph, testing::shipped_matcher(), testing::v100(), {});
  CHECK(result.stop == search::StopReason::kExhausted);
  CHECK(result.expanded == 1);  // only the input: no match changes a node that runs
  CHECK(result.steps.empty());
}

}  // namespace graphsub
