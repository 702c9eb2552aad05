// Helpers shared by the data-movement ops: attribute and axis checks, dim products, byte copies.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "ops/op_def.h"

namespace graphsub::ops {

/// The value type an attribute of a data-movement op must hold.
enum class AttrType { kInt, kInts };

/// One attribute an op accepts, and its type.
struct AttrSpec {
  const char* name;
  AttrType type;
};

/// The first non-empty reason of `reasons` (all already computed), or empty: chains the checks of
/// a canonicalize.
std::string first_reason(std::initializer_list<std::string> reasons);

/// Empty when every attribute of `attrs` is listed in `accepted` with its type; else the reason for
/// canonicalize. An attribute the op does not know may change its meaning: the node stays opaque.
std::string check_attributes(const ir::Attributes& attrs, const std::vector<AttrSpec>& accepted);

/// Empty when the node has `expected` inputs left after its attribute inputs were taken out.
std::string require_inputs(const ImportContext& context, std::size_t expected);

/// Empty unless an input is a string tensor: the data-movement kernels copy bytes, and string
/// tensors keep their elements apart from the bytes, with no mutable access.
std::string reject_strings(const ImportContext& context);

/// Empty unless `axes` holds a negative axis before opset 11, which did not define them.
std::string reject_negative_before_11(const ImportContext& context,
                                      const std::vector<int64_t>& axes);

/// Maps negative `axes` into [0, rank) and sorts them. Returns the reason when an axis is out of
/// range, repeated, or negative while the rank is unknown (nullopt).
std::string normalize_axes(std::vector<int64_t>& axes, std::optional<int64_t> rank);

/// The rank of a type, or nullopt when unknown.
std::optional<int64_t> rank_of(const ir::TensorType& type);

/// The product of some dims, split into the product of the known ones, the symbols (sorted) and
/// the number of unknown dims. It lets Reshape and Flatten keep a symbol that passes through.
struct DimProduct {
  int64_t known = 1;
  std::vector<std::string> symbols;
  int unknown = 0;
};

/// The product of dims[begin, end).
DimProduct product_of(const std::vector<ir::Dim>& dims, std::size_t begin, std::size_t end);

/// The product as one dim: its size when every factor is known, the symbol when it is one symbol
/// times known 1s, else unknown.
ir::Dim to_dim(const DimProduct& product);

/// The product of sizes[begin, end) (1 when empty).
int64_t product_of_sizes(const std::vector<int64_t>& sizes, std::size_t begin, std::size_t end);

/// Kernel of the ops that only relabel a shape (Reshape, Flatten, Squeeze, Unsqueeze): copies the
/// input's bytes into the output, which holds as many elements. String tensors are not supported.
void copy_kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
                 std::vector<ir::Tensor>& outputs);

/// Whether a runtime hands `node`'s output the input's buffer instead of computing it: the ops that
/// only relabel a shape (above), Identity, and Dropout without its mask. onnxruntime's CPU kernels
/// and graphsub's CUDA executor both do, except where the output is a graph output (a one-node
/// model of such an op times a copy no model containing it pays).
bool aliases_input(const ir::Node& node);

/// Cost of those ops: a real runtime aliases the input buffer, so no flops and no bytes moved.
CostFeatures no_cost_features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                              const std::vector<ir::TensorType>& outputs);

/// Cost of the ops that do move elements (Transpose, Concat, Split): every input read once and
/// every output written once, no flops.
CostFeatures copy_features(const ir::Node& node, const std::vector<ir::TensorType>& inputs,
                           const std::vector<ir::TensorType>& outputs);

}  // namespace graphsub::ops
