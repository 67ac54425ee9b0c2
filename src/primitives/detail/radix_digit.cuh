#pragma once
// Internal (device): radix digits of keys and striped tile loads, shared by the radix agents.
#include <joinery/types.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

/// The digit [bit_offset, bit_offset + bits) of an unsigned key; `mask` = 2^bits - 1.
/// bit_offset < the key's width (the public functions check bit_offset + bits <= width).
template <class K>
struct radix_digit {
  int bit_offset;
  K mask;
  __host__ __device__ radix_digit(int offset, int bits)
      : bit_offset(offset), mask(static_cast<K>((K{1} << bits) - 1)) {}
  __device__ __forceinline__ unsigned operator()(K key) const {
    return static_cast<unsigned>((key >> bit_offset) & mask);
  }
};

/// Loads a tile of Threads x VT items "striped": item j of thread t is tile[j * Threads + t], so
/// that each warp reads consecutive addresses. Partial tiles (Full = false) load the first
/// `valid` items only; the other registers are left unset and must not be used.
template <int Threads, int VT, bool Full, class T>
__device__ __forceinline__ void load_striped(T const* __restrict__ in, size_type tile_base,
                                             int valid, T (&items)[VT]) {
#pragma unroll
  for (int j = 0; j < VT; ++j) {
    int const idx = j * Threads + static_cast<int>(threadIdx.x);
    if (Full || idx < valid) { items[j] = in[tile_base + idx]; }
  }
}

/// Whether item j of this thread lies within the first `valid` items of a striped tile.
template <int Threads, bool Full>
__device__ __forceinline__ bool striped_valid(int j, int valid) {
  return Full || j * Threads + static_cast<int>(threadIdx.x) < valid;
}

}  // namespace joinery::detail::gpu
