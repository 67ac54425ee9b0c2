#pragma once
// Internal: the check every entry point makes before it runs on the GPU backend.
namespace joinery::detail {

/// Throws logic_error, naming the cpu backend as the way out, when joinery was built without
/// CUDA or no GPU is present.
void expect_gpu_backend_available();

}  // namespace joinery::detail
