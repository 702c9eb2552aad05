// Helpers for tests: seeded random tensors, reading and comparing elements, tiny graph builders.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "ops/registry.h"
#include "runtime/cpu_executor.h"

namespace graphsub::testing {

/// This test program's folder under the system's temporary folder (one per process, so test
/// cases run in parallel do not meet), created on first use and removed when the program ends.
inline const std::filesystem::path& scratch_root() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("graphsub_test_" + std::to_string(::getpid()));
    Root() { std::filesystem::create_directories(path); }
    ~Root() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Root root;
  return root.path;
}

/// A fresh, empty folder under scratch_root() for one test's files.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir = scratch_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// A float32 tensor of the given sizes with values uniform in [low, high), seeded.
inline ir::Tensor random_tensor(const std::vector<int64_t>& dims, uint32_t seed, float low = -1.0f,
                                float high = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(static_cast<std::size_t>(ir::num_elements(dims)));
  for (float& v : values) v = dist(rng);
  return ir::Tensor::from_floats(dims, values);
}

/// Largest |a - b| over all elements of two float32 tensors of equal sizes (infinity otherwise).
inline double max_abs_diff(const ir::Tensor& a, const ir::Tensor& b) {
  if (a.dims() != b.dims() || a.dtype() != b.dtype()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst = std::max(worst, std::fabs(a.element_as_double(i) - b.element_as_double(i)));
  }
  return worst;
}

/// The elements of a tensor stored as C++ type T (float for float32 tensors), in order.
template <class T = float>
std::vector<T> values_of(const ir::Tensor& tensor) {
  return std::vector<T>(tensor.data<T>(), tensor.data<T>() + tensor.num_elements());
}

/// The elements of a tensor of any numeric type, each read as a double, in order.
inline std::vector<double> elements(const ir::Tensor& tensor) {
  std::vector<double> out;
  for (int64_t i = 0; i < tensor.num_elements(); ++i) out.push_back(tensor.element_as_double(i));
  return out;
}

/// A float32 tensor type of static sizes.
inline ir::TensorType float_type(const std::vector<int64_t>& dims) {
  return ir::TensorType{ir::DataType::kFloat, ir::Shape::of(dims)};
}

/// Adds a node of a modelled kind whose output types come from the op's own shape inference.
/// Fails the calling test (throws) when inference rejects the node.
inline ir::NodeId add_inferred(ir::Graph& graph, ir::OpKind op, std::vector<ir::ValueId> inputs,
                               ir::Attributes attrs = {}) {
  ir::Node probe;
  probe.op = op;
  probe.attrs = attrs;
  probe.inputs = inputs;
  std::vector<ir::TensorType> types;
  for (ir::ValueId input : inputs) {
    types.push_back(input == ir::kNoValue ? ir::TensorType{} : graph.value(input).type);
  }
  ops::InferResult result = ops::op_def(op).infer(probe, types);
  if (!result.ok()) throw std::runtime_error("shape inference failed: " + result.error);
  std::vector<ir::OutputSpec> outputs;
  for (const ir::TensorType& type : result.outputs) outputs.push_back({type, {}});
  return graph.add_node(op, std::move(inputs), outputs, std::move(attrs));
}

/// How many live nodes of `op` the graph has.
inline int count_of(const ir::Graph& graph, ir::OpKind op) {
  int count = 0;
  for (ir::NodeId id : graph.node_ids()) count += graph.node(id).op == op;
  return count;
}

/// Runs one node of a modelled kind on the given inputs with the reference kernel.
inline std::vector<ir::Tensor> run_op(ir::OpKind op, const ir::Attributes& attrs,
                                      const std::vector<const ir::Tensor*>& inputs) {
  ir::Node node;
  node.op = op;
  node.attrs = attrs;
  return runtime::CpuExecutor::run_node(node, inputs);
}

/// Attributes from name/value pairs.
inline ir::Attributes attributes(std::initializer_list<std::pair<std::string, ir::AttrValue>> items) {
  ir::Attributes attrs;
  for (const auto& [name, value] : items) attrs.set(name, value);
  return attrs;
}

/// A canonical Conv's attributes (2-D): what the rule tests build their convolutions with.
inline ir::Attributes conv_attributes(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& pads, const std::vector<int64_t>& dilations,
                                      int64_t group, const std::string& activation) {
  return attributes({{"kernel_shape", kernel},
                     {"strides", strides},
                     {"pads", pads},
                     {"dilations", dilations},
                     {"group", group},
                     {"activation", activation}});
}

/// A canonical AveragePool's attributes (2-D), as conv_attributes.
inline ir::Attributes pool_attributes(const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& pads, int64_t ceil_mode,
                                      int64_t count_include_pad) {
  return attributes({{"kernel_shape", kernel},
                     {"strides", strides},
                     {"pads", pads},
                     {"ceil_mode", ceil_mode},
                     {"count_include_pad", count_include_pad}});
}

}  // namespace graphsub::testing
