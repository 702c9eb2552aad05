// GatherND: picks slices of data by tuples of leading indices, the first batch_dims axes of data
// and indices paired (ONNX GatherND, opsets 11, 12 and 13; batch_dims since 12).
#include <cstring>
#include <optional>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `dtype` is int64 (or not known yet), the one index type ONNX GatherND takes.
std::string index_type_error(ir::DataType dtype) {
  if (dtype == ir::DataType::kUndefined || dtype == ir::DataType::kInt64) return {};
  return "indices must be int64, not " + ir::to_string(dtype);
}

/// Empty when `batch_dims` is not negative and below both ranks, as far as they are known.
std::string batch_dims_error(int64_t batch_dims, std::optional<int64_t> data_rank,
                             std::optional<int64_t> indices_rank) {
  const std::string name = "batch_dims " + std::to_string(batch_dims);
  if (batch_dims < 0) return name + " is negative";
  for (std::optional<int64_t> rank : {data_rank, indices_rank}) {
    if (rank && batch_dims >= *rank) return name + " is not below the rank " + std::to_string(*rank);
  }
  return {};
}

/// Empty unless the node sets batch_dims before opset 12, which did not define it.
std::string reject_batch_dims_before_12(const ImportContext& context) {
  if (context.opset >= 12 || !context.attrs.has("batch_dims")) return {};
  return "batch_dims is defined from opset 12";
}

/// Fills the default batch_dims 0 and checks it against the ranks where they are known.
std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({check_attributes(context.attrs, {{"batch_dims", AttrType::kInt}}),
                                     require_inputs(context, 2), require_outputs(context, 1),
                                     reject_strings(context), reject_batch_dims_before_12(context)});
  if (!reason.empty()) return reason;
  const int64_t batch_dims = context.attrs.get_int("batch_dims", 0);
  reason = first_reason({index_type_error(context.input_types[1].dtype),
                         batch_dims_error(batch_dims, rank_of(context.input_types[0]),
                                          rank_of(context.input_types[1]))});
  if (!reason.empty()) return reason;
  context.attrs.set("batch_dims", batch_dims);
  return {};
}

/// Index tuples of `depth` (1 to the data's rank past the batch) and batch dims that agree.
std::string check_shapes(const ir::Shape& data, const ir::Shape& indices, int64_t batch_dims, int64_t depth) {
  if (depth < 1 || depth > static_cast<int64_t>(data.rank()) - batch_dims) {
    return "index tuples of length " + std::to_string(depth) + " do not fit data " + ir::to_string(data) +
           " past " + std::to_string(batch_dims) + " batch dims";
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(batch_dims); ++i) {
    const ir::Dim& have = data.dims[i];
    const ir::Dim& want = indices.dims[i];
    if (have.is_known() && want.is_known() && have.value != want.value) {
      return "data " + ir::to_string(data) + " and indices " + ir::to_string(indices) +
             " differ in batch dims";
    }
  }
  return {};
}

/// Of two dims that must be equal, the better known: a size, else a symbol, else unknown.
const ir::Dim& better_known(const ir::Dim& a, const ir::Dim& b) {
  return a.is_known() || (a.is_symbolic() && !b.is_known()) ? a : b;
}

/// indices[:-1] + data[batch_dims + depth:], each batch dim the better known of the pair.
ir::Shape gathered_shape(const ir::Shape& data, const ir::Shape& indices, int64_t batch_dims, int64_t depth) {
  ir::Shape out{true, {indices.dims.begin(), indices.dims.end() - 1}};
  for (std::size_t i = 0; i < static_cast<std::size_t>(batch_dims); ++i) {
    out.dims[i] = better_known(indices.dims[i], data.dims[i]);
  }
  out.dims.insert(out.dims.end(), data.dims.begin() + batch_dims + depth, data.dims.end());
  return out;
}

/// indices[:-1] + data[batch_dims + depth:] with the data's type; unknown rank until the ranks and
/// the tuple length `depth` (the indices' last dim) are known.
InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("GatherND takes data and indices");
  const ir::TensorType& data = inputs[0];
  const ir::TensorType& indices = inputs[1];
  const int64_t batch_dims = node.attrs.get_int("batch_dims", 0);
  std::string error = first_reason(
      {index_type_error(indices.dtype), batch_dims_error(batch_dims, rank_of(data), rank_of(indices))});
  if (!error.empty()) return InferResult::failure(error);
  if (!data.shape.rank_known || !indices.shape.rank_known || !indices.shape.dims.back().is_known()) {
    return InferResult{{ir::TensorType{data.dtype, ir::Shape::unknown()}}, {}};
  }
  const int64_t depth = indices.shape.dims.back().value;
  error = check_shapes(data.shape, indices.shape, batch_dims, depth);
  if (!error.empty()) return InferResult::failure(error);
  const ir::Shape out = gathered_shape(data.shape, indices.shape, batch_dims, depth);
  return InferResult{{ir::TensorType{data.dtype, out}}, {}};
}

/// The element offset, within its batch, of the slice that the `depth` indices at `tuple` name.
int64_t slice_offset(const int64_t* tuple, std::size_t depth, std::size_t batch_dims,
                     const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (std::size_t j = 0; j < depth; ++j) {
    offset += checked_index(tuple[j], sizes[batch_dims + j], "GatherND") * strides[batch_dims + j];
  }
  return offset;
}

/// For each index tuple, in order, copies the slice it names from the data of its batch.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& data = *inputs[0];
  const std::vector<int64_t>& sizes = data.dims();
  const std::vector<int64_t>& index_sizes = inputs[1]->dims();
  const std::vector<int64_t> indices = inputs[1]->to_int64s();
  const auto batch_dims = static_cast<std::size_t>(node.attrs.get_int("batch_dims", 0));
  const auto depth = static_cast<std::size_t>(index_sizes.back());
  const std::vector<int64_t> strides = strides_of(sizes);
  const int64_t batch = product_of_sizes(sizes, batch_dims, sizes.size());
  const int64_t tuples_per_batch = product_of_sizes(index_sizes, batch_dims, index_sizes.size() - 1);
  const auto element = static_cast<int64_t>(ir::element_size(data.dtype()));
  const int64_t slice = product_of_sizes(sizes, batch_dims + depth, sizes.size()) * element;
  std::byte* out = outputs[0].mutable_bytes();
  for (std::size_t t = 0; t < indices.size() / depth; ++t) {
    const int64_t from = static_cast<int64_t>(t) / tuples_per_batch * batch +
                         slice_offset(indices.data() + t * depth, depth, batch_dims, sizes, strides);
    if (slice > 0) std::memcpy(out, data.bytes() + from * element, static_cast<std::size_t>(slice));
    out += slice;
  }
}

}  // namespace

OpDef gather_nd_op() {
  return OpDef{ir::OpKind::kGatherND, "GatherND", true, 11, {}, canonicalize, infer, kernel, gather_features};
}

}  // namespace graphsub::ops
