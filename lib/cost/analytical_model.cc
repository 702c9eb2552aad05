// Roofline estimates of node costs from operator cost features and a device description.
#include "cost/analytical_model.h"

#include <algorithm>
#include <vector>

#include "ops/common.h"
#include "ops/registry.h"

namespace graphsub::cost {
namespace {

/// The types of some values of `graph`; an omitted optional value gets the undefined type.
std::vector<ir::TensorType> types_of(const ir::Graph& graph, const std::vector<ir::ValueId>& ids) {
  std::vector<ir::TensorType> types;
  types.reserve(ids.size());
  for (ir::ValueId id : ids) types.push_back(id == ir::kNoValue ? ir::TensorType{} : graph.value(id).type);
  return types;
}

/// Bytes of the present values among `ids` (symbolic dims as 1).
double present_bytes(const ir::Graph& graph, const std::vector<ir::ValueId>& ids) {
  double bytes = 0;
  for (ir::ValueId id : ids) {
    if (id != ir::kNoValue) bytes += ops::bytes_or_one(graph.value(id).type);
  }
  return bytes;
}

/// Elements of the present values among `ids` (symbolic dims as 1).
double present_elements(const ir::Graph& graph, const std::vector<ir::ValueId>& ids) {
  double elements = 0;
  for (ir::ValueId id : ids) {
    if (id == ir::kNoValue) continue;
    const ir::Shape& shape = graph.value(id).type.shape;
    double count = 1;
    for (const ir::Dim& dim : shape.dims) count *= dim.is_known() ? static_cast<double>(dim.value) : 1.0;
    elements += count;
  }
  return elements;
}

ops::CostFeatures features_of(const ir::Graph& graph, const ir::Node& node) {
  if (node.op == ir::OpKind::kOpaque) {
    return ops::CostFeatures{0, present_bytes(graph, node.inputs), present_bytes(graph, node.outputs)};
  }
  return ops::op_def(node.op).features(node, types_of(graph, node.inputs), types_of(graph, node.outputs));
}

}  // namespace

Cost node_work(const ir::Graph& graph, ir::NodeId id) {
  const ops::CostFeatures features = features_of(graph, graph.node(id));
  Cost work;
  work.flops = features.flops;
  work.bytes = features.bytes_read + features.bytes_written;
  work.launches = work.flops > 0 || work.bytes > 0 ? 1 : 0;
  return work;
}

Cost AnalyticalModel::node_cost(const ir::Graph& graph, ir::NodeId id) const {
  const ir::Node& node = graph.node(id);
  if (node.op == ir::OpKind::kOpaque) opaque_nodes_.fetch_add(1, std::memory_order_relaxed);
  Cost cost = node_work(graph, id);
  if (cost.launches > 0) cost.time_ms = time_ms(cost, op_family(node.op), present_elements(graph, node.outputs));
  return cost;
}

double AnalyticalModel::time_ms(const Cost& work, OpFamily family, double outputs) const {
  const Efficiency& efficiency = device_.efficiency_of(family);
  const double compute_s = work.flops / (device_.peak_flops * efficiency.compute);
  const double memory_s = work.bytes / (device_.memory_bandwidth * efficiency.memory);
  const double utilization = std::min(1.0, std::max(outputs, 1.0) / device_.fill_outputs);
  return std::max(compute_s, memory_s) * 1e3 / utilization +
         device_.launch_overhead_ms * static_cast<double>(work.launches);
}

}  // namespace graphsub::cost
