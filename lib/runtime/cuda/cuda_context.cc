// The process's GPU context, status checks and device buffers.
#include "runtime/cuda/cuda_context.h"

#include <mutex>
#include <utility>

namespace graphsub::runtime::cuda {

void check_cudnn(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) throw Error(std::string(what) + ": " + cudnnGetErrorString(status));
}

void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
  }
}

namespace {

Context make_context() {
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "no usable CUDA device");
  if (count < 1) throw Error("no usable CUDA device: none found");
  check_cuda(cudaSetDevice(0), "cudaSetDevice(0)");
  Context made;
  check_cuda(cudaStreamCreateWithFlags(&made.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cudnn(cudnnCreate(&made.cudnn), "cudnnCreate");
  check_cudnn(cudnnSetStream(made.cudnn, made.stream), "cudnnSetStream");
  check_cublas(cublasCreate(&made.cublas), "cublasCreate");
  check_cublas(cublasSetStream(made.cublas, made.stream), "cublasSetStream");
  // Plain fp32: no TF32 tensor-core rounding, so results match the reference executor.
  check_cublas(cublasSetMathMode(made.cublas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  return made;
}

}  // namespace

Context& context() {
  static std::mutex mutex;
  static Context made;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (!failure.empty()) throw Error(failure);
  if (!made.stream) {
    try {
      made = make_context();
    } catch (const Error& error) {
      failure = error.what();
      throw;
    }
  }
  return made;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) check_cuda(cudaMalloc(&ptr_, bytes), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = other.bytes_;
  }
  return *this;
}

}  // namespace graphsub::runtime::cuda
