// Probe for issue 7 (session 29): what the host calls around a group-by's kernels cost. At 2^20
// rows the dense tier's wrapped sums ran about 35 us of kernels in a 90 us phase; this times each
// CUDA runtime call the tier makes, on the host (median of 200 after 20 warm-ups), and the GPU's
// idle gap across a read-back the host waits for (event to event around kernel, copy, wait,
// kernel), into pageable and into pinned memory.
//
//   joinery_exp_api_costs   prints one line per call: median and 90th percentile, microseconds
#include "exp_timing.cuh"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

namespace {

__global__ void tiny_kernel(unsigned* p) {
  if (threadIdx.x == 0 && blockIdx.x == 0) { p[0] += 1; }
}

__global__ void __launch_bounds__(1024, 1) big_smem_kernel(unsigned* p) {
  extern __shared__ unsigned smem[];
  smem[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0 && blockIdx.x == 0) { p[0] += smem[5]; }
}

void host_time(char const* what, std::function<void()> const& f) {
  for (int i = 0; i < 20; ++i) { f(); }
  std::vector<double> us;
  for (int i = 0; i < 200; ++i) {
    auto const t0 = std::chrono::steady_clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::printf("%-58s host %8.2f us (p90 %8.2f)\n", what, us[us.size() / 2], us[us.size() * 9 / 10]);
}

}  // namespace

int main() {
  int dev = 0;
  EXP_CHECK(cudaSetDevice(dev));
  cudaStream_t s{};
  EXP_CHECK(cudaStreamCreate(&s));
  unsigned* d = nullptr;
  EXP_CHECK(cudaMalloc(&d, 1 << 20));
  EXP_CHECK(cudaMemset(d, 1, 1 << 20));
  unsigned* pinned = nullptr;
  EXP_CHECK(cudaMallocHost(&pinned, 256));
  unsigned pageable[64] = {};
  int const big = 231400;
  EXP_CHECK(cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  cudaMemPool_t pool{};
  EXP_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  std::uint64_t threshold = UINT64_MAX;
  EXP_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));

  host_time("cudaGetDevice + cudaDeviceGetAttribute(SM count)", [&] {
    int dv = 0, sms = 0;
    EXP_CHECK(cudaGetDevice(&dv));
    EXP_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dv));
  });
  host_time("cudaFuncSetAttribute(max dynamic smem 231400)", [&] {
    EXP_CHECK(cudaFuncSetAttribute(big_smem_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  });
  host_time("cudaOccupancyMaxActiveBlocksPerMultiprocessor(1024, 231400)", [&] {
    int b = 0;
    EXP_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, big_smem_kernel, 1024, big));
  });
  host_time("cudaMallocAsync + cudaFreeAsync (1 MB, pool warm)", [&] {
    void* p = nullptr;
    EXP_CHECK(cudaMallocAsync(&p, 1 << 20, s));
    EXP_CHECK(cudaFreeAsync(p, s));
  });
  EXP_CHECK(cudaStreamSynchronize(s));
  host_time("cudaMemsetAsync (1 MB)", [&] { EXP_CHECK(cudaMemsetAsync(d, 0, 1 << 20, s)); });
  EXP_CHECK(cudaStreamSynchronize(s));
  host_time("launch <<<132, 1024>>> (no dynamic smem)", [&] { tiny_kernel<<<132, 1024, 0, s>>>(d); });
  EXP_CHECK(cudaStreamSynchronize(s));
  host_time("launch <<<132, 1024, 231400>>>", [&] { big_smem_kernel<<<132, 1024, big, s>>>(d); });
  EXP_CHECK(cudaStreamSynchronize(s));
  host_time("cudaEventCreate + Record + Destroy", [&] {
    cudaEvent_t e{};
    EXP_CHECK(cudaEventCreate(&e));
    EXP_CHECK(cudaEventRecord(e, s));
    EXP_CHECK(cudaEventDestroy(e));
  });
  EXP_CHECK(cudaStreamSynchronize(s));
  host_time("cudaStreamSynchronize (idle stream)", [&] { EXP_CHECK(cudaStreamSynchronize(s)); });
  host_time("tiny kernel + D2H 64 B pageable + sync", [&] {
    tiny_kernel<<<1, 32, 0, s>>>(d);
    EXP_CHECK(cudaMemcpyAsync(pageable, d, 64, cudaMemcpyDeviceToHost, s));
    EXP_CHECK(cudaStreamSynchronize(s));
  });
  host_time("tiny kernel + D2H 64 B pinned + sync", [&] {
    tiny_kernel<<<1, 32, 0, s>>>(d);
    EXP_CHECK(cudaMemcpyAsync(pinned, d, 64, cudaMemcpyDeviceToHost, s));
    EXP_CHECK(cudaStreamSynchronize(s));
  });
  // The GPU's view: events around kernel, read-back, wait, kernel (the wait's gap included).
  for (int mode = 0; mode < 3; ++mode) {
    cudaEvent_t a{}, b{};
    EXP_CHECK(cudaEventCreate(&a));
    EXP_CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int i = 0; i < 220; ++i) {
      EXP_CHECK(cudaEventRecord(a, s));
      tiny_kernel<<<1, 32, 0, s>>>(d);
      if (mode < 2) {
        EXP_CHECK(cudaMemcpyAsync(mode == 0 ? pageable : pinned, d, 64, cudaMemcpyDeviceToHost, s));
        EXP_CHECK(cudaStreamSynchronize(s));
      }
      tiny_kernel<<<1, 32, 0, s>>>(d);
      EXP_CHECK(cudaEventRecord(b, s));
      EXP_CHECK(cudaEventSynchronize(b));
      float t = 0;
      EXP_CHECK(cudaEventElapsedTime(&t, a, b));
      if (i >= 20) { ms.push_back(t * 1000); }
    }
    std::sort(ms.begin(), ms.end());
    char const* what[] = {"GPU: kernel, D2H pageable, host wait, kernel",
                          "GPU: kernel, D2H pinned, host wait, kernel", "GPU: kernel, kernel"};
    std::printf("%-58s gpu  %8.2f us (p90 %8.2f)\n", what[mode], ms[ms.size() / 2],
                ms[ms.size() * 9 / 10]);
    EXP_CHECK(cudaEventDestroy(a));
    EXP_CHECK(cudaEventDestroy(b));
  }
  EXP_CHECK(cudaFreeHost(pinned));
  EXP_CHECK(cudaFree(d));
  EXP_CHECK(cudaStreamDestroy(s));
  return 0;
}
