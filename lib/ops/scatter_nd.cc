// ScatterND: a copy of data with the slices that tuples of leading indices name replaced by (or,
// with a reduction, combined with) slices of updates (ONNX ScatterND, opsets 11 to 18; reduction
// add and mul since 16, max and min since 18).
#include <algorithm>
#include <cstring>
#include <optional>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/indexing.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// The first opset that defines `reduction`, or nullopt when ONNX defines no such reduction.
std::optional<int64_t> reduction_since(const std::string& reduction) {
  if (reduction == "none") return 11;
  if (reduction == "add" || reduction == "mul") return 16;
  if (reduction == "max" || reduction == "min") return 18;
  return std::nullopt;
}

/// True for the element types the reductions combine (the kernel's arithmetic).
bool reducible(ir::DataType dtype) {
  return dtype == ir::DataType::kFloat || dtype == ir::DataType::kDouble || dtype == ir::DataType::kInt32 ||
         dtype == ir::DataType::kInt64;
}

/// Empty when the attributes are at most a known reduction of the node's opset, which (other than
/// "none") needs an element type the kernel combines.
std::string check_reduction(const ImportContext& context) {
  for (const auto& [name, value] : context.attrs.items()) {
    if (name != "reduction") return "attribute '" + name + "' is not modelled";
    if (!std::holds_alternative<std::string>(value)) return "reduction is not a string";
  }
  const std::string reduction = context.attrs.get_string("reduction", "none");
  const std::optional<int64_t> since = reduction_since(reduction);
  if (!since || context.opset < *since) {
    return "reduction '" + reduction + "' is not defined at opset " + std::to_string(context.opset);
  }
  const ir::DataType dtype = context.input_types[0].dtype;
  if (reduction != "none" && !reducible(dtype)) {
    return "reduction '" + reduction + "' of " + ir::to_string(dtype) + " is not modelled";
  }
  return {};
}

/// Empty when `dtype` is int64 (or not known yet), the one index type ONNX ScatterND takes.
std::string index_type_error(ir::DataType dtype) {
  if (dtype == ir::DataType::kUndefined || dtype == ir::DataType::kInt64) return {};
  return "indices must be int64, not " + ir::to_string(dtype);
}

/// Fills the default reduction "none".
std::string canonicalize(ImportContext& context) {
  std::string reason = first_reason({require_inputs(context, 3), require_outputs(context, 1)});
  if (!reason.empty()) return reason;
  reason = first_reason({reject_strings(context), check_reduction(context),
                         index_type_error(context.input_types[1].dtype)});
  if (!reason.empty()) return reason;
  context.attrs.set("reduction", context.attrs.get_string("reduction", "none"));
  return {};
}

/// Empty when updates has the shape indices[:-1] + data[depth:], as far as the shapes are known.
std::string check_shapes(const ir::Shape& data, const ir::Shape& indices, const ir::Shape& updates) {
  if (!data.rank_known || !indices.rank_known || indices.rank() == 0 || !indices.dims.back().is_known()) return {};
  const int64_t depth = indices.dims.back().value;
  if (depth < 1 || depth > static_cast<int64_t>(data.rank())) {
    return "index tuples of length " + std::to_string(depth) + " do not fit data " + ir::to_string(data);
  }
  if (!updates.rank_known) return {};
  std::vector<ir::Dim> expected(indices.dims.begin(), indices.dims.end() - 1);
  expected.insert(expected.end(), data.dims.begin() + depth, data.dims.end());
  bool fits = expected.size() == updates.rank();
  for (std::size_t i = 0; fits && i < expected.size(); ++i) {
    const ir::Dim& a = expected[i];
    const ir::Dim& b = updates.dims[i];
    fits = !(a.is_known() && b.is_known() && a.value != b.value);
  }
  if (fits) return {};
  return "updates " + ir::to_string(updates) + " do not fit data " + ir::to_string(data) + " and indices " +
         ir::to_string(indices);
}

/// The data's type.
InferResult infer(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 3) return InferResult::failure("ScatterND takes data, indices and updates");
  std::string error = first_reason({index_type_error(inputs[1].dtype),
                                    check_shapes(inputs[0].shape, inputs[1].shape, inputs[2].shape)});
  if (!error.empty()) return InferResult::failure(error);
  if (inputs[2].dtype != ir::DataType::kUndefined && inputs[0].dtype != ir::DataType::kUndefined &&
      inputs[2].dtype != inputs[0].dtype) {
    return InferResult::failure("updates are " + ir::to_string(inputs[2].dtype) + ", data " +
                                ir::to_string(inputs[0].dtype));
  }
  return InferResult{{inputs[0]}, {}};
}

