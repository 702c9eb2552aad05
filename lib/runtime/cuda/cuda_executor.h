// The CUDA executor: runs graphsub's IR on an NVIDIA GPU with cuDNN, cuBLAS and graphsub's kernels.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/cpu_executor.h"

namespace graphsub::runtime::cuda {

/// The GPU this process runs on (device 0) and the library versions it runs with.
struct DeviceInfo {
  std::string name;        ///< "NVIDIA H100 80GB HBM3".
  std::string driver;      ///< CUDA driver API version, "13.0".
  std::string runtime;     ///< CUDA runtime version, "13.0".
  std::string cudnn;       ///< cuDNN version, "9.13.0".
  std::string cublas;      ///< cuBLAS version, "13.0.0".
  int multiprocessors = 0;
};

/// The device and its libraries, or nullopt with `why` set when this process cannot use a GPU (no
/// device, no driver). Creates the process's CUDA context, cuDNN and cuBLAS handles on first use.
std::optional<DeviceInfo> device_info(std::string* why = nullptr);

/// Where the nodes of a planned graph run, counted by library: "cudnn", "cublas", "graphsub"
/// (graphsub's own kernels), "copy" (cudaMemcpy: Concat), "alias" (no work: Reshape, Identity...),
/// "host" (the reference CPU kernel, with the transfers around it), "folded" (computed once at
/// planning from weights alone), "fused" (a Relu, or an Add then Relu, computed inside the cuDNN
/// call of the Conv before it, as onnxruntime's and TensorRT's GPU backends fuse them).
using Placement = std::map<std::string, int>;

/// Runs one graph for one set of input shapes on the GPU. Planning (the constructor) computes
/// every value's shape, folds what depends on weights alone, uploads the weights, allocates every
/// buffer, fuses Conv → Relu and Conv → Add → Relu into one cuDNN call (so a model runs the same
/// kernels whether graphsub's fused Conv or ONNX's separate Relu wrote it), and chooses each
/// convolution's algorithm with cudnnFindConvolutionForwardAlgorithm (remembered per process, as
/// TASO's profiler does). A node without a GPU kernel here (an opaque
/// op, a dtype other than float for arithmetic, a rank above kMaxRank...) runs on the host through
/// the reference kernel: correct, and counted in placement() so that a timing says what it timed.
/// Arithmetic is fp32 (no TF32: cuDNN's FMA math, cuBLAS's default math), so outputs match the
/// reference executor to float rounding.
class CudaExecutor {
 public:
  /// Plans `graph` for the shapes of `inputs` (every graph input without a default) and uploads
  /// them. Throws graphsub::Error when there is no GPU, a shape does not fit, or planning fails.
  CudaExecutor(const ir::Graph& graph, const TensorMap& inputs);
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  /// Runs the graph once and waits for the GPU.
  void run();
  /// Runs the graph once between two CUDA events and returns the milliseconds between them (host
  /// steps included: they are part of the run).
  double timed_run();
  /// The graph outputs of the last run, copied to the host, by name.
  TensorMap outputs() const;
  /// Where the nodes run.
  const Placement& placement() const;
  /// The op names of the nodes that run on the host, sorted, each once.
  std::vector<std::string> host_ops() const;
  /// The cuDNN algorithm chosen for each convolution, in the order they run ("IMPLICIT_GEMM", ...).
  std::vector<std::string> algorithms() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Plans, runs once and returns the outputs: the GPU counterpart of CpuExecutor::run.
TensorMap run(const ir::Graph& graph, const TensorMap& inputs);

}  // namespace graphsub::runtime::cuda
