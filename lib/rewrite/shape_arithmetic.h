// Shape arithmetic that a model's dims decide, done once ahead of time instead of on every run.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace graphsub::rewrite {

/// What resolve_shape_arithmetic changed.
struct ShapeArithmeticStats {
  std::size_t constants = 0;        ///< Computed shape values replaced by weights.
  std::size_t reshapes = 0;         ///< Reshapes to a computed shape given a literal one (0 and -1).
  std::size_t expands = 0;          ///< Expands to a computed shape given a literal one (1 for a kept dim).
  std::size_t compacted = 0;        ///< Computed shapes read from the graph inputs' dims instead.
  std::size_t attribute_forms = 0;  ///< Run-time form nodes turned into their attribute form.
  std::size_t nodes_removed = 0;    ///< Nodes no longer needed afterwards.

  /// True when the resolution changed anything.
  bool changed() const { return constants + reshapes + expands + compacted + attribute_forms + nodes_removed > 0; }
  ShapeArithmeticStats& operator+=(const ShapeArithmeticStats& other) {
    constants += other.constants;
    reshapes += other.reshapes;
    expands += other.expands;
    compacted += other.compacted;
    attribute_forms += other.attribute_forms;
    nodes_removed += other.nodes_removed;
    return *this;
  }
};

/// Integer tensors by value name.
using KnownValues = std::map<std::string, ir::TensorPtr>;

/// The graph with its shape arithmetic resolved where the value types decide it. Exporters build
/// Reshape targets and Slice bounds at run time (Shape, Gather, Unsqueeze, Concat, integer
/// Add/Sub/Mul/Div, Slice, Squeeze, Cast, Equal, Where, ConstantOfShape) because a dim is symbolic; a runtime that cannot fold
/// them runs a dozen tiny nodes per Reshape. This evaluates those chains over dims that are
/// either known sizes or named symbols:
///
///   - a value every element of which is a known size becomes a weight:
///       Gather(Shape(x), 1) with x: [N, 116, 28, 28]   ->   116
///   - a Reshape whose computed target has known sizes and symbols gets a literal target, a
///     symbol at the position where the reshaped tensor has that same dim becoming 0 (copy the
///     dim), and at most one other entry (a symbol, or a size the dims do not decide such as
///     N * 8) becoming -1 when every other entry is a positive size:
///       Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [2, 58, 28, 28]))   x: [N, 116, 28, 28]
///       ->  Reshape(x, [0, 2, 58, 28, 28])
///   - a run-time form node whose operands all became weights takes its attribute form.
///
/// Nothing else changes; nodes left without consumers go. Symbols are equal dims by ONNX's
/// rule (one dim_param names one size), which import and shape inference keep. `known`, when
/// given, receives every computed (not weight) named value whose elements are all known.
ir::Graph resolve_shape_arithmetic(const ir::Graph& graph, ShapeArithmeticStats* stats = nullptr,
                                   KnownValues* known = nullptr);

/// The elements of an integer vector that the graph computes from dims (a weight, or the nodes
/// resolve_shape_arithmetic follows, over Shape), each a known size (Dim::known) or a symbol
/// (Dim::named); nullopt when the value is no such vector or some element is neither. A negative
/// element keeps its value (Dim::value -1 for a Reshape target's -1, which no symbol names). Reads
/// the graph as it is: a Reshape target that stays computed, as [batch, 8, s, 64] from Shape slices.
std::optional<std::vector<ir::Dim>> computed_dims(const ir::Graph& graph, ir::ValueId value);

}  // namespace graphsub::rewrite
