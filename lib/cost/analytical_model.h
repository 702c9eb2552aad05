// The analytical (roofline) cost model: a node's time from its FLOPs, bytes and the device's peaks.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include "cost/cost_model.h"
#include "cost/device.h"

namespace graphsub::cost {

/// The device-independent work of one node, with time_ms 0: FLOPs and bytes (read + written) from
/// its op's cost features; an opaque node reads its inputs and writes its outputs (from their
/// types, symbolic dims as 1) and does no counted FLOPs. One launch, except for a node that moves
/// no data (Reshape, Flatten, Squeeze, Unsqueeze are views): 0 launches.
Cost node_work(const ir::Graph& graph, ir::NodeId id);

/// Estimates a node's time on a DeviceSpec, the embedded default that runs on any machine:
///   time_ms = max(flops / (peak_flops · compute), bytes / (memory_bandwidth · memory)) · 1e3
///             / utilization + launch_overhead_ms
/// with the efficiencies of the node's OpFamily, and utilization = min(1, output elements /
/// DeviceSpec::fill_outputs): a kernel with fewer independent outputs than the device has lanes
/// leaves part of it idle (why merging small operators pays on a GPU, MetaFlow §1). A view costs nothing. A fused activation (Conv's
/// `activation` attribute) adds neither bytes nor a launch, so the fused form is always cheaper than
/// the Conv plus a separate activation node.
class AnalyticalModel : public CostModel {
 public:
  explicit AnalyticalModel(DeviceSpec device) : device_(std::move(device)) {}

  Cost node_cost(const ir::Graph& graph, ir::NodeId id) const override;

  const DeviceSpec& device() const { return device_; }
  /// How many times node_cost has estimated an opaque node (a node the model knows nothing of but
  /// its tensors), counted across threads; the search reports it.
  int64_t opaque_nodes() const { return opaque_nodes_.load(std::memory_order_relaxed); }

 private:
  /// The roofline time of `work` for a kernel of `family`, launch included, in milliseconds.
  double time_ms(const Cost& work, OpFamily family, double outputs) const;

  DeviceSpec device_;
  mutable std::atomic<int64_t> opaque_nodes_{0};
};

}  // namespace graphsub::cost
