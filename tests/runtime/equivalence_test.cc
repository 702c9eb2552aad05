// Tests of the reference executor and the numeric equivalence check behind `optimize --check`.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/graph.h"
#include "runtime/cpu_executor.h"
#include "runtime/equivalence.h"
#include "test_util.h"

namespace graphsub {
namespace {

using testing::add_inferred;
using testing::float_type;

/// y = op(x + w) over x: float32[N,4] with a [4] weight; N symbolic.
ir::Graph unary_of_sum(ir::OpKind op, float weight) {
  ir::Graph graph;
  ir::TensorType x_type{ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(4)}}};
  ir::ValueId x = graph.add_input("x", x_type);
  ir::ValueId w = graph.add_weight("w", ir::share(ir::Tensor::from_floats({4}, {weight, weight, weight, weight})));
  ir::NodeId add = add_inferred(graph, ir::OpKind::kAdd, {x, w});
  ir::NodeId out = add_inferred(graph, op, {graph.node(add).outputs[0]});
  graph.set_name(graph.node(out).outputs[0], "y");
  graph.set_outputs({graph.node(out).outputs[0]});
  return graph;
}

}  // namespace

TEST_CASE("the executor runs a graph and frees nothing it returns", "[runtime]") {
  ir::Graph graph = unary_of_sum(ir::OpKind::kRelu, -0.5f);
  runtime::TensorMap inputs;
  inputs["x"] = ir::share(ir::Tensor::from_floats({2, 4}, {0, 1, 2, 3, -1, 0.25f, 0.5f, 0.75f}));
  runtime::TensorMap outputs = runtime::CpuExecutor::run(graph, inputs);
  REQUIRE(outputs.count("y") == 1);
  CHECK(testing::elements(*outputs.at("y")) == std::vector<double>{0, 0.5, 1.5, 2.5, 0, 0, 0, 0.25});
}

TEST_CASE("the executor rejects missing and mis-shaped inputs and opaque nodes", "[runtime]") {
  ir::Graph graph = unary_of_sum(ir::OpKind::kRelu, 0);
  CHECK_THROWS_AS(runtime::CpuExecutor::run(graph, {}), Error);
  runtime::TensorMap wrong;
  wrong["x"] = ir::share(ir::Tensor::from_floats({2, 3}, {0, 0, 0, 0, 0, 0}));
  CHECK_THROWS_WITH(runtime::CpuExecutor::run(graph, wrong), Catch::Contains("expects float32[N,4]"));
  CHECK(runtime::CpuExecutor::unsupported_ops(graph).empty());
}

TEST_CASE("equal graphs pass the check, different ones fail it", "[runtime]") {
  runtime::CheckOptions options;
  options.dims["N"] = 3;
  const ir::Graph relu = unary_of_sum(ir::OpKind::kRelu, 0.25f);
  runtime::CheckReport same = runtime::check_equivalent(relu, unary_of_sum(ir::OpKind::kRelu, 0.25f), options);
  CHECK(same.passed());
  CHECK(same.outputs.at(0).max_abs_error == 0);

  runtime::CheckReport shifted = runtime::check_equivalent(relu, unary_of_sum(ir::OpKind::kRelu, 0.2500001f), options);
  CHECK(shifted.passed());  // within atol + rtol·|y|
  CHECK(shifted.outputs.at(0).max_abs_error > 0);

  runtime::CheckReport other = runtime::check_equivalent(relu, unary_of_sum(ir::OpKind::kSigmoid, 0.25f), options);
  CHECK_FALSE(other.passed());
  CHECK(other.outputs.at(0).name == "y");
}

TEST_CASE("the relative error counts only elements whose reference is not zero", "[runtime]") {
  // Relu(x - 100) is 0 everywhere: the candidate differs there by |x + 0.25|, which is no finite
  // fraction of 0 (it was reported as 1e12 times the difference).
  runtime::CheckOptions options;
  options.dims["N"] = 3;
  const runtime::CheckReport report =
      runtime::check_equivalent(unary_of_sum(ir::OpKind::kRelu, -100), unary_of_sum(ir::OpKind::kRelu, 0.25f), options);
  CHECK_FALSE(report.passed());
  CHECK(report.outputs.at(0).max_abs_error > 0);
  CHECK(report.outputs.at(0).max_rel_error == 0);
}

