// The operator registry: a plain list, one line per operator.
#include "ops/registry.h"

#include <array>
#include <stdexcept>
#include <string>

#include "ops/op_list.h"
#include "ops/operands.h"

namespace graphsub::ops {
namespace {

std::vector<OpDef> all_ops() {
  return {
      conv_op(),
      conv_transpose_op(),
      enlarge_op(),
      average_pool_op(),
      max_pool_op(),
      global_average_pool_op(),
      global_max_pool_op(),
      batch_normalization_op(),
      const_identity_conv_op(),
      const_identity_matrix_op(),
      const_ones_op(),
      const_pool_op(),
      mat_mul_op(),
      gemm_op(),
      einsum_op(),
      add_op(),
      sub_op(),
      mul_op(),
      div_op(),
      mod_op(),
      pow_op(),
      max_op(),
      min_op(),
      prelu_op(),
      s_mul_op(),
      sum_op(),
      mean_op(),
      relu_op(),
      sigmoid_op(),
      tanh_op(),
      exp_op(),
      log_op(),
      neg_op(),
      abs_op(),
      sqrt_op(),
      reciprocal_op(),
      erf_op(),
      floor_op(),
      ceil_op(),
      sin_op(),
      cos_op(),
      sign_op(),
      identity_op(),
      leaky_relu_op(),
      elu_op(),
      softplus_op(),
      hard_sigmoid_op(),
      hard_swish_op(),
      clip_op(),
      gelu_op(),
      softmax_op(),
      transpose_op(),
      concat_op(),
      split_op(),
      reshape_op(),
      flatten_op(),
      squeeze_op(),
      unsqueeze_op(),
      resize_op(),
      shape_op(),
      gather_op(),
      gather_elements_op(),
      gather_nd_op(),
      scatter_nd_op(),
      cast_op(),
      slice_op(),
      pad_op(),
      expand_op(),
      constant_of_shape_op(),
      range_op(),
      where_op(),
      tile_op(),
      dropout_op(),
      reduce_mean_op(),
      reduce_sum_op(),
      reduce_max_op(),
      reduce_min_op(),
      arg_max_op(),
      arg_min_op(),
      equal_op(),
      less_op(),
      greater_op(),
      greater_or_equal_op(),
      less_or_equal_op(),
      not_op(),
      is_nan_op(),
      is_inf_op(),
      and_op(),
      or_op(),
      layer_normalization_op(),
      lstm_op(),
  };
}

constexpr auto kNumKinds = static_cast<std::size_t>(ir::OpKind::kCount);

/// Registry indexed by kind; every modelled kind must appear exactly once in all_ops().
const std::array<const OpDef*, kNumKinds>& table() {
  static const std::vector<OpDef> defs = all_ops();
  static const std::array<const OpDef*, kNumKinds> by_kind = [] {
    std::array<const OpDef*, kNumKinds> out{};
    for (const OpDef& def : defs) out[static_cast<std::size_t>(def.kind)] = &def;
    return out;
  }();
  return by_kind;
}

}  // namespace

const OpDef& op_def(ir::OpKind kind) {
  const OpDef* def = table().at(static_cast<std::size_t>(kind));
  if (!def) throw std::invalid_argument("no operator definition for kind " +
                                        std::to_string(static_cast<int>(kind)));
  return *def;
}

ir::OpKind kind_from_onnx(std::string_view op_type) {
  for (const OpDef* def : table()) {
    if (def && def->is_onnx && op_type == def->name) return def->kind;
  }
  return ir::OpKind::kOpaque;
}

ir::OpKind kind_from_name(std::string_view name) {
  for (const OpDef* def : table()) {
    if (def && name == def->name) return def->kind;
  }
  return ir::OpKind::kOpaque;
}

bool is_commutative(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::kAdd:
    case ir::OpKind::kMul:
    case ir::OpKind::kMax:
    case ir::OpKind::kMin:
    case ir::OpKind::kSum:
    case ir::OpKind::kMean:
    case ir::OpKind::kAnd:
    case ir::OpKind::kOr:
    case ir::OpKind::kEqual:
      return true;
    default:
      return false;
  }
}

const char* kind_name(ir::OpKind kind) {
  if (kind == ir::OpKind::kOpaque) return "Opaque";
  return op_def(kind).name;
}

InferResult infer_node(const ir::Graph& graph, ir::NodeId id) {
  const ir::Node& node = graph.node(id);
  std::vector<ir::TensorType> types;
  types.reserve(node.inputs.size());
  for (ir::ValueId input : node.inputs) {
    types.push_back(input == ir::kNoValue ? ir::TensorType{} : graph.value(input).type);
  }
  const OpDef& def = op_def(node.op);
  if (!is_runtime_form(def, types.size())) return def.infer(node, types);
  if (!def.infer_runtime) return InferResult::failure(std::string(def.name) + " has no run-time form");
  return def.infer_runtime(node, types);
}

}  // namespace graphsub::ops
