// Radix hash join (Rui & Tu 2017 section 3.2; the Sioulas / Lutz per-partition design).
//
// 1. Partition: both sides radix-partitioned on the low B bits of the key, B chosen so that a
//    build partition averages half a shared-memory chunk. The partitioning is CUB's onesweep radix
//    sort restricted to those bits (the fastest stable partitioning measured among our
//    primitives, see docs/BENCHMARKS.md), carrying 32-bit row ids; two 8-bit passes at 2^27 rows.
//    When no GFTR positions can be asked for (so the order within a partition is free), the low
//    8 bits (9 or 10 at 17 or 18) go first through swwc, which generates the row ids while it
//    reads the keys, and CUB sorts the rest: no row-id array is written and read back
//    (JOINERY_RADIX_PARTITION=cub keeps CUB alone).
// 2. Work items: each co-partition is cut into items of at most one build chunk's worth of work.
//    A build partition that fits one chunk (C tuples) gets items of up to P_MAX probe tuples,
//    the table built once per item; a larger one (skew) is split into chunks, and its probe side
//    into one-tile items, each looping over every chunk. So oversized partitions spread over many
//    blocks in the same launch instead of serialising one block.
// 3. Join: one block per item builds a bucket-chaining hash table of the chunk in shared memory
//    (heads by atomic exchange, next links, keys) and probes it with its probe tuples, which stay
//    in registers across chunks.
// Output: each tile counts its matches in shared memory (cheap), scans them, then writes. First
// directly: the output is sized for one row per probe row and each tile claims its rows with one
// atomic; only when more rows turn up (many-to-many) is it three-phase (count per item, scan,
// write at the item's offset). One kernel serves the three modes; inner joins writing row ids
// without payload sums take a lean kernel for their direct pass instead (two barriers a tile).
#include "join/gpu/bundle.cuh"
#include "join/gpu/join_common.cuh"
#include "join/gpu/join_sort.hpp"
#include "primitives/detail/block_chain_table.cuh"
#include "primitives/detail/hash.cuh"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

