// export_model: folding, lowering of graphsub's own forms (fused Conv and MatMul epilogues included),
// names, determinism, external data, and failures that leave no file behind.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
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
using Catch::Matchers::Contains;
using testing::model_path;
using testing::read_bytes;
using testing::scratch_dir;
using testing::test_data;
using testing::value_named;

/// Exports `graph` into `dir` and imports the result.
ir::Graph round_trip(const ir::Graph& graph, const fs::path& dir,
                     const onnx_io::ExportOptions& options = {}) {
  const std::string file = (dir / "out.onnx").string();
  onnx_io::export_model(graph, file, options);
  return onnx_io::import_model(file);
}

std::vector<std::string> op_names(const ir::Graph& graph) {
  const std::vector<ir::NodeId> order = graph.topological_order().value();
  std::vector<std::string> names;
  for (ir::NodeId id : order) {
    const ir::Node& node = graph.node(id);
    names.push_back(node.opaque ? node.opaque->op_type : ops::kind_name(node.op));
  }
  return names;
}

ir::NodeId node_of(const ir::Graph& graph, ir::OpKind op) {
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op == op) return id;
  }
  FAIL("no node of kind " << ops::kind_name(op));
  return -1;
}

/// Runs both graphs on `feed`; the outputs must agree.
void require_same_on(const ir::Graph& a, const ir::Graph& b, const runtime::TensorMap& feed) {
  const runtime::TensorMap expected = runtime::CpuExecutor::run(a, feed);
  const runtime::TensorMap actual = runtime::CpuExecutor::run(b, feed);
  REQUIRE(expected.size() == actual.size());
  for (const auto& [name, tensor] : expected) {
    REQUIRE(testing::max_abs_diff(*tensor, *actual.at(name)) < 1e-6);
  }
}

/// Runs both graphs on the same seeded input for their first graph input; the outputs must agree.
void require_same_results(const ir::Graph& a, const ir::Graph& b, const std::vector<int64_t>& dims) {
  const std::string input = a.value(a.inputs()[0]).name;
  require_same_on(a, b, {{input, ir::share(testing::random_tensor(dims, 11))}});
}

/// Seeded random tensors for every graph input, which must have static sizes.
runtime::TensorMap random_feed(const ir::Graph& graph) {
  runtime::TensorMap feed;
  uint32_t seed = 11;
  for (ir::ValueId input : graph.inputs()) {
    const ir::Value& value = graph.value(input);
    feed[value.name] = ir::share(testing::random_tensor(value.type.shape.sizes().value(), seed++));
  }
  return feed;
}

ir::Attributes with_activation(const std::string& activation) {
  ir::Attributes attrs;
  attrs.set("activation", activation);
  return attrs;
}

/// relu(conv(x, w, b) + r) as one fused Conv ("conv_out"), reshaped to [4, 64], then relu(h w2 + b2)
/// as one fused MatMul ("out"): the fused forms the fusion rules make.
ir::Graph fused_conv_and_mat_mul() {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({1, 3, 8, 8}));
  const ir::ValueId r = graph.add_input("r", testing::float_type({1, 4, 8, 8}));
  ir::Attributes conv = with_activation("relu");
  conv.set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.set("strides", std::vector<int64_t>{1, 1});
  conv.set("dilations", std::vector<int64_t>{1, 1});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  conv.set("group", int64_t{1});
  const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({4, 3, 3, 3}, 1)));
  const ir::ValueId b = graph.add_weight("b", ir::share(testing::random_tensor({4}, 2)));
  const ir::NodeId fused_conv = testing::add_inferred(graph, ir::OpKind::kConv, {x, w, b, r}, conv);
  const ir::ValueId y = graph.node(fused_conv).outputs[0];
  graph.set_name(y, "conv_out");
  ir::Attributes reshape;
  reshape.set("shape", std::vector<int64_t>{4, 64});
  const ir::NodeId flatten = testing::add_inferred(graph, ir::OpKind::kReshape, {y}, reshape);
  const ir::ValueId h = graph.node(flatten).outputs[0];
  const ir::ValueId w2 = graph.add_weight("w2", ir::share(testing::random_tensor({64, 5}, 3)));
  const ir::ValueId b2 = graph.add_weight("b2", ir::share(testing::random_tensor({5}, 4)));
  const ir::NodeId fused_mat_mul =
      testing::add_inferred(graph, ir::OpKind::kMatMul, {h, w2, b2}, with_activation("relu"));
  const ir::ValueId out = graph.node(fused_mat_mul).outputs[0];
  graph.set_name(out, "out");
  graph.set_outputs({y, out});
  return graph;
}

