// Sizes for every dim of a graph, so that any part of it can be measured at its true size.
#include "pipeline/measure_sizes.h"

#include <map>
#include <set>
#include <string>

#include "ir/log.h"
#include "rewrite/shape_arithmetic.h"

namespace graphsub::pipeline {
namespace {

/// `graph` with its inputs' dims at the given sizes (1 where not given), shape arithmetic resolved.
ir::Graph instance_of(const ir::Graph& graph, const cost::DimSizes& sizes, rewrite::KnownValues& integers) {
  ir::Graph instance = graph;
  for (ir::ValueId id : instance.inputs()) {
    ir::TensorType type = instance.value(id).type;
    for (ir::Dim& dim : type.shape.dims) {
      if (dim.is_known()) continue;
      const auto size = sizes.find(dim.symbol);
      dim = ir::Dim::known(dim.is_symbolic() && size != sizes.end() ? size->second : 1);
    }
    instance.set_type(id, type);
  }
  return rewrite::resolve_shape_arithmetic(instance, nullptr, &integers);
}

std::set<std::string> symbols_of(const ir::Graph& graph) {
  std::set<std::string> symbols;
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (!graph.has_value(id)) continue;
    for (const ir::Dim& dim : graph.value(id).type.shape.dims) {
      if (dim.is_symbolic()) symbols.insert(dim.symbol);
    }
  }
  return symbols;
}

}  // namespace

MeasuringInstance measuring_instance(ir::Graph& graph, const cost::DimSizes& sizes) {
  MeasuringInstance result;
  const ir::Graph instance = instance_of(graph, sizes, result.integers);
  std::map<std::string, ir::ValueId> by_name;
  for (ir::ValueId id = 0; id < instance.value_capacity(); ++id) {
    if (instance.has_value(id) && !instance.value(id).name.empty()) by_name.emplace(instance.value(id).name, id);
  }
  const std::set<std::string> taken = symbols_of(graph);
  cost::DimSizes extended = sizes;
  std::set<std::string> conflicting;
  int next = 0;
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (!graph.has_value(id) || !graph.value(id).type.shape.rank_known) continue;
    const auto found = by_name.find(graph.value(id).name);
    if (found == by_name.end()) continue;
    const ir::Shape& concrete = instance.value(found->second).type.shape;
    ir::TensorType type = graph.value(id).type;
    if (!concrete.rank_known || concrete.rank() != type.shape.rank()) continue;
    bool named = false;
    for (std::size_t axis = 0; axis < type.shape.rank(); ++axis) {
      ir::Dim& dim = type.shape.dims[axis];
      const ir::Dim& size = concrete.dims[axis];
      if (dim.is_known() || !size.is_known() || (dim.is_symbolic() && sizes.count(dim.symbol))) continue;
      if (dim.is_symbolic()) {
        const auto [entry, added] = extended.emplace(dim.symbol, size.value);
        if (!added && entry->second != size.value) {
          logger("pipeline")->debug("measuring instance: values size {} as both {} and {} ({}); it is left at 1",
                                    dim.symbol, entry->second, size.value, graph.value(id).name);
          conflicting.insert(dim.symbol);
        }
        continue;
      }
      std::string symbol;
      do symbol = "gs_dim_" + std::to_string(next++);
      while (taken.count(symbol));
      dim = ir::Dim::named(symbol);
      extended[symbol] = size.value;
      named = true;
    }
    if (named) graph.set_type(id, type);
  }
  for (const std::string& symbol : conflicting) extended.erase(symbol);
  std::string unsized;
  for (const std::string& symbol : taken) {
    if (extended.count(symbol) == 0) unsized += (unsized.empty() ? "" : ", ") + symbol;
  }
  if (!unsized.empty()) logger("pipeline")->debug("measuring instance: no size for {} (measured at 1)", unsized);
  result.sizes = std::move(extended);
  return result;
}

}  // namespace graphsub::pipeline