namespace joinery::detail::gpu {

namespace {

struct radix_join_policy {
  static constexpr int threads = 256;
  static constexpr int items_per_thread = 4;
  /// Resident blocks per SM the kernels are compiled for (registers capped to allow them).
  static constexpr int min_blocks = 4;
  /// The lean kernel's (48 registers with 4-byte keys, the 40 KiB table: five fit an SM).
  static constexpr int lean_min_blocks(std::size_t key_bytes) { return key_bytes == 4 ? 5 : 4; }
  static constexpr int tile = threads * items_per_thread;
  /// Build tuples per shared-memory chunk, and buckets (a power of two).
  static constexpr int chunk = 4096;
  static constexpr int buckets = 4096;
  /// Most probe tuples of a work item when the build partition fits one chunk; a partition's
  /// probe side is split evenly into the fewest such items (whole tiles), so that the usual
  /// partition of a little over 4096 probe tuples is one item, not a full one and a sliver
  /// that builds the same table again.
  static constexpr int max_probe_span = 5 * tile;
  static constexpr int max_radix_bits = 22;
  /// Direct output is skipped when a count of the first 1/sample_every of the work items,
  /// scaled by |S| over the probe rows they span, comes to more than direct_margin x |S| rows.
  static constexpr size_type sample_every = 64;
  static constexpr double direct_margin = 1.1;
};

template <class U>
struct radix_join_args {
  U const* build_keys;  // partitioned
  std::uint32_t const* build_rows;
  size_type const* build_offsets;  // fanout + 1
  U const* probe_keys;
  std::uint32_t const* probe_rows;
  size_type const* probe_offsets;
  std::int32_t const* item_partition;  // num_items: the partition of each work item
  size_type const* item_probe;  // 2 x num_items: each item's probe range [begin, end)
  bool multi_chunk_only;        // the lean kernel took the one-chunk items
  size_type fanout;
  size_type num_items;
  join_kind kind;
  row_sums sums;
  bool with_checksum;
  key_codec codec;
  size_type* item_rows;           // count mode: output rows of each item
  size_type const* item_offsets;  // write mode: first output row of each item
  unsigned long long* claimed;    // direct mode: output rows claimed so far
  size_type capacity;             // direct mode: rows the output has room for
  void* out_build;  // Id (the kernel's): int64, or int32 for an int32 index
  void* out_probe;
  // Fused table output (GFTR with every payload of a side in its carried bundle): the output
  // key and each side's columns, unpacked from the carried values at the match's positions.
  U* key_out;
  void const* build_bundle;  // carried values, 4 or 8 bytes (build_bundle_bytes); none: 0
  void const* probe_bundle;
  int build_bundle_bytes;
  int probe_bundle_bytes;
  bundle_fields build_fields;
  bundle_fields probe_fields;
  unsigned long long* checksum;
};

/// Chunks of a build partition of nb tuples (an empty partition still has one, empty, chunk).
__host__ __device__ __forceinline__ size_type chunks_of(size_type nb) {
  return nb <= radix_join_policy::chunk ? 1 : ceil_div(nb, radix_join_policy::chunk);
}

/// Probe tuples per work item of a partition of nb build and np probe tuples: one tile when the
/// build side takes several chunks (each item loops over all of them), else np split evenly
/// into the fewest items of at most max_probe_span, rounded up to whole tiles.
__host__ __device__ __forceinline__ size_type probe_span_of(size_type nb, size_type np) {
  using P = radix_join_policy;
  if (chunks_of(nb) > 1 || np <= 0) { return P::tile; }
  size_type const items = ceil_div(np, P::max_probe_span);
  return ceil_div(ceil_div(np, items), P::tile) * P::tile;
}

/// The shared-memory table of one build chunk (src/primitives/detail/block_chain_table.cuh).
template <class U>
using chunk_table = block_chain_table<U, radix_join_policy::threads, radix_join_policy::buckets,
                                      radix_join_policy::chunk>;

/// Partition of work item w: the last p with item_start[p] <= w.
__device__ __forceinline__ size_type partition_of(size_type const* item_start, size_type fanout,
                                                  size_type w) {
  size_type lo = 0;
  size_type hi = fanout;  // item_start[fanout] > w
  while (hi - lo > 1) {
    size_type const mid = lo + (hi - lo) / 2;
    if (item_start[mid] <= w) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// Count: output rows per work item. Write: the rows at the item's offset. Direct (no count
/// pass): each tile claims its rows with one atomic; a tile that would pass the capacity writes
/// nothing and its block stops (the caller then counts and writes).
enum class radix_mode { count, write, direct };

__device__ __forceinline__ std::uint64_t load_bundle(void const* values, int bytes,
                                                     std::uint32_t at) {
  return bytes == 8 ? static_cast<std::uint64_t const*>(values)[at]
                    : static_cast<std::uint32_t const*>(values)[at];
}

/// The fused output's row `pos`: the key, then both sides' payloads unpacked from their carried
/// values at the match's positions; returns the payloads' sum.
template <class U>
__device__ __forceinline__ std::uint64_t fused_row(radix_join_args<U> const& a, size_type pos,
                                                   std::uint32_t build_at, std::uint32_t probe_at,
                                                   U key) {
  a.key_out[pos] = key;
  std::uint64_t sum = 0;
  if (a.build_fields.count > 0) {
    sum += store_fields(a.build_fields, pos,
                        load_bundle(a.build_bundle, a.build_bundle_bytes, build_at));
  }
  if (a.probe_fields.count > 0) {
    sum += store_fields(a.probe_fields, pos,
                        load_bundle(a.probe_bundle, a.probe_bundle_bytes, probe_at));
  }
  return sum;
}

/// fused_row, not inlined: the join kernel keeps its registers (inlined, the field loops spill).
template <class U>
__device__ __noinline__ std::uint64_t fused_emit(radix_join_args<U> const& a, size_type pos,
                                                 std::uint32_t build_at, std::uint32_t probe_at,
                                                 U key) {
  return fused_row(a, pos, build_at, probe_at, key);
}

/// Positions (GFTR, write mode) writes positions in the partitioned sides instead of input row
/// ids: a separate instantiation, so the row-id kernels keep their registers. Fused (inner joins,
/// with Positions) writes the output table itself instead of the positions. Id: the type of the
/// row ids written (int32 for an int32 index: half the output bytes).
template <class U, radix_mode Mode, bool Positions = false, bool Fused = false,
          class Id = size_type>
__global__ void __launch_bounds__(radix_join_policy::threads, radix_join_policy::min_blocks)
    radix_join_kernel(__grid_constant__ radix_join_args<U> const a) {
  constexpr bool Write = Mode != radix_mode::count;
  using P = radix_join_policy;
  constexpr int ipt = P::items_per_thread;
  extern __shared__ __align__(16) unsigned char smem[];
  using scan = cub::BlockScan<size_type, P::threads>;
  using reduce = cub::BlockReduce<unsigned long long, P::threads>;
  __shared__ union {
    typename scan::TempStorage scan;
    typename reduce::TempStorage reduce;
  } storage;
  __shared__ size_type tile_first;
  chunk_table<U> table(smem);
  bool const with_matches = a.kind == join_kind::inner || a.kind == join_kind::left_outer;

  for (size_type w = blockIdx.x; w < a.num_items; w += gridDim.x) {
    size_type const p = a.item_partition[w];
    size_type const b0 = a.build_offsets[p];
    size_type const nb = a.build_offsets[p + 1] - b0;
    size_type const chunks = chunks_of(nb);
    if (a.multi_chunk_only && chunks == 1) { continue; }  // block-uniform
    size_type const p0 = a.item_probe[2 * w];
    size_type const p1 = a.item_probe[2 * w + 1];
    auto chunk_rows = [&](size_type c) {
      size_type const left = nb - c * P::chunk;
      return static_cast<int>(left < P::chunk ? left : P::chunk);
    };
    if (chunks == 1) { table.build(a.build_keys + b0, static_cast<int>(nb)); }

    size_type running = Mode == radix_mode::write ? a.item_offsets[w] : 0;
    unsigned long long rows = 0;
    unsigned long long sum = 0;
    // One output row: ids or positions, or (fused) the key and both sides' payloads, whose sum
    // joins the checksum.
    auto emit = [&](size_type pos, std::uint32_t build_at, std::uint32_t probe_at, U key) {
      if constexpr (Fused) {
        sum += fused_emit(a, pos, build_at, probe_at, key);
      } else {
        static_cast<Id*>(a.out_build)[pos] = static_cast<Id>(build_at);
        static_cast<Id*>(a.out_probe)[pos] = static_cast<Id>(probe_at);
      }
    };
    for (size_type tile = p0; tile < p1; tile += P::tile) {
      // Striped: slot j of thread t is probe tuple tile + j * threads + t, so loads coalesce and
      // 1:1 matches of neighbouring threads go to neighbouring output rows.
      size_type const base = tile + threadIdx.x;
      auto item_of = [&](int j) { return base + static_cast<size_type>(j) * P::threads; };
      U k[ipt];
      std::uint32_t c[ipt];  // matches: below 2^32, as build row ids are 32-bit
      std::uint64_t bs[ipt];
      // Chunk-local index of the first match; in write modes with one chunk, then its output
      // value (build row id or position), loaded before the tile's scans so their barriers hide
      // the dependent load.
      std::uint32_t first_t[ipt];
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        k[j] = item_of(j) < p1 ? a.probe_keys[item_of(j)] : U{0};
        c[j] = 0;
        bs[j] = 0;
        first_t[j] = 0;
      }
      // Pass A: count (and sum the build payloads for the checksum).
      for (size_type ch = 0; ch < chunks; ++ch) {
        if (chunks > 1) { table.build(a.build_keys + b0 + ch * P::chunk, chunk_rows(ch)); }
        auto const* rows_of_chunk = a.build_rows + b0 + ch * P::chunk;
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          if (item_of(j) < p1) {
            table.for_each_match(k[j], [&](int t) {
              if (c[j] == 0) { first_t[j] = static_cast<std::uint32_t>(t); }
              ++c[j];
              if (a.sums.build != nullptr && (Write || a.with_checksum)) {
                bs[j] += a.sums.build[rows_of_chunk[t]];
              }
            });
          }
        }
      }
      if constexpr (Write) {
        // Probe row ids (or positions) of the tile, also loaded before the scans.
        std::uint32_t prow[ipt];
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          bool const valid = item_of(j) < p1;
          prow[j] = Positions || !valid ? static_cast<std::uint32_t>(item_of(j))
                                        : a.probe_rows[item_of(j)];
          if (with_matches && chunks == 1 && valid && c[j] == 1) {
            first_t[j] = Positions ? static_cast<std::uint32_t>(b0) + first_t[j]
                                   : a.build_rows[b0 + first_t[j]];
          }
        }
        size_type cursor[ipt];
        tile_offsets<scan>(
            storage.scan,
            [&](int j) { return item_of(j) < p1 ? emitted_rows(a.kind, c[j]) : size_type{0}; },
            cursor, running);
        if constexpr (Mode == radix_mode::direct) {
          if (!claim_tile_rows(a.claimed, a.capacity, running, tile_first, cursor)) { return; }
          running = 0;
        }
        // Pass B: write the matches, then the lone rows of outer / semi / anti joins. With one
        // chunk, an item's only match is known from pass A; the others walk their chains again.
        unsigned again = 0;
        [[maybe_unused]] unsigned single = 0;  // fused: the slots of one match, written below
        if (with_matches) {
#pragma unroll
          for (int j = 0; j < ipt; ++j) {
            if (item_of(j) < p1 && c[j] > 0) {
              if (chunks == 1 && c[j] == 1) {
                if constexpr (Fused) {
                  single |= 1u << j;
                } else {
                  emit(cursor[j], first_t[j], prow[j], k[j]);
                }
              } else {
                again |= 1u << j;
              }
            }
          }
        }
        if constexpr (Fused) {
          // The warp's single matches, compacted: the row writer costs the same for one lane as
          // for 32, so its rounds go by 32 matches, not by slot (at 10% matches every slot of a
          // warp would otherwise run it for a few lanes). Lanes are converged here.
          int const lane = static_cast<int>(threadIdx.x) & 31;
          unsigned votes[ipt];
          int total = 0;
#pragma unroll
          for (int j = 0; j < ipt; ++j) {
            votes[j] = __ballot_sync(0xffffffffu, ((single >> j) & 1u) != 0);
            total += __popc(votes[j]);
          }
          if (total == 32 * ipt) {  // every slot of every lane: nothing to compact
#pragma unroll
            for (int j = 0; j < ipt; ++j) {
              sum += fused_emit(a, cursor[j], first_t[j], prow[j], k[j]);
            }
            total = 0;
          }
          for (int base = 0; base < total; base += 32) {
            int nth = base + lane;  // this lane's match: the nth of slot `slot`
            int slot = -1;
            unsigned vote = 0;
#pragma unroll
            for (int j = 0; j < ipt; ++j) {
              int const here = __popc(votes[j]);
              if (slot < 0 && nth < here) {
                slot = j;
                vote = votes[j];
              } else if (slot < 0) {
                nth -= here;
              }
            }
            int const src = slot >= 0 ? static_cast<int>(__fns(vote, 0, nth + 1)) : lane;
            size_type pos = 0;
            std::uint32_t build_at = 0;
            std::uint32_t probe_at = 0;
            U key{};
#pragma unroll
            for (int j = 0; j < ipt; ++j) {
              auto const pj = __shfl_sync(0xffffffffu, cursor[j], src);
              auto const bj = __shfl_sync(0xffffffffu, first_t[j], src);
              auto const qj = __shfl_sync(0xffffffffu, prow[j], src);
              auto const kj = __shfl_sync(0xffffffffu, k[j], src);
              if (j == slot) {
                pos = pj;
                build_at = bj;
                probe_at = qj;
                key = kj;
              }
            }
            if (slot >= 0) { sum += fused_emit(a, pos, build_at, probe_at, key); }
          }
        }
        // chunks is block-uniform: with several, every thread takes part in the rebuilds.
        if (with_matches && (chunks > 1 || __syncthreads_or(again != 0))) {
          for (size_type ch = 0; ch < chunks; ++ch) {
            if (chunks > 1) { table.build(a.build_keys + b0 + ch * P::chunk, chunk_rows(ch)); }
            // Positions fit 32 bits (sides hold at most max_row_id_rows): fewer registers.
            auto const chunk0 = static_cast<std::uint32_t>(b0 + ch * P::chunk);
            auto const* rows_of_chunk = a.build_rows + b0 + ch * P::chunk;
#pragma unroll
            for (int j = 0; j < ipt; ++j) {
              if (((again >> j) & 1u) != 0) {
                table.for_each_match(k[j], [&](int t) {
                  emit(cursor[j]++,
                       Positions ? chunk0 + static_cast<std::uint32_t>(t) : rows_of_chunk[t],
                       prow[j], k[j]);
                });
              }
            }
          }
        }
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          if (!Fused && item_of(j) < p1) {  // fused: inner joins only, no lone rows
            if (emits_lone_row(a.kind, c[j])) {
              if (a.kind == join_kind::left_outer) {
                static_cast<Id*>(a.out_build)[cursor[j]] = -1;
              }
              static_cast<Id*>(a.out_probe)[cursor[j]] = static_cast<Id>(prow[j]);
            }
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          rows += item_of(j) < p1 ? static_cast<unsigned long long>(emitted_rows(a.kind, c[j])) : 0;
        }
      }
      if (Write || a.with_checksum) {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          if (item_of(j) < p1) {
            std::uint64_t pv = checksum_of(k[j], a.codec);
            if (a.sums.probe != nullptr) { pv += a.sums.probe[a.probe_rows[item_of(j)]]; }
            sum += emitted_checksum(a.kind, c[j], pv, bs[j]);
          }
        }
      }
    }
    if constexpr (!Write) {
      auto const total = reduce(storage.reduce).Sum(rows);
      if (threadIdx.x == 0) { a.item_rows[w] = static_cast<size_type>(total); }
      __syncthreads();
    }
    if (Write || a.with_checksum) {
      auto const block_sum = reduce(storage.reduce).Sum(sum);
      if (threadIdx.x == 0 && block_sum != 0) { atomicAdd(a.checksum, block_sum); }
      __syncthreads();
    }
  }
}

