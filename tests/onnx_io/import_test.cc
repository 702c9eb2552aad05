// import_model: errors on bad files, and what a valid model becomes in the IR.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ir/error.h"
#include "onnx_io/onnx_io.h"
#include "onnx_io/onnx_io_testing.h"
#include "ops/registry.h"
#include "rewrite/shape_arithmetic.h"
#include "runtime/cpu_executor.h"
#include "test_util.h"

namespace graphsub {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using testing::model_path;
using testing::read_bytes;
using testing::scratch_dir;
using testing::test_data;
using testing::value_named;

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// The op kinds of the graph's nodes in topological order.
std::vector<ir::OpKind> op_kinds(const ir::Graph& graph) {
  const std::vector<ir::NodeId> order = graph.topological_order().value();
  std::vector<ir::OpKind> kinds;
  for (ir::NodeId id : order) kinds.push_back(graph.node(id).op);
  return kinds;
}

/// The one node of that kind (and, for opaque nodes, op_type); fails the test otherwise.
const ir::Node& only_node_of(const ir::Graph& graph, ir::OpKind op, const std::string& op_type = {}) {
  const ir::Node* found = nullptr;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    if (node.op == op && (op_type.empty() || node.opaque->op_type == op_type)) {
      REQUIRE(found == nullptr);
      found = &graph.node(id);
    }
  }
  REQUIRE(found != nullptr);
  return *found;
}

TEST_CASE("a missing file is an error that names it", "[onnx_io]") {
  REQUIRE_THROWS_WITH(onnx_io::import_model("/nonexistent/model.onnx"),
                      Contains("/nonexistent/model.onnx") && Contains("no such file"));
}

TEST_CASE("a folder is not a model", "[onnx_io]") {
  REQUIRE_THROWS_WITH(onnx_io::import_model(model_path("")), Contains("is a directory"));
}

TEST_CASE("garbage bytes are an error, never a crash", "[onnx_io]") {
  const fs::path file = scratch_dir("garbage") / "garbage.onnx";
  std::mt19937 rng(7);
  for (int size : {0, 1, 2, 7, 64, 1000, 100000}) {
    std::string bytes(static_cast<std::size_t>(size), '\0');
    for (char& byte : bytes) byte = static_cast<char>(rng());
    write_bytes(file, bytes);
    REQUIRE_THROWS_AS(onnx_io::import_model(file.string()), Error);
  }
  write_bytes(file, "this is a text file, not a model\n");
  REQUIRE_THROWS_WITH(onnx_io::import_model(file.string()), Contains(file.string()));
}

TEST_CASE("a model of a newer IR version than the linked ONNX checker knows is read and written as it is", "[onnx_io]") {
  // onnx 1.17 and later write IR version 10 and up; the checker of ONNX 1.12 stops at 8.
  const fs::path dir = scratch_dir("ir10");
  ir::Graph graph = onnx_io::import_model(model_path("constants.onnx"));
  auto info = std::make_shared<ir::ModelInfo>(*graph.model_info());
  info->ir_version = 10;
  graph.set_model_info(info);
  onnx_io::export_model(graph, (dir / "ir10.onnx").string());
  const ir::Graph read = onnx_io::import_model((dir / "ir10.onnx").string());
  CHECK(read.model_info()->ir_version == 10);
  onnx_io::export_model(read, (dir / "again.onnx").string());
  CHECK(read_bytes(dir / "again.onnx") == read_bytes(dir / "ir10.onnx"));
}

TEST_CASE("a truncated model file is an error", "[onnx_io]") {
  const fs::path file = scratch_dir("truncated") / "half.onnx";
  for (const std::string& source :
       {model_path("constants.onnx"), test_data("pytorch-converted/test_Conv2d")}) {
    const std::string bytes = read_bytes(source);
    write_bytes(file, bytes.substr(0, bytes.size() / 2));
    REQUIRE_THROWS_WITH(onnx_io::import_model(file.string()), Contains("truncated"));
  }
}

TEST_CASE("a cycle is an error naming a node on it", "[onnx_io]") {
  REQUIRE_THROWS_WITH(
      onnx_io::import_model(model_path("cycle.onnx")),
      Contains("cycle.onnx: graph has a cycle through node") && (Contains("'add'") || Contains("'relu'")));
}

TEST_CASE("a shape mismatch is an error from strict shape inference", "[onnx_io]") {
  REQUIRE_THROWS_WITH(onnx_io::import_model(model_path("shape_mismatch.onnx")),
                      Contains("shape_mismatch.onnx: fails ONNX shape inference"));
}