TEST_CASE("intermediate value_info is written unless the model info says not to", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("conv_relu.onnx"));
  const fs::path dir = scratch_dir("value_info");
  onnx_io::export_model(graph, (dir / "with.onnx").string());
  auto info = std::make_shared<ir::ModelInfo>(*graph.model_info());
  info->value_info = false;
  ir::Graph bare = graph;
  bare.set_model_info(info);
  onnx_io::export_model(bare, (dir / "without.onnx").string());
  // The Conv's output is the one intermediate value: its value_info is the only difference.
  const ir::Graph with = onnx_io::import_model((dir / "with.onnx").string());
  const ir::Graph without = onnx_io::import_model((dir / "without.onnx").string());
  CHECK(read_bytes((dir / "with.onnx").string()).size() > read_bytes((dir / "without.onnx").string()).size());
  require_same_results(with, without, {1, 3, 8, 8});
}

TEST_CASE("weight-only nodes are folded into initializers", "[onnx_io]") {
  const ir::Graph graph = onnx_io::import_model(model_path("fold_transpose.onnx"));
  const ir::Graph exported = round_trip(graph, scratch_dir("fold"));
  REQUIRE(op_names(exported) == std::vector<std::string>{"MatMul"});
  const ir::Value& folded = exported.value(value_named(exported, "wt"));
  REQUIRE(folded.kind == ir::ValueKind::kWeight);
  REQUIRE(folded.data->dims() == std::vector<int64_t>{4, 3});
  const ir::Tensor& w = *graph.value(value_named(graph, "w")).data;
  REQUIRE(folded.data->data<float>()[1 * 3 + 2] == w.data<float>()[2 * 4 + 1]);
  require_same_results(graph, exported, {2, 4});
}

TEST_CASE("fold_weight_nodes computes weight-only nodes into weights, as export folds them", "[onnx_io]") {
  // y = x + Identity(zeros); z = Transpose(w), also a graph output, stays computed.
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 3}));
  const ir::ValueId zeros = graph.add_weight("zeros", ir::share(ir::Tensor(ir::DataType::kFloat, {2, 3})));
  const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({3, 2}, 5)));
  const ir::ValueId copy = graph.node(testing::add_inferred(graph, ir::OpKind::kIdentity, {zeros})).outputs[0];
  const ir::ValueId y = graph.node(testing::add_inferred(graph, ir::OpKind::kAdd, {x, copy})).outputs[0];
  ir::Attributes perm;
  perm.set("perm", std::vector<int64_t>{1, 0});
  const ir::ValueId z = graph.node(testing::add_inferred(graph, ir::OpKind::kTranspose, {w}, perm)).outputs[0];
  graph.set_name(y, "y");
  graph.set_name(z, "z");
  graph.set_outputs({y, z});

  const ir::Graph folded = onnx_io::fold_weight_nodes(graph);
  REQUIRE(op_names(folded) == std::vector<std::string>{"Add", "Transpose"});
  const ir::Node& add = folded.node(folded.value(folded.outputs()[0]).producer);
  CHECK(folded.value(add.inputs[1]).kind == ir::ValueKind::kWeight);
  CHECK(folded.value(add.inputs[1]).data->data<float>()[4] == 0.0f);
  CHECK(folded.outputs() == graph.outputs());
  require_same_results(graph, folded, {2, 3});
}

