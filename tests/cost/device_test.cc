// Tests of the named devices.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cost/device.h"
#include "ir/error.h"

namespace graphsub {
namespace {

TEST_CASE("the named devices carry their datasheet peaks", "[cost]") {
  REQUIRE(cost::device_names() == std::vector<std::string>{"v100", "a100", "h100", "cpu"});
  const cost::DeviceSpec h100 = cost::device_by_name("h100");
  REQUIRE(h100.name == "h100");
  REQUIRE(h100.peak_flops == 67e12);
  REQUIRE(h100.memory_bandwidth == 3.35e12);
  REQUIRE(cost::device_by_name("v100").memory_bandwidth == 900e9);
}

TEST_CASE("every family's efficiencies are fractions", "[cost]") {
  for (const std::string& name : cost::device_names()) {
    for (const cost::Efficiency& efficiency : cost::device_by_name(name).efficiency) {
      REQUIRE(efficiency.compute > 0);
      REQUIRE(efficiency.compute <= 1);
      REQUIRE(efficiency.memory > 0);
      REQUIRE(efficiency.memory <= 1);
    }
  }
}

TEST_CASE("operators fall in their families", "[cost]") {
  REQUIRE(cost::op_family(ir::OpKind::kConv) == cost::OpFamily::kConvolution);
  REQUIRE(cost::op_family(ir::OpKind::kGemm) == cost::OpFamily::kMatrix);
  REQUIRE(cost::op_family(ir::OpKind::kRelu) == cost::OpFamily::kElementwise);
  REQUIRE(cost::op_family(ir::OpKind::kTranspose) == cost::OpFamily::kDataMovement);
  REQUIRE(cost::op_family(ir::OpKind::kOpaque) == cost::OpFamily::kOpaque);
}

TEST_CASE("an unknown device is an error naming the valid ones", "[cost]") {
  REQUIRE_THROWS_AS(cost::device_by_name("tpu"), Error);
  REQUIRE_THROWS_WITH(cost::device_by_name("tpu"),
                      "unknown device 'tpu' (valid devices: v100, a100, h100, cpu)");
}

}  // namespace
}  // namespace graphsub
