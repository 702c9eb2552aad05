// The process's GPU context: one stream, one cuDNN and one cuBLAS handle, device memory buffers.
#pragma once

#include <cstddef>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "runtime/cuda/cuda_check.h"

namespace graphsub::runtime::cuda {

/// Throws graphsub::Error "`what`: <cuDNN's message>" unless `status` is CUDNN_STATUS_SUCCESS.
void check_cudnn(cudnnStatus_t status, const char* what);
/// Throws graphsub::Error "`what`: cuBLAS status N" unless `status` is CUBLAS_STATUS_SUCCESS.
void check_cublas(cublasStatus_t status, const char* what);

/// What every executor of this process shares. Created on first use, never destroyed (the CUDA
/// context ends with the process); every executor enqueues its work on the one stream, so
/// executors run one after another.
struct Context {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasHandle_t cublas = nullptr;
};

/// The process's context. Throws graphsub::Error when there is no usable GPU.
Context& context();

/// Device memory of a fixed size, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), bytes_(other.bytes_) { other.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace graphsub::runtime::cuda
