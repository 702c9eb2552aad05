// Sizes for every dim of a graph: unnamed dims get a symbol and the size they have when measured.
#include "pipeline/measure_sizes.h"

#include <catch2/catch.hpp>

#include "ir/error.h"
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

TEST_CASE("what depends on data is sized by one run of the instance", "[pipeline]") {
  // data_shaped_expand: y's shape depends on the data of ids; at N = 5 (ids fed zeros, as a
  // timing feeds them) target is [5, 4] and y has that shape.
  ir::Graph graph;
  const auto [target, y] = data_shaped_expand(graph);
  REQUIRE_FALSE(graph.value(y).type.shape.is_static());

  SECTION("without a run, the dims stay unsized and the target unknown") {
    const pipeline::MeasuringInstance instance = pipeline::measuring_instance(graph, {{"N", 5}});
    CHECK(instance.integers.count("target") == 0);
    CHECK(instance.sizes == cost::DimSizes{{"N", 5}});
  }
  SECTION("a run on the reference executor sizes them") {
    const pipeline::MeasuringInstance instance =
        pipeline::measuring_instance(graph, {{"N", 5}}, pipeline::observe_with_reference);
    REQUIRE(instance.integers.count("target") == 1);
    CHECK(instance.integers.at("target")->to_int64s() == std::vector<int64_t>{5, 4});
    const ir::Shape& shape = graph.value(y).type.shape;
    REQUIRE(shape.rank() == 2);
    for (std::size_t axis = 0; axis < 2; ++axis) {
      const ir::Dim& dim = shape.dims[axis];
      const int64_t size = dim.is_known() ? dim.value : instance.sizes.at(dim.symbol);
      CHECK(size == (axis == 0 ? 5 : 4));
    }
  }
  SECTION("a run that fails leaves them as without one") {
    const pipeline::Observer failing = [](const ir::Graph&, const std::vector<ir::ValueId>&,
                                          const cost::DimSizes&) -> profile::Observed {
      throw Error("the target cannot run it");
    };
    const pipeline::MeasuringInstance instance = pipeline::measuring_instance(graph, {{"N", 5}}, failing);
    CHECK(instance.integers.count("target") == 0);
    CHECK(instance.sizes == cost::DimSizes{{"N", 5}});
  }
}

TEST_CASE("a value whose rank only a run tells gets that rank, its dims named", "[pipeline]") {
  ir::Graph graph;
  const auto [target, y] = data_shaped_expand(graph);
  graph.set_type(y, ir::TensorType{ir::DataType::kFloat, ir::Shape{}});

  const pipeline::MeasuringInstance instance =
      pipeline::measuring_instance(graph, {{"N", 5}}, pipeline::observe_with_reference);
  const ir::Shape& shape = graph.value(y).type.shape;
  REQUIRE(shape.rank_known);
  REQUIRE(shape.rank() == 2);
  for (std::size_t axis = 0; axis < 2; ++axis) {
    REQUIRE(shape.dims[axis].is_symbolic());
    CHECK(instance.sizes.at(shape.dims[axis].symbol) == (axis == 0 ? 5 : 4));
  }
  CHECK(instance.run.sized >= 1);
}

}  // namespace
}  // namespace graphsub
