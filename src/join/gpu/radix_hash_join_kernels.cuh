#pragma once
// Internal: the radix hash join's device side (radix_hash_join.cu, which includes it alone: the
// definitions have internal linkage): its policy, the kernels' arguments, the join kernel in its
// count / write / direct modes, the lean direct kernel, and the work-item kernels. The algorithm
// is described at the top of radix_hash_join.cu.
#include "join/gpu/bundle.cuh"
#include "join/gpu/join_common.cuh"
#include "primitives/detail/block_chain_table.cuh"
#include "primitives/detail/hash.cuh"

#include <cstdint>

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

}  // namespace

}  // namespace joinery::detail::gpu
