#pragma once
// Internal (device, tile agent): block-local pre-scatter radix partitioning (Maltenberger et al.
// 2022, section 3.1.2). A block owns a contiguous range of rows (the range its histogram
// counted) and walks it a tile of Threads x VT tuples at a time, in order:
//   1. load the tile "warp-striped" (warp w owns tile positions [w * 32 * VT, (w+1) * 32 * VT),
//      item j of lane l is position w * 32 * VT + j * 32 + l: coalesced, and in input order);
//   2. rank each tuple within its warp by digit: __match_any_sync over the lanes, then one
//      per-warp 16-bit counter per digit (only the lowest lane of a digit group touches it), so
//      ranks follow input order;
//   3. per digit, an exclusive scan over the warps and a block scan over the digits turn the
//      counters into the tile-local first slot of (digit, warp): tuples of one digit become one
//      contiguous run of the tile, in input order;
//   4. write the tuples to shared memory at their slots, then copy the tile out in slot order:
//      slot s of digit d goes to rebase[d] + s, so consecutive threads write consecutive
//      addresses within each run (coalesced), instead of one scattered store per tuple.
// rebase[d] (64-bit) is the block's write cursor of digit d minus the tile-local start of d; it
// starts at the block's first slot of d (the global scan of the per-block histograms) and moves
// by the tile's count of d after each tile. Tiles in order, ranks in input order, blocks in order
// of the digit-major scan: the output is STABLE (rows of one partition keep their input order).
//
// Shared memory (dynamic): rebase[fanout] (u64), prev_end[fanout] (u16: end of the digit's run
// in the previous tile), then one region used first by the counters (fanout x warps x u16,
// digit-major: the warps' counters of a digit are 16 contiguous bytes for 8 warps) and then by
// the tile buffer (tile keys, then tile payloads). __syncthreads separate every phase that
// crosses warps; the region is reused only after the previous tile's copy-out.
#include "primitives/detail/radix_digit.cuh"
#include "primitives/partition_dispatch.hpp"

#include <cub/block/block_scan.cuh>

#include <cstdint>
#include <type_traits>

namespace joinery::detail::gpu {

template <class Policy, class K, class P>
struct agent_block_scatter_partition {
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int vt = Policy::items_per_thread;
  static constexpr int tile = Policy::tile_items;
  static constexpr int warps = Policy::warps;
  static constexpr bool has_payload = !std::is_same_v<P, no_payload>;
  using payload_t = std::conditional_t<has_payload, P, unsigned char>;
  using block_scan = cub::BlockScan<unsigned, threads>;

  static_assert(threads % 32 == 0 && warps % 8 == 0,
                "the counters of one digit are read as 16-byte vectors (8 warps each)");
  static_assert(tile <= 65535, "tile-local slots must fit the 16-bit counters");

  /// Bytes of dynamic shared memory for a fanout.
  __host__ __device__ static constexpr std::size_t smem_bytes(int fanout) {
    return region_offset(fanout) + region_bytes(fanout);
  }
  __host__ __device__ static constexpr std::size_t region_offset(int fanout) {
    return (static_cast<std::size_t>(fanout) * 10 + 15) / 16 * 16;
  }
  __host__ __device__ static constexpr std::size_t region_bytes(int fanout) {
    std::size_t const counters = static_cast<std::size_t>(fanout) * warps * 2;
    std::size_t const buffer = static_cast<std::size_t>(tile) * (sizeof(K) + (has_payload ? sizeof(P) : 0));
    return counters > buffer ? counters : buffer;
  }

  unsigned long long* rebase;  // shared, fanout
  std::uint16_t* prev_end;     // shared, fanout (tile-local, < tile)
  std::uint16_t* counters;     // shared, fanout x warps (aliases the buffers)
  K* kbuf;                     // shared, tile
  payload_t* pbuf;             // shared, tile (unused without payload)
  typename block_scan::TempStorage& scan_storage;
  int fanout;
  radix_digit<K> digit;
  K const* __restrict__ keys;
  P const* __restrict__ payload;
  K* __restrict__ keys_out;
  P* __restrict__ payload_out;

  __device__ __forceinline__ agent_block_scatter_partition(
    unsigned char* smem, typename block_scan::TempStorage& storage, int fanout_,
    radix_digit<K> digit_, K const* keys_, P const* payload_, K* keys_out_, P* payload_out_)
      : rebase(reinterpret_cast<unsigned long long*>(smem)),
        prev_end(reinterpret_cast<std::uint16_t*>(smem + sizeof(unsigned long long) * fanout_)),
        counters(reinterpret_cast<std::uint16_t*>(smem + region_offset(fanout_))),
        kbuf(reinterpret_cast<K*>(smem + region_offset(fanout_))),
        pbuf(reinterpret_cast<payload_t*>(smem + region_offset(fanout_) + sizeof(K) * tile)),
        scan_storage(storage),
        fanout(fanout_),
        digit(digit_),
        keys(keys_),
        payload(payload_),
        keys_out(keys_out_),
        payload_out(payload_out_) {}

