// Numeric equivalence checks on seeded random inputs.
#include "runtime/equivalence.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "ir/error.h"

namespace graphsub::runtime {
namespace {

std::vector<int64_t> concrete_sizes(const ir::Value& value, const CheckOptions& options) {
  if (!value.type.shape.rank_known) {
    throw Error("input '" + value.name + "' has an unknown rank: cannot make random data for it");
  }
  std::vector<int64_t> sizes;
  for (const ir::Dim& dim : value.type.shape.dims) {
    if (dim.is_known()) {
      sizes.push_back(dim.value);
      continue;
    }
    auto bound = options.dims.find(dim.symbol);
    sizes.push_back(bound != options.dims.end() ? bound->second : options.default_dim);
  }
  return sizes;
}

template <class T, class Dist>
void fill(ir::Tensor& tensor, std::mt19937& rng, Dist dist) {
  T* data = tensor.mutable_data<T>();
  for (int64_t i = 0; i < tensor.num_elements(); ++i) data[i] = static_cast<T>(dist(rng));
}

ir::Tensor random_tensor(ir::DataType dtype, std::vector<int64_t> sizes, std::mt19937& rng,
                         const std::string& name) {
  ir::Tensor tensor(dtype, std::move(sizes));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  switch (dtype) {
    case ir::DataType::kFloat: fill<float>(tensor, rng, real); break;
    case ir::DataType::kDouble: fill<double>(tensor, rng, real); break;
    case ir::DataType::kInt64: fill<int64_t>(tensor, rng, small); break;
    case ir::DataType::kInt32: fill<int32_t>(tensor, rng, small); break;
    case ir::DataType::kInt8: fill<int8_t>(tensor, rng, small); break;
    case ir::DataType::kUint8: fill<uint8_t>(tensor, rng, small); break;
    case ir::DataType::kBool: fill<uint8_t>(tensor, rng, std::uniform_int_distribution<int>(0, 1)); break;
    default:
      throw Error("input '" + name + "' is " + ir::to_string(dtype) +
                  ": random data of that type is not supported");
  }
  return tensor;
}

void compare(const ir::Tensor& want, const ir::Tensor& got, const CheckOptions& options,
             OutputCheck& result) {
  if (want.dims() != got.dims() || want.dtype() != got.dtype()) {
    result.passed = false;
    result.max_abs_error = INFINITY;
    result.max_rel_error = INFINITY;
    return;
  }
  if (want.dtype() == ir::DataType::kString) {
    if (want.strings() != got.strings()) result.passed = false;
    return;
  }
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double w = want.element_as_double(i);
    const double g = got.element_as_double(i);
    if (std::isnan(w) && std::isnan(g)) continue;
    const double abs_error = std::isnan(w) || std::isnan(g) ? INFINITY : std::fabs(g - w);
    result.max_abs_error = std::max(result.max_abs_error, abs_error);
    // Relative to a nonzero reference only: against 0 every difference is infinitely relative.
    if (w != 0) result.max_rel_error = std::max(result.max_rel_error, abs_error / std::fabs(w));
    if (abs_error > options.atol + options.rtol * std::fabs(w)) result.passed = false;
  }
}

void check_interfaces(const ir::Graph& reference, const ir::Graph& candidate) {
  if (reference.output_names().size() != candidate.output_names().size()) {
    throw Error("the graphs have different numbers of outputs (" +
                std::to_string(reference.output_names().size()) + " and " +
                std::to_string(candidate.output_names().size()) + ")");
  }
}

}  // namespace

bool CheckReport::passed() const {
  return std::all_of(outputs.begin(), outputs.end(),
                     [](const OutputCheck& o) { return o.passed || o.within_runtime_variation; });
}

TensorMap random_inputs(const ir::Graph& graph, uint32_t seed, const CheckOptions& options) {
  std::mt19937 rng(seed);
  TensorMap inputs;
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& value = graph.value(id);
    if (value.data) continue;
    if (value.type.dtype == ir::DataType::kUndefined) {
      throw Error("input '" + value.name + "' is not a tensor: random data for it is not supported");
    }
    inputs[value.name] = ir::share(random_tensor(value.type.dtype, concrete_sizes(value, options), rng,
                                                 value.name));
  }
  return inputs;
}

CheckReport check_equivalent(const ir::Graph& reference, const ir::Graph& candidate,
                             const CheckOptions& options) {
  return check_against(reference, run_reference(reference, options), candidate, options);
}

ReferenceRuns run_reference(const ir::Graph& reference, const CheckOptions& options) {
  ReferenceRuns runs;
  try {
    for (int sample = 0; sample < options.samples; ++sample) {
      runs.inputs.push_back(random_inputs(reference, options.seed + static_cast<uint32_t>(sample), options));
      runs.outputs.push_back(CpuExecutor::run(reference, runs.inputs.back()));
    }
  } catch (const Error& error) {
    runs = ReferenceRuns{};
    runs.error = error.what();
  }
  return runs;
}

CheckReport check_against(const ir::Graph& reference, const ReferenceRuns& runs, const ir::Graph& candidate,
                          const CheckOptions& options) {
  check_interfaces(reference, candidate);
  if (!runs.error.empty()) throw Error(runs.error);
  CheckReport report;
  for (const std::string& name : reference.output_names()) report.outputs.push_back({name, 0, 0, true});
  for (int sample = 0; sample < options.samples; ++sample) {
    const TensorMap& want = runs.outputs.at(static_cast<std::size_t>(sample));
    TensorMap got = CpuExecutor::run(candidate, runs.inputs.at(static_cast<std::size_t>(sample)));
    for (std::size_t i = 0; i < report.outputs.size(); ++i) {
      compare(*want.at(reference.output_names()[i]), *got.at(candidate.output_names()[i]), options,
              report.outputs[i]);
    }
  }
  return report;
}

}  // namespace graphsub::runtime
