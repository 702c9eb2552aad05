// Analytical descriptions of devices: peak arithmetic, memory bandwidth, launch overhead, efficiency.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/op_kind.h"

namespace graphsub::cost {

/// Operator families that reach a similar fraction of a device's peak (see lib/cost/README.md).
enum class OpFamily : uint8_t {
  kConvolution,    ///< Conv, ConvTranspose: dense, compute-bound at typical sizes.
  kMatrix,         ///< MatMul, Gemm, LSTM (its gate products).
  kPooling,        ///< Windowed and global pooling.
  kNormalization,  ///< BatchNormalization, LayerNormalization, Softmax.
  kReduction,      ///< Reduce*, ArgMax, ArgMin.
  kElementwise,    ///< Arithmetic, activations, comparisons, logic, Cast, Where: streaming.
  kDataMovement,   ///< Transpose, Concat, Slice, Gather, Pad, ...: strided or gathered copies.
  kOpaque,         ///< Operators graphsub does not model.
  kCount,          ///< Number of families; not a family.
};

inline constexpr std::size_t kNumFamilies = static_cast<std::size_t>(OpFamily::kCount);

/// The family of an operator kind.
OpFamily op_family(ir::OpKind kind);

/// The fractions of a device's peaks that one family of kernels sustains, each in (0, 1].
struct Efficiency {
  double compute;  ///< Of peak_flops.
  double memory;   ///< Of memory_bandwidth.
};

/// What the analytical model knows of a device. A node's time is
/// max(flops / (peak_flops · compute), bytes / (memory_bandwidth · memory)) / utilization +
/// launch_overhead_ms, utilization = min(1, the node's output elements / fill_outputs).
struct DeviceSpec {
  std::string name;           ///< The name --device takes ("v100", ...).
  std::string description;    ///< The product and the datasheet the numbers come from.
  double peak_flops;          ///< Peak fp32 arithmetic, FLOP/s (no tensor cores).
  double memory_bandwidth;    ///< Peak device-memory bandwidth, bytes/s.
  double launch_overhead_ms;  ///< Fixed cost of one kernel launch, milliseconds.
  double fill_outputs;        ///< Output elements one kernel needs to keep every lane busy.
  std::array<Efficiency, kNumFamilies> efficiency;  ///< Indexed by OpFamily.

  /// The efficiency of one family.
  const Efficiency& efficiency_of(OpFamily family) const {
    return efficiency[static_cast<std::size_t>(family)];
  }
};

/// The named devices: "v100", "a100", "h100", "cpu". Throws graphsub::Error listing the valid names
/// for any other name.
DeviceSpec device_by_name(std::string_view name);

/// The names device_by_name accepts, in the order of the table.
std::vector<std::string> device_names();

}  // namespace graphsub::cost
