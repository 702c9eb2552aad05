// Building a model graph node by node.
#include "models/builders/model_builder.h"

#include <cmath>
#include <utility>

#include "ir/error.h"
#include "ops/registry.h"

namespace graphsub::models {
namespace {

/// The opset whose canonical forms built nodes take (and the one export writes by default).
constexpr int64_t kOpset = 17;

ir::TensorType float_type(const std::vector<int64_t>& dims) {
  return ir::TensorType{ir::DataType::kFloat, ir::Shape::of(dims)};
}

}  // namespace

ModelBuilder::ModelBuilder(const ModelConfig& config) : config_(config), rng_(config.seed) {}

ir::ValueId ModelBuilder::input(const std::string& name, const std::vector<int64_t>& dims) {
  return graph_.add_input(name, float_type(dims));
}

float ModelBuilder::next_unit() {
  // The top 24 bits of a draw, exactly representable: multiples of 2^-23 in [-1, 1).
  constexpr float kStep = 1.0f / 8388608.0f;
  return static_cast<float>(rng_() >> 8) * kStep - 1.0f;
}

ir::ValueId ModelBuilder::weight(const std::vector<int64_t>& dims, double std_dev) {
  // Uniform on [-a, a) has standard deviation a / sqrt(3).
  return weight_around(dims, 0.0, std_dev * std::sqrt(3.0));
}

ir::ValueId ModelBuilder::weight_around(const std::vector<int64_t>& dims, double center, double spread) {
  ir::Tensor tensor(ir::DataType::kFloat, dims);
  float* values = tensor.mutable_data<float>();
  const auto offset = static_cast<float>(center);
  const auto scale = static_cast<float>(spread);
  for (int64_t i = 0; i < tensor.num_elements(); ++i) values[i] = offset + scale * next_unit();
  return graph_.add_weight({}, ir::share(std::move(tensor)));
}

ir::ValueId ModelBuilder::constant(const std::vector<int64_t>& dims, float value) {
  std::vector<float> values(static_cast<std::size_t>(ir::num_elements(dims)), value);
  return graph_.add_weight({}, ir::share(ir::Tensor::from_floats(dims, values)));
}

std::vector<ir::ValueId> ModelBuilder::add(ir::OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs,
                                           int num_outputs) {
  const ops::OpDef& def = ops::op_def(op);
  std::vector<ir::TensorType> types;
  for (ir::ValueId input : inputs) types.push_back(graph_.value(input).type);
  ops::ImportContext context{attrs, types, num_outputs, kOpset};
  if (std::string reason = def.canonicalize(context); !reason.empty()) {
    throw Error(std::string(def.name) + ": " + reason);
  }
  ir::Node probe;
  probe.op = op;
  probe.attrs = attrs;
  probe.inputs = inputs;
  const ops::InferResult inferred = def.infer(probe, types);
  if (!inferred.ok()) throw Error(std::string(def.name) + ": " + inferred.error);
  std::vector<ir::OutputSpec> outputs;
  for (const ir::TensorType& type : inferred.outputs) outputs.push_back({type, {}});
  const ir::NodeId node = graph_.add_node(op, std::move(inputs), outputs, std::move(attrs));
  return graph_.node(node).outputs;
}

ir::ValueId ModelBuilder::op(ir::OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs) {
  return add(op, std::move(inputs), std::move(attrs)).front();
}

std::vector<int64_t> ModelBuilder::dims(ir::ValueId value) const {
  return graph_.value(value).type.shape.sizes().value();
}

ir::Graph ModelBuilder::finish(const std::vector<std::pair<std::string, ir::ValueId>>& outputs) {
  std::vector<ir::ValueId> ids;
  for (const auto& [name, id] : outputs) {
    graph_.set_name(id, name);
    ids.push_back(id);
  }
  graph_.set_outputs(ids);
  return std::exchange(graph_, ir::Graph{});
}

ir::Attributes attributes(std::initializer_list<std::pair<std::string, ir::AttrValue>> items) {
  ir::Attributes attrs;
  for (const auto& [name, value] : items) attrs.set(name, value);
  return attrs;
}

}  // namespace graphsub::models
