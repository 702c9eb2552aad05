// The CUDA executor: planning a graph into steps on one stream, and running them.
#include "runtime/cuda/cuda_executor.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <set>

#include "ir/error.h"
#include "ops/common.h"
#include "ops/data_movement.h"
#include "ops/operands.h"
#include "ops/registry.h"
#include "runtime/cuda/conv_plan.h"
#include "runtime/cuda/cuda_context.h"
#include "runtime/cuda/kernels.h"

namespace graphsub::runtime::cuda {
namespace {

using ir::DataType;
using ir::OpKind;
using Sizes = std::vector<int64_t>;

std::string version_text(int version, int major_unit, int minor_unit) {
  return std::to_string(version / major_unit) + "." + std::to_string(version % major_unit / minor_unit);
}

std::string op_label(const ir::Node& node) {
  return node.op == OpKind::kOpaque ? node.opaque->op_type : ops::kind_name(node.op);
}

/// Row-major element steps of `sizes`.
Sizes dense_steps(const Sizes& sizes) {
  Sizes steps(sizes.size(), 1);
  for (std::size_t i = sizes.size(); i-- > 1;) steps[i - 1] = steps[i] * sizes[i];
  return steps;
}

Dims dims_of(const Sizes& sizes) {
  Dims dims;
  dims.rank = static_cast<int>(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) dims.size[i] = sizes[i];
  return dims;
}

/// The steps through an operand of `sizes` for each dim of the broadcast output `out`.
Strides broadcast_steps(const Sizes& sizes, const Sizes& out) {
  Strides strides;
  const Sizes steps = dense_steps(sizes);
  const std::size_t shift = out.size() - sizes.size();
  for (std::size_t i = 0; i < sizes.size(); ++i) strides.step[shift + i] = sizes[i] == 1 ? 0 : steps[i];
  return strides;
}

int64_t product(const Sizes& sizes, std::size_t begin, std::size_t end) {
  int64_t total = 1;
  for (std::size_t i = begin; i < end && i < sizes.size(); ++i) total *= sizes[i];
  return total;
}

std::optional<UnaryOp> unary_op(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu: return UnaryOp::kRelu;
    case OpKind::kSigmoid: return UnaryOp::kSigmoid;
    case OpKind::kTanh: return UnaryOp::kTanh;
    case OpKind::kExp: return UnaryOp::kExp;
    case OpKind::kLog: return UnaryOp::kLog;
    case OpKind::kNeg: return UnaryOp::kNeg;
    case OpKind::kAbs: return UnaryOp::kAbs;
    case OpKind::kSqrt: return UnaryOp::kSqrt;
    case OpKind::kReciprocal: return UnaryOp::kReciprocal;
    case OpKind::kErf: return UnaryOp::kErf;
    case OpKind::kFloor: return UnaryOp::kFloor;
    case OpKind::kCeil: return UnaryOp::kCeil;
    case OpKind::kSin: return UnaryOp::kSin;
    case OpKind::kCos: return UnaryOp::kCos;
    case OpKind::kSign: return UnaryOp::kSign;
    case OpKind::kLeakyRelu: return UnaryOp::kLeakyRelu;
    case OpKind::kElu: return UnaryOp::kElu;
    case OpKind::kSoftplus: return UnaryOp::kSoftplus;
    case OpKind::kHardSigmoid: return UnaryOp::kHardSigmoid;
    case OpKind::kHardSwish: return UnaryOp::kHardSwish;
    case OpKind::kClip: return UnaryOp::kClip;
    case OpKind::kGelu: return UnaryOp::kGelu;
    default: return std::nullopt;
  }
}

std::optional<BinaryOp> binary_op(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd: case OpKind::kSum: return BinaryOp::kAdd;
    case OpKind::kSub: return BinaryOp::kSub;
    case OpKind::kMul: case OpKind::kSMul: return BinaryOp::kMul;
    case OpKind::kDiv: return BinaryOp::kDiv;
    case OpKind::kPow: return BinaryOp::kPow;
    case OpKind::kMax: return BinaryOp::kMax;
    case OpKind::kMin: return BinaryOp::kMin;
    case OpKind::kPRelu: return BinaryOp::kPRelu;
    default: return std::nullopt;
  }
}

std::optional<ReduceOp> reduce_op(OpKind kind) {
  switch (kind) {
    case OpKind::kReduceSum: return ReduceOp::kSum;
    case OpKind::kReduceMean: return ReduceOp::kMean;
    case OpKind::kReduceMax: return ReduceOp::kMax;
    case OpKind::kReduceMin: return ReduceOp::kMin;
    default: return std::nullopt;
  }
}

/// Ops whose every output element is a copy of one element of their one run-time input (the
/// others constant): they run as a gather through an index map the reference kernel computes.
bool is_index_map_op(const ir::Node& node) {
  switch (node.op) {
    case OpKind::kSlice: case OpKind::kSplit: case OpKind::kTile: case OpKind::kGather:
    case OpKind::kGatherElements: case OpKind::kTranspose: case OpKind::kExpand:
      return true;
    case OpKind::kPad:
      return node.attrs.get_string("mode", "constant") != "constant";
    case OpKind::kResize:
      return node.attrs.get_string("mode", "nearest") == "nearest";
    default:
      return false;
  }
}

/// Ops that only relabel their input's dims: the output shares the input's buffer.
bool is_alias_op(const ir::Node& node, DataType in, DataType out) {
  return ops::aliases_input(node) || (node.op == OpKind::kCast && in == out);
}

/// A run-time input filled with its own element indices, for computing index maps.
std::optional<ir::Tensor> iota(DataType dtype, const Sizes& sizes) {
  ir::Tensor tensor(dtype, sizes);
  const int64_t n = tensor.num_elements();
  if (dtype == DataType::kInt64) {
    std::iota(tensor.mutable_data<int64_t>(), tensor.mutable_data<int64_t>() + n, int64_t{0});
  } else if (dtype == DataType::kFloat && n <= (int64_t{1} << 24)) {
    std::iota(tensor.mutable_data<float>(), tensor.mutable_data<float>() + n, 0.0f);
  } else {
    return std::nullopt;
  }
  return tensor;
}

}  // namespace

