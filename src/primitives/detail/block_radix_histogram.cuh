#pragma once
// Internal (device, block level): a radix histogram in shared memory, counted with shared
// atomics by all threads of a block, then written per block or merged into a global one
// (Rui & Tu 2017, Algorithm 1).
#include <joinery/types.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

template <int Threads>
struct block_radix_histogram {
  unsigned* counters;  // shared memory, `fanout` entries
  int fanout;

  /// Zeroes the counters. The caller synchronises (__syncthreads) before counting.
  __device__ __forceinline__ void zero() {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += Threads) { counters[p] = 0; }
  }
  __device__ __forceinline__ void count(unsigned digit) { atomicAdd(&counters[digit], 1u); }

  /// out[p * stride + column] = count of p: the digit-major layout whose exclusive scan gives
  /// each block its first output slot per digit. The caller synchronises after counting.
  __device__ __forceinline__ void store_column(std::int64_t* out, size_type stride,
                                               size_type column) const {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += Threads) {
      out[static_cast<size_type>(p) * stride + column] = static_cast<std::int64_t>(counters[p]);
    }
  }
  /// out[p] += count of p (global atomics; `out` zeroed before the kernel). The caller
  /// synchronises after counting.
  __device__ __forceinline__ void merge_into(std::int64_t* out) const {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += Threads) {
      unsigned const c = counters[p];
      if (c != 0) {
        atomicAdd(reinterpret_cast<unsigned long long*>(out + p),
                  static_cast<unsigned long long>(c));
      }
    }
  }
};

}  // namespace joinery::detail::gpu