TEST_CASE("graphsub's constant ops are always folded", "[onnx_io]") {
  ir::Graph graph;
  ir::Attributes attrs;
  attrs.set("channels", int64_t{2});
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  const ir::NodeId identity = testing::add_inferred(graph, ir::OpKind::kConstIdentityConv, {}, attrs);
  graph.set_name(graph.node(identity).outputs[0], "kernel");
  graph.set_outputs({graph.node(identity).outputs[0]});
  const ir::Graph exported = round_trip(graph, scratch_dir("const"));
  REQUIRE(exported.node_count() == 0);
  const ir::Value& kernel = exported.value(exported.outputs()[0]);
  REQUIRE(kernel.name == "kernel");
  REQUIRE(kernel.data->dims() == std::vector<int64_t>{2, 2, 3, 3});
  REQUIRE(kernel.data->data<float>()[4] == 1.0f);
}

TEST_CASE("a fused Conv activation is written as Conv and an activation node", "[onnx_io]") {
  for (const auto& [activation, op_type] : std::vector<std::pair<std::string, std::string>>{
           {"relu", "Relu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}}) {
    ir::Graph graph = onnx_io::import_model(test_data("pytorch-converted/test_Conv2d"));
    const ir::NodeId conv = node_of(graph, ir::OpKind::kConv);
    ir::Attributes attrs = graph.node(conv).attrs;
    attrs.set("activation", activation);
    graph.set_attributes(conv, attrs);
    const ir::Graph exported = round_trip(graph, scratch_dir("fused_" + activation));
    REQUIRE(op_names(exported) == std::vector<std::string>{"Conv", op_type});
    REQUIRE(exported.node(node_of(exported, ir::OpKind::kConv)).attrs.get_string("activation", "") == "none");
    REQUIRE(exported.output_names() == graph.output_names());
    require_same_results(graph, exported, graph.value(graph.inputs()[0]).type.shape.sizes().value());
  }
}

TEST_CASE("a fused Conv with residual and a fused MatMul with bias are written as ONNX chains", "[onnx_io]") {
  const ir::Graph graph = fused_conv_and_mat_mul();
  const ir::Graph exported = round_trip(graph, scratch_dir("fused_epilogues"));
  REQUIRE(op_names(exported) ==
          std::vector<std::string>{"Conv", "Add", "Relu", "Reshape", "MatMul", "Add", "Relu"});
  REQUIRE(exported.node(node_of(exported, ir::OpKind::kConv)).inputs.size() == 3);
  REQUIRE(exported.node(node_of(exported, ir::OpKind::kMatMul)).inputs.size() == 2);
  REQUIRE(exported.node(node_of(exported, ir::OpKind::kMatMul)).attrs == with_activation("none"));
  REQUIRE(exported.output_names() == graph.output_names());
  require_same_on(graph, exported, random_feed(graph));
}

TEST_CASE("a fused MatMul bias is written with Add's legacy broadcast before opset 7", "[onnx_io]") {
  ir::Graph graph;
  auto info = std::make_shared<ir::ModelInfo>();
  info->opsets = {{"", 6}};
  graph.set_model_info(info);
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 4}));
  const ir::ValueId w = graph.add_weight("w", ir::share(testing::random_tensor({4, 3}, 1)));
  const ir::ValueId b = graph.add_weight("b", ir::share(testing::random_tensor({3}, 2)));
  const ir::NodeId mat_mul =
      testing::add_inferred(graph, ir::OpKind::kMatMul, {x, w, b}, with_activation("tanh"));
  graph.set_name(graph.node(mat_mul).outputs[0], "y");
  graph.set_outputs({graph.node(mat_mul).outputs[0]});
  const ir::Graph exported = round_trip(graph, scratch_dir("fused_opset6"));
  // The legacy Add stays opaque on import (graphsub models Add from opset 7): only its form is
  // checked here, by the ONNX checker and shape inference that export and import run.
  REQUIRE(op_names(exported) == std::vector<std::string>{"MatMul", "Add", "Tanh"});
  REQUIRE(exported.output_names() == std::vector<std::string>{"y"});
}

