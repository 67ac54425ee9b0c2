#pragma once
// Internal (device, tile agent): radix partitioning with software write-combining in shared
// memory (Lutz et al. 2022, section 4, the "Shared" variant), writing to device memory.
//
// Each block keeps, per digit, a buffer of B tuples in shared memory and a fill count. A tile's
// tuples claim buffer slots with one shared atomic each; a full buffer is written out by one warp
// as B consecutive tuples at a slot range taken with one global atomic on the digit's write
// cursor (initialised to the digit's first output row). Writes are therefore whole runs of B
// tuples (B x key width >= one 32-byte sector by the policy), however short a digit's run within
// one tile is. Not stable: runs land in the order blocks flush them.
//
// A tile is processed in rounds separated by barriers, so no thread waits on another inside a
// warp: round 0 inserts every tuple (those that find their buffer full stay pending in
// registers); while any tuple is pending, the warps flush every full buffer, and each pending
// tuple moves down by B slots and is stored once its slot lies in the buffer again. Any skew
// (every tuple of a tile in one digit) just takes more rounds.
#include "primitives/detail/radix_digit.cuh"
#include "primitives/partition_dispatch.hpp"

#include <cstddef>
#include <type_traits>

namespace joinery::detail::gpu {

template <class Policy, class K, class P>
struct agent_swwc_partition {
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int vt = Policy::items_per_thread;
  static constexpr int tile = Policy::tile_items;
  static constexpr int warps = threads / 32;
  static constexpr bool has_payload = !std::is_same_v<P, no_payload>;
  using pay_t = std::conditional_t<has_payload, P, K>;  // buffer element type (unused if none)

  /// Dynamic shared memory: key buffers, payload buffers (wider element first is not needed:
  /// fanout x b is even, so the second array stays 8-byte aligned), fill counts, flush lists.
  __host__ __device__ static constexpr std::size_t smem_bytes(int fanout, int b) {
    auto const slots = static_cast<std::size_t>(fanout) * static_cast<std::size_t>(b);
    return slots * sizeof(K) + (has_payload ? slots * sizeof(P) : 0) +
           sizeof(unsigned) * static_cast<std::size_t>(fanout) + sizeof(int) * 32 * warps;
  }

  K* buf_keys;        // shared, fanout x b
  pay_t* buf_pay;     // shared, fanout x b (has_payload only)
  unsigned* fill;     // shared, fanout: slots claimed in the digit's buffer
  int* flush_lists;   // shared, 32 per warp: the digits one warp flushes in one chunk
  int fanout;
  int log2_b;
  radix_digit<K> digit;
  K const* __restrict__ keys;
  P const* __restrict__ payload;
  K* __restrict__ keys_out;
  P* __restrict__ payload_out;
  unsigned long long* __restrict__ cursors;  // global, fanout: next free output row per digit

  __device__ __forceinline__ agent_swwc_partition(unsigned char* smem, int fanout_, int log2_b_,
                                                  radix_digit<K> digit_, K const* keys_,
                                                  P const* payload_, K* keys_out_,
                                                  P* payload_out_,
                                                  unsigned long long* cursors_)
      : fanout(fanout_), log2_b(log2_b_), digit(digit_), keys(keys_), payload(payload_),
        keys_out(keys_out_), payload_out(payload_out_), cursors(cursors_) {
    auto const slots = static_cast<std::size_t>(fanout) << log2_b;
    buf_keys = reinterpret_cast<K*>(smem);
    unsigned char* next = smem + slots * sizeof(K);
    buf_pay = reinterpret_cast<pay_t*>(next);
    if constexpr (has_payload) { next += slots * sizeof(P); }
    fill = reinterpret_cast<unsigned*>(next);
    flush_lists = reinterpret_cast<int*>(next + sizeof(unsigned) * fanout);
  }

  /// Zeroes the fill counts; the caller synchronises before the first tile.
  __device__ __forceinline__ void init() {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += threads) { fill[p] = 0; }
  }