TEST_CASE("symbolic dims survive import", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("symbolic_dims.onnx"));
  REQUIRE(graph.inputs().size() == 1);
  const ir::TensorType& x = graph.value(graph.inputs()[0]).type;
  REQUIRE(x.shape.dims[0] == ir::Dim::named("N"));
  REQUIRE(ir::to_string(graph.value(graph.outputs()[0]).type) == "float32[N,4]");
  REQUIRE(op_kinds(graph) == std::vector<ir::OpKind>{ir::OpKind::kMatMul, ir::OpKind::kRelu});
}

TEST_CASE("nodes in any order are sorted topologically", "[onnx_io]") {
  onnx_io::ImportStats stats;
  ir::Graph graph = onnx_io::import_model(model_path("unsorted_nodes.onnx"), {}, &stats);
  REQUIRE(op_kinds(graph) ==
          std::vector<ir::OpKind>{ir::OpKind::kNeg, ir::OpKind::kSigmoid, ir::OpKind::kRelu});
  REQUIRE(stats.modelled_nodes == 3);
  REQUIRE(stats.opaque_nodes == 0);
}

TEST_CASE("Constant nodes become weights named by their outputs", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("constants.onnx"));
  REQUIRE(op_kinds(graph) ==
          std::vector<ir::OpKind>{ir::OpKind::kAdd, ir::OpKind::kMul, ir::OpKind::kReshape});
  const ir::Value& scale = graph.value(value_named(graph, "c_float"));
  REQUIRE(scale.kind == ir::ValueKind::kWeight);
  REQUIRE(scale.data->rank() == 0);
  REQUIRE(scale.data->data<float>()[0] == 2.0f);
  const ir::Value& table = graph.value(value_named(graph, "c_tensor"));
  REQUIRE(table.data->dims() == std::vector<int64_t>{2, 3});
  REQUIRE(table.data->data<float>()[5] == 5.0f);
  const ir::Node& reshape = only_node_of(graph, ir::OpKind::kReshape);
  REQUIRE(reshape.inputs.size() == 1);
  REQUIRE(reshape.attrs.get_ints("shape", {}) == std::vector<int64_t>{3, 2});
}

TEST_CASE("a node of an unknown domain stays opaque with ONNX's types", "[onnx_io]") {
  onnx_io::ImportStats stats;
  ir::Graph graph = onnx_io::import_model(model_path("custom_op.onnx"), {}, &stats);
  const ir::Node& frob = only_node_of(graph, ir::OpKind::kOpaque);
  REQUIRE(frob.opaque->op_type == "Frobnicate");
  REQUIRE(frob.opaque->domain == "com.example");
  REQUIRE(frob.name == "frob");
  REQUIRE(ir::to_string(graph.value(frob.outputs[0]).type) == "float32[N,3]");
  REQUIRE(stats.modelled_nodes == 2);
  REQUIRE(stats.opaque_nodes == 1);
  REQUIRE(stats.opaque_reasons.empty());
  REQUIRE(stats.opset == 13);
}

TEST_CASE("the model's IR version, opsets and graph name are kept", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("custom_op.onnx"));
  const ir::ModelInfo& info = *graph.model_info();
  REQUIRE(info.ir_version == 8);
  REQUIRE(info.opsets == std::vector<std::pair<std::string, int64_t>>{{"", 13}, {"com.example", 1}});
  REQUIRE(!info.onnx_shell.empty());
  REQUIRE(graph.name() == "custom_op");
}

TEST_CASE("a modelled op type kept opaque says why", "[onnx_io]") {
  const std::string path = test_data("node/test_maxpool_with_argmax_2d_precomputed_pads");
  onnx_io::ImportStats stats;
  onnx_io::import_model(path, {}, &stats);
  REQUIRE(stats.opaque_nodes == 1);
  REQUIRE_THAT(stats.opaque_reasons.at("MaxPool"), Contains("Indices"));
}

TEST_CASE("a Reshape to a shape computed at run time is modelled in its run-time form", "[onnx_io]") {
  const std::string dir = std::string(GRAPHSUB_TESTDATA_DIR) + "/node/test_reshape_reordered_all_dims";
  onnx_io::ImportStats stats;
  ir::Graph graph = onnx_io::import_model(dir + "/model.onnx", {}, &stats);
  REQUIRE(stats.opaque_nodes == 0);
  const ir::Node& reshape = graph.node(graph.node_ids().front());
  REQUIRE(reshape.op == ir::OpKind::kReshape);
  REQUIRE(reshape.inputs.size() == 2);
  REQUIRE_FALSE(reshape.attrs.has("shape"));
  runtime::TensorMap feeds;
  feeds["data"] = ir::share(onnx_io::read_tensor_file(dir + "/test_data_set_0/input_0.pb"));
  feeds["shape"] = ir::share(onnx_io::read_tensor_file(dir + "/test_data_set_0/input_1.pb"));
  const ir::Tensor want = onnx_io::read_tensor_file(dir + "/test_data_set_0/output_0.pb");
  const runtime::TensorMap got = runtime::CpuExecutor::run(graph, feeds);
  REQUIRE(got.at(graph.output_names()[0])->dims() == want.dims());
  REQUIRE(testing::max_abs_diff(*got.at(graph.output_names()[0]), want) == 0);
}