TEST_CASE("SMul is written as Mul", "[onnx_io]") {
  ir::Graph graph;
  const ir::ValueId x = graph.add_input("x", testing::float_type({2, 3}));
  const ir::ValueId s = graph.add_weight("s", ir::share(ir::Tensor::from_floats({}, {3.0f})));
  const ir::NodeId smul = testing::add_inferred(graph, ir::OpKind::kSMul, {x, s});
  graph.set_name(graph.node(smul).outputs[0], "y");
  graph.set_outputs({graph.node(smul).outputs[0]});
  const ir::Graph exported = round_trip(graph, scratch_dir("smul"));
  REQUIRE(op_names(exported) == std::vector<std::string>{"Mul"});
  require_same_results(graph, exported, {2, 3});
}

TEST_CASE("Enlarge is folded on a weight and written as Pad otherwise", "[onnx_io]") {
  ir::Attributes attrs;
  attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
  ir::Graph on_input;
  const ir::ValueId w = on_input.add_input("w", testing::float_type({4, 2, 1, 1}));
  on_input.set_outputs(
      {on_input.node(testing::add_inferred(on_input, ir::OpKind::kEnlarge, {w}, attrs)).outputs[0]});
  const ir::Graph padded = round_trip(on_input, scratch_dir("enlarge_pad"));
  REQUIRE(op_names(padded) == std::vector<std::string>{"Pad"});
  REQUIRE(padded.output_names() == std::vector<std::string>{"output_0"});
  REQUIRE(ir::to_string(padded.value(padded.outputs()[0]).type) == "float32[4,2,3,3]");

  ir::Graph on_weight;
  const ir::ValueId weight = on_weight.add_weight("w", ir::share(testing::random_tensor({4, 2, 1, 1}, 3)));
  on_weight.set_outputs(
      {on_weight.node(testing::add_inferred(on_weight, ir::OpKind::kEnlarge, {weight}, attrs)).outputs[0]});
  const ir::Graph folded = round_trip(on_weight, scratch_dir("enlarge_fold"));
  REQUIRE(folded.node_count() == 0);
  REQUIRE(folded.value(folded.outputs()[0]).data->dims() == std::vector<int64_t>{4, 2, 3, 3});
}

TEST_CASE("constant operands are written as inputs from their opset on", "[onnx_io]") {
  const std::string dir = std::string(GRAPHSUB_TESTDATA_DIR) + "/node/test_clip_default_max";
  onnx_io::ImportOptions options;
  options.constant_inputs["max"] = ir::share(onnx_io::read_tensor_file(dir + "/test_data_set_0/input_1.pb"));
  const ir::Graph graph = onnx_io::import_model(dir + "/model.onnx", options);
  const ir::Node& clip = graph.node(node_of(graph, ir::OpKind::kClip));
  const ir::Graph exported = round_trip(graph, scratch_dir("clip"));
  const ir::Node& written = exported.node(node_of(exported, ir::OpKind::kClip));
  REQUIRE(written.inputs.size() == 1);
  REQUIRE(written.attrs == clip.attrs);
  require_same_results(graph, exported, {3, 4, 5});
}

TEST_CASE("exporting the same graph twice gives identical bytes", "[onnx_io]") {
  const fs::path dir = scratch_dir("determinism");
  for (const std::string& source :
       {model_path("constants.onnx"), model_path("if_outer_scope.onnx"), test_data("node/test_loop11"),
        test_data("pytorch-converted/test_Conv2d")}) {
    const ir::Graph graph = onnx_io::import_model(source);
    onnx_io::export_model(graph, (dir / "a.onnx").string());
    onnx_io::export_model(graph, (dir / "b.onnx").string());
    REQUIRE(read_bytes(dir / "a.onnx") == read_bytes(dir / "b.onnx"));
  }
}

