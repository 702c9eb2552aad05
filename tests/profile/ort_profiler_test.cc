// Tests of onnxruntime as a measured target: the worker, whole graphs, single nodes. They need
// python3 with onnxruntime, which scripts/setup.sh installs.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "cost/cached_model.h"
#include "cost/device.h"
#include "ir/error.h"
#include "onnx_io/onnx_io.h"
#include "profile/ort_profiler.h"
#include "rewrite/shape_testing.h"
#include "search/subgraph.h"

namespace graphsub {
namespace {

std::string model_path(const std::string& name) { return std::string(GRAPHSUB_SOURCE_DIR) + "/models/" + name; }

/// One worker for the whole test program: starting Python and onnxruntime takes a moment.
profile::OrtProfiler& profiler() {
  static profile::OrtProfiler shared(profile::OrtSettings{});
  return shared;
}

TEST_CASE("the worker names onnxruntime's version and the CPU", "[profile]") {
  const cost::CacheHeader& header = profiler().header();
  CHECK(header.target == "onnxruntime-cpu");
  CHECK(!header.device.empty());
  CHECK(!header.libraries.at("onnxruntime").empty());
  CHECK(header.settings.at("intra_op_threads") == "1");
  CHECK(header.settings.at("graph_optimization_level") == "all");
  CHECK(header.settings.count("intra_op_thread_pool") == 0);
  // At more than one thread the header says the sessions share one pool, so that a cache timed
  // with a pool per session (before 2026-12-06) is not taken for one of these.
  const profile::OrtProfiler two_threads(profile::OrtSettings{2, "all"});
  CHECK(two_threads.header().settings.at("intra_op_threads") == "2");
  CHECK(two_threads.header().settings.at("intra_op_thread_pool") == "shared");
}

TEST_CASE("model files are timed alternately until the limits", "[profile]") {
  profile::OrtWorker worker;
  profile::TimingLimits limits;
  limits.min_runs = 7;
  limits.max_runs = 7;
  const auto timings = worker.time_files({model_path("small_cnn.onnx"), model_path("symbolic_dims.onnx")},
                                         profile::OrtSettings{}, {{"N", 2}}, limits);
  REQUIRE(timings.size() == 2);
  for (const profile::Timing& timing : timings) {
    CHECK(timing.runs == 7);
    CHECK(timing.median_ms > 0);
    CHECK(timing.p10_ms <= timing.median_ms);
    CHECK(timing.median_ms <= timing.p90_ms);
  }
}

TEST_CASE("at more than one thread the timed sessions share one pool, and another count gets its own", "[profile]") {
  // A fresh worker: its first session makes the shared pool (ort_worker.py, "Threads").
  profile::OrtWorker worker;
  profile::TimingLimits limits;
  limits.min_runs = 4;
  limits.max_runs = 4;
  profile::OrtSettings settings;
  for (int threads : {2, 3}) {
    settings.threads = threads;
    const auto timings = worker.time_files({model_path("small_cnn.onnx"), model_path("small_cnn.onnx")}, settings,
                                           {{"N", 2}}, limits);
    REQUIRE(timings.size() == 2);
    for (const profile::Timing& timing : timings) {
      CHECK(timing.runs == 4);
      CHECK(timing.median_ms > 0);
    }
  }
}

TEST_CASE("a comparison is spread over blocks of fresh sessions before it may stop", "[profile]") {
  profile::OrtWorker worker;
  profile::TimingLimits limits;
  limits.paired = true;
  limits.min_runs = 4;
  limits.max_runs = 100;
  limits.max_seconds = 60;
  limits.rel_error = 1e6;  // Stable as soon as the stopping rule is asked.
  const std::vector<std::string> files = {model_path("small_cnn.onnx"), model_path("small_cnn.onnx")};
  // One block: the rule is asked from the first round on and holds at min_runs.
  CHECK(worker.time_files(files, {}, {{"N", 1}}, limits).front().runs == 4);
  // Three blocks, made four, of 2 rounds (4 / 4): the rule is first asked after the fourth,
  // and holds there, after four fresh pairs of sessions, two created in each order.
  limits.sessions = 3;
  const auto timings = worker.time_files(files, {}, {{"N", 1}}, limits);
  CHECK(timings[0].runs == 8);
  CHECK(timings[1].runs == 8);
  // Never stable: more pairs of blocks of an even number of rounds each, as long as a whole
  // pair fits in max_runs, so the runs stay balanced between the two creation orders.
  limits.rel_error = 0;
  limits.abs_error_ms = 0;
  limits.max_runs = 31;
  const int runs = worker.time_files(files, {}, {{"N", 1}}, limits).front().runs;
  CHECK(runs > 8);
  CHECK(runs <= 31);
  CHECK(runs % 4 == 0);
}

TEST_CASE("a comparison that only has to be decided stops once it is", "[profile]") {
  // One Identity against 16 products of 256 x 256 matrices: the second takes thousands of times
  // as long, so its ratio to the first is decided against 0.99 from the first rounds, while a
  // precision no timing reaches would run on to max_runs.
  ir::Graph small;
  const ir::ValueId one = small.add_input("x", testing::float_type({1}));
  small.set_outputs({small.node(testing::add_inferred(small, ir::OpKind::kIdentity, {one})).outputs[0]});
  ir::Graph large;
  ir::ValueId product = large.add_input("x", testing::float_type({256, 256}));
  const ir::ValueId w = large.add_weight("w", ir::share(testing::random_tensor({256, 256}, 1)));
  for (int i = 0; i < 16; ++i) {
    product = large.node(testing::add_inferred(large, ir::OpKind::kMatMul, {product, w})).outputs[0];
  }
  large.set_outputs({product});
  profile::TimingLimits limits;
  limits.paired = true;
  limits.min_runs = 6;
  limits.max_runs = 200;
  limits.max_seconds = 60;
  limits.rel_error = 1e-12;
  limits.abs_error_ms = 0;
  limits.decide_at = 0.99;
  CHECK(profiler().time_graphs({&small, &large}, {}, limits).front().runs == 6);
  CHECK(profiler().time_graphs({&large, &small}, {}, limits).front().runs == 6);
  limits.decide_at = 0;
  limits.max_runs = 12;
  CHECK(profiler().time_graphs({&small, &large}, {}, limits).front().runs == 12);
}

TEST_CASE("two models' outputs are compared, the reference at another level if asked", "[profile]") {
  profile::OrtWorker worker;
  const std::string cnn = model_path("small_cnn.onnx");
  for (const std::string& level : {std::string{}, std::string{"disabled"}}) {
    const std::vector<profile::OutputComparison> outputs =
        worker.compare_files(cnn, cnn, {}, {{"N", 2}}, 2, 0, 1e-5, 1e-4, level);
    REQUIRE(outputs.size() == 1);
    CHECK(outputs[0].passed);
    CHECK(outputs[0].max_abs_error <= 1e-5);
  }
}

TEST_CASE("a comparison tells how much onnxruntime's own optimizations move each output", "[profile]") {
  // models/near_ties.onnx: an ArgMax over two channels equal but for rounding, which folding the
  // batch norm (onnxruntime's own level "all") rounds otherwise: it flips on every input set.
  profile::OrtWorker worker;
  const std::string ties = model_path("near_ties.onnx");
  // The input at "all" against itself at "disabled" (the candidate's level): it fails, and by
  // exactly what its own variation (the reference at "disabled") moves it, on every input set.
  const std::vector<profile::OutputComparison> own =
      worker.compare_files(ties, ties, {1, "disabled"}, {{"N", 1}}, 3, 0, 1e-5, 1e-4, "all", "disabled");
  REQUIRE(own.size() == 1);
  CHECK_FALSE(own[0].passed);
  CHECK(own[0].max_abs_error == 1);
  CHECK(own[0].runtime_variation == 1);
  CHECK(own[0].within_runtime_variation);
  // Both at "all": equal, and the variation still measured.
  const std::vector<profile::OutputComparison> same =
      worker.compare_files(ties, ties, {}, {{"N", 1}}, 2, 0, 1e-5, 1e-4, {}, "disabled");
  CHECK(same[0].passed);
  CHECK(same[0].runtime_variation == 1);
  // Against a variation that moves nothing (the reference at "all" both times), the same failure
  // is not within it.
  const std::vector<profile::OutputComparison> beyond =
      worker.compare_files(ties, ties, {1, "disabled"}, {{"N", 1}}, 2, 0, 1e-5, 1e-4, "all", "all");
  CHECK_FALSE(beyond[0].passed);
  CHECK(beyond[0].runtime_variation == 0);
  CHECK_FALSE(beyond[0].within_runtime_variation);
  // Without the variation asked for, none is reported.
  const std::vector<profile::OutputComparison> plain = worker.compare_files(ties, ties, {}, {{"N", 1}}, 1, 0, 1e-5, 1e-4);
  CHECK(plain[0].runtime_variation == -1);
  CHECK_FALSE(plain[0].within_runtime_variation);
}

TEST_CASE("a model onnxruntime cannot load is an error naming it", "[profile]") {
  profile::OrtWorker worker;
  CHECK_THROWS_WITH(worker.time_files({model_path("cycle.onnx")}, {}, {}, {}),
                    Catch::Contains("cannot load") && Catch::Contains("cycle.onnx"));
  // The worker goes on answering after a failure.
  CHECK(worker.time_files({model_path("small_cnn.onnx")}, {}, {}, {}).front().runs >= 10);
}

TEST_CASE("a worker that ended is replaced for the next request", "[profile]") {
  // What onnxruntime crashing on a model does to the worker (onnxruntime 1.32 crashes loading a
  // float16 TransformerEncoder export, for one). Whether the crash is seen by the request after
  // it (which then fails, saying how the worker ended) or only by the one after that depends on
  // when the signal lands; either way the next request gets a new worker.
  profile::OrtWorker worker;
  const pid_t first = worker.pid();
  REQUIRE(first > 0);
  REQUIRE(::kill(first, SIGSEGV) == 0);
  try {
    worker.time_files({model_path("small_cnn.onnx")}, {}, {}, {});
  } catch (const Error& error) {
    CHECK_THAT(error.what(), Catch::Contains("onnxruntime's worker") && Catch::Contains("killed by signal 11"));
    // Kept for the warning that a new worker was started (a caller may handle the error quietly).
    CHECK(worker.last_failure() == error.what());
  }
  CHECK(worker.time_files({model_path("small_cnn.onnx")}, {}, {}, {}).front().runs >= 10);
  CHECK(worker.restarts() == 1);
  CHECK(worker.pid() != first);
}

TEST_CASE("models that do not fit in memory together are timed one session at a time", "[profile]") {
  // A worker allowed 1 MiB of resident memory: no second session fits beside the first.
  REQUIRE(::setenv("GRAPHSUB_WORKER_MEMORY_MB", "1", 1) == 0);
  profile::OrtWorker tight;
  REQUIRE(::unsetenv("GRAPHSUB_WORKER_MEMORY_MB") == 0);
  profile::TimingLimits limits;
  limits.min_runs = 6;
  limits.max_runs = 6;
  const auto timings = tight.time_files({model_path("small_cnn.onnx"), model_path("symbolic_dims.onnx")}, {},
                                        {{"N", 2}}, limits);
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].runs == 6);
  CHECK(timings[1].runs == 6);
  REQUIRE(tight.last_one_at_a_time().has_value());
  CHECK(tight.last_one_at_a_time()->session_bytes > 0);
  CHECK(tight.last_one_at_a_time()->free_bytes < 0);
  // One model needs no second session; a worker without the bound alternates as before.
  tight.time_files({model_path("small_cnn.onnx")}, {}, {}, limits);
  CHECK(!tight.last_one_at_a_time().has_value());
  profile::OrtWorker roomy;
  roomy.time_files({model_path("small_cnn.onnx"), model_path("symbolic_dims.onnx")}, {}, {{"N", 2}}, limits);
  CHECK(!roomy.last_one_at_a_time().has_value());
}