std::optional<DeviceInfo> device_info(std::string* why) {
  try {
    Context& ctx = context();
    cudaDeviceProp props{};
    check_cuda(cudaGetDeviceProperties(&props, 0), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0, cublas = 0;
    check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    check_cublas(cublasGetVersion(ctx.cublas, &cublas), "cublasGetVersion");
    const auto cudnn = static_cast<int>(cudnnGetVersion());
    return DeviceInfo{props.name, version_text(driver, 1000, 10), version_text(runtime, 1000, 10),
                      std::to_string(cudnn / 10000) + "." + std::to_string(cudnn % 10000 / 100) + "." +
                          std::to_string(cudnn % 100),
                      std::to_string(cublas / 10000) + "." + std::to_string(cublas % 10000 / 100) + "." +
                          std::to_string(cublas % 100),
                      props.multiProcessorCount};
  } catch (const Error& error) {
    if (why) *why = error.what();
    return std::nullopt;
  }
}

/// A value as the plan knows it: concrete type, the host tensor when it is known before the run
/// (a weight, or computed from weights and shapes at planning), and its device memory.
struct Slot;

/// Copies `bytes` between host and device on `stream` (nothing for none: CUDA refuses a null
/// pointer even for an empty copy).
void copy_async(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
                const char* what) {
  if (bytes > 0) check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, stream), what);
}

struct Slot {
  DataType dtype = DataType::kUndefined;
  Sizes sizes;
  ir::TensorPtr host;
  void* device = nullptr;
  /// A graph input's value, for planning only: the shapes that depend on values (a Reshape target,
  /// Expand, Range and Slice operands fed as inputs) are computed from it. The plan is for these
  /// inputs; nothing is folded from them (they change from run to run).
  ir::TensorPtr known;

  Slot() = default;
  Slot(DataType type, Sizes dims, ir::TensorPtr on_host = nullptr, void* on_device = nullptr,
       ir::TensorPtr input = nullptr)
      : dtype(type), sizes(std::move(dims)), host(std::move(on_host)), device(on_device), known(std::move(input)) {}
  int64_t elements() const { return ir::num_elements(sizes); }
  std::size_t bytes() const { return static_cast<std::size_t>(elements()) * ir::element_size(dtype); }
};

struct CudaExecutor::Impl {
  const ir::Graph& graph;
  Context& ctx;
  std::vector<Slot> slots;
  std::vector<std::vector<std::pair<ir::NodeId, int32_t>>> consumers;
  std::set<ir::ValueId> graph_outputs;
  std::set<ir::NodeId> fused;  ///< Nodes a convolution computes as part of its cuDNN call.
  std::vector<DeviceBuffer> buffers;  ///< Every allocation, freed with the executor.
  std::vector<std::function<void()>> steps;
  std::vector<std::shared_ptr<ConvPlan>> convs;
  DeviceBuffer workspace;
  Placement placement;
  std::set<std::string> host_ops;
  cudaEvent_t start = nullptr, stop = nullptr;

  Impl(const ir::Graph& g, const TensorMap& inputs)
      : graph(g), ctx(context()), slots(g.value_capacity()), consumers(g.consumers()),
        graph_outputs(g.outputs().begin(), g.outputs().end()) {
    check_cuda(cudaEventCreate(&start), "cudaEventCreate");
    check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
    bind_inputs(inputs);
    const auto order = graph.topological_order();
    if (!order) throw Error("the graph has a cycle");
    for (ir::NodeId id : *order) {
      if (!fused.count(id)) plan_node(graph.node(id));
    }
    std::size_t largest = 0;
    for (const auto& conv : convs) largest = std::max(largest, conv->workspace_bytes());
    workspace = DeviceBuffer(largest);
    for (const auto& conv : convs) conv->set_workspace(workspace.get(), workspace.bytes());
    // Planning's uploads are done (their host buffers live on), memsets on the default stream too.
    check_cuda(cudaDeviceSynchronize(), "planning");
  }

  ~Impl() {
    cudaStreamSynchronize(ctx.stream);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }

  void* allocate(std::size_t bytes) {
    buffers.emplace_back(std::max<std::size_t>(bytes, 1));
    return buffers.back().get();
  }

  /// The device copy of a value, uploaded now when only the host holds it.
  void* device(ir::ValueId id) {
    Slot& slot = slots[id];
    if (!slot.device) {
      if (!slot.host) throw Error("internal: value " + std::to_string(id) + " has no data at planning");
      slot.device = allocate(slot.bytes());
      copy_async(slot.device, slot.host->bytes(), slot.bytes(), cudaMemcpyHostToDevice, ctx.stream, "upload");
    }
    return slot.device;
  }

  void bind_inputs(const TensorMap& inputs) {
    for (ir::ValueId id : graph.inputs()) {
      const ir::Value& value = graph.value(id);
      const auto found = inputs.find(value.name);
      ir::TensorPtr tensor = found != inputs.end() ? found->second : value.data;
      if (!tensor) throw Error("no tensor given for input '" + value.name + "'");
      if (value.type.dtype != DataType::kUndefined && value.type.dtype != tensor->dtype()) {
        throw Error("input '" + value.name + "' is " + ir::to_string(tensor->dtype()) + ", the graph expects " +
                    ir::to_string(value.type.dtype));
      }
      slots[id] = Slot{tensor->dtype(), tensor->dims(), nullptr, nullptr, tensor};
      slots[id].device = allocate(slots[id].bytes());
      copy_async(slots[id].device, tensor->bytes(), tensor->byte_size(), cudaMemcpyHostToDevice, ctx.stream,
                 "upload of an input");
    }
  }

  /// The slot of a node input; weights become host-known on first sight.
  const Slot& input_slot(ir::ValueId id) {
    Slot& slot = slots[id];
    const ir::Value& value = graph.value(id);
    if (slot.dtype == DataType::kUndefined && value.kind == ir::ValueKind::kWeight) {
      slot = Slot{value.data->dtype(), value.data->dims(), value.data, nullptr};
    }
    return slot;
  }

  // ---- planning ---------------------------------------------------------------------------------

  void plan_node(const ir::Node& node) {
    std::vector<const Slot*> in;
    bool all_host = true;
    for (ir::ValueId id : node.inputs) {
      in.push_back(id == ir::kNoValue ? nullptr : &input_slot(id));
      if (id != ir::kNoValue) all_host = all_host && in.back()->host;
    }
    if (node.op != OpKind::kOpaque && (all_host || node.op == OpKind::kShape)) return fold(node, in);
    if (node.op == OpKind::kOpaque) return plan_host(node, in);
    const ops::OpDef& def = ops::op_def(node.op);
    if (ops::is_runtime_form(def, node.inputs.size())) return plan_host(node, in);
    set_output_types(node, in);
    if (!plan_gpu(node, in)) plan_host(node, in);
  }