/// The lean direct pass: inner joins writing row ids, without payload sums, over the items whose
/// build partition fits one chunk (the general kernel then takes the others). Per tile it needs
/// two barriers, where the general kernel's block scan and claim take about seven: each warp
/// ranks its rows with ballots (shuffle scans when a probe row has several matches), the warps'
/// totals meet in shared memory (two copies, by tile parity, so no third barrier guards them),
/// and thread 0 claims the tile's rows with one atomic. The checksum is reduced once per block.
template <class U, class Id>
__global__ void __launch_bounds__(radix_join_policy::threads, radix_join_policy::lean_min_blocks(sizeof(U)))
    radix_join_lean_kernel(__grid_constant__ radix_join_args<U> const a) {
  using P = radix_join_policy;
  constexpr int ipt = P::items_per_thread;
  constexpr int warps = P::threads / 32;
  constexpr int per_thread = P::chunk / P::threads;  // build keys a thread inserts, at most
  constexpr unsigned full = 0xffffffffu;
  extern __shared__ __align__(16) unsigned char smem[];
  using reduce = cub::BlockReduce<unsigned long long, P::threads>;
  __shared__ typename reduce::TempStorage reduce_storage;
  __shared__ std::uint32_t warp_rows[2][warps];
  __shared__ size_type tile_at[2];
  chunk_table<U> table(smem);
  int const lane = static_cast<int>(threadIdx.x) & 31;
  int const warp = static_cast<int>(threadIdx.x) >> 5;
  unsigned const lower = (1u << lane) - 1u;
  auto* const out_build = static_cast<Id*>(a.out_build);
  auto* const out_probe = static_cast<Id*>(a.out_probe);
  unsigned long long sum = 0;
  int parity = 0;

  for (size_type w = blockIdx.x; w < a.num_items; w += gridDim.x) {
    size_type const p = a.item_partition[w];
    size_type const b0 = a.build_offsets[p];
    int const nb = static_cast<int>(a.build_offsets[p + 1] - b0);
    if (a.build_offsets[p + 1] - b0 > P::chunk) { continue; }  // block-uniform
    size_type const p0 = a.item_probe[2 * w];
    int const n = static_cast<int>(a.item_probe[2 * w + 1] - p0);  // <= max_probe_span
    // The build: every key loaded before the first insert, the heads reset while they arrive.
    {
      U kb[per_thread];
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {
        int const t = static_cast<int>(threadIdx.x) + r * P::threads;
        kb[r] = t < nb ? a.build_keys[b0 + t] : U{0};
      }
      __syncthreads();  // the previous item's probes are done with the table
      for (int b = static_cast<int>(threadIdx.x); b < P::buckets; b += P::threads) {
        table.heads[b] = chunk_table<U>::end;
      }
      __syncthreads();
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {
        int const t = static_cast<int>(threadIdx.x) + r * P::threads;
        if (t < nb) {
          table.keys[t] = kb[r];
          table.next[t] = static_cast<std::uint16_t>(atomicExch(
            &table.heads[chunk_table<U>::bucket_of(kb[r])], static_cast<std::uint32_t>(t)));
        }
      }
      __syncthreads();
    }
    U const* const keys = a.probe_keys + p0;
    std::uint32_t const* const prows = a.probe_rows + p0;
    std::uint32_t const* const brows = a.build_rows + b0;
    for (int tile = 0; tile < n; tile += P::tile) {
      int const base = tile + static_cast<int>(threadIdx.x);
      U k[ipt];
      std::uint32_t prow[ipt];
      std::uint32_t c[ipt];
      std::uint32_t first[ipt];  // the first match's chunk index, then its build row id
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        int const i = base + j * P::threads;
        k[j] = i < n ? keys[i] : U{0};
        prow[j] = i < n ? prows[i] : 0u;  // issued now: in flight during the walks
        c[j] = 0;
        first[j] = 0;
      }
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        if (base + j * P::threads < n) {
          table.for_each_match(k[j], [&](int t) {
            if (c[j] == 0) { first[j] = static_cast<std::uint32_t>(t); }
            ++c[j];
          });
        }
      }
      bool several = false;
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        sum += static_cast<unsigned long long>(c[j]) * checksum_of(k[j], a.codec);
        several = several || c[j] > 1;
        if (c[j] == 1) { first[j] = brows[first[j]]; }
      }
      // The warp's rows, slot-major: slot j of lane l goes after slots < j of every lane and
      // slot j of lanes < l.
      std::uint32_t off[ipt];
      std::uint32_t warp_total = 0;
      if (!__any_sync(full, several)) {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          unsigned const vote = __ballot_sync(full, c[j] != 0);
          off[j] = warp_total + static_cast<std::uint32_t>(__popc(vote & lower));
          warp_total += static_cast<std::uint32_t>(__popc(vote));
        }
      } else {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          std::uint32_t x = c[j];
#pragma unroll
          for (int d = 1; d < 32; d <<= 1) {
            std::uint32_t const y = __shfl_up_sync(full, x, d);
            if (lane >= d) { x += y; }
          }
          off[j] = warp_total + x - c[j];
          warp_total += __shfl_sync(full, x, 31);
        }
      }
      if (lane == 0) { warp_rows[parity][warp] = warp_total; }
      __syncthreads();
      if (threadIdx.x == 0) {
        size_type rows = 0;
#pragma unroll
        for (int v = 0; v < warps; ++v) { rows += warp_rows[parity][v]; }
        tile_at[parity] =
          rows == 0 ? 0 : static_cast<size_type>(atomicAdd(a.claimed, static_cast<unsigned long long>(rows)));
      }
      __syncthreads();
      size_type rows = 0;
      size_type before = 0;
