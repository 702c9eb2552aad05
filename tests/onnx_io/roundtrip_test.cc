// Import -> export -> import of every ONNX test model keeps its nodes, names, types and results,
// and a second export reproduces the first byte for byte; a 100 MB model takes seconds.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "onnx_io/onnx_io.h"
#include "onnx_io/onnx_io_testing.h"
#include "ops/registry.h"
#include "runtime/cpu_executor.h"
#include "test_util.h"

namespace graphsub {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::scratch_root;


std::vector<fs::path> test_dirs(const fs::path& root, const std::string& suite) {
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root / suite)) {
    if (fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

/// The tensors `<prefix>_<i>.pb` of a test's first data set, in order; empty when one is not a
/// plain tensor (sequences, optionals).
std::vector<ir::TensorPtr> data_set(const fs::path& dir, const std::string& prefix) {
  std::vector<ir::TensorPtr> tensors;
  for (int i = 0;; ++i) {
    const fs::path file = dir / "test_data_set_0" / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) return tensors;
    try {
      tensors.push_back(ir::share(onnx_io::read_tensor_file(file.string())));
    } catch (const Error&) {
      return {};
    }
  }
}

/// The nodes some graph output needs (export leaves the others out).
std::set<ir::NodeId> needed_nodes(const ir::Graph& graph) {
  std::set<ir::NodeId> needed;
  std::vector<ir::ValueId> pending = graph.outputs();
  while (!pending.empty()) {
    const ir::ValueId value = pending.back();
    pending.pop_back();
    const ir::NodeId producer = graph.value(value).producer;
    if (producer < 0 || !needed.insert(producer).second) continue;
    for (ir::ValueId input : graph.node(producer).inputs) {
      if (input != ir::kNoValue) pending.push_back(input);
    }
  }
  return needed;
}

/// Each needed node's op name and output names, in topological order: what a round trip must keep.
std::vector<std::string> node_signatures(const ir::Graph& graph) {
  const std::vector<ir::NodeId> order = graph.topological_order().value();
  const std::set<ir::NodeId> needed = needed_nodes(graph);
  std::vector<std::string> signatures;
  for (ir::NodeId id : order) {
    if (!needed.count(id)) continue;
    const ir::Node& node = graph.node(id);
    std::string signature = node.opaque ? node.opaque->op_type : ops::kind_name(node.op);
    for (ir::ValueId output : node.outputs) signature += " " + graph.value(output).name;
    signatures.push_back(signature);
  }
  return signatures;
}

std::vector<std::string> input_names(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (ir::ValueId id : graph.inputs()) names.push_back(graph.value(id).name);
  return names;
}

std::vector<std::string> output_types(const ir::Graph& graph) {
  std::vector<std::string> types;
  for (ir::ValueId id : graph.outputs()) types.push_back(ir::to_string(graph.value(id).type));
  return types;
}

bool has_foldable_node(const ir::Graph& graph) {
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op != ir::OpKind::kOpaque && graph.is_weight_only(id)) return true;
  }
  return false;
}

/// Runs both graphs on the test inputs; empty when the results agree bit for bit (or cannot be
/// computed: the same kernels run on both).
std::string compare_results(const ir::Graph& before, const ir::Graph& after,
                            const std::vector<ir::TensorPtr>& inputs) {
  if (!runtime::CpuExecutor::unsupported_ops(before).empty() || inputs.size() < before.inputs().size())
    return {};
  runtime::TensorMap feed;
  for (std::size_t i = 0; i < before.inputs().size(); ++i)
    feed[before.value(before.inputs()[i]).name] = inputs[i];
  runtime::TensorMap expected;
  try {
    expected = runtime::CpuExecutor::run(before, feed);
  } catch (const Error&) {
    return {};
  }
  const runtime::TensorMap actual = runtime::CpuExecutor::run(after, feed);
  for (const auto& [name, tensor] : expected) {
    if (tensor->content_hash() != actual.at(name)->content_hash()) return "output " + name + " differs";
  }
  return {};
}

/// What changed between a graph and its round trip; empty when nothing did.
std::string compare_graphs(const ir::Graph& before, const ir::Graph& after) {
  if (input_names(before) != input_names(after)) return "graph inputs differ";
  if (before.output_names() != after.output_names()) return "graph output names differ";
  if (output_types(before) != output_types(after)) return "graph output types differ";
  if (!has_foldable_node(before) && node_signatures(before) != node_signatures(after)) return "nodes differ";
  return {};
}

/// Exports `graph` into the scratch folder as `name` and imports it again.
ir::Graph export_and_import(const ir::Graph& graph, const std::string& name) {
  const std::string file = (scratch_root() / name).string();
  onnx_io::export_model(graph, file);
  return onnx_io::import_model(file);
}

