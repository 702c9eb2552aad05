// Tile: repeats a tensor along each axis (ONNX Tile, opsets 6 and 13).
#include <algorithm>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `repeats` holds a non-negative count per axis of an input of `rank` (when known).
std::string check_repeats(const std::vector<int64_t>& repeats, std::optional<int64_t> rank) {
  if (std::any_of(repeats.begin(), repeats.end(), [](int64_t count) { return count < 0; })) {
    return "repeats has a negative count";
  }
  if (rank && static_cast<int64_t>(repeats.size()) != *rank) {
    return "repeats does not fit the input rank";
  }
  return {};
}

/// The repeats must be a constant; they are the one attribute.
std::string canonicalize(ImportContext& context) {
  std::string reason =
      first_reason({check_attributes(context.attrs, {{"repeats", AttrType::kInts}}),
                    require_inputs(context, 1), require_outputs(context, 1),
                    reject_strings(context)});
  if (!reason.empty()) return reason;
  if (!context.attrs.has("repeats")) return "repeats are not constants";
  return check_repeats(context.attrs.get_ints("repeats", {}), rank_of(context.input_types[0]));
}

/// A known size times its count; a symbol repeated once stays; zero repeats give 0.
ir::Dim tiled_dim(const ir::Dim& dim, int64_t count) {
  if (count == 0) return ir::Dim::known(0);
  if (dim.is_known()) return ir::Dim::known(dim.value * count);
  return count == 1 ? dim : ir::Dim{};
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Tile takes one data input");
  const std::vector<int64_t> repeats = node.attrs.get_ints("repeats", {});
  if (std::string error = check_repeats(repeats, rank_of(inputs[0])); !error.empty()) {
    return InferResult::failure(error);
  }
  ir::Shape out{true, std::vector<ir::Dim>(repeats.size())};
  for (std::size_t axis = 0; axis < repeats.size(); ++axis) {
    const ir::Dim dim = inputs[0].shape.rank_known ? inputs[0].shape.dims[axis] : ir::Dim{};
    out.dims[axis] = tiled_dim(dim, repeats[axis]);
  }
  return InferResult{{ir::TensorType{inputs[0].dtype, out}}, {}};
}

/// Output coordinate j of an axis of size d reads input coordinate j mod d.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& input = *inputs[0];
  const std::vector<int64_t> repeats = node.attrs.get_ints("repeats", {});
  AxisMaps maps;
  for (std::size_t axis = 0; axis < input.rank(); ++axis) {
    const int64_t size = input.dims()[axis];
    std::vector<int64_t> map(static_cast<std::size_t>(size * repeats[axis]));
    for (std::size_t j = 0; j < map.size(); ++j) map[j] = static_cast<int64_t>(j) % size;
    maps.push_back(std::move(map));
  }
  copy_mapped(input, maps, nullptr, outputs[0]);
}

}  // namespace

OpDef tile_op() {
  return OpDef{ir::OpKind::kTile, "Tile", true, 6, {{1, "repeats", 6, false}},
               canonicalize, infer, kernel, copy_features};
}

}  // namespace graphsub::ops