  /// A node's inputs for running its reference kernel at planning: what is known (constants, graph
  /// inputs), zeros of the right type for the rest (kept in `zeros`).
  static std::vector<const ir::Tensor*> probe_args(const std::vector<const Slot*>& in, std::vector<ir::Tensor>& zeros) {
    zeros.reserve(in.size());
    std::vector<const ir::Tensor*> args;
    for (const Slot* slot : in) {
      if (!slot) {
        args.push_back(nullptr);
      } else if (slot->host || slot->known) {
        args.push_back(slot->host ? slot->host.get() : slot->known.get());
      } else {
        zeros.emplace_back(slot->dtype, slot->sizes);
        args.push_back(&zeros.back());
      }
    }
    return args;
  }

  /// Computes a node from host-known inputs (Shape: from its input's sizes) once, at planning.
  void fold(const ir::Node& node, const std::vector<const Slot*>& in) {
    std::vector<ir::Tensor> zeros;
    const std::vector<const ir::Tensor*> args = probe_args(in, zeros);
    std::vector<ir::Tensor> results = CpuExecutor::run_node(node, args);
    for (std::size_t i = 0; i < results.size(); ++i) {
      Slot& slot = slots[node.outputs[i]];
      slot = Slot{results[i].dtype(), results[i].dims(), ir::share(std::move(results[i])), nullptr};
    }
    placement["folded"] += 1;
  }

  /// The concrete output types: by shape inference, or, where it leaves a dim unknown (a Reshape
  /// whose target is computed), by running the reference kernel on zeros at planning.
  void set_output_types(const ir::Node& node, const std::vector<const Slot*>& in) {
    std::vector<ir::TensorType> types;
    for (const Slot* slot : in) {
      types.push_back(slot ? ir::TensorType{slot->dtype, ir::Shape::of(slot->sizes)} : ir::TensorType{});
    }
    const ops::InferResult inferred = ops::op_def(node.op).infer(node, types);
    bool known = inferred.ok();
    for (const ir::TensorType& type : inferred.outputs) known = known && type.shape.sizes().has_value();
    if (!inferred.ok()) throw Error("node '" + node.name + "' (" + op_label(node) + "): " + inferred.error);
    if (known) {
      for (std::size_t i = 0; i < node.outputs.size(); ++i) {
        slots[node.outputs[i]] = Slot{inferred.outputs[i].dtype, *inferred.outputs[i].shape.sizes(), nullptr, nullptr};
      }
      return;
    }
    std::vector<ir::Tensor> zeros;
    const std::vector<const ir::Tensor*> args = probe_args(in, zeros);
    const std::vector<ir::Tensor> probed = CpuExecutor::run_node(node, args);
    for (std::size_t i = 0; i < probed.size(); ++i) {
      slots[node.outputs[i]] = Slot{probed[i].dtype(), probed[i].dims(), nullptr, nullptr};
    }
  }

