#pragma once
// Internal: checking CUDA runtime calls. Only included by sources built with the CUDA toolkit.
#include <joinery/error.hpp>

#include <cuda_runtime_api.h>

#include <string>

namespace joinery::detail {
[[noreturn]] inline void throw_cuda_error(cudaError_t err, char const* call, char const* file,
                                          int line) {
  throw cuda_error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                   cudaGetErrorString(err) + ") in " + call + " at " + file + ":" +
                   std::to_string(line));
}
}  // namespace joinery::detail

/// Throws joinery::cuda_error naming the call when a CUDA runtime call fails.
#define JOINERY_CUDA_TRY(call)                                                   \
  do {                                                                           \
    cudaError_t const joinery_err_ = (call);                                     \
    if (joinery_err_ != cudaSuccess) {                                           \
      (void)cudaGetLastError();                                                  \
      ::joinery::detail::throw_cuda_error(joinery_err_, #call, __FILE__, __LINE__); \
    }                                                                            \
  } while (0)

/// Checks the last kernel launch (configuration errors) without synchronizing.
#define JOINERY_CHECK_LAUNCH() JOINERY_CUDA_TRY(cudaPeekAtLastError())
