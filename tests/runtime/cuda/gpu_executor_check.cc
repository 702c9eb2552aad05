// The CUDA executor against the reference: every listed ONNX node test, and the benchmark models.
//
// Runs only where a GPU is: without one it prints why and exits 77, which ctest reports as skipped.
// After the tests it prints the largest error of each operator (and writes it as JSON to
// $GRAPHSUB_CUDA_CHECK_JSON when set), with where its nodes ran: on the GPU, or on the host.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "models/builders/models.h"
#include "ops/node_tests.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/equivalence.h"
#include "test_util.h"

using namespace graphsub;
using namespace graphsub::testing;

namespace {

/// The largest error seen of one operator or model, over its tests.
struct ErrorSummary {
  double max_abs = 0;
  double max_rel = 0;
  int runs = 0;
  int failed = 0;
  runtime::cuda::Placement placement;
};

std::map<std::string, ErrorSummary>& op_errors() {
  static std::map<std::string, ErrorSummary> errors;
  return errors;
}

std::map<std::string, ErrorSummary>& model_errors() {
  static std::map<std::string, ErrorSummary> errors;
  return errors;
}

/// Adds |got - want| of every float element to `summary`.
void measure(const ir::Tensor& got, const ir::Tensor& want, ErrorSummary& summary) {
  if (got.dims() != want.dims() || got.dtype() != want.dtype()) return;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double g = got.element_as_double(i), w = want.element_as_double(i);
    if ((std::isnan(g) && std::isnan(w)) || g == w) continue;
    const double error = std::fabs(g - w);
    summary.max_abs = std::max(summary.max_abs, error);
    summary.max_rel = std::max(summary.max_rel, error / std::max(std::fabs(w), 1e-6));
  }
}

void merge(runtime::cuda::Placement& into, const runtime::cuda::Placement& from) {
  for (const auto& [where, count] : from) into[where] += count;
}

/// The op types of a test model's nodes, joined: the row its errors go to.
std::string ops_of(const ir::Graph& graph) {
  std::string label;
  for (ir::NodeId id : graph.node_ids()) {
    const ir::Node& node = graph.node(id);
    const std::string op = node.op == ir::OpKind::kOpaque ? node.opaque->op_type : ops::kind_name(node.op);
    if (label.find(op) == std::string::npos) label += (label.empty() ? "" : "+") + op;
  }
  return label;
}

void run_node_test(const TestModel& test, const fs::path& data_set, ErrorSummary& summary) {
  const ir::Graph& graph = test.graph;
  runtime::TensorMap feeds;
  for (ir::ValueId id : fed_inputs(graph)) {
    const std::string& name = graph.value(id).name;
    feeds[name] = read_input(data_set, test.file_index.at(name));
  }
  runtime::cuda::CudaExecutor executor(graph, feeds);
  executor.run();
  const runtime::TensorMap outputs = executor.outputs();
  merge(summary.placement, executor.placement());
  for (std::size_t i = 0; i < graph.output_names().size(); ++i) {
    const fs::path file = data_set / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) continue;
    const ir::Tensor want = onnx_io::read_tensor_file(file.string());
    const ir::Tensor& got = *outputs.at(graph.output_names()[i]);
    std::string why;
    INFO("output " << graph.output_names()[i] << " of " << data_set.string());
    const bool ok = close(got, want, why);
    CHECK(ok);
    if (!ok) WARN(why);
    summary.failed += !ok;
    summary.runs += 1;
    measure(got, want, summary);
  }
}

