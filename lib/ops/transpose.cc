// Transpose: permutes the axes of a tensor (ONNX Transpose, opsets 1 and 13).
#include <cstring>
#include <numeric>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `perm` is a permutation of [0, perm.size()).
std::string check_perm(const std::vector<int64_t>& perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(perm.size()) || seen[axis]) {
      return "perm " + ir::to_string(ir::AttrValue{perm}) + " is not a permutation";
    }
    seen[axis] = true;
  }
  return {};
}

std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({check_attributes(context.attrs, {{"perm", AttrType::kInts}}),
                                     require_inputs(context, 1), require_outputs(context, 1),
                                     reject_strings(context)});
  if (!reason.empty()) return reason;
  std::optional<int64_t> rank = rank_of(context.input_types[0]);
  if (!context.attrs.has("perm")) {
    if (!rank) return "the default perm needs the input rank";
    std::vector<int64_t> reversed(static_cast<std::size_t>(*rank));
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    context.attrs.set("perm", reversed);
  }
  std::vector<int64_t> perm = context.attrs.get_ints("perm", {});
  if (rank && *rank != static_cast<int64_t>(perm.size())) return "perm does not fit the input rank";
  return check_perm(perm);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Transpose takes one input");
  const std::vector<int64_t> perm = node.attrs.get_ints("perm", {});
  std::string error = check_perm(perm);
  if (!error.empty()) return InferResult::failure(error);
  const ir::Shape& in = inputs[0].shape;
  ir::Shape out;
  out.rank_known = true;
  out.dims.resize(perm.size());
  if (in.rank_known) {
    if (in.rank() != perm.size()) return InferResult::failure("perm does not match the input rank");
    for (std::size_t i = 0; i < perm.size(); ++i) out.dims[i] = in.dims[perm[i]];
  }
  return InferResult{{ir::TensorType{inputs[0].dtype, out}}, {}};
}

/// Steps a row-major multi-index over `sizes` by one, moving `offset` along `strides`.
void advance(std::vector<int64_t>& index, int64_t& offset, const std::vector<int64_t>& sizes,
             const std::vector<int64_t>& strides) {
  for (std::size_t axis = index.size(); axis-- > 0;) {
    offset += strides[axis];
    if (++index[axis] < sizes[axis]) return;
    offset -= strides[axis] * sizes[axis];
    index[axis] = 0;
  }
}

void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& input = *inputs[0];
  ir::Tensor& output = outputs[0];
  const std::vector<int64_t> perm = node.attrs.get_ints("perm", {});
  const std::vector<int64_t> in_strides = strides_of(input.dims());
  std::vector<int64_t> strides(perm.size());  // Input stride along each output axis.
  for (std::size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[perm[i]];
  const std::size_t size = ir::element_size(input.dtype());
  std::vector<int64_t> index(perm.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < output.num_elements(); ++i) {
    std::memcpy(output.mutable_bytes() + i * size, input.bytes() + offset * size, size);
    advance(index, offset, output.dims(), strides);
  }
}

}  // namespace

OpDef transpose_op() {
  return OpDef{ir::OpKind::kTranspose, "Transpose", true, 1, {},
               canonicalize, infer, kernel, copy_features};
}

}  // namespace graphsub::ops