TEST_CASE("an optional output omitted before a used one is modelled and omitted again on export", "[onnx_io]") {
  // ONNX's test_lstm_defaults: LSTM(X, W, R) -> ("", Y_h).
  onnx_io::ImportStats stats;
  const ir::Graph graph = onnx_io::import_model(test_data("node/test_lstm_defaults"), {}, &stats);
  REQUIRE(stats.opaque_nodes == 0);
  const ir::Node& lstm = graph.node(graph.node_ids().front());
  REQUIRE(lstm.op == ir::OpKind::kLSTM);
  REQUIRE(lstm.outputs.size() == 2);
  REQUIRE(graph.value(lstm.outputs[0]).name.empty());
  // Written as "" again: read back, the output still has no name (a written name would stay).
  const ir::Graph exported = round_trip(graph, scratch_dir("omitted_output"));
  const ir::Node& written = exported.node(exported.node_ids().front());
  REQUIRE(written.op == ir::OpKind::kLSTM);
  REQUIRE(written.outputs.size() == 2);
  REQUIRE(exported.value(written.outputs[0]).name.empty());
  REQUIRE(exported.value(written.outputs[1]).name == "Y_h");
}

TEST_CASE("a graph output whose value changed gets its name back", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("symbolic_dims.onnx"));
  const ir::ValueId old_output = graph.outputs()[0];
  const ir::NodeId relu = graph.value(old_output).producer;
  const ir::NodeId fresh = testing::add_inferred(graph, ir::OpKind::kRelu, graph.node(relu).inputs);
  graph.replace_all_uses(old_output, graph.node(fresh).outputs[0]);
  graph.remove_node(relu);
  const ir::Graph exported = round_trip(graph, scratch_dir("renamed_output"));
  REQUIRE(exported.output_names() == std::vector<std::string>{"y"});
  REQUIRE(op_names(exported) == std::vector<std::string>{"MatMul", "Relu"});
  REQUIRE(ir::to_string(exported.value(exported.outputs()[0]).type) == "float32[N,4]");
}

TEST_CASE("a graph output that is now a graph input is copied by an Identity", "[onnx_io]") {
  ir::Graph graph = onnx_io::import_model(model_path("unsorted_nodes.onnx"));
  graph.replace_all_uses(graph.outputs()[0], graph.inputs()[0]);
  graph.remove_dead_nodes();
  const ir::Graph exported = round_trip(graph, scratch_dir("input_output"));
  REQUIRE(op_names(exported) == std::vector<std::string>{"Identity"});
  REQUIRE(exported.output_names() == std::vector<std::string>{"y"});
  REQUIRE(exported.value(exported.inputs()[0]).name == "x");
}

TEST_CASE("a value a subgraph reads keeps the name the subgraph uses", "[onnx_io]") {
  for (const std::string& new_name : {std::string(), std::string("r2")}) {
    ir::Graph graph = onnx_io::import_model(model_path("if_outer_scope.onnx"));
    const ir::ValueId r = value_named(graph, "r");
    const ir::NodeId relu = graph.value(r).producer;
    const ir::NodeId fresh = testing::add_inferred(graph, ir::OpKind::kRelu, graph.node(relu).inputs);
    graph.set_name(graph.node(fresh).outputs[0], new_name);
    graph.replace_all_uses(r, graph.node(fresh).outputs[0]);
    graph.remove_node(relu);
    const ir::Graph exported = round_trip(graph, scratch_dir("implicit"));
    const std::vector<std::string> expected = new_name.empty()
                                                  ? std::vector<std::string>{"Relu", "If"}
                                                  : std::vector<std::string>{"Relu", "Identity", "If"};
    REQUIRE(op_names(exported) == expected);
  }
}

TEST_CASE("opaque nodes with subgraphs keep their attributes byte for byte", "[onnx_io]") {
  for (const char* test : {"node/test_if", "node/test_loop11", "node/test_scan9_sum"}) {
    const ir::Graph graph = onnx_io::import_model(test_data(test));
    const ir::Graph exported = round_trip(graph, scratch_dir("subgraphs"));
    const ir::NodeId before = node_of(graph, ir::OpKind::kOpaque);
    const ir::NodeId after = node_of(exported, ir::OpKind::kOpaque);
    REQUIRE(graph.node(before).opaque->onnx_node == exported.node(after).opaque->onnx_node);
  }
}

