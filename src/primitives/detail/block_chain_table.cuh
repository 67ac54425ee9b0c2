#pragma once
// Internal (device, block level): a bucket-chaining hash table of one partition's keys in shared
// memory, built and probed by one thread block (the per-partition table of Sioulas et al. and
// Lutz et al.). Heads per bucket (32-bit, `end` when empty), a 16-bit link per key, the keys;
// building inserts each key at its bucket's head with one atomic exchange, so chains need no
// locks and hold keys in no particular order. Entry t is the t-th key of the source. The block
// must have exactly Threads threads (the loops step by it), and a build at most Capacity keys.
#include "primitives/detail/hash.cuh"

#include <cstddef>
#include <cstdint>

namespace joinery::detail::gpu {

template <class U, int Threads, int Buckets, int Capacity>
struct block_chain_table {
  static_assert((Buckets & (Buckets - 1)) == 0, "buckets must be a power of two");
  static_assert(Capacity < 0xffff, "16-bit links: at most 65534 keys");
  static constexpr std::uint16_t end = 0xffff;
  static constexpr std::size_t keys_at = sizeof(std::uint32_t) * Buckets + sizeof(std::uint16_t) * Capacity;
  static_assert(keys_at % sizeof(U) == 0, "the keys must stay aligned");
  /// Dynamic shared memory the table takes at the start of the block's array.
  static constexpr std::size_t smem_bytes = keys_at + sizeof(U) * Capacity;

  std::uint32_t* heads;
  std::uint16_t* next;
  U* keys;

  __device__ explicit block_chain_table(unsigned char* smem)
      : heads(reinterpret_cast<std::uint32_t*>(smem)),
        next(reinterpret_cast<std::uint16_t*>(smem + sizeof(std::uint32_t) * Buckets)),
        keys(reinterpret_cast<U*>(smem + keys_at)) {}

  __device__ __forceinline__ static std::uint32_t bucket_of(U k) {
    if constexpr (sizeof(U) == 4) {
      return fmix32(k) & (Buckets - 1);
    } else {
      return static_cast<std::uint32_t>(fmix64(k)) & (Buckets - 1);
    }
  }

  /// Block-wide (every thread calls it): replaces the table by src[0, n), n <= Capacity. Starts
  /// and ends with a barrier, so the previous table may be probed until the call.
  __device__ void build(U const* __restrict__ src, int n) {
    __syncthreads();
    for (int b = static_cast<int>(threadIdx.x); b < Buckets; b += Threads) { heads[b] = end; }
    __syncthreads();
    for (int t = static_cast<int>(threadIdx.x); t < n; t += Threads) {
      U const k = src[t];
      keys[t] = k;
      next[t] = static_cast<std::uint16_t>(atomicExch(&heads[bucket_of(k)], static_cast<std::uint32_t>(t)));
    }
    __syncthreads();
  }

  /// Calls f(t) for every entry t whose key equals k (one thread, any number of threads at once).
  template <class F>
  __device__ __forceinline__ void for_each_match(U k, F&& f) const {
    for (std::uint32_t t = heads[bucket_of(k)]; t != end; t = next[t]) {
      if (keys[t] == k) { f(static_cast<int>(t)); }
    }
  }
};

}  // namespace joinery::detail::gpu
