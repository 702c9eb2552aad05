// Building a model graph node by node: canonical attributes, inferred shapes, seeded weights.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/attributes.h"
#include "ir/graph.h"
#include "models/builders/models.h"

namespace graphsub::models {

/// Adds inputs, weights and nodes to a graph. Every node's attributes are put in the canonical form
/// import gives them (opset 17) and its output types come from the op's own shape inference, so a
/// built graph looks exactly like an imported one. Weights come from one std::mt19937 seeded by
/// the config, converted to floats by hand so every standard library gives the same values.
class ModelBuilder {
 public:
  explicit ModelBuilder(const ModelConfig& config);

  /// The sizes and options of the model being built.
  const ModelConfig& config() const { return config_; }

  /// A float32 graph input.
  ir::ValueId input(const std::string& name, const std::vector<int64_t>& dims);
  /// A weight of i.i.d. entries uniform around 0 with standard deviation `std_dev`.
  ir::ValueId weight(const std::vector<int64_t>& dims, double std_dev);
  /// A weight of i.i.d. entries uniform in [center - spread, center + spread).
  ir::ValueId weight_around(const std::vector<int64_t>& dims, double center, double spread);
  /// A weight of equal entries.
  ir::ValueId constant(const std::vector<int64_t>& dims, float value);

  /// Adds a node of a modelled kind and returns its outputs. Throws graphsub::Error when the op
  /// rejects the attributes or the input shapes (a size too small for the model).
  std::vector<ir::ValueId> add(ir::OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {},
                               int num_outputs = 1);
  /// add() for a node with one output.
  ir::ValueId op(ir::OpKind op, std::vector<ir::ValueId> inputs, ir::Attributes attrs = {});

  /// The static sizes of a value.
  std::vector<int64_t> dims(ir::ValueId value) const;
  /// One static size of a value.
  int64_t dim(ir::ValueId value, std::size_t axis) const { return dims(value).at(axis); }

  /// Names the graph outputs and hands the graph over; the builder is empty afterwards.
  ir::Graph finish(const std::vector<std::pair<std::string, ir::ValueId>>& outputs);

 private:
  /// The next random value, uniform in [-1, 1).
  float next_unit();

  ModelConfig config_;
  ir::Graph graph_;
  std::mt19937 rng_;
};

/// `value` when set (non-zero), else the model's default.
inline int64_t or_default(int64_t value, int64_t fallback) { return value != 0 ? value : fallback; }

/// Attributes from a list of (name, value) pairs.
ir::Attributes attributes(std::initializer_list<std::pair<std::string, ir::AttrValue>> items);

}  // namespace graphsub::models
