// Sizes for every dim of a graph: unnamed dims get a symbol and the size they have when measured.
#include "pipeline/measure_sizes.h"

#include <catch2/catch.hpp>

#include "rewrite/shape_testing.h"

namespace graphsub {
namespace {

using namespace testing::shapes;

TEST_CASE("every dim gets a size to measure parts at", "[pipeline]") {
  // y = Reshape(x, Concat(dim 0 * dim 1, [1]))  x: [N, 4]: y is typed [?, ?] (its target is
  // computed; the first dim is N * 4, which no symbol names); z = Relu(y) is typed [unk__7, 1],
  // a symbol as ONNX's inference invents them.
  ir::Graph graph;
  const ir::ValueId x = input(graph, "x", {ir::Dim::named("N"), ir::Dim::known(4)});
  const ir::ValueId rows =
      first(graph, testing::add_inferred(graph, ir::OpKind::kMul, {dim_of(graph, x, 0), dim_of(graph, x, 1)}));
  const ir::ValueId target = concat(graph, {rows, ints(graph, {1}, {1})});
  graph.set_name(target, "target");
  const ir::ValueId y = first(graph, runtime_reshape(graph, x, target));
  graph.set_name(y, "y");
  const ir::ValueId z = first(graph, testing::add_inferred(graph, ir::OpKind::kRelu, {y}));
  graph.set_name(z, "z");
  graph.set_type(z, ir::TensorType{ir::DataType::kFloat, ir::Shape{true, {ir::Dim::named("unk__7"), ir::Dim::known(1)}}});
  graph.set_outputs({z});
  REQUIRE(ir::to_string(graph.value(y).type.shape) == "[?,?]");

  const pipeline::MeasuringInstance instance = pipeline::measuring_instance(graph, {{"N", 3}});
  const cost::DimSizes& sizes = instance.sizes;
  CHECK(ir::to_string(graph.value(y).type.shape) == "[gs_dim_0,gs_dim_1]");
  CHECK(ir::to_string(graph.value(z).type.shape) == "[unk__7,1]");
  CHECK(sizes == cost::DimSizes{{"N", 3}, {"gs_dim_0", 12}, {"gs_dim_1", 1}, {"unk__7", 12}});
  // The Reshape target at that instance, for a part that reads it as an input.
  REQUIRE(instance.integers.count("target") == 1);
  CHECK(instance.integers.at("target")->to_int64s() == std::vector<int64_t>{12, 1});
}

}  // namespace
}  // namespace graphsub
