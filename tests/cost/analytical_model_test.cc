// Tests of AnalyticalModel: fused forms beat unfused ones, FLOPs order convolutions, devices order.
#include <catch2/catch.hpp>

#include <string>

#include "cost/analytical_model.h"
#include "cost_testing.h"

namespace graphsub {
namespace {

using cost::AnalyticalModel;
using cost::Cost;
using testing::conv_graph;

Cost cost_on(const std::string& device, const ir::Graph& graph) {
  return AnalyticalModel(cost::device_by_name(device)).graph_cost(graph);
}

TEST_CASE("a Conv with a fused relu costs less than a Conv and a Relu", "[cost]") {
  const ir::Graph fused = conv_graph(64, 56, 3, "relu", false);
  const ir::Graph separate = conv_graph(64, 56, 3, "none", true);
  for (const std::string& device : cost::device_names()) {
    CAPTURE(device);
    const Cost one = cost_on(device, fused);
    const Cost two = cost_on(device, separate);
    REQUIRE(one.time_ms < two.time_ms);
    REQUIRE(one.launches == 1);
    REQUIRE(two.launches == 2);
    REQUIRE(two.bytes - one.bytes == 2.0 * 4 * 64 * 56 * 56);
  }
}

TEST_CASE("the fused activation adds nothing to the Conv", "[cost]") {
  const Cost plain = cost_on("v100", conv_graph(64, 56, 3, "none", false));
  const Cost fused = cost_on("v100", conv_graph(64, 56, 3, "relu", false));
  REQUIRE(fused.time_ms == plain.time_ms);
  REQUIRE(fused.bytes == plain.bytes);
}

TEST_CASE("a 1x1 Conv costs less than the 3x3 it can be enlarged to", "[cost]") {
  const ir::Graph small = conv_graph(64, 56, 1, "none", false);
  const ir::Graph large = conv_graph(64, 56, 3, "none", false);
  for (const std::string& device : cost::device_names()) {
    CAPTURE(device);
    const Cost one = cost_on(device, small);
    const Cost three = cost_on(device, large);
    REQUIRE(three.flops == 9 * one.flops);
    REQUIRE(one.flops == 2.0 * 64 * 64 * 56 * 56);
    REQUIRE(one.time_ms < three.time_ms);
  }
}

TEST_CASE("newer GPUs are faster, the CPU slowest", "[cost]") {
  const ir::Graph graph = conv_graph(64, 56, 3, "relu", false);
  REQUIRE(cost_on("h100", graph).time_ms < cost_on("a100", graph).time_ms);
  REQUIRE(cost_on("a100", graph).time_ms < cost_on("v100", graph).time_ms);
  REQUIRE(cost_on("v100", graph).time_ms < cost_on("cpu", graph).time_ms);
}

TEST_CASE("node work is device-independent and counts a launch per kernel", "[cost]") {
  const ir::Graph graph = conv_graph(8, 4, 3, "none", true);
  const Cost conv = cost::node_work(graph, 0);
  REQUIRE(conv.time_ms == 0);
  REQUIRE(conv.launches == 1);
  REQUIRE(conv.flops == 2.0 * 8 * 8 * 9 * 4 * 4);
  REQUIRE(conv.bytes == 4.0 * (8 * 4 * 4 + 8 * 8 * 3 * 3 + 8 + 8 * 4 * 4));
  REQUIRE(cost::node_work(graph, 1).bytes == 4.0 * 2 * 8 * 4 * 4);
}

}  // namespace
}  // namespace graphsub