#pragma unroll
      for (int v = 0; v < warps; ++v) {
        size_type const r = warp_rows[parity][v];
        before += v < warp ? r : 0;
        rows += r;
      }
      size_type const at = tile_at[parity] + before;
      if (tile_at[parity] + rows > a.capacity) { return; }  // block-uniform; the caller counts
      parity ^= 1;
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        if (c[j] == 1) {
          out_build[at + off[j]] = static_cast<Id>(first[j]);
          out_probe[at + off[j]] = static_cast<Id>(prow[j]);
        } else if (c[j] > 1) {
          size_type pos = at + off[j];
          table.for_each_match(k[j], [&](int t) {
            out_build[pos] = static_cast<Id>(brows[t]);
            out_probe[pos] = static_cast<Id>(prow[j]);
            ++pos;
          });
        }
      }
    }
  }
  auto const block_sum = reduce(reduce_storage).Sum(sum);
  if (threadIdx.x == 0 && block_sum != 0) { atomicAdd(a.checksum, block_sum); }
}

/// Work items of each partition (entry fanout is 0, for the scan).
/// items[fanout + 1] (zero on entry) counts the items of partitions that take several chunks.
__global__ void radix_items_kernel(size_type const* __restrict__ build_offsets,
                                   size_type const* __restrict__ probe_offsets, size_type fanout,
                                   bool skip_empty_build, size_type* __restrict__ items) {
  using P = radix_join_policy;
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type p = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; p <= fanout;
       p += stride) {
    if (p == fanout) {
      items[p] = 0;
      continue;
    }
    size_type const nb = build_offsets[p + 1] - build_offsets[p];
    size_type const np = probe_offsets[p + 1] - probe_offsets[p];
    if (np == 0 || (nb == 0 && skip_empty_build)) {
      items[p] = 0;
      continue;
    }
    items[p] = ceil_div(np, probe_span_of(nb, np));
    if (chunks_of(nb) > 1) {
      atomicAdd(reinterpret_cast<unsigned long long*>(items + fanout + 1),
                static_cast<unsigned long long>(items[p]));
    }
  }
}