TEST_CASE("without onnxruntime the worker does not start, and says why", "[profile]") {
  CHECK_THROWS_WITH(profile::OrtWorker("/no/such/python"), Catch::StartsWith("onnxruntime is not available"));
  CHECK_THROWS_WITH(profile::OrtWorker("false"), Catch::StartsWith("onnxruntime is not available"));
}

TEST_CASE("graphs are exported and timed, a node is timed alone", "[profile]") {
  const ir::Graph graph = onnx_io::import_model(model_path("small_cnn.onnx"));
  const auto timings = profiler().time_graphs({&graph, &graph}, {{"N", 1}}, profile::TimingLimits{});
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].median_ms > 0);
  const int64_t before = profiler().measurements();
  const ir::NodeId conv = graph.node_ids().front();
  REQUIRE(graph.node(conv).op == ir::OpKind::kConv);
  const cost::Miss miss{cost::op_signature(graph, conv), graph, conv};
  const cost::CacheEntry entry = profiler().measure_node(miss, {});
  CHECK_FALSE(entry.failed());
  CHECK(entry.signature == miss.signature);
  CHECK(entry.backend == "onnxruntime-cpu");
  CHECK(entry.runs >= profile::OrtProfiler::node_limits().min_runs);
  CHECK(entry.median_ms >= 0);
  CHECK(profiler().measurements() > before);
}

