// Numeric equivalence checks on seeded random inputs.
#include "runtime/equivalence.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

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

/// Integers are drawn in [0, kIntegerBound), or below a smaller index bound.
constexpr int64_t kIntegerBound = 4;

ir::Tensor random_tensor(ir::DataType dtype, std::vector<int64_t> sizes, std::mt19937& rng,
                         const std::string& name, int64_t bound) {
  ir::Tensor tensor(dtype, std::move(sizes));
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, static_cast<int>(std::clamp<int64_t>(bound, 1, kIntegerBound) - 1));
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

bool is_integer(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kInt64:
    case ir::DataType::kInt32:
    case ir::DataType::kInt16:
    case ir::DataType::kInt8:
    case ir::DataType::kUint64:
    case ir::DataType::kUint32:
    case ir::DataType::kUint16:
    case ir::DataType::kUint8: return true;
    default: return false;
  }
}

/// Whether `op` passes the values of its input `slot` through unchanged (some of them, moved or
/// repeated): the index values an input carries reach the op's output.
bool carries_values(ir::OpKind op, int32_t slot) {
  switch (op) {
    case ir::OpKind::kIdentity:
    case ir::OpKind::kUnsqueeze:
    case ir::OpKind::kSqueeze:
    case ir::OpKind::kReshape:
    case ir::OpKind::kFlatten:
    case ir::OpKind::kExpand:
    case ir::OpKind::kTranspose:
    case ir::OpKind::kSlice:
    case ir::OpKind::kTile: return slot == 0;
    case ir::OpKind::kConcat:
    case ir::OpKind::kCast: return true;
    default: return false;
  }
}

}  // namespace

std::map<std::string, int64_t> index_bounds(const ir::Graph& graph) {
  const std::vector<std::vector<std::pair<ir::NodeId, int32_t>>> consumers = graph.consumers();
  std::map<std::string, int64_t> bounds;
  for (ir::ValueId input : graph.inputs()) {
    const ir::Value& value = graph.value(input);
    if (value.data || !is_integer(value.type.dtype)) continue;
    int64_t bound = -1;
    std::vector<ir::ValueId> pending = {input};
    std::set<ir::ValueId> seen = {input};
    while (!pending.empty()) {
      const ir::ValueId at = pending.back();
      pending.pop_back();
      for (const auto& [id, slot] : consumers[static_cast<std::size_t>(at)]) {
        const ir::Node& node = graph.node(id);
        if (node.op == ir::OpKind::kGather && slot == 1) {
          const ir::Shape& table = graph.value(node.inputs[0]).type.shape;
          const int64_t axis = node.attrs.get_int("axis", 0);
          const auto at = static_cast<std::size_t>(axis);
          if (table.rank_known && axis >= 0 && at < table.dims.size() && table.dims[at].is_known()) {
            const int64_t length = table.dims[at].value;
            bound = bound < 0 ? length : std::min(bound, length);
          }
          continue;
        }
        if (!carries_values(node.op, slot)) continue;
        for (ir::ValueId output : node.outputs) {
          if (output == ir::kNoValue || !is_integer(graph.value(output).type.dtype)) continue;
          if (seen.insert(output).second) pending.push_back(output);
        }
      }
    }
    if (bound >= 0 && bound < kIntegerBound) bounds[value.name] = bound;
  }
  return bounds;
}

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
    const auto bound = options.index_bounds.find(value.name);
    inputs[value.name] = ir::share(random_tensor(value.type.dtype, concrete_sizes(value, options), rng, value.name,
                                                 bound != options.index_bounds.end() ? bound->second : kIntegerBound));
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