/// item_partition[w] = the partition of work item w, by one binary search per item in parallel,
/// and item_probe[2w, 2w + 1] its probe range: the join kernels read them once instead of
/// searching with dependent loads and dividing in 64 bits per item.
__global__ void item_partitions_kernel(size_type const* __restrict__ item_start,
                                       size_type const* __restrict__ build_offsets,
                                       size_type const* __restrict__ probe_offsets,
                                       size_type fanout, size_type items,
                                       std::int32_t* __restrict__ item_partition,
                                       size_type* __restrict__ item_probe) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type w = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; w < items;
       w += stride) {
    size_type const p = partition_of(item_start, fanout, w);
    item_partition[w] = static_cast<std::int32_t>(p);
    size_type const span = probe_span_of(build_offsets[p + 1] - build_offsets[p],
                                         probe_offsets[p + 1] - probe_offsets[p]);
    size_type const p0 = probe_offsets[p] + (w - item_start[p]) * span;
    item_probe[2 * w] = p0;
    item_probe[2 * w + 1] = probe_offsets[p + 1] < p0 + span ? probe_offsets[p + 1] : p0 + span;
  }
}

/// Radix bits so that an average build partition holds half a shared-memory chunk.
int radix_bits_for(size_type build_rows, int key_bits) {
  int bits = 0;
  while (bits < radix_join_policy::max_radix_bits && bits < key_bits &&
         (build_rows >> bits) > radix_join_policy::chunk / 2) {
    ++bits;
  }
  return bits;
}

