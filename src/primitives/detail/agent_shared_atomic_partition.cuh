#pragma once
// Internal (device, tile agent): the reorder of Rui & Tu's Algorithm 2. A block owns a
// contiguous range of rows (the same range its histogram counted); its shared memory holds, per
// digit, the block's first output slot (64-bit, from the global scan of all block histograms)
// and a 32-bit count of the slots claimed so far. Each thread loads VT tuples of a tile into
// registers, then claims one slot per tuple with a shared atomic and writes the tuple there.
// Slots of one (block, digit) are claimed in an arbitrary order: the output is not stable.
#include "primitives/detail/radix_digit.cuh"
#include "primitives/partition_dispatch.hpp"

#include <type_traits>

namespace joinery::detail::gpu {

template <int Threads>
struct block_output_cursors {
  unsigned long long* base;  // shared, `fanout` entries: first output slot of (this block, digit)
  unsigned* claimed;         // shared, `fanout` entries: slots claimed so far
  int fanout;

  /// Loads this block's column of the scanned digit-major histogram; the caller synchronises.
  __device__ __forceinline__ void load(std::int64_t const* scanned, size_type stride,
                                       size_type column) {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += Threads) {
      base[p] = static_cast<unsigned long long>(scanned[static_cast<size_type>(p) * stride + column]);
      claimed[p] = 0;
    }
  }
  __device__ __forceinline__ size_type claim(unsigned digit) {
    unsigned const local = atomicAdd(&claimed[digit], 1u);
    return static_cast<size_type>(base[digit] + local);
  }
};

template <class Policy, class K, class P>
struct agent_shared_atomic_partition {
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int vt = Policy::items_per_thread;
  static constexpr int tile = Policy::tile_items;
  static constexpr bool has_payload = !std::is_same_v<P, no_payload>;

  block_output_cursors<threads>& cursors;
  radix_digit<K> digit;
  K const* __restrict__ keys;
  P const* __restrict__ payload;
  K* __restrict__ keys_out;
  P* __restrict__ payload_out;

  template <bool Full>
  __device__ __forceinline__ void consume_tile(size_type base, int valid) {
    K k[vt];
    load_striped<threads, vt, Full>(keys, base, valid, k);
    [[maybe_unused]] P v[has_payload ? vt : 1];
    if constexpr (has_payload) { load_striped<threads, vt, Full>(payload, base, valid, v); }
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      if (striped_valid<threads, Full>(j, valid)) {
        size_type const slot = cursors.claim(digit(k[j]));
        keys_out[slot] = k[j];
        if constexpr (has_payload) { payload_out[slot] = v[j]; }
      }
    }
  }

  /// Moves rows [begin, end); needs the cursors loaded and synchronised.
  __device__ __forceinline__ void consume_range(size_type begin, size_type end) {
    size_type base = begin;
    for (; base + tile <= end; base += tile) { consume_tile<true>(base, tile); }
    if (base < end) { consume_tile<false>(base, static_cast<int>(end - base)); }
  }
};

}  // namespace joinery::detail::gpu
