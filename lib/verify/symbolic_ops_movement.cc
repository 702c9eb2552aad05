// Symbolic data movement and constants: the ops' own reference kernels run on element numbers.
#include <string>
#include <vector>

#include "runtime/cpu_executor.h"
#include "verify/symbolic_ops.h"

namespace graphsub::verify::symbolic {
namespace {

/// The largest element number a float32 holds exactly (2^24).
constexpr int64_t kMaxNumber = int64_t{1} << 24;

/// True for the inputs an op reads as numbers rather than moving them: indices and shapes.
bool reads_as_numbers(ir::OpKind kind, std::size_t index) {
  return (kind == ir::OpKind::kExpand || kind == ir::OpKind::kGather) && index == 1;
}

/// Numbers the elements of symbolic tensors: each element gets a distinct float32 id from 1 on,
/// and 0 stands for `fill` (what a kernel writes where it copies no input).
class Numbering {
 public:
  explicit Numbering(const z3::expr& fill) : by_id_{fill} {}

  /// A float32 tensor of `tensor`'s dims holding the ids of its elements.
  ir::Tensor ids_of(const SymTensor& tensor) {
    ir::Tensor ids(ir::DataType::kFloat, tensor.dims);
    if (static_cast<int64_t>(by_id_.size()) + tensor.size() > kMaxNumber) {
      throw NoSemantics("too many elements to number exactly");
    }
    for (int64_t i = 0; i < tensor.size(); ++i) {
      ids.mutable_data<float>()[i] = static_cast<float>(by_id_.size());
      by_id_.push_back(tensor.elements[i]);
    }
    return ids;
  }

  /// The symbolic tensor whose elements are those the ids of `ids` stand for.
  SymTensor read(const ir::Tensor& ids) const {
    return generate(ids.dims(),
                    [&](int64_t i) { return by_id_.at(static_cast<std::size_t>(ids.element_as_double(i))); });
  }

 private:
  std::vector<z3::expr> by_id_;
};

/// Runs `node`'s kernel on `tensors`, where an empty tensor (no element type) is an omitted input.
std::vector<ir::Tensor> run_kernel(const ir::Node& node, const std::vector<ir::Tensor>& tensors) {
  std::vector<const ir::Tensor*> pointers;
  for (const ir::Tensor& tensor : tensors) {
    pointers.push_back(tensor.dtype() == ir::DataType::kUndefined ? nullptr : &tensor);
  }
  return runtime::CpuExecutor::run_node(node, pointers);
}

/// "Gather's input 1", for messages.
std::string input_label(const OpCall& call, std::size_t index) {
  return call.op_name() + "'s input " + std::to_string(index);
}

/// What the kernel gets for input `index`: the numbers it reads, the ids of the elements it
/// moves, or nothing for an omitted input.
ir::Tensor kernel_input(const OpCall& call, std::size_t index, Numbering& numbering) {
  if (!call.has_input(index)) return {};
  if (reads_as_numbers(call.node.op, index)) {
    return numbers_of(call.input(index), ir::DataType::kInt64, input_label(call, index));
  }
  return numbering.ids_of(call.input(index));
}

/// `node`'s kernel run on the element ids of the call's inputs; each output element is the input
/// element whose id it holds.
std::vector<SymTensor> run_numbered(const OpCall& call, const ir::Node& node, const z3::expr& fill) {
  Numbering numbering(fill);
  std::vector<ir::Tensor> tensors;
  for (std::size_t i = 0; i < call.inputs.size(); ++i) tensors.push_back(kernel_input(call, i, numbering));
  std::vector<SymTensor> outputs;
  for (const ir::Tensor& ids : run_kernel(node, tensors)) outputs.push_back(numbering.read(ids));
  return outputs;
}

/// The kernel's outputs on `tensors`, as exact numbers.
std::vector<SymTensor> folded(const OpCall& call, const std::vector<ir::Tensor>& tensors) {
  std::vector<SymTensor> outputs;
  for (const ir::Tensor& output : run_kernel(call.node, tensors)) {
    outputs.push_back(call.semantics.constant(output));
  }
  return outputs;
}

/// Every input as the numbers it holds, converted to `dtype`.
std::vector<ir::Tensor> all_numbers(const OpCall& call, ir::DataType dtype) {
  std::vector<ir::Tensor> tensors;
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    tensors.push_back(numbers_of(call.input(i), dtype, input_label(call, i)));
  }
  return tensors;
}

}  // namespace

std::vector<SymTensor> movement(const OpCall& call) {
  return run_numbered(call, call.node, call.semantics.context().real_val(0));
}

std::vector<SymTensor> resize_nearest(const OpCall& call) {
  if (call.node.attrs.get_string("mode", "nearest") != "nearest") {
    throw NoSemantics("Resize in mode " + call.node.attrs.get_string("mode", "") + " interpolates");
  }
  return movement(call);
}

std::vector<SymTensor> pad(const OpCall& call) {
  const bool constant_mode = call.node.attrs.get_string("mode", "constant") == "constant";
  const float value = constant_mode ? call.node.attrs.get_float("value", 0) : 0.0f;
  ir::Node zero_filled = call.node;
  zero_filled.attrs.set("value", 0.0f);
  return run_numbered(call, zero_filled, call.semantics.number(value));
}

std::vector<SymTensor> shape(const OpCall& call) {
  return folded(call, {ir::Tensor(ir::DataType::kFloat, call.input(0).dims)});
}

std::vector<SymTensor> constant_of_shape(const OpCall& call) {
  return folded(call, all_numbers(call, ir::DataType::kInt64));
}

std::vector<SymTensor> range(const OpCall& call) {
  return folded(call, all_numbers(call, call.output_types.at(0).dtype));
}

std::vector<SymTensor> constant(const OpCall& call) { return folded(call, {}); }

std::vector<SymTensor> const_pool(const OpCall& call) {
  const int64_t count = ir::num_elements(call.node.attrs.get_ints("kernel_shape", {}));
  const z3::expr weight = exact_inverse(call.semantics.context().real_val(count));
  return {generate(call.output_dims(0), [&](int64_t) { return weight; })};
}

}  // namespace graphsub::verify::symbolic
