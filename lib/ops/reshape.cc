// Reshape: gives a tensor new dims with the same elements (ONNX Reshape, opsets 1, 5, 13 and 14).
#include <algorithm>
#include <iterator>

#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/op_list.h"

namespace graphsub::ops {
namespace {

/// Empty when `shape` is a valid target: entries >= -1, at most one -1, and with allowzero no 0
/// next to a -1 (ONNX leaves that undefined).
std::string check_shape(const std::vector<int64_t>& shape, int64_t allowzero) {
  if (allowzero != 0 && allowzero != 1) return "allowzero must be 0 or 1";
  if (std::any_of(shape.begin(), shape.end(), [](int64_t size) { return size < -1; })) {
    return "shape has a size below -1";
  }
  const auto inferred = std::count(shape.begin(), shape.end(), -1);
  if (inferred > 1) return "shape has more than one -1";
  if (allowzero && inferred && std::count(shape.begin(), shape.end(), 0)) {
    return "shape has both 0 and -1 while allowzero is set";
  }
  return {};
}

std::string canonicalize(ImportContext& context) {
  if (context.opset < 5) context.attrs.erase("consumed_inputs");  // Reshape-1's legacy hint.
  std::string reason = first_reason(
      {check_attributes(context.attrs, {{"shape", AttrType::kInts}, {"allowzero", AttrType::kInt}}),
       require_inputs(context, 1), require_outputs(context, 1), reject_strings(context)});
  if (!reason.empty()) return reason;
  context.attrs.set("allowzero", context.attrs.get_int("allowzero", 0));
  if (context.runtime_operands) return {};
  if (!context.attrs.has("shape")) return "the target shape is not a constant";
  return check_shape(context.attrs.get_ints("shape", {}), context.attrs.get_int("allowzero", 0));
}

/// The output dim for a shape entry other than -1 (which gets a placeholder): a size, or for 0
/// without allowzero the input dim at the same position.
ir::Dim resolve_dim(int64_t size, std::size_t i, const ir::Shape& in, bool allowzero,
                    std::string& error) {
  if (size != 0 || allowzero) return size < 0 ? ir::Dim{} : ir::Dim::known(size);
  if (!in.rank_known) return ir::Dim{};
  if (i >= in.rank()) error = "shape copies dim " + std::to_string(i) + " of " + ir::to_string(in);
  return i < in.rank() ? in.dims[i] : ir::Dim{};
}

/// Removes from `total` the symbols of `part` (a multiset difference); false when one is missing.
bool cancel_symbols(std::vector<std::string>& total, const std::vector<std::string>& part) {
  std::vector<std::string> rest;
  if (!std::includes(total.begin(), total.end(), part.begin(), part.end())) return false;
  std::set_difference(total.begin(), total.end(), part.begin(), part.end(),
                      std::back_inserter(rest));
  total = std::move(rest);
  return true;
}

/// The dim that a -1 stands for: the input's element count over the other output dims. Known
/// factors divide; symbols cancel; a single remaining symbol with nothing else stays that symbol.
ir::Dim inferred_dim(const ir::Shape& in, std::vector<ir::Dim> others, std::string& error) {
  DimProduct rest = product_of(others, 0, others.size());
  if (rest.known == 0) {
    error = "a -1 next to a zero-size dim is ambiguous";
    return ir::Dim{};
  }
  if (!in.rank_known) return ir::Dim{};
  DimProduct total = product_of(in.dims, 0, in.rank());
  if (total.unknown || rest.unknown) return ir::Dim{};
  if (!cancel_symbols(total.symbols, rest.symbols)) return ir::Dim{};
  if (total.known % rest.known != 0) {
    if (total.symbols.empty()) error = "cannot reshape " + ir::to_string(in) + " to that shape";
    return ir::Dim{};
  }
  total.known /= rest.known;
  return to_dim(total);
}

/// Sets `error` when the input and output element counts provably differ.
void check_counts(const ir::Shape& in, const ir::Shape& out, std::string& error) {
  if (!in.rank_known) return;
  DimProduct a = product_of(in.dims, 0, in.rank());
  DimProduct b = product_of(out.dims, 0, out.rank());
  if (a.unknown || b.unknown || a.symbols != b.symbols || a.known == b.known) return;
  error = "cannot reshape " + ir::to_string(in) + " to " + ir::to_string(out);
}

InferResult infer(const ir::Node& node, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 1) return InferResult::failure("Reshape takes one data input");
  const std::vector<int64_t> shape = node.attrs.get_ints("shape", {});
  const bool allowzero = node.attrs.get_int("allowzero", 0) != 0;
  std::string error = check_shape(shape, allowzero);
  const ir::Shape& in = inputs[0].shape;
  ir::Shape out;
  out.rank_known = true;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    out.dims.push_back(resolve_dim(shape[i], i, in, allowzero, error));
  }
  auto minus_one = std::find(shape.begin(), shape.end(), -1);
  if (error.empty() && minus_one != shape.end()) {
    std::vector<ir::Dim> others = out.dims;
    others.erase(others.begin() + (minus_one - shape.begin()));
    out.dims[minus_one - shape.begin()] = inferred_dim(in, std::move(others), error);
  }
  if (error.empty()) check_counts(in, out, error);
  if (!error.empty()) return InferResult::failure(error);
  return InferResult{{ir::TensorType{inputs[0].dtype, out}}, {}};
}

/// The run-time form (data, shape): as many dims as the shape operand has entries, sizes unknown.
InferResult infer_runtime(const ir::Node&, const std::vector<ir::TensorType>& inputs) {
  if (inputs.size() != 2) return InferResult::failure("Reshape takes data and shape");
  const ir::TensorType& shape = inputs[1];
  if (shape.dtype != ir::DataType::kInt64 || (shape.shape.rank_known && shape.shape.rank() != 1)) {
    return InferResult::failure("the shape operand must be a 1-D int64 tensor");
  }
  ir::Shape out;
  if (shape.shape.rank_known && shape.shape.dims[0].is_known()) {
    out.rank_known = true;
    out.dims.resize(static_cast<std::size_t>(shape.shape.dims[0].value));
  }
  return InferResult{{ir::TensorType{inputs[0].dtype, out}}, {}};
}

}  // namespace

OpDef reshape_op() {
  OpDef def{ir::OpKind::kReshape, "Reshape", true, 1, {{1, "shape", 5, false}},
            canonicalize, infer, copy_kernel, no_cost_features};
  def.infer_runtime = infer_runtime;
  return def;
}

}  // namespace graphsub::ops
