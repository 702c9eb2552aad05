// Tests of the reference executor and the numeric equivalence check behind `optimize --check`.
#include <catch2/catch.hpp>

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

}  // namespace graphsub