  /// Loads this block's column of the scanned digit-major histogram; the caller synchronises.
  __device__ __forceinline__ void load_cursors(std::int64_t const* scanned, size_type stride,
                                               size_type column) {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += threads) {
      rebase[p] = static_cast<unsigned long long>(scanned[static_cast<size_type>(p) * stride + column]);
      prev_end[p] = 0;
    }
  }

  /// Moves the tile [base, base + valid). Entered with the region free (block synchronised
  /// after the previous tile's copy-out); leaves it synchronised the same way.
  template <bool Full>
  __device__ __forceinline__ void consume_tile(size_type base, int valid) {
    int const tid = static_cast<int>(threadIdx.x);
    int const lane = tid & 31;
    int const warp = tid >> 5;
    int const first = warp * 32 * vt + lane;  // tile position of this thread's item 0

    // 1. Load (warp-striped).
    K k[vt];
    [[maybe_unused]] payload_t v[has_payload ? vt : 1];
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      int const idx = first + j * 32;
      if (Full || idx < valid) {
        k[j] = keys[base + idx];
        if constexpr (has_payload) { v[j] = payload[base + idx]; }
      }
    }
    // Zero the counters (16-byte stores; fanout x warps x 2 B is a multiple of 16).
    {
      auto* c4 = reinterpret_cast<uint4*>(counters);
      int const words = fanout * warps / 8;
      for (int i = tid; i < words; i += threads) { c4[i] = make_uint4(0, 0, 0, 0); }
    }
    __syncthreads();

    // 2. Rank within the warp, in input order (item j before j + 1, lower lanes first).
    unsigned pos[vt];
    unsigned const lanes_below = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      bool const ok = Full || first + j * 32 < valid;
      unsigned const d = ok ? digit(k[j]) : 0xffffffffu;  // invalid lanes group among themselves
      unsigned const peers = __match_any_sync(0xffffffffu, d);
      int const leader = __ffs(static_cast<int>(peers)) - 1;
      unsigned c = 0;
      if (ok && lane == leader) {
        std::uint16_t& slot = counters[d * warps + warp];
        c = slot;
        slot = static_cast<std::uint16_t>(c + __popc(peers));
      }
      c = __shfl_sync(0xffffffffu, c, leader);
      pos[j] = c + __popc(peers & lanes_below);
      __syncwarp();  // the next item's leader may read what this one wrote
    }
    __syncthreads();

    // 3. Counters -> tile-local first slot of (digit, warp). Thread t owns the digits
    // [t * dpt, (t + 1) * dpt) (dpt = 1 while fanout <= threads).
    {
      int const dpt = fanout > threads ? fanout / threads : 1;
      int const d0 = tid * dpt;
      int const d1 = d0 + dpt < fanout ? d0 + dpt : fanout;
      unsigned total = 0;
      for (int d = d0; d < d1; ++d) {
        auto const* row = reinterpret_cast<uint4 const*>(counters + d * warps);
#pragma unroll
        for (int q = 0; q < warps / 8; ++q) {
          uint4 const r = row[q];
          total += (r.x & 0xffffu) + (r.x >> 16) + (r.y & 0xffffu) + (r.y >> 16) +
                   (r.z & 0xffffu) + (r.z >> 16) + (r.w & 0xffffu) + (r.w >> 16);
        }
      }
      unsigned start = 0;
      block_scan(scan_storage).ExclusiveSum(total, start);
      for (int d = d0; d < d1; ++d) {
        std::uint16_t* row = counters + d * warps;
        unsigned run = start;
#pragma unroll
        for (int w = 0; w < warps; ++w) {
          unsigned const c = row[w];
          row[w] = static_cast<std::uint16_t>(run);
          run += c;
        }
        // Cursor of d = rebase + end of d's run in the previous tile; slot s of this tile's run
        // [start, run) goes to cursor + (s - start).
        rebase[d] = rebase[d] + prev_end[d] - start;
        prev_end[d] = static_cast<std::uint16_t>(run);
        start = run;
      }
    }
    __syncthreads();

    // 4. Slots, then the tuples into shared memory in digit order (the buffer aliases the
    // counters: every slot is read before any tuple is written).
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      if (Full || first + j * 32 < valid) { pos[j] += counters[digit(k[j]) * warps + warp]; }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      if (Full || first + j * 32 < valid) {
        kbuf[pos[j]] = k[j];
        if constexpr (has_payload) { pbuf[pos[j]] = v[j]; }
      }
    }
    __syncthreads();

    // 5. Copy out in slot order: runs of one digit go to consecutive addresses.
#pragma unroll
    for (int i = 0; i < vt; ++i) {
      int const s = i * threads + tid;
      if (Full || s < valid) {
        K const key = kbuf[s];
        size_type const o = static_cast<size_type>(rebase[digit(key)] + static_cast<unsigned long long>(s));
        keys_out[o] = key;
        if constexpr (has_payload) { payload_out[o] = static_cast<P>(pbuf[s]); }
      }
    }
    __syncthreads();
  }

  /// Moves rows [begin, end); needs the cursors loaded and synchronised.
  __device__ __forceinline__ void consume_range(size_type begin, size_type end) {
    size_type base = begin;
    for (; base + tile <= end; base += tile) { consume_tile<true>(base, tile); }
    if (base < end) { consume_tile<false>(base, static_cast<int>(end - base)); }
  }
};

}  // namespace joinery::detail::gpu
