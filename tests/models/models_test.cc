// The benchmark models: each builds with its documented node count and static shapes at its
// default and small sizes, runs on the reference executor with O(1) outputs, and survives an ONNX
// round trip with the same node count and outputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ir/error.h"
#include "models/builders/models.h"
#include "onnx_io/onnx_io.h"
#include "runtime/cpu_executor.h"
#include "runtime/equivalence.h"
#include "test_util.h"

namespace graphsub {
namespace {

/// Node counts at the default topology, as models/README.md lists them.
const std::map<std::string, std::size_t> kNodeCounts = {
    {"resnet50", 175}, {"resnext50", 175}, {"inception_v3", 313}, {"squeezenet", 65}, {"nasnet_a", 637},
    {"nasrnn", 230},   {"bert", 396},      {"sru", 11},           {"alexnet", 19},    {"vgg16", 37},
    {"inception_e", 31}, {"resnet18", 69}, {"resnet", 72},
};

std::vector<ir::OpKind> ops_in_order(const ir::Graph& graph) {
  std::vector<ir::OpKind> ops;
  for (ir::NodeId id : graph.node_ids()) ops.push_back(graph.node(id).op);
  return ops;
}

/// Every value a node makes is a float32 tensor of static sizes.
void check_static_shapes(const ir::Graph& graph) {
  for (ir::NodeId id : graph.node_ids()) {
    for (ir::ValueId output : graph.node(id).outputs) {
      const ir::TensorType& type = graph.value(output).type;
      INFO("node " << graph.node(id).name << " output " << ir::to_string(type));
      CHECK(type.dtype == ir::DataType::kFloat);
      CHECK(type.shape.sizes().has_value());
    }
  }
}

/// Root mean square of a float32 tensor; NaN when any element is not finite.
double rms(const ir::Tensor& tensor) {
  double sum = 0;
  for (float value : testing::values_of(tensor)) {
    if (!std::isfinite(value)) return NAN;
    sum += static_cast<double>(value) * value;
  }
  return std::sqrt(sum / static_cast<double>(tensor.num_elements()));
}

/// Runs the graph on random inputs: every output is finite and of order 1 (the weight scales keep
/// activations from vanishing or exploding, so numeric checks at tight tolerances mean something).
void check_runs(const ir::Graph& graph) {
  const runtime::TensorMap inputs = runtime::random_inputs(graph, 7, {});
  const runtime::TensorMap outputs = runtime::CpuExecutor::run(graph, inputs);
  REQUIRE(outputs.size() == graph.outputs().size());
  for (const auto& [name, tensor] : outputs) {
    const double size = rms(*tensor);
    INFO("output " << name << " rms " << size);
    CHECK(size > 1e-2);
    CHECK(size < 1e2);
  }
}

/// Export, import: the same nodes and, on the reference executor, the same outputs.
void check_round_trip(const ir::Graph& graph, const std::string& name) {
  const std::string path = (testing::scratch_dir("models_" + name) / (name + ".onnx")).string();
  onnx_io::export_model(graph, path);
  const ir::Graph imported = onnx_io::import_model(path);
  CHECK(imported.node_count() == graph.node_count());
  runtime::CheckOptions options;
  options.samples = 1;
  const runtime::CheckReport report = runtime::check_equivalent(graph, imported, options);
  for (const runtime::OutputCheck& output : report.outputs) {
    INFO(output.name << ": max abs error " << output.max_abs_error);
    CHECK(output.passed);
  }
}

/// The checks of one model at its small sizes.
void check_small_model(const std::string& name) {
  const ir::Graph graph = models::build_model(name, models::small_config(name));
  CHECK(graph.node_count() == kNodeCounts.at(name));
  check_static_shapes(graph);
  check_runs(graph);
  check_round_trip(graph, name);
}

}  // namespace

TEST_CASE("every model has a documented node count and a description", "[models]") {
  const std::vector<std::string> names = models::model_names();
  CHECK(names.size() == kNodeCounts.size());
  for (const std::string& name : names) {
    INFO(name);
    CHECK(kNodeCounts.count(name) == 1);
    CHECK(!models::model_description(name).empty());
  }
}

TEST_CASE("default-size models have their node counts and the small sizes' topology", "[models]") {
  for (const std::string& name : models::model_names()) {
    INFO(name);
    const ir::Graph graph = models::build_model(name);
    CHECK(graph.node_count() == kNodeCounts.at(name));
    check_static_shapes(graph);
    CHECK(ops_in_order(graph) == ops_in_order(models::build_model(name, models::small_config(name))));
  }
}

TEST_CASE("an unknown model name is an error listing the names", "[models]") {
  CHECK_THROWS_AS(models::build_model("resnet51"), Error);
  CHECK_THROWS_WITH(models::model_description("resnet51"), Catch::Contains("resnet50, resnext50"));
}

TEST_CASE("sizes a model cannot take are errors", "[models]") {
  models::ModelConfig config;
  config.image_size = 16;
  CHECK_THROWS_WITH(models::build_model("inception_v3", config), Catch::Contains("cannot build inception_v3"));
  config = {};
  config.batch = 0;
  CHECK_THROWS_AS(models::build_model("resnet18", config), Error);
  config = {};
  config.hidden = 100;
  config.heads = 12;
  CHECK_THROWS_AS(models::build_model("bert", config), Error);
}

TEST_CASE("weights are determined by the seed", "[models]") {
  models::ModelConfig config = models::small_config("resnet18");
  const uint64_t first = models::build_model("resnet18", config).structural_hash();
  CHECK(models::build_model("resnet18", config).structural_hash() == first);
  config.seed = 2;
  CHECK(models::build_model("resnet18", config).structural_hash() != first);
}

TEST_CASE("resnet takes a number of basic or bottleneck blocks", "[models]") {
  models::ModelConfig config = models::small_config("resnet");
  for (int64_t blocks : {8, 16, 32}) {
    config.blocks = blocks;
    config.bottleneck = false;
    CHECK(models::build_model("resnet", config).node_count() == static_cast<std::size_t>(9 * blocks));
    config.bottleneck = true;
    CHECK(models::build_model("resnet", config).node_count() == static_cast<std::size_t>(10 * blocks));
  }
}

TEST_CASE("without batch normalization the CNNs count the papers' operators plus their Relus", "[models]") {
  models::ModelConfig config = models::small_config("resnet");
  config.batch_norm = false;
  CHECK(models::build_model("resnet", config).node_count() == 48);  // OCGGS: 40 + 8 Relus
  config = models::small_config("nasnet_a");
  config.batch_norm = false;
  CHECK(models::build_model("nasnet_a", config).node_count() == 420);  // TASO's 383 + 37 Relus
  config = models::small_config("inception_v3");
  config.batch_norm = false;
  CHECK(models::build_model("inception_v3", config).node_count() == 219);
}

TEST_CASE("bert takes TASO's sizes", "[models]") {
  models::ModelConfig config;
  config.blocks = 8;
  config.hidden = 1024;
  config.heads = 16;
  config.seq_len = 8;
  const ir::Graph graph = models::build_model("bert", config);
  CHECK(graph.node_count() == 8 * 33);
  const std::vector<int64_t> sizes = {1, 8, 1024};
  CHECK(graph.value(graph.outputs()[0]).type.shape.sizes() == sizes);
}

TEST_CASE("resnet50 runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("resnet50"); }
TEST_CASE("resnext50 runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("resnext50"); }
TEST_CASE("inception_v3 runs at its small size and survives an ONNX round trip", "[models]") {
  check_small_model("inception_v3");
}
TEST_CASE("squeezenet runs at its small size and survives an ONNX round trip", "[models]") {
  check_small_model("squeezenet");
}
TEST_CASE("nasnet_a runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("nasnet_a"); }
TEST_CASE("nasrnn runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("nasrnn"); }
TEST_CASE("bert runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("bert"); }
TEST_CASE("sru runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("sru"); }
TEST_CASE("alexnet runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("alexnet"); }
TEST_CASE("vgg16 runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("vgg16"); }
TEST_CASE("inception_e runs at its small size and survives an ONNX round trip", "[models]") {
  check_small_model("inception_e");
}
TEST_CASE("resnet18 runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("resnet18"); }
TEST_CASE("resnet runs at its small size and survives an ONNX round trip", "[models]") { check_small_model("resnet"); }

}  // namespace graphsub
