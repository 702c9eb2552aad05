// Helpers shared by operator definitions.
#include "ops/common.h"

#include <algorithm>

namespace graphsub::ops {

std::optional<Activation> parse_activation(const std::string& name) {
  if (name == "none") return Activation::kNone;
  if (name == "relu") return Activation::kRelu;
  if (name == "sigmoid") return Activation::kSigmoid;
  if (name == "tanh") return Activation::kTanh;
  return std::nullopt;
}

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

namespace {

ir::Dim broadcast_dim(const ir::Dim& a, const ir::Dim& b, bool& ok) {
  if (a.is_known() && a.value == 1) return b;
  if (b.is_known() && b.value == 1) return a;
  if (a == b) return a;
  if (a.is_known() && b.is_known()) {
    ok = false;
    return a;
  }
  // One side symbolic or unknown, the other a size other than 1: the result is that size if the
  // program is valid; an unknown combined with a symbol stays unknown.
  if (a.is_known()) return a;
  if (b.is_known()) return b;
  return ir::Dim{};
}

}  // namespace

ir::Shape broadcast_shapes(const ir::Shape& a, const ir::Shape& b, std::string& error) {
  if (!a.rank_known || !b.rank_known) return ir::Shape::unknown();
  const std::size_t rank = std::max(a.rank(), b.rank());
  ir::Shape out;
  out.rank_known = true;
  out.dims.resize(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const ir::Dim one = ir::Dim::known(1);
    const ir::Dim& da = i < rank - a.rank() ? one : a.dims[i - (rank - a.rank())];
    const ir::Dim& db = i < rank - b.rank() ? one : b.dims[i - (rank - b.rank())];
    bool ok = true;
    out.dims[i] = broadcast_dim(da, db, ok);
    if (!ok) {
      error = "shapes " + ir::to_string(a) + " and " + ir::to_string(b) + " do not broadcast";
      return ir::Shape::unknown();
    }
  }
  return out;
}

std::vector<int64_t> broadcast_sizes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * sizes[i];
  return strides;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_sizes,
                                       const std::vector<int64_t>& out_sizes) {
  std::vector<int64_t> in_strides = strides_of(in_sizes);
  std::vector<int64_t> out(out_sizes.size(), 0);
  const std::size_t offset = out_sizes.size() - in_sizes.size();
  for (std::size_t i = 0; i < in_sizes.size(); ++i) {
    out[offset + i] = in_sizes[i] == 1 ? 0 : in_strides[i];
  }
  return out;
}

double elements_or_one(const ir::TensorType& type) {
  double count = 1;
  for (const ir::Dim& dim : type.shape.dims) count *= dim.is_known() ? static_cast<double>(dim.value) : 1.0;
  return count;
}

double bytes_or_one(const ir::TensorType& type) {
  std::size_t size = ir::element_size(type.dtype);
  return elements_or_one(type) * static_cast<double>(size ? size : 4);
}

CostFeatures elementwise_features(const std::vector<ir::TensorType>& inputs,
                                  const std::vector<ir::TensorType>& outputs,
                                  double flops_per_element) {
  CostFeatures features;
  for (const ir::TensorType& type : inputs) features.bytes_read += bytes_or_one(type);
  for (const ir::TensorType& type : outputs) {
    features.bytes_written += bytes_or_one(type);
    features.flops += flops_per_element * elements_or_one(type);
  }
  return features;
}

std::string require_dtypes(const ImportContext& context, const std::vector<ir::DataType>& allowed) {
  for (const ir::TensorType& type : context.input_types) {
    if (type.dtype == ir::DataType::kUndefined) continue;
    if (std::find(allowed.begin(), allowed.end(), type.dtype) == allowed.end()) {
      return "element type " + ir::to_string(type.dtype) + " has no reference kernel";
    }
  }
  return {};
}

std::string require_outputs(const ImportContext& context, int expected) {
  if (context.num_outputs == expected) return {};
  return "the node uses " + std::to_string(context.num_outputs) + " outputs; graphsub models " +
         std::to_string(expected);
}

}  // namespace graphsub::ops
