// Tests of Measurer: what is measured once is looked up afterwards, and the cache file persists it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "../cost/cost_testing.h"
#include "pipeline/measurer.h"
#include "pipeline_testing.h"
#include "rewrite/shape_testing.h"

namespace graphsub {
namespace {

using pipeline::Measurer;
using testing::TableProfiler;

/// A measurer over an empty cache at `path`, with a table profiler the test keeps a hand on.
std::unique_ptr<Measurer> table_measurer(const std::string& path, TableProfiler*& table) {
  auto profiler = std::make_unique<TableProfiler>();
  table = profiler.get();
  cost::CostCache cache(profiler->header());
  return std::make_unique<Measurer>(std::move(cache), path, std::move(profiler), cost::DimSizes{});
}

/// A conv+relu graph and its fused form, in the table at 2 ms and 1 ms: (fused, separate).
std::pair<ir::Graph, ir::Graph> timed_pair(TableProfiler& table) {
  ir::Graph fused = testing::conv_graph(8, 8, 3, "relu", false);
  ir::Graph separate = testing::conv_graph(8, 8, 3, "none", true);
  table.graph_ms[cost::graph_signature(fused, {})] = 1.0;
  table.graph_ms[cost::graph_signature(separate, {})] = 2.0;
  return {std::move(fused), std::move(separate)};
}

TEST_CASE("a comparison is measured once, then read from the cache", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const auto [fused, separate] = timed_pair(*table);
  std::optional<cost::Comparison> measured = measurer->compare(separate, fused, {});
  REQUIRE(measured);
  CHECK(measured->median_ratio == 0.5);
  CHECK(measured->runs == 3);
  REQUIRE(table->graph_calls == 2);
  CHECK(measurer->graph_time(separate)->median_ms == 2.0);
  CHECK(measurer->graph_time(fused)->median_ms == 1.0);
  measured = measurer->compare(separate, fused, {});
  CHECK(measured->median_ratio == 0.5);
  CHECK(table->graph_calls == 2);
  CHECK(measurer->stats().comparison_hits == 1);
  CHECK(measurer->stats().comparisons_measured == 1);
  // The other way round is another comparison.
  CHECK(measurer->compare(fused, separate, {})->median_ratio == 2.0);
  CHECK(table->graph_calls == 4);
}

TEST_CASE("an original timed as its file is cached apart from its export", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const auto [fused, separate] = timed_pair(*table);
  const std::string file = GRAPHSUB_SOURCE_DIR "/models/conv_relu.onnx";
  REQUIRE(measurer->compare(separate, fused, {}, file));
  CHECK(measurer->graph_time(separate, file)->median_ms == 2.0);
  CHECK_FALSE(measurer->graph_time(separate));  // the export of `separate` was not timed
  measurer->compare(separate, fused, {});
  CHECK(measurer->stats().comparisons_measured == 2);
}

TEST_CASE("a graph exported without value_info has a signature of its own", "[pipeline]") {
  ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", false);
  auto info = std::make_shared<ir::ModelInfo>();
  graph.set_model_info(info);
  const std::string with = cost::graph_signature(graph, {});
  info = std::make_shared<ir::ModelInfo>();
  info->value_info = false;
  graph.set_model_info(info);
  CHECK(cost::graph_signature(graph, {}) != with);
}

TEST_CASE("a part reads the integer values of the measuring instance as weights", "[pipeline]") {
  // Reshape(x, target) where target, computed outside the part, is an input of the part: the
  // profiler must see it as the weight [2, 3], not as an input to fill with data.
  ir::Graph part;
  const ir::ValueId x = part.add_input("x", testing::float_type({6}));
  const ir::ValueId target = part.add_input("target", ir::TensorType{ir::DataType::kInt64, ir::Shape::of({2})});
  ir::Node probe;
  probe.op = ir::OpKind::kReshape;
  probe.attrs.set("allowzero", int64_t{0});
  probe.inputs = {x, target};
  const ops::InferResult types = ops::op_def(ir::OpKind::kReshape).infer_runtime(probe, {part.value(x).type,
                                                                                        part.value(target).type});
  REQUIRE(types.ok());
  const ir::NodeId reshape = part.add_node(ir::OpKind::kReshape, {x, target}, {{types.outputs[0], {}}}, probe.attrs);
  ir::Graph longer = part;
  part.set_outputs({part.node(reshape).outputs[0]});
  longer.set_outputs({longer.node(testing::add_inferred(longer, ir::OpKind::kRelu, {longer.node(reshape).outputs[0]})).outputs[0]});

  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  measurer->set_instance({{}, {{"target", ir::share(ir::Tensor::from_int64s({2}, {2, 3}))}}, {}});
  std::vector<std::vector<int64_t>> operands;
  table->graph_rule = [&operands](const ir::Graph& graph) {
    for (ir::NodeId id : graph.node_ids()) {
      const ir::Value& operand = graph.value(graph.node(id).inputs.back());
      if (graph.node(id).op == ir::OpKind::kReshape && operand.data) operands.push_back(operand.data->to_int64s());
    }
    return 1.0;
  };
  REQUIRE(measurer->compare(part, longer, {}));
  CHECK(operands == std::vector<std::vector<int64_t>>{{2, 3}, {2, 3}});
}

/// `graph` with its weight `name` replaced by one of the same shape filled with `fill`.
ir::Graph refilled(const ir::Graph& graph, const std::string& name, float fill) {
  ir::Graph copy = graph;
  for (ir::NodeId id : copy.node_ids()) {
    for (ir::ValueId input : copy.node(id).inputs) {
      const ir::Value& value = copy.value(input);
      if (value.name != name || value.kind != ir::ValueKind::kWeight) continue;
      const std::vector<int64_t> dims = value.data->dims();
      const std::vector<float> values(static_cast<std::size_t>(value.data->num_elements()), fill);
      copy.replace_all_uses(input, copy.add_weight(name, ir::share(ir::Tensor::from_floats(dims, values))));
      return copy;
    }
  }
  return copy;
}

TEST_CASE("a pair that times like one compared before reuses its comparison", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const auto [fused, separate] = timed_pair(*table);
  REQUIRE(measurer->compare(separate, fused, {})->median_ratio == 0.5);
  // The same rewrite in another layer: other weights, so other graphs, not in the table.
  const ir::Graph other_separate = refilled(separate, "W", 1.0f);
  const ir::Graph other_fused = refilled(fused, "W", 1.0f);
  REQUIRE(cost::graph_signature(other_separate, {}) != cost::graph_signature(separate, {}));
  const std::optional<cost::Comparison> reused = measurer->compare(other_separate, other_fused, {});
  REQUIRE(reused);
  CHECK(reused->median_ratio == 0.5);
  CHECK(reused->original == cost::graph_signature(other_separate, {}));
  CHECK(table->graph_calls == 2);
  CHECK(measurer->stats().comparisons_reused == 1);
  CHECK(measurer->stats().comparisons_measured == 1);
  // From now on it is in the cache under its own keys.
  CHECK(measurer->cache().find_comparison(reused->original, reused->candidate, "onnxruntime-cpu"));
  // A candidate that differs in a small weight (8 biases) is another computation: measured
  // (and failing here: not in the table).
  CHECK_FALSE(measurer->compare(other_separate, refilled(fused, "B", 1.0f), {}));
  CHECK(measurer->stats().comparisons_measured == 2);
}

TEST_CASE("the candidates of one original are timed together, each compared with it", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const auto [fused, separate] = timed_pair(*table);
  const ir::Graph slower = testing::conv_graph(8, 8, 5, "relu", false);
  table->graph_ms[cost::graph_signature(slower, {})] = 4.0;
  const std::vector<std::optional<cost::Comparison>> both = measurer->compare_all(separate, {&fused, &slower}, {});
  REQUIRE(both.size() == 2);
  CHECK(both[0]->median_ratio == 0.5);
  CHECK(both[1]->median_ratio == 2.0);
  CHECK(table->graph_requests == 1);
  CHECK(table->graph_calls == 3);
  CHECK(measurer->stats().comparisons_measured == 2);
  // What the checks ask afterwards is in the cache.
  CHECK(measurer->compare(separate, slower, {})->median_ratio == 2.0);
  CHECK(table->graph_calls == 3);

  // When one of them fails in the target, each is timed alone, so the other still counts.
  const ir::Graph unknown = testing::conv_graph(8, 8, 1, "relu", false);
  const ir::Graph faster = testing::conv_graph(8, 8, 3, "sigmoid", false);
  table->graph_ms[cost::graph_signature(faster, {})] = 1.5;
  const std::vector<std::optional<cost::Comparison>> mixed = measurer->compare_all(separate, {&unknown, &faster}, {});
  CHECK_FALSE(mixed[0].has_value());
  REQUIRE(mixed[1].has_value());
  CHECK(mixed[1]->median_ratio == 0.75);
}

TEST_CASE("candidates timed together are compared with each other where asked, over the same rounds", "[pipeline]") {
  // The guard's request: the input, the result, and the result with the layout forms; the forms'
  // check (the formed result against the result) is then in the cache, and no new request is made.
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const auto [fused, separate] = timed_pair(*table);
  const ir::Graph formed = testing::conv_graph(8, 8, 5, "relu", false);
  table->graph_ms[cost::graph_signature(formed, {})] = 1.5;
  measurer->compare_all(separate, {&fused, &formed}, {}, {}, {{0, 1}});
  CHECK(table->graph_requests == 1);
  CHECK(measurer->stats().comparisons_measured == 2);
  CHECK(measurer->stats().comparisons_derived == 1);
  const std::optional<cost::Comparison> forms = measurer->compare(fused, formed, {});
  REQUIRE(forms.has_value());
  CHECK(forms->median_ratio == Approx(1.5));
  CHECK(forms->original_ms == Approx(1.0));
  CHECK(forms->candidate_ms == Approx(1.5));
  CHECK(table->graph_requests == 1);
  // And compare_again may time that pair again, as one measured in this run.
  CHECK(measurer->compare_again(fused, formed, {}).has_value());
  CHECK(table->graph_requests == 2);
  // Without `between`, the pair is not compared.
  const ir::Graph other = testing::conv_graph(8, 8, 3, "sigmoid", false);
  table->graph_ms[cost::graph_signature(other, {})] = 3.0;
  const ir::Graph third = testing::conv_graph(8, 8, 1, "sigmoid", false);
  table->graph_ms[cost::graph_signature(third, {})] = 2.5;
  measurer->compare_all(separate, {&other, &third}, {});
  CHECK(measurer->cache().find_comparison(cost::graph_signature(other, {}), cost::graph_signature(third, {}),
                                          "onnxruntime-cpu") == nullptr);
}

TEST_CASE("a pair timed again goes on from the runs this run made of it, the cache read back uncounted", "[pipeline]") {
  // The guard's "again" timing of a gain within the noise: the first timing's runs count and are
  // pooled into the second comparison (the table profiler times three runs per request).
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const auto [fused, separate] = timed_pair(*table);
  CHECK_FALSE(measurer->cached_comparison(separate, fused).has_value());
  REQUIRE(measurer->compare(separate, fused, {})->runs == 3);
  // Read back as compare would find it, without counting a cache hit.
  CHECK(measurer->cached_comparison(separate, fused)->runs == 3);
  CHECK(measurer->stats().comparison_hits == 0);
  const std::optional<cost::Comparison> again = measurer->compare_again(separate, fused, {});
  REQUIRE(again.has_value());
  CHECK(again->runs == 6);
  CHECK(again->median_ratio == 0.5);
  CHECK(measurer->compare_again(separate, fused, {})->runs == 9);
  CHECK(table->graph_requests == 3);
  // What is cached is the pooled comparison.
  CHECK(measurer->compare(separate, fused, {})->runs == 9);
}

TEST_CASE("graphs the target cannot run have no comparison, and are not tried again", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", false);
  const ir::Graph other = testing::conv_graph(8, 8, 3, "none", false);
  CHECK_FALSE(measurer->compare(graph, other, {}).has_value());
  CHECK_FALSE(measurer->compare(graph, other, {}).has_value());
  CHECK(table->graph_calls == 1);
  CHECK(measurer->cache().comparisons().front().failed());
  CHECK_FALSE(measurer->graph_time(graph).has_value());
}

TEST_CASE("missed nodes are measured into the cache, failures recorded", "[pipeline]") {
  TableProfiler* table = nullptr;
  auto measurer = table_measurer("", table);
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", true);
  const std::string conv = cost::op_signature(graph, 0, &measurer->sizes());
  const std::string relu = cost::op_signature(graph, 1, &measurer->sizes());
  table->node_ms[conv] = 0.5;
  CHECK(measurer->measure({{conv, graph, 0}, {relu, graph, 1}}) == 2);
  CHECK(measurer->cache().find(conv, "onnxruntime-cpu")->median_ms == 0.5);
  CHECK(measurer->cache().find(relu, "onnxruntime-cpu")->failed());
  CHECK(measurer->stats().nodes_measured == 2);
  CHECK(measurer->stats().nodes_failed == 1);
}

TEST_CASE("the cache file keeps what was measured and merges what others wrote", "[pipeline]") {
  const std::string path = (testing::scratch_dir("measurer") / "sub" / "cache.json").string();
  TableProfiler* table = nullptr;
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", false);
  const ir::Graph other = testing::conv_graph(8, 8, 3, "none", false);
  {
    auto first = table_measurer(path, table);
    table->graph_ms[cost::graph_signature(graph, {})] = 3.0;
    table->graph_ms[cost::graph_signature(other, {})] = 4.0;
    first->compare(graph, other, {});
    first->save();
  }
  const ir::Graph small = testing::conv_graph(8, 4, 3, "relu", false);
  auto second = table_measurer(path, table);
  table->graph_ms[cost::graph_signature(small, {})] = 1.0;
  table->graph_ms[cost::graph_signature(graph, {})] = 3.0;
  second->compare(graph, small, {});
  second->save();
  const cost::CostCache saved = cost::CostCache::read(path);
  CHECK(saved.comparisons().size() == 2);
  CHECK(saved.entries().size() == 3);
  CHECK(saved.find(cost::graph_signature(other, {}), "onnxruntime-cpu")->median_ms == 4.0);
  CHECK(saved.find_comparison(cost::graph_signature(graph, {}), cost::graph_signature(small, {}), "onnxruntime-cpu")
            ->median_ratio == Approx(1.0 / 3));
  CHECK(saved.header() == table->header());
}

TEST_CASE("without a profiler, a measurer only reads its cache", "[pipeline]") {
  cost::CostCache cache(TableProfiler().header());
  const ir::Graph graph = testing::conv_graph(8, 8, 3, "relu", false);
  const ir::Graph other = testing::conv_graph(8, 4, 3, "relu", false);
  cache.insert(cost::Comparison{cost::graph_signature(graph, {}), cost::graph_signature(other, {}), "onnxruntime-cpu",
                                0.8, 0.01, 10, {}});
  Measurer measurer(std::move(cache), "", nullptr, {});
  CHECK(measurer.compare(graph, other, {})->median_ratio == 0.8);
  CHECK_FALSE(measurer.compare(other, graph, {}).has_value());
  CHECK(measurer.stats().comparisons_unmeasured == 1);
  CHECK(measurer.measure({{"Relu(;float32[1])", other, 0}}) == 0);
}

TEST_CASE("a run of the measuring instance is cached, and a pinned cache sizes parts as that run did", "[pipeline]") {
  // data_shaped_expand's y depends on data: the reference executor would size it [5, 4]; the
  // "target" here says [6, 4], so a first dim of 6 can only come from its run, cached.
  const std::string path = (testing::scratch_dir("measurer_instance") / "cache.json").string();
  std::filesystem::remove(path);
  ir::Graph graph;
  const testing::shapes::DataShaped values = testing::shapes::data_shaped_expand(graph);
  const auto observe_with = [](Measurer& measurer) {
    return [&measurer](const ir::Graph& instance, const std::vector<ir::ValueId>& wanted,
                       const cost::DimSizes& sizes) { return measurer.observe(instance, wanted, sizes); };
  };
  const auto first_dim = [](const ir::Graph& sized, ir::ValueId y, const pipeline::MeasuringInstance& instance) {
    const ir::Dim& dim = sized.value(y).type.shape.dims.at(0);
    return dim.is_known() ? dim.value : instance.sizes.at(dim.symbol);
  };
  {
    TableProfiler* table = nullptr;
    auto measurer = table_measurer(path, table);
    table->observation = [](const ir::Graph& instance, const std::vector<ir::ValueId>& wanted) {
      profile::Observed observed;
      for (ir::ValueId id : wanted) {
        const std::string& name = instance.value(id).name;
        observed[name].shape = name == "target" ? std::vector<int64_t>{2} : std::vector<int64_t>{6, 4};
        if (name == "target") observed[name].integers = std::vector<int64_t>{6, 4};
      }
      return observed;
    };
    ir::Graph sized = graph;
    const pipeline::MeasuringInstance instance = pipeline::measuring_instance(sized, {{"N", 5}}, observe_with(*measurer));
    CHECK(table->observe_calls == 1);
    CHECK(first_dim(sized, values.y, instance) == 6);
    ir::Graph again = graph;
    pipeline::measuring_instance(again, {{"N", 5}}, observe_with(*measurer));
    CHECK(table->observe_calls == 1);  // the second time from the cache
    CHECK(measurer->stats().observations_cached == 1);
    measurer->save();
  }
  const cost::CostCache saved = cost::CostCache::read(path);
  REQUIRE(saved.observations().size() == 1);
  CHECK(saved.observations()[0].backend == "onnxruntime-cpu");
  Measurer pinned(saved, "", nullptr, {});  // no profiler: the reference executor would say [5, 4]
  ir::Graph sized = graph;
  const pipeline::MeasuringInstance instance = pipeline::measuring_instance(sized, {{"N", 5}}, observe_with(pinned));
  CHECK(pinned.stats().observations_cached == 1);
  CHECK(first_dim(sized, values.y, instance) == 6);
  REQUIRE(instance.integers.count("target") == 1);
  CHECK(instance.integers.at("target")->to_int64s() == std::vector<int64_t>{6, 4});
}

}  // namespace
}  // namespace graphsub