/// Import, then export and import three times: the graphs agree with the first, and the last two
/// exports are identical. (The first export may differ from the second in value_info only: ONNX
/// infers more precise types once the first export states graphsub's.)
std::string check_round_trip(const fs::path& model, const onnx_io::ImportOptions& options,
                             const std::vector<ir::TensorPtr>& inputs) {
  const ir::Graph original = onnx_io::import_model(model.string(), options);
  const ir::Graph first = export_and_import(original, "first.onnx");
  const ir::Graph second = export_and_import(first, "second.onnx");
  export_and_import(second, "third.onnx");
  if (read_bytes(scratch_root() / "second.onnx") != read_bytes(scratch_root() / "third.onnx")) {
    return "exports do not reach a fixed point";
  }
  std::string difference = compare_graphs(original, first);
  return difference.empty() ? compare_results(original, first, inputs) : difference;
}

/// True when a test tensor has the declared type of its input (some test data does not).
bool fits(const ir::TensorType& declared, const ir::Tensor& tensor) {
  const auto sizes = declared.shape.sizes();
  return declared.dtype == tensor.dtype() && (!sizes || *sizes == tensor.dims());
}

/// Makes every graph input but the first a constant, so shape and axes operands are attributes;
/// no constants when the test data does not fit the inputs.
onnx_io::ImportOptions constant_operands(const fs::path& model, const std::vector<ir::TensorPtr>& inputs) {
  const ir::Graph plain = onnx_io::import_model(model.string());
  onnx_io::ImportOptions options;
  if (inputs.size() != plain.inputs().size()) return options;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const ir::Value& input = plain.value(plain.inputs()[i]);
    if (!fits(input.type, *inputs[i])) return {};
    options.constant_inputs[input.name] = inputs[i];
  }
  return options;
}

/// Round-trips every model of a suite, as is and with constant operands; lists what failed.
std::vector<std::string> round_trip_suite(const fs::path& root, const std::string& suite) {
  std::vector<std::string> failures;
  for (const fs::path& dir : test_dirs(root, suite)) {
    const fs::path model = dir / "model.onnx";
    const std::string name = dir.filename().string();
    try {
      const std::vector<ir::TensorPtr> inputs = data_set(dir, "input");
      std::string failure = check_round_trip(model, {}, inputs);
      const std::vector<ir::TensorPtr> first(inputs.begin(),
                                             inputs.begin() + std::min<std::size_t>(1, inputs.size()));
      if (failure.empty()) {
        failure = check_round_trip(model, constant_operands(model, inputs), first);
      }
      if (!failure.empty()) failures.push_back(name + ": " + failure);
    } catch (const Error& error) {
      failures.push_back(name + ": " + error.what());
    }
  }
  return failures;
}

std::string joined(const std::vector<std::string>& lines) {
  std::ostringstream out;
  for (const std::string& line : lines) out << line << "\n";
  return out.str();
}

TEST_CASE("every ONNX test model round-trips", "[onnx_io]") {
  for (const char* suite : {"node", "simple", "pytorch-converted", "pytorch-operator"}) {
    const std::vector<std::string> failures = round_trip_suite(GRAPHSUB_TESTDATA_DIR, suite);
    INFO(suite << ":\n" << joined(failures));
    REQUIRE(failures.empty());
  }
}

// The node tests of the onnx release graphsub is built with (opsets up to 24 for onnx 1.23),
// written at build time by scripts/write_node_tests.py.
TEST_CASE("every node test of the current onnx release round-trips", "[onnx_io]") {
  REQUIRE(fs::exists(fs::path(GRAPHSUB_NODE_TESTS_DIR) / "node"));
  const std::vector<std::string> failures = round_trip_suite(GRAPHSUB_NODE_TESTS_DIR, "node");
  INFO(joined(failures));
  REQUIRE(failures.empty());
}

/// x [1, 1024] through `layers` MatMul + Relu layers with 1024x1024 float weights (4 MiB each).
ir::Graph large_model(int layers) {
  ir::Graph graph;
  ir::ValueId current = graph.add_input("x", testing::float_type({1, 1024}));
  for (int layer = 0; layer < layers; ++layer) {
    const ir::ValueId w = graph.add_weight(
        "w" + std::to_string(layer), ir::share(testing::random_tensor({1024, 1024}, layer, -0.05f, 0.05f)));
    const ir::NodeId matmul = testing::add_inferred(graph, ir::OpKind::kMatMul, {current, w});
    current = graph.node(testing::add_inferred(graph, ir::OpKind::kRelu, {graph.node(matmul).outputs[0]}))
                  .outputs[0];
  }
  graph.set_name(current, "y");
  graph.set_outputs({current});
  return graph;
}

TEST_CASE("a 100 MB model round-trips with every weight intact", "[onnx_io]") {
  const ir::Graph graph = large_model(25);
  const fs::path file = scratch_root() / "large.onnx";
  onnx_io::export_model(graph, file.string());
  const ir::Graph imported = onnx_io::import_model(file.string());
  REQUIRE(fs::file_size(file) > 100'000'000);
  REQUIRE(imported.node_count() == 50);
  for (int layer = 0; layer < 25; ++layer) {
    const std::string name = "w" + std::to_string(layer);
    REQUIRE(imported.value(testing::value_named(imported, name)).data->content_hash() ==
            graph.value(testing::value_named(graph, name)).data->content_hash());
  }
}

}  // namespace
}  // namespace graphsub