template <class U>
device_matches run(join_request const& rq, stream_ref stream, memory_resource* mr) {
  using P = radix_join_policy;
  phase_clock clock(stream);
  auto const s = to_cuda(stream);
  auto const nb = rq.build_rows;
  auto const np = rq.probe_rows;
  int const bits = radix_bits_for(nb, 8 * static_cast<int>(sizeof(U)));
  size_type const fanout = size_type{1} << bits;

  JOINERY_EXPECTS(!rq.positions_forced || (rq.build_sums == nullptr && rq.probe_sums == nullptr),
                  "the radix join's carried values need a table-form request (no row sums)");
  // Each side sorts its keys with 32-bit row ids, or with its carried values (GFTR decided
  // before the join), which the join then never reads: it writes positions.
  // Whether the sides' order within a partition is free: no GFTR positions, now or later.
  char const* const partition_env = std::getenv("JOINERY_RADIX_PARTITION");
  bool const unordered = !rq.positions_forced && !rq.positions_for &&
                         !(partition_env != nullptr && std::string_view(partition_env) == "cub");
  auto partition = [&](void const* keys, size_type n, void const* carry, int carry_bytes,
                       buffer& k, buffer& r, buffer& offsets) {
    JOINERY_EXPECTS(carry_bytes == 0 || carry_bytes == 4 || carry_bytes == 8,
                    "carried values are 4 or 8 bytes wide");
    JOINERY_EXPECTS(n <= max_row_id_rows, "the radix join numbers rows in 32 bits: at most " +
                                            std::to_string(max_row_id_rows) +
                                            " rows per side, got " + std::to_string(n));
    auto const rows = static_cast<std::size_t>(std::max<size_type>(n, 1));
    k = buffer(sizeof(U) * rows, mr, stream);
    r = buffer((carry_bytes == 8 ? 8 : 4) * rows, mr, stream);
    offsets = buffer(sizeof(size_type) * static_cast<std::size_t>(fanout + 1), mr, stream);
    auto const* in = static_cast<U const*>(keys);
    if (carry_bytes == 4) {
      sort_pairs_by_bits(in, as<U>(k), static_cast<std::uint32_t const*>(carry),
                         as<std::uint32_t>(r), n, 0, bits, stream, mr);
    } else if (carry_bytes == 8) {
      sort_pairs_by_bits(in, as<U>(k), static_cast<std::uint64_t const*>(carry),
                         as<std::uint64_t>(r), n, 0, bits, stream, mr);
    } else if (unordered) {
      // Not the stable order GFTR's positions need, hence only for requests that cannot ask
      // for them; no row-id array written and read back (join_sort.hpp).
      partition_with_row_ids(in, as<U>(k), as<std::uint32_t>(r), n, bits, stream, mr);
    } else {
      sort_with_row_ids(in, as<U>(k), as<std::uint32_t>(r), n, 0, bits, stream, mr);
    }
    radix_partition_offsets(as<U>(k), n, bits, as<size_type>(offsets), stream);
  };
  bool const with_build = rq.kind == join_kind::inner || rq.kind == join_kind::left_outer;
  bool const fused = rq.fused_output;
  // An int32 index (never with positions: those are the table form's) is written as such.
  bool const ids32 = rq.row_ids32;
  JOINERY_EXPECTS(!ids32 || (!rq.positions_forced && !rq.positions_for),
                  "the radix join writes int32 row ids for the index form only");
  JOINERY_EXPECTS(!fused || (rq.positions_forced && rq.kind == join_kind::inner &&
                             !rq.aggregate_only),
                  "the radix join's fused table output is for inner GFTR joins");
  // The output: row ids / positions, or (fused) the table's columns, `rows` of them.
  auto allocate_output = [&](device_matches& o, size_type rows) {
    if (!fused) {
      allocate_matches(o, rows, with_build, rq, "radix_hash", stream, mr,
                       ids32 ? type_id::int32 : type_id::int64);
      return;
    }
    auto const bytes = static_cast<std::size_t>(rows) * rq.extra_bytes_per_row;
    auto const need = "the radix_hash join result has " + std::to_string(rows) +
                      " rows and needs " + std::to_string(bytes) +
                      " bytes of device memory (table columns)";
    if (rq.budget != 0 && bytes > rq.budget) {
      throw out_of_memory(need + ", more than the device memory budget of " +
                          std::to_string(rq.budget) + " bytes");
    }
    try {
      o.fused = true;
      o.fused_columns.emplace_back(rq.key_type, rows, mr, stream);
      for (auto t : rq.build_fused_types) { o.fused_columns.emplace_back(t, rows, mr, stream); }
      for (auto t : rq.probe_fused_types) { o.fused_columns.emplace_back(t, rows, mr, stream); }
    } catch (out_of_memory const& e) {
      throw out_of_memory(need + ", which could not be allocated: " + e.what());
    }
  };
  auto has_output = [&](device_matches const& o) {
    return fused ? !o.fused_columns.empty() : o.probe_rows.size() != 0;
  };
  auto const guess_bytes =
    static_cast<std::size_t>(np) *
    ((ids32 ? sizeof(std::int32_t) : sizeof(size_type)) * (with_build ? 2 : 1) +
     rq.extra_bytes_per_row);
  // Direct output writes positions only when GFTR was decided before the join (a later choice
  // needs the exact row count first).
  bool direct = !rq.aggregate_only && !rq.three_phase && (!rq.positions_for || rq.positions_forced) &&
                (rq.budget == 0 || guess_bytes <= rq.budget);
  // The direct output is allocated before the partitioning's temporaries: allocated after them
  // it found no free block of its size in the stream-ordered pool and mapped new memory on
  // every run (0.7 ms of 12.5 at 2^27 x 2^28 on the H200). Given back when the partitioning
  // runs out of memory (then retried without it) or the plan takes the three phases.
  device_matches early;
  if (direct && nb > 0 && np > 0) {
    try {
      allocate_output(early, np);
    } catch (out_of_memory const&) {
      early = device_matches{};
    }
  }
  auto partition_side = [&](void const* keys, size_type n, void const* carry, int carry_bytes,
                            buffer& k, buffer& r, buffer& offsets) {
    try {
      partition(keys, n, carry, carry_bytes, k, r, offsets);
    } catch (out_of_memory const&) {
      if (!has_output(early)) { throw; }
      early = device_matches{};
      partition(keys, n, carry, carry_bytes, k, r, offsets);
    }
  };
  int const build_carry = rq.positions_forced ? rq.build_carry_bytes : 0;
  int const probe_carry = rq.positions_forced ? rq.probe_carry_bytes : 0;
  buffer bk, br, boffs, pk, pr, poffs;
  clock.mark("partition build");
  partition_side(rq.build_keys, nb, rq.build_carry, build_carry, bk, br, boffs);
  clock.mark("partition probe");
  partition_side(rq.probe_keys, np, rq.probe_carry, probe_carry, pk, pr, poffs);
  // GFTR: the caller transforms the other payloads with the same partitioning.
  auto hand_back_sides = [&](device_matches& m) {
    m.positions = true;
    m.build_side = {std::move(bk), std::move(br), bits, build_carry};
    m.probe_side = {std::move(pk), std::move(pr), bits, probe_carry};
  };

  clock.mark("plan");
  // Entry fanout + 1: the items of partitions of several chunks.
  buffer item_start(sizeof(size_type) * static_cast<std::size_t>(fanout + 2), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(item_start.data(), 0, item_start.size(), s));
  bool const skip_empty_build = rq.kind == join_kind::inner || rq.kind == join_kind::left_semi;
  radix_items_kernel<<<grid_stride_blocks(fanout + 1, 256, current_sm_count(), 8), 256, 0, s>>>(
      as<size_type>(boffs), as<size_type>(poffs), fanout, skip_empty_build, as<size_type>(item_start));
  JOINERY_CHECK_LAUNCH();
  exclusive_scan_with_total(as<size_type>(item_start), fanout, stream, mr);
  auto const item_counts =
    read_scalar(reinterpret_cast<std::array<size_type, 2> const*>(as<size_type>(item_start) + fanout),
                stream);
  size_type const items = item_counts[0];
  size_type const multi_chunk_items = item_counts[1];

  device_matches out;
  if (items == 0) {
    if (!rq.aggregate_only) { allocate_output(out, 0); }
    if (rq.positions_forced) { hand_back_sides(out); }
    out.phases = clock.finish();
    return out;
  }
  static_assert(radix_join_policy::max_radix_bits < 31, "partitions are numbered in int32");
  buffer item_partition(sizeof(std::int32_t) * static_cast<std::size_t>(items), mr, stream);
  buffer item_probe(2 * sizeof(size_type) * static_cast<std::size_t>(items), mr, stream);
  item_partitions_kernel<<<grid_stride_blocks(items, 256, current_sm_count(), 8), 256, 0, s>>>(
      as<size_type>(item_start), as<size_type>(boffs), as<size_type>(poffs), fanout, items,
      as<std::int32_t>(item_partition), as<size_type>(item_probe));
  JOINERY_CHECK_LAUNCH();
  buffer item_rows(sizeof(size_type) * static_cast<std::size_t>(items + 1), mr, stream);
  buffer checksum(sizeof(unsigned long long), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(item_rows.data(), 0, item_rows.size(), s));
  JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));

  radix_join_args<U> a{};
  a.build_keys = as<U>(bk);
  a.build_rows = build_carry != 0 ? nullptr : as<std::uint32_t>(br);
  a.build_offsets = as<size_type>(boffs);
  a.probe_keys = as<U>(pk);
  a.probe_rows = probe_carry != 0 ? nullptr : as<std::uint32_t>(pr);
  a.probe_offsets = as<size_type>(poffs);
  a.item_partition = as<std::int32_t>(item_partition);
  a.item_probe = as<size_type>(item_probe);
  a.fanout = fanout;
  a.num_items = items;
  a.kind = rq.kind;
  a.sums = {rq.build_sums, rq.probe_sums};
  a.with_checksum = rq.aggregate_only;
  a.codec = codec_of(rq.key_type, false);
  a.item_rows = as<size_type>(item_rows);
  a.checksum = as<unsigned long long>(checksum);

  if (fused) {
    auto fields = [&](std::vector<type_id> const& types, int bytes) {
      if (types.empty()) { return bundle_fields{}; }
      std::vector<int> widths;
      for (auto t : types) { widths.push_back(static_cast<int>(size_of(t))); }
      auto f = fields_of(widths, bytes);
      for (std::size_t c = 0; c < types.size(); ++c) {
        if (is_signed(types[c])) { f.signed_mask |= 1u << c; }
      }
      return f;
    };
    a.build_fields = fields(rq.build_fused_types, build_carry);
    a.probe_fields = fields(rq.probe_fused_types, probe_carry);
    a.build_bundle = br.data();
    a.probe_bundle = pr.data();
    a.build_bundle_bytes = build_carry;
    a.probe_bundle_bytes = probe_carry;
  }
  // Where the kernels write: the id / position columns, or the fused table's columns.
  auto bind_output = [&](device_matches& o) {
    if (!fused) {
      a.out_build = with_build ? o.build_rows.data() : nullptr;
      a.out_probe = o.probe_rows.data();
      return;
    }
    a.key_out = static_cast<U*>(o.fused_columns[0].data());
    std::size_t c = 1;
    for (int i = 0; i < a.build_fields.count; ++i) {
      a.build_fields.out[i] = o.fused_columns[c++].data();
    }
    for (int i = 0; i < a.probe_fields.count; ++i) {
      a.probe_fields.out[i] = o.fused_columns[c++].data();
    }
  };

  constexpr std::size_t smem = chunk_table<U>::smem_bytes;
  auto const count_kernel = radix_join_kernel<U, radix_mode::count>;
  auto const write_ids_kernel =
    ids32 ? radix_join_kernel<U, radix_mode::write, false, false, std::int32_t>
          : radix_join_kernel<U, radix_mode::write>;
  auto const write_positions_kernel = fused ? radix_join_kernel<U, radix_mode::write, true, true>
                                            : radix_join_kernel<U, radix_mode::write, true>;
  auto const direct_kernel = fused ? radix_join_kernel<U, radix_mode::direct, true, true>
                             : rq.positions_forced ? radix_join_kernel<U, radix_mode::direct, true>
                             : ids32 ? radix_join_kernel<U, radix_mode::direct, false, false, std::int32_t>
                                     : radix_join_kernel<U, radix_mode::direct>;
  // The lean direct pass serves inner joins writing row ids without payload sums.
  bool const lean = rq.kind == join_kind::inner && !fused && !rq.positions_forced &&
                    rq.build_sums == nullptr && rq.probe_sums == nullptr;
  auto const lean_kernel =
    ids32 ? radix_join_lean_kernel<U, std::int32_t> : radix_join_lean_kernel<U, size_type>;
  for (auto k : {count_kernel, write_ids_kernel, write_positions_kernel, direct_kernel, lean_kernel}) {
    JOINERY_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
  }
  auto const grid = static_cast<unsigned>(std::min<size_type>(items, 1 << 30));

  // Direct output first when one row per probe row fits the budget and GFTR cannot be asked
  // for (see join_common.cuh).
  if (direct && items >= P::sample_every) {
    clock.mark("sample");
    // Count a sample of the work items first: a many-to-many join whose output is clearly larger
    // than the probe side would only waste the direct pass, which then stops part-way.
    auto sample = a;
    sample.num_items = items / P::sample_every;
    count_kernel<<<static_cast<unsigned>(sample.num_items), P::threads, smem, s>>>(sample);
    JOINERY_CHECK_LAUNCH();
    exclusive_scan_with_total(as<size_type>(item_rows), sample.num_items, stream, mr);
    // Extrapolated by the probe rows the sampled items span, not by their number: under probe
    // skew the first items are the hot partitions' full ones, and counting by items took
    // Zipf 1 PK-FK joins (one row per probe row) for many-to-many ones.
    size_type spanned[2] = {0, 0};
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&spanned[0], as<size_type>(item_probe), sizeof(size_type),
                                     cudaMemcpyDeviceToHost, s));
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&spanned[1], as<size_type>(item_probe) + 2 * sample.num_items - 1,
                                     sizeof(size_type), cudaMemcpyDeviceToHost, s));
    auto const sampled = read_scalar(as<size_type>(item_rows) + sample.num_items, stream);
    double const estimate =
      spanned[1] > spanned[0]
        ? static_cast<double>(sampled) * static_cast<double>(np) /
            static_cast<double>(spanned[1] - spanned[0])
        : static_cast<double>(sampled) * static_cast<double>(items) /
            static_cast<double>(sample.num_items);
    direct = estimate <= P::direct_margin * static_cast<double>(np);
    JOINERY_CUDA_TRY(cudaMemsetAsync(item_rows.data(), 0, item_rows.size(), s));
  }
  if (!direct) { early = device_matches{}; }
  if (direct) {
    clock.mark("allocate");
    bool allocated = true;
    if (has_output(early)) {
      out = std::move(early);
    } else {
      try {
        allocate_output(out, np);
      } catch (out_of_memory const&) {
        allocated = false;
      }
    }
    if (allocated) {
      buffer claimed(sizeof(unsigned long long), mr, stream);
      JOINERY_CUDA_TRY(cudaMemsetAsync(claimed.data(), 0, claimed.size(), s));
      a.claimed = as<unsigned long long>(claimed);
      a.capacity = np;
      bind_output(out);
      clock.mark("join direct");
      if (lean) {
        lean_kernel<<<grid, P::threads, smem, s>>>(a);
        JOINERY_CHECK_LAUNCH();
        if (multi_chunk_items > 0) {
          auto multi = a;
          multi.multi_chunk_only = true;
          direct_kernel<<<grid, P::threads, smem, s>>>(multi);
          JOINERY_CHECK_LAUNCH();
        }
      } else {
        direct_kernel<<<grid, P::threads, smem, s>>>(a);
        JOINERY_CHECK_LAUNCH();
      }
      auto const rows = static_cast<size_type>(read_scalar(as<unsigned long long>(claimed), stream));
      if (rows <= np) {
        if (rows < np) {
          if (fused) {
            for (auto& col : out.fused_columns) {
              col = column::copy_of(column_view(col.type(), col.data(), rows, col.space()), mr,
                                    stream);
            }
          } else {
            shrink_matches(out, rows, with_build, stream, mr);
          }
        }
        out.count = static_cast<std::uint64_t>(rows);
        out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
        if (rq.positions_forced) { hand_back_sides(out); }
        out.phases = clock.finish();
        return out;
      }
      out = device_matches{};  // more rows than probe rows: count them first
      JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));
    }
  }

  clock.mark("join count");
  count_kernel<<<grid, P::threads, smem, s>>>(a);
  JOINERY_CHECK_LAUNCH();
  exclusive_scan_with_total(as<size_type>(item_rows), items, stream, mr);
  size_type const total = read_scalar(as<size_type>(item_rows) + items, stream);
  out.count = static_cast<std::uint64_t>(total);
  if (rq.aggregate_only) {
    out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
    out.phases = clock.finish();
    return out;
  }
  // GFTR: ask whether to write positions into the partitioned sides (stable, contiguous).
  out.positions =
    rq.positions_forced || (rq.positions_for && rq.positions_for(total, bits, bits));
  allocate_output(out, total);
  JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));
  a.item_offsets = as<size_type>(item_rows);
  bind_output(out);
  clock.mark("join write");
  (out.positions ? write_positions_kernel : write_ids_kernel)<<<grid, P::threads, smem, s>>>(a);
  JOINERY_CHECK_LAUNCH();
  out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
  out.phases = clock.finish();
  if (out.positions) { hand_back_sides(out); }
  return out;
}

}  // namespace

int radix_hash_join_bits(size_type build_rows, type_id key_type) {
  return radix_bits_for(build_rows, 8 * static_cast<int>(size_of(key_type)));
}

device_matches radix_hash_join(join_request const& rq, stream_ref stream, memory_resource* mr) {
  return dispatch_key_width(rq.key_type,
                            [&](auto u) { return run<decltype(u)>(rq, stream, mr); });
}

}  // namespace joinery::detail::gpu