TEST_CASE("an opaque node whose operands folding computed is modelled", "[onnx_io]") {
  // models/shifted_windows.onnx: the Pad's pads are computed from the dims (Swin's pad to a
  // multiple of the window), so import leaves it opaque. Once the dims' arithmetic is resolved
  // and folded (as `optimize` does before its search) the pads are a weight, and the Pad is
  // modelled, with the padded type, computing what it did.
  onnx_io::ImportStats stats;
  const ir::Graph graph = onnx_io::import_model(model_path("shifted_windows.onnx"), {}, &stats);
  REQUIRE(stats.opaque_reasons.count("Pad") == 1);
  const ir::Graph folded = onnx_io::fold_weight_nodes(rewrite::resolve_shape_arithmetic(graph));
  std::size_t modelled = 0;
  const ir::Graph remodelled = onnx_io::model_opaque_nodes(folded, &modelled);
  CHECK(modelled == 1);
  std::size_t pads = 0;
  for (ir::NodeId id : remodelled.node_ids()) {
    const ir::Node& node = remodelled.node(id);
    CHECK(node.op != ir::OpKind::kOpaque);
    if (node.op != ir::OpKind::kPad) continue;
    ++pads;
    CHECK(node.attrs.get_ints("pads", {}) == std::vector<int64_t>{0, 0, 0, 0, 0, 2, 2, 0});
    CHECK(ir::to_string(remodelled.value(node.outputs[0]).type) == "float32[N,8,8,4]");
  }
  CHECK(pads == 1);
  // Nothing left to model: the same graph, and nothing counted.
  std::size_t again = 0;
  CHECK(onnx_io::model_opaque_nodes(remodelled, &again).node_count() == remodelled.node_count());
  CHECK(again == 0);
  // The reference executor runs the modelled graph; onnxruntime's check of the whole model
  // against the original is the CLI test's.
  runtime::TensorMap feeds;
  ir::Tensor input(ir::DataType::kFloat, {2, 6, 6, 4});
  for (int64_t i = 0; i < input.num_elements(); ++i) input.mutable_data<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  feeds["x"] = ir::share(std::move(input));
  const runtime::TensorMap outputs = runtime::CpuExecutor::run(remodelled, feeds);
  CHECK(outputs.at(graph.output_names()[0])->dims() == std::vector<int64_t>{2, 2, 2, 4, 4, 4});
}

TEST_CASE("constant_inputs turn graph inputs into weights", "[onnx_io]") {
  const std::string dir = std::string(GRAPHSUB_TESTDATA_DIR) + "/node/test_reshape_reordered_all_dims";
  onnx_io::ImportOptions options;
  options.constant_inputs["shape"] =
      ir::share(onnx_io::read_tensor_file(dir + "/test_data_set_0/input_1.pb"));
  onnx_io::ImportStats stats;
  ir::Graph graph = onnx_io::import_model(dir + "/model.onnx", options, &stats);
  REQUIRE(stats.modelled_nodes == 1);
  REQUIRE(graph.inputs().size() == 1);
  REQUIRE(graph.value(graph.outputs()[0]).type.shape.is_static());
  options.constant_inputs["no_such_input"] = options.constant_inputs["shape"];
  REQUIRE_THROWS_WITH(onnx_io::import_model(dir + "/model.onnx", options), Contains("no_such_input"));
}

TEST_CASE("before IR version 4, initializers listed as inputs are weights", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(test_data("pytorch-converted/test_Conv2d"));
  REQUIRE(graph.inputs().size() == 1);
  REQUIRE(graph.value(graph.inputs()[0]).name == "0");
  REQUIRE(graph.value(value_named(graph, "1")).kind == ir::ValueKind::kWeight);
  REQUIRE(only_node_of(graph, ir::OpKind::kConv).inputs.size() == 3);
}

TEST_CASE("from IR version 4, an initializer listed as an input is its default", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("input_default.onnx"));
  REQUIRE(graph.inputs().size() == 2);
  const ir::Value& scale = graph.value(graph.inputs()[1]);
  REQUIRE(scale.name == "scale");
  REQUIRE(scale.kind == ir::ValueKind::kInput);
  REQUIRE(scale.data != nullptr);
  REQUIRE(scale.data->dims() == std::vector<int64_t>{2, 2});
}