/// Combines `count` elements of `from` into `into` by `op`.
template <class T, class Op>
void combine(Op op, const std::byte* from, std::byte* into, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, into + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    std::memcpy(&b, from + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    const T out = op(a, b);
    std::memcpy(into + i * static_cast<int64_t>(sizeof(T)), &out, sizeof(T));
  }
}

/// Combines `count` elements by `reduction` (add, mul, max or min), chosen once per slice.
template <class T>
void combine(const std::string& reduction, const std::byte* from, std::byte* into, int64_t count) {
  if (reduction == "add") return combine<T>([](T a, T b) { return static_cast<T>(a + b); }, from, into, count);
  if (reduction == "mul") return combine<T>([](T a, T b) { return static_cast<T>(a * b); }, from, into, count);
  if (reduction == "max") return combine<T>([](T a, T b) { return std::max(a, b); }, from, into, count);
  combine<T>([](T a, T b) { return std::min(a, b); }, from, into, count);
}

void combine_slice(ir::DataType dtype, const std::string& reduction, const std::byte* from, std::byte* into,
                   int64_t count) {
  switch (dtype) {
    case ir::DataType::kFloat: return combine<float>(reduction, from, into, count);
    case ir::DataType::kDouble: return combine<double>(reduction, from, into, count);
    case ir::DataType::kInt32: return combine<int32_t>(reduction, from, into, count);
    case ir::DataType::kInt64: return combine<int64_t>(reduction, from, into, count);
    default: throw Error("ScatterND reduction '" + reduction + "' of " + ir::to_string(dtype) + " is not modelled");
  }
}

/// Copies data, then, tuple by tuple in order, writes (or combines) the slice of updates into the
/// slice the tuple names.
void kernel(const ir::Node& node, const std::vector<const ir::Tensor*>& inputs,
            std::vector<ir::Tensor>& outputs) {
  const ir::Tensor& data = *inputs[0];
  const std::vector<int64_t>& sizes = data.dims();
  const std::vector<int64_t>& index_sizes = inputs[1]->dims();
  if (index_sizes.empty() || index_sizes.back() < 1 || index_sizes.back() > static_cast<int64_t>(sizes.size())) {
    throw Error("ScatterND index tuples do not fit the data");
  }
  const std::vector<int64_t> indices = inputs[1]->to_int64s();
  const auto depth = static_cast<std::size_t>(index_sizes.back());
  const std::vector<int64_t> strides = strides_of(sizes);
  const auto element = static_cast<int64_t>(ir::element_size(data.dtype()));
  const int64_t slice_elements = product_of_sizes(sizes, depth, sizes.size());
  const int64_t tuples = static_cast<int64_t>(indices.size() / depth);
  if (inputs[2]->num_elements() != tuples * slice_elements) throw Error("ScatterND updates do not fit the indices");
  const std::string reduction = node.attrs.get_string("reduction", "none");
  std::byte* out = outputs[0].mutable_bytes();
  if (data.num_elements() > 0) std::memcpy(out, data.bytes(), static_cast<std::size_t>(data.num_elements() * element));
  const std::byte* update = inputs[2]->bytes();
  for (int64_t t = 0; t < tuples; ++t, update += slice_elements * element) {
    int64_t offset = 0;
    for (std::size_t j = 0; j < depth; ++j) {
      offset += checked_index(indices[static_cast<std::size_t>(t) * depth + j], sizes[j], "ScatterND") * strides[j];
    }
    if (reduction == "none") {
      if (slice_elements > 0) std::memcpy(out + offset * element, update, static_cast<std::size_t>(slice_elements * element));
    } else {
      combine_slice(data.dtype(), reduction, update, out + offset * element, slice_elements);
    }
  }
}

/// Data, indices and updates are read, the output written.
CostFeatures features(const ir::Node&, const std::vector<ir::TensorType>& inputs,
                      const std::vector<ir::TensorType>& outputs) {
  return elementwise_features(inputs, outputs, 0);
}

}  // namespace

OpDef scatter_nd_op() {
  return OpDef{ir::OpKind::kScatterND, "ScatterND", true, 11, {}, canonicalize, infer, kernel, features};
}

}  // namespace graphsub::ops