/// Runs `graph` on the GPU and on the reference executor on the same seeded inputs, adds each
/// output's largest error and where the nodes ran to `summary`, and checks each output with
/// `close_enough(its errors, the reference output)`.
template <class CloseEnough>
void compare_with_reference(const ir::Graph& graph, uint32_t seed, ErrorSummary& summary, CloseEnough close_enough) {
  const runtime::TensorMap inputs = runtime::random_inputs(graph, seed, runtime::CheckOptions{});
  const runtime::TensorMap want = runtime::CpuExecutor::run(graph, inputs);
  runtime::cuda::CudaExecutor executor(graph, inputs);
  executor.run();
  const runtime::TensorMap got = executor.outputs();
  merge(summary.placement, executor.placement());
  for (const auto& [output, tensor] : want) {
    ErrorSummary one;
    measure(*got.at(output), *tensor, one);
    summary.max_abs = std::max(summary.max_abs, one.max_abs);
    summary.max_rel = std::max(summary.max_rel, one.max_rel);
    summary.runs += 1;
    INFO("output " << output << ": max abs error " << one.max_abs);
    const bool ok = close_enough(one, *tensor);
    CHECK(ok);
    summary.failed += !ok;
  }
}

void print_summary(const char* title, const std::map<std::string, ErrorSummary>& errors) {
  std::printf("\n%s\n%-40s %5s %6s %12s %12s  %s\n", title, "", "runs", "failed", "max abs err", "max rel err",
              "nodes ran on");
  for (const auto& [name, s] : errors) {
    std::string where;
    for (const auto& [place, count] : s.placement) where += place + " " + std::to_string(count) + " ";
    std::printf("%-40s %5d %6d %12.3g %12.3g  %s\n", name.c_str(), s.runs, s.failed, s.max_abs, s.max_rel,
                where.c_str());
  }
}

void write_json(const std::string& path) {
  std::ofstream out(path);
  out << "{";
  const char* section = "\"ops\"";
  for (const auto* errors : {&op_errors(), &model_errors()}) {
    out << section << ": {";
    bool first = true;
    for (const auto& [name, s] : *errors) {
      out << (first ? "" : ",") << "\n  \"" << name << "\": {\"runs\": " << s.runs << ", \"failed\": " << s.failed
          << ", \"max_abs_error\": " << s.max_abs << ", \"max_rel_error\": " << s.max_rel << ", \"placement\": {";
      bool first_place = true;
      for (const auto& [place, count] : s.placement) {
        out << (first_place ? "" : ", ") << "\"" << place << "\": " << count;
        first_place = false;
      }
      out << "}}";
      first = false;
    }
    out << "}";
    section = ",\n\"models\"";
  }
  out << "}\n";
}

}  // namespace

TEST_CASE("the CUDA executor reproduces the ONNX node tests", "[cuda]") {
  const std::vector<ListedTest> tests = listed_tests();
  REQUIRE_FALSE(tests.empty());
  for (const ListedTest& listed : tests) {
    DYNAMIC_SECTION(listed.name) {
      const fs::path dir = listed.data / listed.name;
      onnx_io::ImportStats stats;
      const TestModel test = import_test(dir, stats);
      ErrorSummary& summary = op_errors()[ops_of(test.graph)];
      for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set", 0) == 0) {
          run_node_test(test, entry.path(), summary);
        }
      }
    }
  }
}

TEST_CASE("the CUDA executor computes the benchmark models as the reference executor does", "[cuda]") {
  for (const std::string& name : models::model_names()) {
    DYNAMIC_SECTION(name) {
      const ir::Graph graph = models::build_model(name, models::small_config(name));
      compare_with_reference(graph, 0, model_errors()[name], [](const ErrorSummary& one, const ir::Tensor& want) {
        // fp32 sums in another order (cuDNN's and cuBLAS's algorithms) over deep networks.
        return one.max_abs <= 1e-3 + 1e-3 * std::fabs(want.element_as_double(0)) || one.max_rel <= 1e-3;
      });
    }
  }
}

namespace {

/// Sets `graph`'s outputs, then compares it on the GPU with the reference under `name`.
void check_graph(const std::string& name, ir::Graph& graph, std::vector<ir::ValueId> outputs) {
  graph.set_outputs(std::move(outputs));
  compare_with_reference(graph, 3, op_errors()[name],
                         [](const ErrorSummary& one, const ir::Tensor&) { return one.max_abs <= 1e-4; });
}

ir::ValueId weight(ir::Graph& graph, const std::vector<int64_t>& dims, uint32_t seed) {
  return graph.add_weight("w" + std::to_string(seed), ir::share(testing::random_tensor(dims, seed)));
}

}  // namespace