  /// A node on the host: the stream drained, inputs downloaded, the reference kernel, outputs
  /// uploaded. Output types come from the reference kernel at planning.
  void plan_host(const ir::Node& node, const std::vector<const Slot*>& in) {
    if (node.op == OpKind::kOpaque) throw Error("the CUDA executor has no kernel for " + op_label(node));
    std::vector<ir::Tensor> zeros;
    const std::vector<const ir::Tensor*> args = probe_args(in, zeros);
    const std::vector<ir::Tensor> probed = CpuExecutor::run_node(node, args);
    std::vector<void*> outs;
    for (std::size_t i = 0; i < probed.size(); ++i) {
      Slot& slot = slots[node.outputs[i]];
      slot = Slot{probed[i].dtype(), probed[i].dims(), nullptr, nullptr};
      slot.device = allocate(slot.bytes());
      outs.push_back(slot.device);
    }
    std::vector<std::pair<void*, Slot>> inputs;  // device data to download, or host-known data
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (!in[i]) {
        inputs.emplace_back(nullptr, Slot{});
      } else {
        inputs.emplace_back(in[i]->host ? nullptr : device(node.inputs[i]), *in[i]);
      }
    }
    const ir::Node copy = node;
    steps.push_back([this, copy, inputs, outs] { run_host(copy, inputs, outs); });
    placement["host"] += 1;
    host_ops.insert(op_label(node));
  }

  void run_host(const ir::Node& node, const std::vector<std::pair<void*, Slot>>& inputs,
                const std::vector<void*>& outs) {
    check_cuda(cudaStreamSynchronize(ctx.stream), "a host step's wait");
    std::vector<ir::Tensor> downloaded;
    downloaded.reserve(inputs.size());
    std::vector<const ir::Tensor*> args;
    for (const auto& [ptr, slot] : inputs) {
      if (slot.dtype == DataType::kUndefined) {
        args.push_back(nullptr);
      } else if (slot.host) {
        args.push_back(slot.host.get());
      } else {
        downloaded.emplace_back(slot.dtype, slot.sizes);
        copy_async(downloaded.back().mutable_bytes(), ptr, slot.bytes(), cudaMemcpyDeviceToHost, ctx.stream,
                   "download for a host step");
        args.push_back(&downloaded.back());
      }
    }
    check_cuda(cudaStreamSynchronize(ctx.stream), "a host step's download");
    const std::vector<ir::Tensor> results = CpuExecutor::run_node(node, args);
    for (std::size_t i = 0; i < results.size(); ++i) {
      copy_async(outs[i], results[i].bytes(), results[i].byte_size(), cudaMemcpyHostToDevice, ctx.stream,
                 "upload of a host step's output");
    }
    // The host buffers die with this call: the uploads must be done first.
    check_cuda(cudaStreamSynchronize(ctx.stream), "a host step's upload");
  }

  /// The device output buffer of a node's output `i`, allocated now.
  void* output(const ir::Node& node, std::size_t i = 0) {
    Slot& slot = slots[node.outputs[i]];
    slot.device = allocate(slot.bytes());
    return slot.device;
  }

  bool all_float(const ir::Node& node, const std::vector<const Slot*>& in) const {
    for (const Slot* slot : in) {
      if (slot && slot->dtype != DataType::kFloat) return false;
    }
    for (ir::ValueId id : node.outputs) {
      if (slots[id].dtype != DataType::kFloat) return false;
    }
    return true;
  }

  /// Plans the node on the GPU; false when it has no GPU kernel here (it then runs on the host).
  bool plan_gpu(const ir::Node& node, const std::vector<const Slot*>& in) {
    if (!in.empty() && in[0] && is_alias_op(node, in[0]->dtype, slots[node.outputs[0]].dtype)) {
      slots[node.outputs[0]].device = device(node.inputs[0]);
      placement["alias"] += 1;
      return true;
    }
    for (ir::ValueId id : node.outputs) {
      if (slots[id].sizes.size() > static_cast<std::size_t>(kMaxRank)) return false;
    }
    if (node.op == OpKind::kConcat) return plan_concat(node, in);
    if (node.op == OpKind::kGather && in[0]->host && !in[1]->host) return plan_gather(node, in);
    if (node.op == OpKind::kWhere) return plan_where(node, in);
    if (is_index_map_op(node) && plan_index_map(node, in)) return true;
    if (!all_float(node, in)) return false;
    if (auto op = unary_op(node.op); op && in.size() == 1) return plan_unary(node, *op);
    if (auto op = binary_op(node.op)) return plan_binary(node, in, *op);
    if (node.op == OpKind::kMean) return plan_mean(node, in);
    if (auto op = reduce_op(node.op)) return plan_reduce(node, in, *op);
    switch (node.op) {
      case OpKind::kConv: return plan_conv(node, in);
      case OpKind::kMatMul: return plan_matmul(node, in);
      case OpKind::kGemm: return plan_gemm(node, in);
      case OpKind::kSoftmax: return plan_softmax(node, in);
      case OpKind::kBatchNormalization: return plan_batch_norm(node, in);
      case OpKind::kLayerNormalization: return plan_layer_norm(node, in);
      case OpKind::kMaxPool: case OpKind::kAveragePool: return plan_pool(node, in);
      case OpKind::kGlobalAveragePool: case OpKind::kGlobalMaxPool: return plan_global_pool(node, in);
      case OpKind::kPad: return plan_pad(node, in);
      default: return false;
    }
  }

  bool plan_unary(const ir::Node& node, UnaryOp op) {
    UnaryParams params{node.attrs.get_float("alpha", 0), node.attrs.get_float("beta", 0),
                       node.attrs.get_float("min", 0), node.attrs.get_float("max", 0)};
    if (op == UnaryOp::kGelu && node.attrs.get_string("approximate", "none") == "tanh") op = UnaryOp::kGeluTanh;
    const float* x = static_cast<const float*>(device(node.inputs[0]));
    float* y = static_cast<float*>(output(node));
    const int64_t n = slots[node.outputs[0]].elements();
    steps.push_back([=] { unary(op, params, x, y, n, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  /// One broadcast binary step y = a op b.
  void push_binary(BinaryOp op, const Slot& a, const void* a_ptr, const Slot& b, const void* b_ptr, void* y,
                   const Sizes& out) {
    const Strides a_steps = broadcast_steps(a.sizes, out), b_steps = broadcast_steps(b.sizes, out);
    const Dims dims = dims_of(out);
    const auto* pa = static_cast<const float*>(a_ptr);
    const auto* pb = static_cast<const float*>(b_ptr);
    auto* py = static_cast<float*>(y);
    steps.push_back([=] { binary(op, pa, a_steps, pb, b_steps, py, dims, ctx.stream); });
  }

  /// The left fold of `op` over the node's inputs, into its output buffer, which it returns.
  void* push_fold(const ir::Node& node, const std::vector<const Slot*>& in, BinaryOp op) {
    const Slot& out = slots[node.outputs[0]];
    void* y = output(node);
    Slot acc = *in[0];
    const void* acc_ptr = device(node.inputs[0]);
    for (std::size_t i = 1; i < in.size(); ++i) {
      push_binary(op, acc, acc_ptr, *in[i], device(node.inputs[i]), y, out.sizes);
      acc = Slot{DataType::kFloat, out.sizes, nullptr, y};
      acc_ptr = y;
    }
    return y;
  }

  /// Add, Sub, Mul, ... and the variadic Sum, Max, Min folded left over their inputs.
  bool plan_binary(const ir::Node& node, const std::vector<const Slot*>& in, BinaryOp op) {
    if (in.size() < 2) return false;
    push_fold(node, in, op);
    placement["graphsub"] += 1;
    return true;
  }

  /// Mean: the inputs summed, then times 1/n.
  bool plan_mean(const ir::Node& node, const std::vector<const Slot*>& in) {
    if (in.size() < 2) return false;
    void* y = push_fold(node, in, BinaryOp::kAdd);
    const Slot& out = slots[node.outputs[0]];
    const float inverse = 1.0f / static_cast<float>(in.size());
    void* factor = allocate(sizeof(float));
    check_cuda(cudaMemcpy(factor, &inverse, sizeof(float), cudaMemcpyHostToDevice), "upload");
    push_binary(BinaryOp::kMul, out, y, Slot{DataType::kFloat, {}}, factor, y, out.sizes);
    placement["graphsub"] += 1;
    return true;
  }

  bool plan_where(const ir::Node& node, const std::vector<const Slot*>& in) {
    const Slot& out = slots[node.outputs[0]];
    if (in[0]->dtype != DataType::kBool || in[1]->dtype != DataType::kFloat || in[2]->dtype != DataType::kFloat) {
      return false;
    }
    const Strides c = broadcast_steps(in[0]->sizes, out.sizes), a = broadcast_steps(in[1]->sizes, out.sizes),
                  b = broadcast_steps(in[2]->sizes, out.sizes);
    const auto* pc = static_cast<const uint8_t*>(device(node.inputs[0]));
    const auto* pa = static_cast<const float*>(device(node.inputs[1]));
    const auto* pb = static_cast<const float*>(device(node.inputs[2]));
    auto* py = static_cast<float*>(output(node));
    const Dims dims = dims_of(out.sizes);
    steps.push_back([=] { where(pc, c, pa, a, pb, b, py, dims, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  bool plan_reduce(const ir::Node& node, const std::vector<const Slot*>& in, ReduceOp op) {
    if (in.size() != 1) return false;
    const Sizes& sizes = in[0]->sizes;
    std::vector<int64_t> axes = node.attrs.get_ints("axes", {});
    if (axes.empty() && node.attrs.get_int("noop_with_empty_axes", 0) != 0) return false;
    if (axes.empty()) axes.resize(sizes.size()), std::iota(axes.begin(), axes.end(), int64_t{0});
    std::vector<bool> reduced(sizes.size(), false);
    for (int64_t axis : axes) {
      const auto normalized = ops::normalize_axis(axis, static_cast<int64_t>(sizes.size()));
      if (!normalized) return false;
      reduced[*normalized] = true;
    }
    const Sizes steps_in = dense_steps(sizes);
    Dims out_dims, red_dims;
    Strides out_steps, red_steps;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (reduced[i]) {
        red_dims.size[red_dims.rank] = sizes[i];
        red_steps.step[red_dims.rank++] = steps_in[i];
      } else {
        out_dims.size[out_dims.rank] = sizes[i];
        out_steps.step[out_dims.rank++] = steps_in[i];
      }
    }
    const auto* x = static_cast<const float*>(device(node.inputs[0]));
    auto* y = static_cast<float*>(output(node));
    steps.push_back([=] { reduce(op, x, out_steps, out_dims, red_steps, red_dims, y, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  /// Concat: one strided cudaMemcpy2D per input (rows: the dims before the axis).
  bool plan_concat(const ir::Node& node, const std::vector<const Slot*>& in) {
    const Slot& out = slots[node.outputs[0]];
    const auto axis = ops::normalize_axis(node.attrs.get_int("axis", 0), static_cast<int64_t>(out.sizes.size()));
    if (!axis) return false;
    const std::size_t esize = ir::element_size(out.dtype);
    const int64_t rows = product(out.sizes, 0, *axis);
    const std::size_t pitch = static_cast<std::size_t>(product(out.sizes, *axis, out.sizes.size())) * esize;
    auto* y = static_cast<char*>(output(node));
    std::size_t offset = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const std::size_t width = static_cast<std::size_t>(product(in[i]->sizes, *axis, in[i]->sizes.size())) * esize;
      const void* x = device(node.inputs[i]);
      char* dst = y + offset;
      if (width > 0 && rows > 0) {
        steps.push_back([=] {
          check_cuda(cudaMemcpy2DAsync(dst, pitch, x, width, width, static_cast<std::size_t>(rows),
                                       cudaMemcpyDeviceToDevice, ctx.stream),
                     "Concat copy");
        });
      }
      offset += width;
    }
    placement["copy"] += 1;
    return true;
  }

  /// Gather of constant data (an embedding table) at run-time indices.
  bool plan_gather(const ir::Node& node, const std::vector<const Slot*>& in) {
    if (in[1]->dtype != DataType::kInt64) return false;
    const Sizes& sizes = in[0]->sizes;
    const auto axis = ops::normalize_axis(node.attrs.get_int("axis", 0), static_cast<int64_t>(sizes.size()));
    if (!axis) return false;
    const int64_t outer = product(sizes, 0, *axis), axis_size = sizes[*axis];
    const int64_t inner = product(sizes, *axis + 1, sizes.size()), count = in[1]->elements();
    const void* x = device(node.inputs[0]);
    const auto* indices = static_cast<const int64_t*>(device(node.inputs[1]));
    void* y = output(node);
    const int esize = static_cast<int>(ir::element_size(in[0]->dtype));
    steps.push_back([=] { gather(x, outer, axis_size, inner, indices, count, y, esize, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  /// A pure data-movement op as a gather through an index map: the reference kernel run once at
  /// planning on the input's own element indices says where each output element comes from.
  bool plan_index_map(const ir::Node& node, const std::vector<const Slot*>& in) {
    if (!in[0] || in[0]->host) return false;
    for (std::size_t i = 1; i < in.size(); ++i) {
      if (in[i] && !in[i]->host) return false;
    }
    const std::size_t esize = ir::element_size(in[0]->dtype);
    if (esize != 1 && esize != 2 && esize != 4 && esize != 8) return false;
    std::vector<ir::Tensor> maps;
    for (DataType dtype : {DataType::kInt64, DataType::kFloat}) {
      std::optional<ir::Tensor> indices = iota(dtype, in[0]->sizes);
      if (!indices) continue;
      std::vector<const ir::Tensor*> args{&*indices};
      for (std::size_t i = 1; i < in.size(); ++i) args.push_back(in[i] ? in[i]->host.get() : nullptr);
      try {
        maps = CpuExecutor::run_node(node, args);
        break;
      } catch (const Error&) {
        maps.clear();
      }
    }
    if (maps.empty()) return false;
    const void* x = device(node.inputs[0]);
    const int64_t n_in = in[0]->elements();
    for (std::size_t i = 0; i < maps.size(); ++i) {
      std::vector<int64_t> map(static_cast<std::size_t>(maps[i].num_elements()));
      for (std::size_t j = 0; j < map.size(); ++j) map[j] = static_cast<int64_t>(maps[i].element_as_double(j));
      auto* map_ptr = static_cast<int64_t*>(allocate(map.size() * sizeof(int64_t)));
      copy_async(map_ptr, map.data(), map.size() * sizeof(int64_t), cudaMemcpyHostToDevice, ctx.stream, "upload");
      check_cuda(cudaStreamSynchronize(ctx.stream), "upload");  // `map` dies with this iteration
      void* y = output(node, i);
      const auto count = static_cast<int64_t>(map.size());
      const int bytes = static_cast<int>(esize);
      steps.push_back([=] { gather(x, 1, n_in, 1, map_ptr, count, y, bytes, ctx.stream); });
    }
    placement["graphsub"] += 1;
    return true;
  }

  bool plan_pad(const ir::Node& node, const std::vector<const Slot*>& in) {
    const Sizes& sizes = in[0]->sizes;
    const std::vector<int64_t> pads = node.attrs.get_ints("pads", {});
    const std::vector<int64_t> axes = node.attrs.get_ints("axes", {});
    if (in.size() > 1 || !axes.empty() || pads.size() != 2 * sizes.size()) return false;
    const float value = node.attrs.get_float("value", 0);
    const auto* x = static_cast<const float*>(device(node.inputs[0]));
    auto* y = static_cast<float*>(output(node));
    const Dims in_dims = dims_of(sizes), out_dims = dims_of(slots[node.outputs[0]].sizes);
    const std::vector<int64_t> begin(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(sizes.size()));
    steps.push_back([=] { pad_constant(x, in_dims, begin.data(), value, y, out_dims, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  bool plan_softmax(const ir::Node& node, const std::vector<const Slot*>& in) {
    const Sizes& sizes = in[0]->sizes;
    const auto axis = ops::normalize_axis(node.attrs.get_int("axis", -1), static_cast<int64_t>(sizes.size()));
    if (!axis) return false;
    const int64_t outer = product(sizes, 0, *axis), len = sizes[*axis], inner = product(sizes, *axis + 1, sizes.size());
    if (std::max({outer, len, inner}) > INT32_MAX / 2) return false;
    auto desc = std::make_shared<TensorDescriptor>(outer, len, inner, 1);
    const void* x = device(node.inputs[0]);
    void* y = output(node);
    steps.push_back([=] {
      const float one = 1, zero = 0;
      check_cudnn(cudnnSoftmaxForward(ctx.cudnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one,
                                      desc->get(), x, &zero, desc->get(), y),
                  "cudnnSoftmaxForward");
    });
    placement["cudnn"] += 1;
    return true;
  }

  bool plan_batch_norm(const ir::Node& node, const std::vector<const Slot*>& in) {
    if (node.outputs.size() != 1 || in.size() != 5 || node.attrs.get_int("training_mode", 0) != 0) return false;
    const Sizes& sizes = in[0]->sizes;
    if (sizes.size() < 2) return false;
    const int64_t c = sizes[1];
    for (std::size_t i = 1; i < 5; ++i) {
      if (in[i]->elements() != c) return false;
    }
    const float epsilon = node.attrs.get_float("epsilon", 1e-5f);
    const auto* x = static_cast<const float*>(device(node.inputs[0]));
    const auto* scale = static_cast<const float*>(device(node.inputs[1]));
    const auto* bias = static_cast<const float*>(device(node.inputs[2]));
    const auto* mean = static_cast<const float*>(device(node.inputs[3]));
    const auto* var = static_cast<const float*>(device(node.inputs[4]));
    auto* y = static_cast<float*>(output(node));
    const int64_t n = sizes[0], spatial = product(sizes, 2, sizes.size());
    steps.push_back([=] { batch_norm(x, scale, bias, mean, var, epsilon, y, n, c, spatial, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  bool plan_layer_norm(const ir::Node& node, const std::vector<const Slot*>& in) {
    if (node.outputs.size() != 1 || in.size() < 2) return false;
    const Sizes& sizes = in[0]->sizes;
    const auto axis = ops::normalize_axis(node.attrs.get_int("axis", -1), static_cast<int64_t>(sizes.size()));
    if (!axis) return false;
    const int64_t rows = product(sizes, 0, *axis), cols = product(sizes, *axis, sizes.size());
    if (in[1]->elements() != cols || (in.size() > 2 && in[2] && in[2]->elements() != cols)) return false;
    const float epsilon = node.attrs.get_float("epsilon", 1e-5f);
    const auto* x = static_cast<const float*>(device(node.inputs[0]));
    const auto* scale = static_cast<const float*>(device(node.inputs[1]));
    const auto* bias = in.size() > 2 && in[2] ? static_cast<const float*>(device(node.inputs[2])) : nullptr;
    auto* y = static_cast<float*>(output(node));
    steps.push_back([=] { layer_norm(x, scale, bias, epsilon, y, rows, cols, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  bool plan_pool(const ir::Node& node, const std::vector<const Slot*>& in) {
    const Sizes& sizes = in[0]->sizes;
    const Sizes& out = slots[node.outputs[0]].sizes;
    const int spatial = static_cast<int>(sizes.size()) - 2;
    if (node.outputs.size() != 1 || spatial < 1 || spatial > 3) return false;
    const std::vector<int64_t> kernel = node.attrs.get_ints("kernel_shape", {});
    const std::vector<int64_t> strides = node.attrs.get_ints("strides", {});
    const std::vector<int64_t> pads = node.attrs.get_ints("pads", {});
    const std::vector<int64_t> dilations = node.attrs.get_ints("dilations", std::vector<int64_t>(spatial, 1));
    if (kernel.size() != static_cast<std::size_t>(spatial) || strides.size() != kernel.size() ||
        pads.size() != 2 * kernel.size() || dilations.size() != kernel.size()) {
      return false;
    }
    PoolParams params;
    params.max = node.op == OpKind::kMaxPool;
    params.count_include_pad = node.attrs.get_int("count_include_pad", 0) != 0;
    params.spatial = spatial;
    params.n = sizes[0];
    params.c = sizes[1];
    for (int i = 0; i < spatial; ++i) {
      params.in[i] = sizes[2 + i];
      params.out[i] = out[2 + i];
      params.kernel[i] = kernel[i];
      params.stride[i] = strides[i];
      params.dilation[i] = dilations[i];
      params.pad_begin[i] = pads[i];
      params.pad_end[i] = pads[spatial + i];
    }
    const auto* x = static_cast<const float*>(device(node.inputs[0]));
    auto* y = static_cast<float*>(output(node));
    steps.push_back([=] { pool(params, x, y, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  bool plan_global_pool(const ir::Node& node, const std::vector<const Slot*>& in) {
    const Sizes& sizes = in[0]->sizes;
    if (sizes.size() < 2) return false;
    const bool max = node.op == OpKind::kGlobalMaxPool;
    const int64_t rows = sizes[0] * sizes[1], len = product(sizes, 2, sizes.size());
    const auto* x = static_cast<const float*>(device(node.inputs[0]));
    auto* y = static_cast<float*>(output(node));
    steps.push_back([=] { reduce_rows(max, x, y, rows, len, ctx.stream); });
    placement["graphsub"] += 1;
    return true;
  }

  /// The node that alone reads `value`, when it is of kind `op` and `value` is no graph output;
  /// else -1.
  ir::NodeId sole_consumer(ir::ValueId value, OpKind op) const {
    if (graph_outputs.count(value) || consumers[value].size() != 1) return -1;
    const ir::NodeId next = consumers[value][0].first;
    return graph.node(next).op == op && graph.node(next).outputs.size() == 1 ? next : -1;
  }

  /// What a Conv computes in its cuDNN call beyond itself, as runtimes fuse it: a following Relu,
  /// or Add then Relu where the Add's other operand has the Conv's shape and is computed already.
  /// Node ids, -1 where none.
  struct ConvFusion {
    ir::NodeId add = -1;
    ir::ValueId residual = ir::kNoValue;
    ir::NodeId relu = -1;
  };

  ConvFusion conv_fusion(const ir::Node& conv, const ConvShape& shape) const {
    if (shape.activation != 0) return {};
    const ir::ValueId out = conv.outputs[0];
    const bool has_residual = conv.inputs.size() > 3 && conv.inputs[3] != ir::kNoValue;
    if (const ir::NodeId add = has_residual ? -1 : sole_consumer(out, OpKind::kAdd);
        add >= 0 && graph.node(add).inputs.size() == 2) {
      const ir::Node& node = graph.node(add);
      const ir::ValueId other = node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
      const Slot& slot = slots[other];
      const bool ready = other != out && (slot.device || slot.host) && slot.dtype == DataType::kFloat &&
                         slot.sizes == slots[out].sizes;
      const ir::NodeId relu = ready ? sole_consumer(node.outputs[0], OpKind::kRelu) : -1;
      if (relu >= 0) return ConvFusion{add, other, relu};
    }
    return ConvFusion{-1, ir::kNoValue, sole_consumer(out, OpKind::kRelu)};
  }

  bool plan_conv(const ir::Node& node, const std::vector<const Slot*>& in) {
    std::optional<ConvShape> shape = conv_shape(node, in[0]->sizes, in[1]->sizes, slots[node.outputs[0]].sizes);
    if (!shape) return false;
    const ConvFusion fusion = conv_fusion(node, *shape);
    if (fusion.relu >= 0) shape->activation = 1;
    const void* x = device(node.inputs[0]);
    const void* w = device(node.inputs[1]);
    const void* b = in.size() > 2 && in[2] ? device(node.inputs[2]) : nullptr;
    const bool has_z = in.size() > 3 && in[3];  // graphsub's fused residual input Z
    if (has_z && (in[3]->dtype != DataType::kFloat || in[3]->sizes != slots[node.outputs[0]].sizes)) return false;
    const void* residual = has_z ? device(node.inputs[3]) : fusion.add >= 0 ? device(fusion.residual) : nullptr;
    void* padded = shape->needs_padding() ? allocate(shape->padded_bytes()) : nullptr;
    const void* bias = b;
    if (!b && shape->activation == 1) {  // the fused form takes a bias: zeros
      const std::size_t bytes = static_cast<std::size_t>(shape->out_channels) * sizeof(float);
      void* zeros = allocate(bytes);
      check_cuda(cudaMemset(zeros, 0, bytes), "cudaMemset");
      bias = zeros;
    }
    void* y = output(node);
    std::shared_ptr<ConvPlan> plan;
    try {
      plan = std::make_shared<ConvPlan>(ctx, *shape, x, w, bias, b != nullptr, residual, y, padded);
    } catch (const Error&) {
      return false;  // a geometry cuDNN refuses runs on the host
    }
    for (const ir::NodeId next : {fusion.add, fusion.relu}) {
      if (next < 0) continue;
      slots[graph.node(next).outputs[0]] = Slot{DataType::kFloat, slots[node.outputs[0]].sizes, nullptr, y};
      fused.insert(next);
      placement["fused"] += 1;
    }
    convs.push_back(plan);
    steps.push_back([plan] { plan->run(); });
    placement["cudnn"] += 1;
    return true;
  }

  /// C[M, N] = A[M, K] · B[K, N] for `batch` matrices, row-major, on cuBLAS (column-major):
  /// Cᵀ = Bᵀ · Aᵀ.
  struct Gemm {
    cublasOperation_t op_a = CUBLAS_OP_N, op_b = CUBLAS_OP_N;
    int m = 0, n = 0, k = 0, lda = 0, ldb = 0;
    float alpha = 1, beta = 0;
  };

  void push_gemm(const Gemm& g, const float* a, const float* b, float* c, std::vector<std::pair<int64_t, int64_t>> offsets,
                 int64_t stride_a, int64_t stride_b, int64_t batch, bool strided) {
    const int64_t stride_c = static_cast<int64_t>(g.m) * g.n;
    steps.push_back([=] {
      if (strided) {
        check_cublas(cublasSgemmStridedBatched(ctx.cublas, g.op_b, g.op_a, g.n, g.m, g.k, &g.alpha, b, g.ldb, stride_b,
                                               a, g.lda, stride_a, &g.beta, c, g.n, stride_c, static_cast<int>(batch)),
                     "cublasSgemmStridedBatched");
        return;
      }
      for (std::size_t i = 0; i < offsets.size(); ++i) {
        check_cublas(cublasSgemm(ctx.cublas, g.op_b, g.op_a, g.n, g.m, g.k, &g.alpha, b + offsets[i].second, g.ldb,
                                 a + offsets[i].first, g.lda, &g.beta, c + static_cast<int64_t>(i) * stride_c, g.n),
                     "cublasSgemm");
      }
    });
    placement["cublas"] += 1;
  }

  bool plan_matmul(const ir::Node& node, const std::vector<const Slot*>& in) {
    Sizes a = in[0]->sizes, b = in[1]->sizes;
    if (a.empty() || b.empty()) return false;
    if (a.size() == 1) a.insert(a.begin(), 1);
    if (b.size() == 1) b.push_back(1);
    const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
    if (b[b.size() - 2] != k || std::max({m, n, k}) > INT32_MAX) return false;
    const Sizes batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
    const std::size_t rank = std::max(batch_a.size(), batch_b.size());
    Sizes batch(rank, 1);
    for (std::size_t i = 0; i < rank; ++i) {
      const int64_t da = i + batch_a.size() >= rank ? batch_a[i + batch_a.size() - rank] : 1;
      const int64_t db = i + batch_b.size() >= rank ? batch_b[i + batch_b.size() - rank] : 1;
      batch[i] = std::max(da, db);
    }
    const int64_t count = ir::num_elements(batch);
    const Strides sa = broadcast_steps(batch_a, batch), sb = broadcast_steps(batch_b, batch);
    const int64_t count_a = ir::num_elements(batch_a), count_b = ir::num_elements(batch_b);
    const bool strided = (count_a == count || count_a == 1) && (count_b == count || count_b == 1) &&
                         (count_a == 1 || batch_a.size() == rank) && (count_b == 1 || batch_b.size() == rank) &&
                         count <= INT32_MAX;
    std::vector<std::pair<int64_t, int64_t>> offsets;
    if (!strided) {
      const Sizes steps_out = dense_steps(batch);
      for (int64_t i = 0; i < count; ++i) {
        int64_t oa = 0, ob = 0;
        for (std::size_t d = 0; d < rank; ++d) {
          const int64_t index = i / steps_out[d] % batch[d];
          oa += index * sa.step[d];
          ob += index * sb.step[d];
        }
        offsets.emplace_back(oa * m * k, ob * k * n);
      }
    }
    const auto activation = ops::parse_activation(node.attrs.get_string("activation", "none"));
    if (!activation) return false;
    Gemm g;
    g.m = static_cast<int>(m), g.n = static_cast<int>(n), g.k = static_cast<int>(k);
    g.lda = g.k, g.ldb = g.n;
    auto* y = static_cast<float*>(output(node));
    push_gemm(g, static_cast<const float*>(device(node.inputs[0])), static_cast<const float*>(device(node.inputs[1])),
              y, offsets, count_a == 1 ? 0 : m * k, count_b == 1 ? 0 : k * n, count, strided);
    const Slot& out = slots[node.outputs[0]];
    if (in.size() > 2 && in[2]) {  // graphsub's fused summand C (a bias), broadcast to the product
      push_binary(BinaryOp::kAdd, out, y, *in[2], device(node.inputs[2]), y, out.sizes);
    }
    push_activation(*activation, y, out.elements());
    return true;
  }

  /// graphsub's fused activation of a MatMul, applied in place after the product.
  void push_activation(ops::Activation activation, float* y, int64_t n) {
    if (activation == ops::Activation::kNone) return;
    const UnaryOp op = activation == ops::Activation::kRelu      ? UnaryOp::kRelu
                       : activation == ops::Activation::kSigmoid ? UnaryOp::kSigmoid
                                                                 : UnaryOp::kTanh;
    steps.push_back([=] { unary(op, UnaryParams{}, y, y, n, ctx.stream); });
  }

  bool plan_gemm(const ir::Node& node, const std::vector<const Slot*>& in) {
    const Sizes& a = in[0]->sizes;
    const Sizes& b = in[1]->sizes;
    if (a.size() != 2 || b.size() != 2) return false;
    const bool trans_a = node.attrs.get_int("transA", 0) != 0, trans_b = node.attrs.get_int("transB", 0) != 0;
    Gemm g;
    g.m = static_cast<int>(trans_a ? a[1] : a[0]);
    g.k = static_cast<int>(trans_a ? a[0] : a[1]);
    g.n = static_cast<int>(trans_b ? b[0] : b[1]);
    g.op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    g.op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    g.lda = static_cast<int>(a[1]);
    g.ldb = static_cast<int>(b[1]);
    g.alpha = node.attrs.get_float("alpha", 1);
    g.beta = node.attrs.get_float("beta", 1);
    auto* y = static_cast<float*>(output(node));
    const Sizes out = {g.m, g.n};
    if (in.size() > 2 && in[2]) {
      const void* c = device(node.inputs[2]);
      const Strides steps_c = broadcast_steps(in[2]->sizes, out);
      const Dims dims = dims_of(out);
      steps.push_back([=] { strided_copy(c, 0, steps_c, y, dims, 4, ctx.stream); });
    } else {
      g.beta = 0;
    }
    push_gemm(g, static_cast<const float*>(device(node.inputs[0])), static_cast<const float*>(device(node.inputs[1])),
              y, {}, 0, 0, 1, true);
    return true;
  }
};

CudaExecutor::CudaExecutor(const ir::Graph& graph, const TensorMap& inputs)
    : impl_(std::make_unique<Impl>(graph, inputs)) {}

CudaExecutor::~CudaExecutor() = default;

void CudaExecutor::run() {
  for (const auto& step : impl_->steps) step();
  check_cuda(cudaStreamSynchronize(impl_->ctx.stream), "running the graph");
}

double CudaExecutor::timed_run() {
  check_cuda(cudaEventRecord(impl_->start, impl_->ctx.stream), "cudaEventRecord");
  for (const auto& step : impl_->steps) step();
  check_cuda(cudaEventRecord(impl_->stop, impl_->ctx.stream), "cudaEventRecord");
  check_cuda(cudaEventSynchronize(impl_->stop), "running the graph");
  float ms = 0;
  check_cuda(cudaEventElapsedTime(&ms, impl_->start, impl_->stop), "cudaEventElapsedTime");
  return ms;
}

TensorMap CudaExecutor::outputs() const {
  TensorMap outputs;
  const ir::Graph& graph = impl_->graph;
  for (std::size_t i = 0; i < graph.outputs().size(); ++i) {
    const ir::Value& value = graph.value(graph.outputs()[i]);
    const Slot& slot = impl_->slots[graph.outputs()[i]];
    if (value.kind == ir::ValueKind::kWeight || slot.host) {  // a constant output no node reads
      outputs[graph.output_names()[i]] = value.kind == ir::ValueKind::kWeight ? value.data : slot.host;
      continue;
    }
    ir::Tensor tensor(slot.dtype, slot.sizes);
    copy_async(tensor.mutable_bytes(), slot.device, slot.bytes(), cudaMemcpyDeviceToHost, impl_->ctx.stream,
               "download");
    check_cuda(cudaStreamSynchronize(impl_->ctx.stream), "download");
    outputs[graph.output_names()[i]] = ir::share(std::move(tensor));
  }
  return outputs;
}

const Placement& CudaExecutor::placement() const { return impl_->placement; }

std::vector<std::string> CudaExecutor::host_ops() const { return {impl_->host_ops.begin(), impl_->host_ops.end()}; }

std::vector<std::string> CudaExecutor::algorithms() const {
  std::vector<std::string> names;
  for (const auto& conv : impl_->convs) names.push_back(conv->algorithm());
  return names;
}

TensorMap run(const ir::Graph& graph, const TensorMap& inputs) {
  CudaExecutor executor(graph, inputs);
  executor.run();
  return executor.outputs();
}

}  // namespace graphsub::runtime::cuda
