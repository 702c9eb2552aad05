// Sizes for every dim of a graph, so that any part of it can be measured at its true size.
#include "pipeline/measure_sizes.h"

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/log.h"
#include "rewrite/shape_arithmetic.h"
#include "runtime/equivalence.h"

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

bool is_integer(ir::DataType dtype) { return dtype == ir::DataType::kInt64 || dtype == ir::DataType::kInt32; }

/// The values of `instance` a run of it should tell, by id: those named like a value of `graph`
/// whose shape is not static there, and the small integer ones (a shape, a Reshape target) whose
/// elements shape arithmetic could not compute.
std::vector<ir::ValueId> unresolved(const ir::Graph& graph, const ir::Graph& instance,
                                    const rewrite::KnownValues& integers) {
  std::set<std::string> names;
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (graph.has_value(id) && graph.value(id).kind == ir::ValueKind::kIntermediate) names.insert(graph.value(id).name);
  }
  std::vector<ir::ValueId> wanted;
  for (ir::ValueId id = 0; id < instance.value_capacity(); ++id) {
    if (!instance.has_value(id)) continue;
    const ir::Value& value = instance.value(id);
    if (value.kind != ir::ValueKind::kIntermediate || value.type.dtype == ir::DataType::kUndefined ||
        value.name.empty() || names.count(value.name) == 0) {
      continue;
    }
    const ir::Shape& shape = value.type.shape;
    const std::optional<int64_t> elements = shape.num_elements();
    const bool small_integer = is_integer(value.type.dtype) && shape.rank_known && shape.rank() <= 1 &&
                               (!elements || *elements <= profile::kObservedElements) &&
                               integers.count(value.name) == 0;
    if (!shape.is_static() || small_integer) wanted.push_back(id);
  }
  return wanted;
}

/// The elements of an observed integer value as a tensor of its type (their count is its shape's).
ir::TensorPtr integer_tensor(ir::DataType dtype, const std::vector<int64_t>& shape,
                             const std::vector<int64_t>& elements) {
  ir::Tensor tensor(dtype, shape);
  for (std::size_t i = 0; i < elements.size(); ++i) {
    if (dtype == ir::DataType::kInt64) {
      tensor.mutable_data<int64_t>()[i] = elements[i];
    } else {
      tensor.mutable_data<int32_t>()[i] = static_cast<int32_t>(elements[i]);
    }
  }
  return ir::share(std::move(tensor));
}

