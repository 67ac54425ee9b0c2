#include "timing.hpp"

#include <algorithm>
#include <chrono>

#if defined(JOINERY_HAS_CUDA)
#include "core/cuda_try.hpp"

#include <cuda_runtime_api.h>
#endif

namespace joinery::cli {

double time_call(bool gpu, stream_ref stream, std::function<void()> const& f) {
#if defined(JOINERY_HAS_CUDA)
  if (gpu) {
    auto const s = static_cast<cudaStream_t>(stream.handle());
    cudaEvent_t start{}, stop{};
    JOINERY_CUDA_TRY(cudaEventCreate(&start));
    JOINERY_CUDA_TRY(cudaEventCreate(&stop));
    JOINERY_CUDA_TRY(cudaEventRecord(start, s));
    f();
    JOINERY_CUDA_TRY(cudaEventRecord(stop, s));
    JOINERY_CUDA_TRY(cudaEventSynchronize(stop));
    float ms = 0;
    JOINERY_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    JOINERY_CUDA_TRY(cudaEventDestroy(start));
    JOINERY_CUDA_TRY(cudaEventDestroy(stop));
    return ms / 1e3;
  }
#endif
  (void)gpu;
  (void)stream;
  auto const t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto const n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

bool wants_part(std::string const& parts, std::string const& part) {
  if (parts.empty()) { return true; }
  std::size_t at = 0;
  while (at <= parts.size()) {
    auto const comma = std::min(parts.find(',', at), parts.size());
    if (parts.compare(at, comma - at, part) == 0) { return true; }
    at = comma + 1;
  }
  return false;
}

}  // namespace joinery::cli