TEST_CASE("metadata, doc strings, opsets and input defaults survive export", "[onnx_io]") {
  const ir::Graph graph = onnx_io::import_model(model_path("input_default.onnx"));
  const ir::Graph exported = round_trip(graph, scratch_dir("metadata"));
  REQUIRE(exported.model_info()->onnx_shell == graph.model_info()->onnx_shell);
  REQUIRE(exported.model_info()->opsets == graph.model_info()->opsets);
  REQUIRE(exported.model_info()->ir_version == 8);
  const ir::Value& scale = exported.value(exported.inputs()[1]);
  REQUIRE(scale.name == "scale");
  REQUIRE(scale.data->content_hash() == graph.value(graph.inputs()[1]).data->content_hash());
}

TEST_CASE("IR version 3 models are written with their initializers as inputs", "[onnx_io]") {
  const ir::Graph graph = onnx_io::import_model(test_data("pytorch-converted/test_BatchNorm2d_eval"));
  const ir::Graph exported = round_trip(graph, scratch_dir("ir3"));
  REQUIRE(exported.model_info()->ir_version == 3);
  REQUIRE(exported.inputs().size() == 1);
  REQUIRE(op_names(exported) == std::vector<std::string>{"BatchNormalization"});
  require_same_results(graph, exported, graph.value(graph.inputs()[0]).type.shape.sizes().value());
}

TEST_CASE("large weights can be written as external data", "[onnx_io]") {
  const fs::path dir = scratch_dir("external");
  const ir::Graph graph = onnx_io::import_model(model_path("external_data.onnx"));
  onnx_io::ExportOptions options;
  options.external_data_threshold = 100;
  const ir::Graph exported = round_trip(graph, dir, options);
  REQUIRE(fs::file_size(dir / "out.onnx.data") == 256);
  REQUIRE(fs::file_size(dir / "out.onnx") < 256);
  const ir::ValueId w = value_named(exported, "w");
  REQUIRE(exported.value(w).data->content_hash() ==
          graph.value(value_named(graph, "w")).data->content_hash());
  require_same_results(graph, exported, {8, 8});
}

/// `graph` with the weight named `name` replaced by a new one holding `data`.
ir::Graph with_weight(const ir::Graph& graph, const std::string& name, ir::TensorPtr data) {
  ir::Graph copy = graph;
  const ir::ValueId old = value_named(copy, name);
  copy.set_name(old, name + "_replaced");
  copy.replace_all_uses(old, copy.add_weight(name, std::move(data)));
  return copy;
}