TEST_CASE("a reference run once checks several candidates as check_equivalent does", "[runtime]") {
  runtime::CheckOptions options;
  options.dims["N"] = 3;
  const ir::Graph relu = unary_of_sum(ir::OpKind::kRelu, 0.25f);
  const runtime::ReferenceRuns runs = runtime::run_reference(relu, options);
  REQUIRE(runs.error.empty());
  REQUIRE(runs.outputs.size() == static_cast<std::size_t>(options.samples));
  for (const ir::Graph& candidate : {unary_of_sum(ir::OpKind::kRelu, 0.2500001f), unary_of_sum(ir::OpKind::kSigmoid, 0.25f)}) {
    const runtime::CheckReport alone = runtime::check_equivalent(relu, candidate, options);
    const runtime::CheckReport shared = runtime::check_against(relu, runs, candidate, options);
    CHECK(shared.passed() == alone.passed());
    CHECK(shared.outputs.at(0).max_abs_error == alone.outputs.at(0).max_abs_error);
  }
  // A reference that could not run: every candidate gets its error.
  runtime::ReferenceRuns failed;
  failed.error = "no kernel for the reference";
  CHECK_THROWS_WITH(runtime::check_against(relu, failed, relu, options), Catch::Contains("no kernel for the reference"));
}

TEST_CASE("random inputs are deterministic per seed and honour named dims", "[runtime]") {
  const ir::Graph graph = unary_of_sum(ir::OpKind::kRelu, 0);
  runtime::CheckOptions options;
  options.dims["N"] = 5;
  runtime::TensorMap a = runtime::random_inputs(graph, 7, options);
  runtime::TensorMap b = runtime::random_inputs(graph, 7, options);
  runtime::TensorMap c = runtime::random_inputs(graph, 8, options);
  CHECK(a.at("x")->dims() == std::vector<int64_t>{5, 4});
  CHECK(a.at("x")->content_hash() == b.at("x")->content_hash());
  CHECK(a.at("x")->content_hash() != c.at("x")->content_hash());
}

TEST_CASE("integer inputs that index a small table are drawn below its length", "[runtime]") {
  // BERT's embeddings: ids index a table of 100 rows, token types (through an Identity) one of 2;
  // a mask is cast to float, not an index.
  ir::Graph graph;
  const ir::TensorType ints{ir::DataType::kInt64, ir::Shape{true, {ir::Dim::named("N"), ir::Dim::known(8)}}};
  const ir::ValueId ids = graph.add_input("ids", ints);
  const ir::ValueId types = graph.add_input("types", ints);
  const ir::ValueId mask = graph.add_input("mask", ints);
  const ir::ValueId words = graph.add_weight("words", ir::share(ir::Tensor::from_floats({100, 2}, std::vector<float>(200, 1.f))));
  const ir::ValueId kinds = graph.add_weight("kinds", ir::share(ir::Tensor::from_floats({2, 2}, {1, 2, 3, 4})));
  ir::Attributes axis;
  axis.set("axis", int64_t{0});
  const ir::NodeId word = add_inferred(graph, ir::OpKind::kGather, {words, ids}, axis);
  const ir::NodeId same = add_inferred(graph, ir::OpKind::kIdentity, {types});
  const ir::NodeId kind = add_inferred(graph, ir::OpKind::kGather, {kinds, graph.node(same).outputs[0]}, axis);
  const ir::NodeId sum = add_inferred(graph, ir::OpKind::kAdd, {graph.node(word).outputs[0], graph.node(kind).outputs[0]});
  ir::Attributes to_float;
  to_float.set("to", int64_t{1});
  const ir::NodeId cast = add_inferred(graph, ir::OpKind::kCast, {mask}, to_float);
  graph.set_name(graph.node(sum).outputs[0], "embedded");
  graph.set_name(graph.node(cast).outputs[0], "masked");
  graph.set_outputs({graph.node(sum).outputs[0], graph.node(cast).outputs[0]});

  const std::map<std::string, int64_t> bounds = runtime::index_bounds(graph);
  CHECK(bounds == std::map<std::string, int64_t>{{"types", 2}});
  runtime::CheckOptions options;
  options.dims["N"] = 4;
  options.index_bounds = bounds;
  const runtime::TensorMap inputs = runtime::random_inputs(graph, 3, options);
  const std::vector<double> drawn = testing::elements(*inputs.at("types"));
  CHECK(std::all_of(drawn.begin(), drawn.end(), [](double x) { return x == 0 || x == 1; }));
  const std::vector<double> ids_drawn = testing::elements(*inputs.at("ids"));
  CHECK(*std::max_element(ids_drawn.begin(), ids_drawn.end()) >= 2);  // the usual [0, 4) elsewhere
  // Without the bound, the draws would index past the table of 2, and the executor refuses that.
  CHECK(runtime::check_equivalent(graph, graph, options).passed());
  options.index_bounds.clear();
  CHECK_THROWS_WITH(runtime::check_equivalent(graph, graph, options), Catch::Contains("out of range"));
}

}  // namespace graphsub