/// What one run of `instance` tells of the values it could not size or compute: their shapes by
/// name (added to `shapes`) and the small integer values (added to `integers`). Logs and leaves
/// both as they were when the run fails.
void observe_unresolved(const ir::Graph& graph, const ir::Graph& instance, const cost::DimSizes& sizes,
                        const Observer& observe, std::map<std::string, ir::Shape>& shapes,
                        rewrite::KnownValues& integers, InstanceRun& run) {
  const std::vector<ir::ValueId> wanted = unresolved(graph, instance, integers);
  run.unresolved = wanted.size();
  if (wanted.empty()) return;
  profile::Observed observed;
  const auto start = std::chrono::steady_clock::now();
  try {
    observed = observe(instance, wanted, sizes);
  } catch (const Error& failure) {
    run.error = failure.what();
    logger("pipeline")->info("measuring instance: {} values depend on data and one run of the instance failed ({}); "
                             "their unknown dims are measured at 1", wanted.size(), failure.what());
    return;
  }
  std::size_t& sized = run.sized;
  std::size_t& computed = run.computed;
  for (ir::ValueId id : wanted) {
    const ir::Value& value = instance.value(id);
    const auto found = observed.find(value.name);
    if (found == observed.end()) continue;
    if (!value.type.shape.is_static()) {
      shapes[value.name] = ir::Shape::of(found->second.shape);
      ++sized;
    }
    const std::optional<std::vector<int64_t>>& elements = found->second.integers;
    if (elements && is_integer(value.type.dtype) && found->second.shape.size() <= 1 &&
        ir::num_elements(found->second.shape) == static_cast<int64_t>(elements->size()) &&
        integers.count(value.name) == 0) {
      integers[value.name] = integer_tensor(value.type.dtype, found->second.shape, *elements);
      ++computed;
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  logger("pipeline")->info("measuring instance: one run of it sized {} values that depend on data and computed {} "
                           "integer values ({:.2f} s)", sized, computed, seconds);
}

}  // namespace

profile::Observed observe_with_reference(const ir::Graph& instance, const std::vector<ir::ValueId>& values,
                                         const cost::DimSizes& sizes) {
  ir::Graph outputs = instance;
  outputs.set_outputs(values);
  outputs.remove_dead_nodes();
  runtime::CheckOptions options;
  options.dims = sizes;
  runtime::TensorMap inputs = runtime::random_inputs(outputs, 0, options);
  for (ir::ValueId id : outputs.inputs()) {
    const ir::Value& input = outputs.value(id);
    const ir::DataType dtype = input.type.dtype;
    if (input.data || dtype == ir::DataType::kFloat || dtype == ir::DataType::kFloat16 ||
        dtype == ir::DataType::kDouble || dtype == ir::DataType::kBfloat16) {
      continue;
    }
    inputs[input.name] = ir::share(ir::Tensor(dtype, inputs.at(input.name)->dims()));
  }
  const runtime::TensorMap computed = runtime::CpuExecutor::run(outputs, inputs);
  profile::Observed observed;
  for (const auto& [name, tensor] : computed) {
    profile::ObservedValue& value = observed[name];
    value.shape = tensor->dims();
    if (is_integer(tensor->dtype()) && tensor->num_elements() <= profile::kObservedElements) {
      value.integers = tensor->to_int64s();
    }
  }
  return observed;
}

MeasuringInstance measuring_instance(ir::Graph& graph, const cost::DimSizes& sizes, const Observer& observe) {
  MeasuringInstance result;
  const ir::Graph instance = instance_of(graph, sizes, result.integers);
  std::map<std::string, ir::ValueId> by_name;
  for (ir::ValueId id = 0; id < instance.value_capacity(); ++id) {
    if (instance.has_value(id) && !instance.value(id).name.empty()) by_name.emplace(instance.value(id).name, id);
  }
  std::map<std::string, ir::Shape> observed_shapes;
  if (observe) observe_unresolved(graph, instance, sizes, observe, observed_shapes, result.integers, result.run);
  const std::set<std::string> taken = symbols_of(graph);
  cost::DimSizes extended = sizes;
  std::set<std::string> conflicting;
  int next = 0;
  for (ir::ValueId id = 0; id < graph.value_capacity(); ++id) {
    if (!graph.has_value(id)) continue;
    const auto found = by_name.find(graph.value(id).name);
    if (found == by_name.end()) continue;
    const auto observed = observed_shapes.find(graph.value(id).name);
    const ir::Shape& concrete =
        observed != observed_shapes.end() ? observed->second : instance.value(found->second).type.shape;
    ir::TensorType type = graph.value(id).type;
    bool named = false;
    if (!type.shape.rank_known && concrete.rank_known) {
      // A rank only the run tells (an If's output): every dim is named below.
      type.shape.rank_known = true;
      type.shape.dims.assign(concrete.rank(), ir::Dim{});
      named = true;
    }
    if (!concrete.rank_known || concrete.rank() != type.shape.rank()) continue;
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
    if (extended.count(symbol) != 0) continue;
    unsized += (unsized.empty() ? "" : ", ") + symbol;
    result.run.unsized.push_back(symbol);
  }
  if (!unsized.empty()) logger("pipeline")->debug("measuring instance: no size for {} (measured at 1)", unsized);
  result.sizes = std::move(extended);
  return result;
}

}  // namespace graphsub::pipeline