TEST_CASE("a part of a quantized model runs in onnxruntime in its quantization context", "[profile]") {
  // The two convolutions of models/qdq_branches.onnx, taken out with the dequantization before
  // them and the quantization after (search::QuantizationContext), as the judge times a part.
  const ir::Graph graph = onnx_io::import_model(model_path("qdq_branches.onnx"));
  std::vector<ir::NodeId> convs;
  for (ir::NodeId id : graph.node_ids()) {
    if (graph.node(id).op == ir::OpKind::kConv) convs.push_back(id);
  }
  REQUIRE(convs.size() == 2);
  const search::Subgraph part = search::extract(graph, convs);
  const ir::Graph context = search::QuantizationContext(graph, part).around(part.graph);
  REQUIRE(context.inputs().size() == 1);
  const auto timings = profiler().time_graphs({&part.graph, &context}, {{"N", 1}}, profile::TimingLimits{});
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].median_ms > 0);
  CHECK(timings[1].median_ms > 0);
}

TEST_CASE("graphs with large weights are timed with the weights in one shared file", "[profile]") {
  // x [1, 256] times w [256, 256] (256 KiB, over SharedWeights' 64 KiB): onnxruntime reads w
  // from the profiler's weights file, once written for both graphs and the observation.
  ir::Graph graph;
  const ir::TensorType x_type{ir::DataType::kFloat, ir::Shape::of({1, 256})};
  const ir::ValueId x = graph.add_input("x", x_type);
  std::vector<float> values(256 * 256);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 7) - 3.0f;
  const ir::ValueId w = graph.add_weight("w", ir::share(ir::Tensor::from_floats({256, 256}, values)));
  const ir::NodeId product = graph.add_node(ir::OpKind::kMatMul, {x, w}, {{x_type, "y"}});
  graph.set_outputs({graph.node(product).outputs[0]});
  ir::Graph other = graph;
  values[0] = 5.0f;
  const ir::ValueId w2 = other.add_weight("w2", ir::share(ir::Tensor::from_floats({256, 256}, values)));
  other.replace_all_uses(w, w2);

  const auto timings = profiler().time_graphs({&graph, &other}, {}, profile::TimingLimits{});
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].median_ms > 0);
  CHECK(timings[1].median_ms > 0);
  const std::optional<profile::Observed> observed =
      profiler().observe(graph, {graph.node(product).outputs[0]}, {});
  REQUIRE(observed);
  CHECK(observed->at("y").shape == std::vector<int64_t>{1, 256});
}

