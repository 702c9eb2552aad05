// Helpers shared by the data-movement operators.
#include "ops/data_movement.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <variant>

#include "ops/common.h"

namespace graphsub::ops {
namespace {

bool has_type(const ir::AttrValue& value, AttrType type) {
  if (type == AttrType::kInt) return std::holds_alternative<int64_t>(value);
  return std::holds_alternative<std::vector<int64_t>>(value);
}

}  // namespace

std::string first_reason(std::initializer_list<std::string> reasons) {
  for (const std::string& reason : reasons) {
    if (!reason.empty()) return reason;
  }
  return {};
}

std::string check_attributes(const ir::Attributes& attrs, const std::vector<AttrSpec>& accepted) {
  for (const auto& [name, value] : attrs.items()) {
    auto spec = std::find_if(accepted.begin(), accepted.end(),
                             [&](const AttrSpec& candidate) { return name == candidate.name; });
    if (spec == accepted.end()) return "attribute '" + name + "' is not modelled";
    if (!has_type(value, spec->type)) return "attribute '" + name + "' has an unexpected type";
  }
  return {};
}

std::string require_inputs(const ImportContext& context, std::size_t expected) {
  if (context.input_types.size() == expected) return {};
  return "takes " + std::to_string(expected) + " data inputs, the node has " +
         std::to_string(context.input_types.size());
}

std::string reject_strings(const ImportContext& context) {
  for (const ir::TensorType& type : context.input_types) {
    if (type.dtype == ir::DataType::kString) return "string tensors have no reference kernel";
  }
  return {};
}

std::string reject_negative_before_11(const ImportContext& context,
                                      const std::vector<int64_t>& axes) {
  if (context.opset >= 11) return {};
  bool negative = std::any_of(axes.begin(), axes.end(), [](int64_t axis) { return axis < 0; });
  return negative ? "negative axes are undefined before opset 11" : "";
}

std::string normalize_axes(std::vector<int64_t>& axes, std::optional<int64_t> rank) {
  for (int64_t& axis : axes) {
    if (!rank) {
      if (axis < 0) return "negative axis with an unknown rank";
      continue;
    }
    std::optional<int64_t> normalized = normalize_axis(axis, *rank);
    if (!normalized) {
      return "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(*rank);
    }
    axis = *normalized;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return "repeated axis";
  return {};
}

std::optional<int64_t> rank_of(const ir::TensorType& type) {
  if (!type.shape.rank_known) return std::nullopt;
  return static_cast<int64_t>(type.shape.rank());
}

DimProduct product_of(const std::vector<ir::Dim>& dims, std::size_t begin, std::size_t end) {
  DimProduct product;
  for (std::size_t i = begin; i < end; ++i) {
    const ir::Dim& dim = dims[i];
    if (dim.is_known()) {
      product.known *= dim.value;
    } else if (dim.is_symbolic()) {
      product.symbols.push_back(dim.symbol);
    } else {
      ++product.unknown;
    }
  }
  std::sort(product.symbols.begin(), product.symbols.end());
  return product;
}

ir::Dim to_dim(const DimProduct& product) {
  if (product.unknown > 0) return ir::Dim{};
  if (product.symbols.empty()) return ir::Dim::known(product.known);
  if (product.symbols.size() == 1 && product.known == 1) return ir::Dim::named(product.symbols[0]);
  return ir::Dim{};
}

int64_t product_of_sizes(const std::vector<int64_t>& sizes, std::size_t begin, std::size_t end) {
  int64_t product = 1;
  for (std::size_t i = begin; i < end; ++i) product *= sizes[i];
  return product;
}

void copy_kernel(const ir::Node& /*node*/, const std::vector<const ir::Tensor*>& inputs,
                 std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& input = *inputs[0];
  ir::Tensor& output = outputs[0];
  if (input.byte_size() != output.byte_size()) {
    throw std::logic_error("copy kernel: input and output sizes differ");
  }
  if (input.byte_size() > 0) std::memcpy(output.mutable_bytes(), input.bytes(), input.byte_size());
}

bool aliases_input(const ir::Node& node) {
  switch (node.op) {
    case ir::OpKind::kReshape: case ir::OpKind::kFlatten: case ir::OpKind::kSqueeze:
    case ir::OpKind::kUnsqueeze: case ir::OpKind::kIdentity:
      return true;
    case ir::OpKind::kDropout:
      return node.outputs.size() == 1;
    default:
      return false;
  }
}

CostFeatures no_cost_features(const ir::Node& /*node*/,
                              const std::vector<ir::TensorType>& /*inputs*/,
                              const std::vector<ir::TensorType>& /*outputs*/) {
  return CostFeatures{};
}

CostFeatures copy_features(const ir::Node& /*node*/, const std::vector<ir::TensorType>& inputs,
                           const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 0);
}

}  // namespace graphsub::ops