TEST_CASE("the CUDA executor computes graphsub's fused forms as the reference executor does", "[cuda]") {
  for (const char* activation : {"none", "relu", "sigmoid", "tanh"}) {
    DYNAMIC_SECTION("MatMul(a, w, c)[activation=" << activation << "] and Conv[activation=" << activation << "]") {
      ir::Graph graph;
      const ir::ValueId a = graph.add_input("a", testing::float_type({2, 4, 8}));
      ir::Attributes matmul;
      matmul.set("activation", std::string(activation));
      // With graphsub's fused summand C (a bias of the product's last dim).
      const ir::NodeId product = testing::add_inferred(
          graph, ir::OpKind::kMatMul, {a, weight(graph, {8, 16}, 1), weight(graph, {16}, 5)}, matmul);
      const ir::ValueId x = graph.add_input("x", testing::float_type({1, 4, 9, 9}));
      // Unequal pads (a copy into a padded input) and two groups.
      const ir::NodeId conv = testing::add_inferred(
          graph, ir::OpKind::kConv, {x, weight(graph, {6, 2, 3, 3}, 2), weight(graph, {6}, 3)},
          testing::conv_attributes({3, 3}, {2, 1}, {1, 0, 0, 1}, {1, 1}, 2, activation));
      // graphsub's residual input Z: activation(conv + bias + z).
      const ir::ValueId z = graph.add_input("z", testing::float_type({1, 6, 9, 9}));
      const ir::NodeId residual = testing::add_inferred(
          graph, ir::OpKind::kConv, {x, weight(graph, {6, 4, 3, 3}, 6), weight(graph, {6}, 7), z},
          testing::conv_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, activation));
      check_graph(std::string("fused MatMul and Conv, ") + activation, graph,
                  {graph.node(product).outputs[0], graph.node(conv).outputs[0], graph.node(residual).outputs[0]});
    }
  }
  SECTION("Conv -> Add -> Relu, fused into one cuDNN call with the residual") {
    ir::Graph graph;
    const ir::ValueId x = graph.add_input("x", testing::float_type({1, 8, 6, 6}));
    const ir::NodeId shortcut = testing::add_inferred(graph, ir::OpKind::kRelu, {x});
    const ir::NodeId conv = testing::add_inferred(
        graph, ir::OpKind::kConv, {x, weight(graph, {8, 8, 3, 3}, 4)},
        testing::conv_attributes({3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "none"));
    const ir::NodeId add = testing::add_inferred(graph, ir::OpKind::kAdd,
                                                 {graph.node(shortcut).outputs[0], graph.node(conv).outputs[0]});
    const ir::NodeId relu = testing::add_inferred(graph, ir::OpKind::kRelu, {graph.node(add).outputs[0]});
    check_graph("Conv -> Add -> Relu (residual)", graph, {graph.node(relu).outputs[0]});
  }
}

int main(int argc, char* argv[]) {
  std::string why;
  const auto device = runtime::cuda::device_info(&why);
  if (!device) {
    std::printf("SKIPPED: no GPU here (%s)\n", why.c_str());
    return 77;
  }
  std::printf("GPU: %s, driver %s, CUDA runtime %s, cuDNN %s, cuBLAS %s\n", device->name.c_str(),
              device->driver.c_str(), device->runtime.c_str(), device->cudnn.c_str(), device->cublas.c_str());
  const int result = Catch::Session().run(argc, argv);
  print_summary("ONNX node tests by operator", op_errors());
  print_summary("benchmark models (small configurations) against the reference executor", model_errors());
  if (const char* path = std::getenv("GRAPHSUB_CUDA_CHECK_JSON"); path && *path) write_json(path);
  return result;
}
