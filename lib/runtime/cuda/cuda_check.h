// Turning CUDA, cuDNN and cuBLAS status codes into graphsub::Error.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "ir/error.h"

namespace graphsub::runtime::cuda {

/// Throws graphsub::Error "`what`: <CUDA's message>" unless `status` is cudaSuccess.
inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    cudaGetLastError();  // reset the thread's last error, so that later launch checks do not report it again
    throw Error(std::string(what) + ": " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

/// Checks that the last kernel launch was accepted (a bad configuration, no device).
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

/// Blocks of `threads` threads that cover `n` items, one item per thread, capped at what a grid
/// may hold (kernels then loop with a grid stride).
inline unsigned grid_for(long long n, unsigned threads = 256) {
  const long long blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535LL * 32 ? 65535LL * 32 : blocks));
}

}  // namespace graphsub::runtime::cuda
