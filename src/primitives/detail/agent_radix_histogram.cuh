#pragma once
// Internal (device, tile agent): counts the digits of a contiguous range of keys, a tile of
// Threads x VT keys at a time (loads first, then the shared atomics), into a block histogram.
#include "primitives/detail/block_radix_histogram.cuh"
#include "primitives/detail/radix_digit.cuh"

namespace joinery::detail::gpu {

template <class Policy, class K>
struct agent_radix_histogram {
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int vt = Policy::items_per_thread;
  static constexpr int tile = Policy::tile_items;

  block_radix_histogram<threads>& hist;
  radix_digit<K> digit;

  template <bool Full>
  __device__ __forceinline__ void consume_tile(K const* __restrict__ keys, size_type base,
                                               int valid) {
    K items[vt];
    load_striped<threads, vt, Full>(keys, base, valid, items);
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      if (striped_valid<threads, Full>(j, valid)) { hist.count(digit(items[j])); }
    }
  }

  /// Counts keys[begin, end); needs the counters zeroed and synchronised.
  __device__ __forceinline__ void consume_range(K const* __restrict__ keys, size_type begin,
                                                size_type end) {
    size_type base = begin;
    for (; base + tile <= end; base += tile) { consume_tile<true>(keys, base, tile); }
    if (base < end) { consume_tile<false>(keys, base, static_cast<int>(end - base)); }
  }
};

}  // namespace joinery::detail::gpu