TEST_CASE("every initializer becomes a weight under its own name", "[onnx_io]") {
  // Found by tests/fuzz/import_fuzzer (clang, AddressSanitizer): the name was read through a
  // reference into the TensorProto that converting its data frees, a use after free wherever the
  // compiler evaluates the name argument first.
  const ir::Graph graph = onnx_io::import_model(model_path("small_cnn.onnx"));
  for (const char* name : {"stem.w", "stem.b", "stem.bn.var", "block.conv1.w", "block.conv1.b"}) {
    const ir::Value& weight = graph.value(value_named(graph, name));
    CHECK(weight.kind == ir::ValueKind::kWeight);
    CHECK(weight.data != nullptr);
  }
}

TEST_CASE("external data is read from beside the model", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("external_data.onnx"));
  const ir::Value& w = graph.value(value_named(graph, "w"));
  REQUIRE(w.data->dims() == std::vector<int64_t>{8, 8});
  const std::string raw = read_bytes(model_path("external_data.onnx.data")).substr(16);
  REQUIRE(raw.size() == w.data->byte_size());
  REQUIRE(std::equal(raw.begin(), raw.end(), reinterpret_cast<const char*>(w.data->bytes())));
}

TEST_CASE("missing external data is an error naming the file", "[onnx_io]") {
  const fs::path dir = scratch_dir("no_data");
  fs::copy_file(model_path("external_data.onnx"), dir / "external_data.onnx");
  REQUIRE_THROWS_WITH(onnx_io::import_model((dir / "external_data.onnx").string()),
                      Contains("external_data.onnx.data"));
}

TEST_CASE("sparse initializers become dense weights, as runtimes read them", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("sparse_initializer.onnx"));
  const ir::Value& s = graph.value(value_named(graph, "s"));
  REQUIRE(s.data->dims() == std::vector<int64_t>{2, 3});
  const std::vector<float> expected{0, 1.5f, 0, 0, -2.0f, 0};
  REQUIRE(std::vector<float>(s.data->data<float>(), s.data->data<float>() + 6) == expected);
}

TEST_CASE("a sparse initializer read by an ONNX operator is its dense weight, and the operator is modelled",
          "[onnx_io]") {
  // ONNX's own shape inference types it as a sparse tensor, which MatMul refuses.
  onnx_io::ImportStats stats;
  ir::Graph graph = onnx_io::import_model(model_path("sparse_weight.onnx"), {}, &stats);
  CHECK(stats.inference_error.empty());
  CHECK(stats.opaque_nodes == 0);
  const ir::Value& w = graph.value(value_named(graph, "w"));
  REQUIRE(w.data->dims() == std::vector<int64_t>{4, 3});
  const std::vector<float> expected{2.0f, 0, 0, 0, -1.0f, 0, 0, 0, 0, 0, 0, 0.5f};
  REQUIRE(std::vector<float>(w.data->data<float>(), w.data->data<float>() + 12) == expected);
  const ir::Node& matmul = only_node_of(graph, ir::OpKind::kMatMul);
  REQUIRE(graph.value(matmul.outputs[0]).type.shape.rank() == 2);
}

TEST_CASE("values a subgraph reads from the outer scope are implicit inputs", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("if_outer_scope.onnx"));
  const ir::Node& branch = only_node_of(graph, ir::OpKind::kOpaque);
  REQUIRE(branch.opaque->op_type == "If");
  REQUIRE(branch.opaque->num_explicit_inputs == 1);
  REQUIRE(branch.opaque->implicit_names == std::vector<std::string>{"r"});
  REQUIRE(branch.inputs.size() == 2);
  REQUIRE(graph.value(branch.inputs[1]).producer == graph.value(value_named(graph, "r")).producer);

  ir::Graph range = onnx_io::import_model(test_data("node/test_range_float_type_positive_delta_expanded"));
  const ir::Node& loop = only_node_of(range, ir::OpKind::kOpaque, "Loop");
  REQUIRE(loop.opaque->implicit_names == std::vector<std::string>{"delta"});
}

TEST_CASE("a model the ONNX checker rejects is an error", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("symbolic_dims.onnx"));
  const fs::path file = scratch_dir("checker") / "bad.onnx";
  std::string bytes = read_bytes(model_path("symbolic_dims.onnx"));
  const std::string from = "MatMul";
  bytes.replace(bytes.find(from), from.size(), "MatMux");
  write_bytes(file, bytes);
  REQUIRE_THROWS_WITH(onnx_io::import_model(file.string()), Contains("fails the ONNX checker"));
}

}  // namespace
}  // namespace graphsub
