#pragma once
// Shared by the standalone GPU probes (bench/experiments): a CUDA check that exits with the
// failing call, and the median of 5 CUDA-event timings after one warm-up run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define EXP_CHECK(call)                                                                      \
  do {                                                                                       \
    cudaError_t const e_ = (call);                                                           \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                    \
                   cudaGetErrorString(e_));                                                  \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

template <class Launch>
float median_ms(Launch&& launch) {
  cudaEvent_t start, stop;
  EXP_CHECK(cudaEventCreate(&start));
  EXP_CHECK(cudaEventCreate(&stop));
  launch();  // warm-up
  EXP_CHECK(cudaGetLastError());
  std::vector<float> ms;
  for (int r = 0; r < 5; ++r) {
    EXP_CHECK(cudaEventRecord(start));
    launch();
    EXP_CHECK(cudaEventRecord(stop));
    EXP_CHECK(cudaEventSynchronize(stop));
    EXP_CHECK(cudaGetLastError());
    float t = 0;
    EXP_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  EXP_CHECK(cudaEventDestroy(start));
  EXP_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