TEST_CASE("models exported with shared weights write each weight once, page-aligned", "[onnx_io]") {
  // The measured target's temporary models: a weight of at least min_bytes goes to one file of
  // the folder, once for every model (the same tensor, or one of equal content), and the
  // models read back with the same weights.
  const fs::path dir = scratch_dir("shared_weights");
  const ir::Graph graph = onnx_io::import_model(model_path("external_data.onnx"));
  const ir::ValueId w = value_named(graph, "w");
  const uint64_t before = graph.value(w).data->content_hash();
  REQUIRE(graph.value(w).data->byte_size() == 256);

  onnx_io::SharedWeights shared(dir.string(), "weights.data", 100);
  onnx_io::ExportOptions options;
  options.shared_weights = &shared;
  onnx_io::export_model(graph, (dir / "a.onnx").string(), options);
  onnx_io::export_model(graph, (dir / "b.onnx").string(), options);
  CHECK(shared.written() == 1);
  CHECK(shared.reused() == 1);
  CHECK(fs::file_size(dir / "weights.data") == 256);
  CHECK(fs::file_size(dir / "a.onnx") < 256);
  CHECK(graph.value(w).data->content_hash() == before);  // the bytes lent to the write came back

  // Another tensor of the same content is found by content; a different one is appended at the
  // next page.
  const ir::Graph copy = with_weight(graph, "w", ir::share(ir::Tensor(*graph.value(w).data)));
  onnx_io::export_model(copy, (dir / "c.onnx").string(), options);
  CHECK(shared.written() == 1);
  ir::Tensor changed(*graph.value(w).data);
  changed.mutable_data<float>()[0] += 1.0f;
  const ir::Graph other = with_weight(graph, "w", ir::share(std::move(changed)));
  onnx_io::export_model(other, (dir / "d.onnx").string(), options);
  CHECK(shared.written() == 2);
  CHECK(shared.file_bytes() == 4096 + 256);

  for (const char* name : {"a.onnx", "b.onnx", "c.onnx"}) {
    const ir::Graph read = onnx_io::import_model((dir / name).string());
    CHECK(read.value(value_named(read, "w")).data->content_hash() == before);
    require_same_results(graph, read, {8, 8});
  }
  const ir::Graph read = onnx_io::import_model((dir / "d.onnx").string());
  CHECK(read.value(value_named(read, "w")).data->content_hash() ==
        other.value(value_named(other, "w")).data->content_hash());

  // A model outside the file's folder could not find it.
  const fs::path elsewhere = scratch_dir("shared_weights_elsewhere");
  REQUIRE_THROWS_WITH(onnx_io::export_model(graph, (elsewhere / "e.onnx").string(), options),
                      Contains("not in the folder of its shared weights"));
}

TEST_CASE("export lends the weights' bytes to the file and gives them all back", "[onnx_io]") {
  // Export writes weights without copying them (DataLoan): the graph must hold every byte after,
  // whether the write succeeded, went to external data, or failed.
  const fs::path dir = scratch_dir("loan");
  const ir::Graph graph = onnx_io::import_model(model_path("external_data.onnx"));
  const ir::Value& w = graph.value(value_named(graph, "w"));
  const uint64_t before = w.data->content_hash();
  const std::size_t bytes = w.data->byte_size();
  onnx_io::ExportOptions external;
  external.external_data_threshold = 100;
  onnx_io::export_model(graph, (dir / "inline.onnx").string());
  onnx_io::export_model(graph, (dir / "external.onnx").string(), external);
  REQUIRE_THROWS_AS(onnx_io::export_model(graph, (dir / "missing" / "out.onnx").string()), Error);
  REQUIRE_THROWS_AS(onnx_io::export_model(graph, (dir / "missing" / "out.onnx").string(), external), Error);
  CHECK(w.data->byte_size() == bytes);
  CHECK(w.data->content_hash() == before);
  onnx_io::export_model(graph, (dir / "again.onnx").string());
  CHECK(fs::file_size(dir / "again.onnx") == fs::file_size(dir / "inline.onnx"));
  require_same_results(graph, onnx_io::import_model((dir / "again.onnx").string()), {8, 8});
}

TEST_CASE("a failed export leaves no file behind", "[onnx_io]") {
  const fs::path dir = scratch_dir("failure");
  ir::Graph graph = onnx_io::import_model(model_path("symbolic_dims.onnx"));
  REQUIRE_THROWS_AS(onnx_io::export_model(graph, (dir / "missing" / "out.onnx").string()), Error);
  // Corrupt the type of the intermediate h = MatMul(x, w): [N,4] becomes [N,5].
  const ir::ValueId hidden = graph.node(graph.value(graph.outputs()[0]).producer).inputs[0];
  ir::TensorType wrong = graph.value(hidden).type;
  wrong.shape.dims[1] = ir::Dim::known(5);
  graph.set_type(hidden, wrong);
  REQUIRE_THROWS_WITH(onnx_io::export_model(graph, (dir / "out.onnx").string()),
                      Contains("internal error: the exported model fails ONNX shape inference"));
  REQUIRE(fs::is_empty(dir));
}

}  // namespace
}  // namespace graphsub