TEST_CASE("a graph's values are observed in onnxruntime, shapes that depend on data included", "[profile]") {
  // data_shaped_expand: at N = 5, with ids fed zeros as a timing feeds them, target is [5, 4]
  // and y has that shape.
  ir::Graph graph;
  const auto [target, y] = testing::shapes::data_shaped_expand(graph);

  const std::optional<profile::Observed> observed = profiler().observe(graph, {target, y}, {{"N", 5}});
  REQUIRE(observed);
  REQUIRE(observed->count("target") == 1);
  CHECK(observed->at("target").shape == std::vector<int64_t>{2});
  CHECK(observed->at("target").integers == std::vector<int64_t>{5, 4});
  REQUIRE(observed->count("y") == 1);
  CHECK(observed->at("y").shape == std::vector<int64_t>{5, 4});
  CHECK_FALSE(observed->at("y").integers);  // float
}

TEST_CASE("a value of unknown rank is observed through its shape", "[profile]") {
  // An If's output, an operator ONNX cannot infer: the model's checker wants a shape on every
  // output, so the observation asks for the value's Shape and reports it as the value's.
  ir::Graph graph;
  const auto [target, y] = testing::shapes::data_shaped_expand(graph);
  graph.set_type(y, ir::TensorType{ir::DataType::kFloat, ir::Shape{}});
  REQUIRE_FALSE(graph.value(y).type.shape.rank_known);

  const std::optional<profile::Observed> observed = profiler().observe(graph, {target, y}, {{"N", 5}});
  REQUIRE(observed);
  CHECK(observed->size() == 2);  // the Shape asked for is not among them
  REQUIRE(observed->count("y") == 1);
  CHECK(observed->at("y").shape == std::vector<int64_t>{5, 4});
  CHECK(observed->at("target").integers == std::vector<int64_t>{5, 4});
}

}  // namespace
}  // namespace graphsub