  __device__ __forceinline__ void store(unsigned d, unsigned slot, K k, pay_t v) {
    auto const i = (static_cast<std::size_t>(d) << log2_b) + slot;
    buf_keys[i] = k;
    if constexpr (has_payload) { buf_pay[i] = v; }
  }

  /// Writes out buffers: with Drain, every non-empty one (its fill count of tuples, at most b),
  /// else every full one (b tuples; fill drops by b). Warps split the digits in chunks of 32;
  /// 32 / b buffers are written per warp step. Needs a barrier before (the buffers' contents)
  /// and after (fill counts, and the buffers reused).
  template <bool Drain>
  __device__ __forceinline__ void flush() {
    int const lane = static_cast<int>(threadIdx.x) & 31;
    int const warp = static_cast<int>(threadIdx.x) >> 5;
    int* list = flush_lists + 32 * warp;
    unsigned const b = 1U << log2_b;
    int const per_step = 32 >> log2_b;
    int const e = lane & static_cast<int>(b - 1);       // tuple of the buffer this lane moves
    int const leader = lane & ~static_cast<int>(b - 1);  // lane that took the write cursor
    for (int c = warp * 32; c < fanout; c += warps * 32) {
      int const p = c + lane;
      unsigned const f = p < fanout ? fill[p] : 0U;
      bool const take = Drain ? f > 0 : f >= b;
      unsigned const mask = __ballot_sync(0xffffffffU, take);
      if (mask == 0) { continue; }
      if (take) { list[__popc(mask & ((1U << lane) - 1U))] = p; }
      __syncwarp();
      int const count = __popc(mask);
      for (int first = 0; first < count; first += per_step) {
        int const r = first + (lane >> log2_b);
        bool const active = r < count;
        int const q = active ? list[r] : 0;
        unsigned const size = !active ? 0U : Drain ? fill[q] : b;
        unsigned long long base = 0;
        if (active && e == 0) { base = atomicAdd(cursors + q, static_cast<unsigned long long>(size)); }
        base = __shfl_sync(0xffffffffU, base, leader);
        if (static_cast<unsigned>(e) < size) {
          auto const i = (static_cast<std::size_t>(q) << log2_b) + static_cast<std::size_t>(e);
          keys_out[base + static_cast<unsigned long long>(e)] = buf_keys[i];
          if constexpr (has_payload) {
            payload_out[base + static_cast<unsigned long long>(e)] = buf_pay[i];
          }
        }
      }
      __syncwarp();  // every lane read its fill count and the list before they change
      if (take) { fill[p] = Drain ? 0U : f - b; }
    }
  }

  template <bool Full>
  __device__ __forceinline__ void consume_tile(size_type base, int valid) {
    K k[vt];
    load_striped<threads, vt, Full>(keys, base, valid, k);
    pay_t v[vt] = {};
    if constexpr (has_payload) { load_striped<threads, vt, Full>(payload, base, valid, v); }
    unsigned const b = 1U << log2_b;
    unsigned d[vt];
    unsigned slot[vt];
    bool pending = false;
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      slot[j] = 0;
      if (striped_valid<threads, Full>(j, valid)) {
        d[j] = digit(k[j]);
        slot[j] = atomicAdd(fill + d[j], 1U);
        if (slot[j] < b) {
          store(d[j], slot[j], k[j], v[j]);
        } else {
          pending = true;
        }
      }
    }
    // A tuple past its buffer's end waits for the buffer to be written out, then takes the
    // slot b lower (its claim counted in `fill`, so the buffer is full until it is stored).
    while (__syncthreads_or(pending)) {
      flush<false>();
      __syncthreads();
      pending = false;
#pragma unroll
      for (int j = 0; j < vt; ++j) {
        if (striped_valid<threads, Full>(j, valid) && slot[j] >= b) {
          slot[j] -= b;
          if (slot[j] < b) {
            store(d[j], slot[j], k[j], v[j]);
          } else {
            pending = true;
          }
        }
      }
    }
  }
};

}  // namespace joinery::detail::gpu
