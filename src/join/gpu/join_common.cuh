#pragma once
// Internal: what every GPU join shares. Key encodings, the per-kind output rules, phase timing
// with CUDA events, and He et al.'s (2008) lock-free three-phase output (count, scan, write) as
// a driver over a "matcher" that enumerates the build matches of probe items.
//
// Matcher concept (all calls block-uniform: every thread of the block makes them, so a matcher
// may stage data in shared memory and synchronise):
//   using policy = ...;                          launch shape (threads, items per thread, ...)
//   std::size_t smem_bytes() const;              dynamic shared memory it needs
//   __device__ void init_block(unsigned char* smem) const;
//   template <int N, int Stride, class F>
//   __device__ void match_items(unsigned char* smem, size_type base, size_type end,
//                               unsigned active, F&& f) const;
//       this thread's items are base + j * Stride for j < N, those below `end` with bit j of
//       `active` set wanted (striped: neighbouring threads hold neighbouring items, so loads and
//       1:1 writes coalesce); calls f(j, build_row) for every match of each wanted item
//   __device__ size_type probe_row(size_type item) const;       the probe row id of an item
//   __device__ std::uint64_t probe_value(size_type item) const;  its key as the checksum sees it
#include "core/cuda_try.hpp"
#include "join/gpu/gpu_join.hpp"
#include "primitives/detail/launch.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace joinery::detail::gpu {

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

/// How an algorithm holds keys: as unsigned bit patterns (equality needs nothing more), and for
/// ordered algorithms (band joins, CSS-tree) with the sign bit flipped so that unsigned order is
/// the signed order and differences are preserved.
struct key_codec {
  bool is_signed = false;
  bool ordered = false;
};

template <class U>
__host__ __device__ constexpr U sign_bit() noexcept {
  return static_cast<U>(U{1} << (8 * sizeof(U) - 1));
}

/// The original key's checksum value (sign-extended to 64 bits) from its encoded bits.
template <class U>
__host__ __device__ __forceinline__ std::uint64_t checksum_of(U u, key_codec c) noexcept {
  if (c.ordered && c.is_signed) { u ^= sign_bit<U>(); }
  if constexpr (sizeof(U) == 4) {
    return c.is_signed ? static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int32_t>(u)))
                       : static_cast<std::uint64_t>(u);
  } else {
    return static_cast<std::uint64_t>(u);
  }
}

inline key_codec codec_of(type_id t, bool ordered) { return {is_signed(t), ordered}; }

// ---------------------------------------------------------------------------------------------
// Output rules per join kind
// ---------------------------------------------------------------------------------------------

/// Output rows a probe item with `matches` build matches produces.
__host__ __device__ __forceinline__ size_type emitted_rows(join_kind kind, size_type matches) {
  switch (kind) {
    case join_kind::inner: return matches;
    case join_kind::left_outer: return matches > 0 ? matches : 1;
    case join_kind::left_semi: return matches > 0 ? 1 : 0;
    case join_kind::left_anti: return matches == 0 ? 1 : 0;
    default: break;  // the right and full kinds run through the general key path
  }
  return 0;
}

/// Whether a probe item with `matches` matches emits one row of its own (no build match in a
/// left outer join, the probe row of a semi or anti join).
__host__ __device__ __forceinline__ bool emits_lone_row(join_kind kind, size_type matches) {
  return (kind == join_kind::left_outer && matches == 0) ||
         (kind == join_kind::left_semi && matches > 0) ||
         (kind == join_kind::left_anti && matches == 0);
}

/// Checksum of the output rows of one probe item: `pv` is the probe key plus probe payloads,
/// `build_sum` the sum of the build payloads over its matches.
__device__ __forceinline__ std::uint64_t emitted_checksum(join_kind kind, size_type matches,
                                                          std::uint64_t pv,
                                                          std::uint64_t build_sum) {
  switch (kind) {
    case join_kind::inner: return static_cast<std::uint64_t>(matches) * pv + build_sum;
    case join_kind::left_outer:
      return matches > 0 ? static_cast<std::uint64_t>(matches) * pv + build_sum : pv;
    case join_kind::left_semi: return matches > 0 ? pv : 0;
    case join_kind::left_anti: return matches == 0 ? pv : 0;
    default: break;
  }
  return 0;
}

struct row_sums {
  std::uint64_t const* build = nullptr;
  std::uint64_t const* probe = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Phase timing: CUDA events on the stream, resolved once at the end (no extra synchronisation).
// ---------------------------------------------------------------------------------------------

class phase_clock {
 public:
  explicit phase_clock(stream_ref stream) : stream_(to_cuda(stream)) { mark("start"); }
  phase_clock(phase_clock const&) = delete;
  phase_clock& operator=(phase_clock const&) = delete;
  ~phase_clock() {
    for (auto& e : events_) { (void)cudaEventDestroy(e.event); }
  }
  /// Ends the current phase (named by the previous mark) and starts `next`.
  void mark(char const* next) {
    cudaEvent_t e{};
    JOINERY_CUDA_TRY(cudaEventCreate(&e));
    events_.push_back({next, e});
    JOINERY_CUDA_TRY(cudaEventRecord(e, stream_));
  }
  /// Phase durations; waits for the last event.
  std::vector<phase_time> finish() {
    mark("end");
    JOINERY_CUDA_TRY(cudaEventSynchronize(events_.back().event));
    std::vector<phase_time> out;
    for (std::size_t i = 1; i + 1 < events_.size(); ++i) {
      float ms = 0;
      JOINERY_CUDA_TRY(cudaEventElapsedTime(&ms, events_[i].event, events_[i + 1].event));
      out.push_back({events_[i].name, ms / 1000.0});
    }
    return out;
  }

 private:
  struct entry {
    std::string name;
    cudaEvent_t event;
  };
  cudaStream_t stream_;
  std::vector<entry> events_;
};

// ---------------------------------------------------------------------------------------------
// Small host helpers
// ---------------------------------------------------------------------------------------------

template <class T>
T* as(buffer& b) noexcept {
  return static_cast<T*>(b.data());
}

template <class T>
T read_scalar(T const* d, stream_ref stream) {
  T h{};
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, d, sizeof(T), cudaMemcpyDeviceToHost, to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return h;
}

/// In-place exclusive scan of n + 1 int64 entries (entry n must be 0 on entry; total there after).
void exclusive_scan_with_total(size_type* data, size_type n, stream_ref stream,
                               memory_resource* mr);

/// Output columns for `rows` matches (build_rows only when `with_build`), refused with a clear
/// error when they exceed the budget or the memory left.
void allocate_matches(device_matches& out, size_type rows, bool with_build,
                      join_request const& rq, char const* algorithm, stream_ref stream,
                      memory_resource* mr, type_id ids = type_id::int64);

/// Build row of a match handle: matchers whose handles are not row ids (sort-merge: positions in
/// the sorted build side) translate them with build_row(); the others emit row ids.
template <class M>
__device__ __forceinline__ size_type build_row_of(M const& m, size_type handle) {
  if constexpr (requires { m.build_row(handle); }) {
    return m.build_row(handle);
  } else {
    return handle;
  }
}

// ---------------------------------------------------------------------------------------------
// Three-phase output driver
// ---------------------------------------------------------------------------------------------

/// Launch shape of the three-phase kernels for one matcher.
template <int Threads, int ItemsPerThread, int MaxBlocksPerSm = 8,
          size_type MaxItemsPerBlock = size_type{1} << 40, int MinBlocksPerSm = 4>
struct three_phase_policy {
  static constexpr int threads = Threads;
  static constexpr int items_per_thread = ItemsPerThread;
  static constexpr int tile = Threads * ItemsPerThread;
  static constexpr int max_blocks_per_sm = MaxBlocksPerSm;
  /// Registers are capped so that this many blocks fit an SM: the write phase is bound by
  /// memory latency, and at 78 registers (3 blocks of 256) it moved 1.6 TB/s on an H200.
  static constexpr int min_blocks_per_sm = MinBlocksPerSm;
  static constexpr size_type max_items_per_block = MaxItemsPerBlock;
};

/// Phase 1: per-item match counts (when `counts` is given), per-block output rows, and the
/// checksum when asked (the aggregate form stops here).
template <class M>
__global__ void __launch_bounds__(M::policy::threads, M::policy::min_blocks_per_sm)
    match_count_kernel(M m, size_type n, size_type per_block, join_kind kind, row_sums sums,
                       bool with_checksum, std::uint32_t* __restrict__ counts,
                       std::uint32_t* __restrict__ first_rows, size_type* __restrict__ block_rows,
                       unsigned long long* checksum) {
  using policy = typename M::policy;
  constexpr int ipt = policy::items_per_thread;
  extern __shared__ __align__(16) unsigned char smem[];
  using reduce = cub::BlockReduce<unsigned long long, policy::threads>;
  __shared__ typename reduce::TempStorage reduce_storage;

  m.init_block(smem);
  size_type const begin = static_cast<size_type>(blockIdx.x) * per_block;
  size_type const end = begin + per_block < n ? begin + per_block : n;
  unsigned long long rows = 0;
  unsigned long long sum = 0;
  for (size_type tile = begin; tile < end; tile += policy::tile) {
    size_type const base = tile + threadIdx.x;
    size_type c[ipt];
    std::uint64_t bs[ipt];
    std::uint32_t first[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      c[j] = 0;
      bs[j] = 0;
      first[j] = 0;
    }
    m.template match_items<ipt, policy::threads>(smem, base, end, ~0u, [&](int j, size_type b) {
      if (c[j] == 0) { first[j] = static_cast<std::uint32_t>(b); }
      ++c[j];
      if (with_checksum && sums.build != nullptr) { bs[j] += sums.build[build_row_of(m, b)]; }
    });
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      size_type const item = base + static_cast<size_type>(j) * policy::threads;
      if (item < end) {
        if (counts != nullptr) { counts[item] = static_cast<std::uint32_t>(c[j]); }
        if (first_rows != nullptr) { first_rows[item] = first[j]; }
        rows += static_cast<unsigned long long>(emitted_rows(kind, c[j]));
        if (with_checksum) {
          std::uint64_t pv = m.probe_value(item);
          if (sums.probe != nullptr) { pv += sums.probe[m.probe_row(item)]; }
          sum += emitted_checksum(kind, c[j], pv, bs[j]);
        }
      }
    }
  }
  auto const block_total = reduce(reduce_storage).Sum(rows);
  if (threadIdx.x == 0) { block_rows[blockIdx.x] = static_cast<size_type>(block_total); }
  if (with_checksum) {
    __syncthreads();
    auto const block_sum = reduce(reduce_storage).Sum(sum);
    if (threadIdx.x == 0) { atomicAdd(checksum, block_sum); }
  }
}

/// Output rows of a tile: slot j of every thread takes a contiguous range (so 1:1 matches of
/// neighbouring threads land in neighbouring rows); cursor[j] is this thread's first row of slot j
/// and `running` grows by the tile's rows. `rows_of(j)` gives the rows of the thread's item j.
/// When every item of the tile has few rows (always in PK-FK joins) the N slots share one block
/// scan, their counts packed in 16-bit lanes of one 64-bit value (a lane's tile total stays below
/// 2^15, so no carry and no sign bit); otherwise one scan per slot. Block-wide.
template <class Scan, int N, class RowsOf>
__device__ __forceinline__ void tile_offsets(typename Scan::TempStorage& storage, RowsOf&& rows_of,
                                             size_type (&cursor)[N], size_type& running) {
  static_assert(N <= 4, "at most four 16-bit lanes in one 64-bit scan value");
  // rows_of is cheap (a switch on the join kind): called again rather than kept in registers.
  size_type const lane_limit = (size_type{1} << 15) / static_cast<size_type>(blockDim.x);
  bool small = true;
#pragma unroll
  for (int j = 0; j < N; ++j) { small = small && rows_of(j) < lane_limit; }
  if (__syncthreads_and(small)) {
    size_type packed = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) { packed |= rows_of(j) << (16 * j); }
    size_type total = 0;
    Scan(storage).ExclusiveSum(packed, packed, total);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < N; ++j) {
      cursor[j] = running + ((packed >> (16 * j)) & 0xffff);
      running += (total >> (16 * j)) & 0xffff;
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < N; ++j) {
    size_type offset = 0;
    size_type slot_total = 0;
    Scan(storage).ExclusiveSum(rows_of(j), offset, slot_total);
    __syncthreads();
    cursor[j] = running + offset;
    running += slot_total;
  }
}

/// Direct output: the block claims the tile's `rows` output rows with one atomic and moves its
/// cursors there; false (block-uniform) when they would pass `capacity`. `first` is a __shared__
/// scratch variable. Block-wide.
template <int N>
__device__ __forceinline__ bool claim_tile_rows(unsigned long long* claimed, size_type capacity,
                                                size_type rows, size_type& first,
                                                size_type (&cursor)[N]) {
  if (threadIdx.x == 0) {
    first = static_cast<size_type>(atomicAdd(claimed, static_cast<unsigned long long>(rows)));
  }
  __syncthreads();
  size_type const at = first;
  __syncthreads();  // `first` is rewritten by the next tile
  if (at + rows > capacity) { return false; }
#pragma unroll
  for (int j = 0; j < N; ++j) { cursor[j] += at; }
  return true;
}

/// Where the write kernel's rows go. Three-phase: the counts and first matches stored by the
/// count phase, each block's first row from the scan of the block totals. Direct (no count
/// phase, after Rui & Tu's output buffer): each tile counts its own matches and claims its rows
/// with one atomic on `claimed`, in an output allocated for `capacity` rows; a tile whose rows
/// would pass the capacity writes nothing and its block stops (the caller then runs the three
/// phases).
struct write_plan {
  std::uint32_t const* counts = nullptr;
  std::uint32_t const* first_rows = nullptr;
  size_type const* block_offsets = nullptr;
  unsigned long long* claimed = nullptr;  // direct
  size_type capacity = 0;                 // direct
};

/// Phase 3 (or the direct pass): each item's rows go to its offset (one block scan per item
/// slot), the matches enumerated again for inner and left outer joins unless the item's only
/// match is known. Id: the row ids' type (int32 for an int32 index).
template <class M, bool Direct, class Id = size_type>
__global__ void __launch_bounds__(M::policy::threads, M::policy::min_blocks_per_sm)
    match_write_kernel(M m, size_type n, size_type per_block, join_kind kind, row_sums sums,
                       write_plan plan, Id* __restrict__ out_build, Id* __restrict__ out_probe,
                       unsigned long long* checksum) {
  using policy = typename M::policy;
  constexpr int ipt = policy::items_per_thread;
  extern __shared__ __align__(16) unsigned char smem[];
  using scan = cub::BlockScan<size_type, policy::threads>;
  using reduce = cub::BlockReduce<unsigned long long, policy::threads>;
  __shared__ union {
    typename scan::TempStorage scan;
    typename reduce::TempStorage reduce;
  } storage;
  __shared__ size_type tile_first;

  bool const with_matches = kind == join_kind::inner || kind == join_kind::left_outer;
  if (with_matches || Direct) { m.init_block(smem); }
  size_type const begin = static_cast<size_type>(blockIdx.x) * per_block;
  size_type const end = begin + per_block < n ? begin + per_block : n;
  size_type running = Direct ? 0 : plan.block_offsets[blockIdx.x];
  unsigned long long sum = 0;
  for (size_type tile = begin; tile < end; tile += policy::tile) {
    size_type const base = tile + threadIdx.x;
    size_type c[ipt];
    size_type cursor[ipt];
    std::uint64_t bs[ipt];
    std::uint32_t first[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      size_type const item = base + static_cast<size_type>(j) * policy::threads;
      c[j] = 0;
      bs[j] = 0;
      first[j] = 0;
      if constexpr (!Direct) {
        if (item < end) {
          c[j] = static_cast<size_type>(plan.counts[item]);
          if (plan.first_rows != nullptr && c[j] == 1) { first[j] = plan.first_rows[item]; }
        }
      }
    }
    if constexpr (Direct) {
      m.template match_items<ipt, policy::threads>(smem, base, end, ~0u, [&](int j, size_type b) {
        if (c[j] == 0) { first[j] = static_cast<std::uint32_t>(b); }
        ++c[j];
      });
      running = 0;
    }
    tile_offsets<scan>(
        storage.scan,
        [&](int j) {
          return base + static_cast<size_type>(j) * policy::threads < end ? emitted_rows(kind, c[j])
                                                                           : size_type{0};
        },
        cursor, running);
    if constexpr (Direct) {
      if (!claim_tile_rows(plan.claimed, plan.capacity, running, tile_first, cursor)) { return; }
    }
    bool const first_known = Direct || plan.first_rows != nullptr;
    if (with_matches) {
      // An item with one match has it from the count; only the others probe again.
      unsigned again = 0;
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        size_type const item = base + static_cast<size_type>(j) * policy::threads;
        if (item < end && c[j] == 1 && first_known) {
          size_type const b = build_row_of(m, first[j]);
          out_build[cursor[j]] = static_cast<Id>(b);
          out_probe[cursor[j]] = static_cast<Id>(m.probe_row(item));
          if (sums.build != nullptr) { bs[j] += sums.build[b]; }
        } else if (c[j] > 0) {
          again |= 1u << j;
        }
      }
      // Skipped when no item of the tile needs it (PK-FK joins): a matcher may stage data.
      if (__syncthreads_or(again != 0)) {
        m.template match_items<ipt, policy::threads>(
            smem, base, end, again, [&](int j, size_type b) {
              size_type const pos = cursor[j]++;
              size_type const row = build_row_of(m, b);
              out_build[pos] = static_cast<Id>(row);
              out_probe[pos] =
                static_cast<Id>(m.probe_row(base + static_cast<size_type>(j) * policy::threads));
              if (sums.build != nullptr) { bs[j] += sums.build[row]; }
            });
      }
    }
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      size_type const item = base + static_cast<size_type>(j) * policy::threads;
      if (item < end) {
        size_type const row = m.probe_row(item);
        if (emits_lone_row(kind, c[j])) {
          if (kind == join_kind::left_outer) { out_build[cursor[j]] = -1; }
          out_probe[cursor[j]] = static_cast<Id>(row);
        }
        std::uint64_t pv = m.probe_value(item);
        if (sums.probe != nullptr) { pv += sums.probe[row]; }
        sum += emitted_checksum(kind, c[j], pv, bs[j]);
      }
    }
  }
  auto const block_sum = reduce(storage.reduce).Sum(sum);
  if (threadIdx.x == 0) { atomicAdd(checksum, block_sum); }
}

/// Output columns of exactly `rows` rows holding the first rows of `out` (allocated for more).
void shrink_matches(device_matches& out, size_type rows, bool with_build, stream_ref stream,
                    memory_resource* mr);

/// Runs the three phases over `n` probe items; `rq` gives the kind, sums, budget and form.
template <class M>
device_matches run_three_phase(M const& m, size_type n, join_request const& rq, key_codec,
                               char const* algorithm, phase_clock& clock, stream_ref stream,
                               memory_resource* mr) {
  using policy = typename M::policy;
  device_matches out;
  bool const with_build = rq.kind == join_kind::inner || rq.kind == join_kind::left_outer;
  if (n == 0) {
    if (!rq.aggregate_only) {
      allocate_matches(out, 0, with_build, rq, algorithm, stream, mr,
                       rq.row_ids32 ? type_id::int32 : type_id::int64);
    }
    return out;
  }
  auto const s = to_cuda(stream);
  auto const smem = m.smem_bytes();
  auto const kernel_count = match_count_kernel<M>;
  // An int32 index (never with positions: those are the table form's) is written as such.
  bool const ids32 = rq.row_ids32;
  JOINERY_EXPECTS(!ids32 || !rq.positions_for, std::string(algorithm) +
                                                  ": int32 row ids are for the index form only");
  auto const ids = ids32 ? type_id::int32 : type_id::int64;
  if (smem > 48 * 1024) {
    allow_dynamic_smem(kernel_count, smem);
  }
  int const per_sm = std::min(policy::max_blocks_per_sm,
                              resident_blocks_per_sm(kernel_count, policy::threads, smem));
  auto const grid = plan_range_grid(n, policy::tile, policy::max_items_per_block,
                                    current_sm_count() * per_sm);
  buffer checksum(sizeof(unsigned long long), mr, stream);
  row_sums const sums{rq.build_sums, rq.probe_sums};
  // Launches the write kernel of matcher mw with the output's row-id type.
  auto launch_write = [&](auto const& mw, auto direct, write_plan const& plan) {
    using MW = std::decay_t<decltype(mw)>;
    auto go = [&](auto id) {
      using Id = decltype(id);
      auto const kernel = match_write_kernel<MW, decltype(direct)::value, Id>;
      if (smem > 48 * 1024) {
        allow_dynamic_smem(kernel, smem);
      }
      kernel<<<grid.blocks, policy::threads, smem, s>>>(
          mw, n, grid.items_per_block, rq.kind, sums, plan,
          with_build ? static_cast<Id*>(out.build_rows.data()) : nullptr,
          static_cast<Id*>(out.probe_rows.data()), as<unsigned long long>(checksum));
      JOINERY_CHECK_LAUNCH();
    };
    if (ids32) {
      go(std::int32_t{});
    } else {
      go(size_type{});
    }
  };

  // Direct output first when one row per probe item fits the budget: most joins (PK-FK inner,
  // semi, anti, outer without duplicates) produce at most that, and then no count phase runs.
  // Not when GFTR may be asked for: that choice needs the output size first.
  auto const guess_bytes = static_cast<std::size_t>(n) *
                           (size_of(ids) * (with_build ? 2 : 1) + rq.extra_bytes_per_row);
  if (!rq.aggregate_only && !rq.three_phase && !rq.positions_for &&
      (rq.budget == 0 || guess_bytes <= rq.budget)) {
    bool allocated = true;
    try {
      allocate_matches(out, n, with_build, rq, algorithm, stream, mr, ids);
    } catch (out_of_memory const&) {
      allocated = false;  // the three phases allocate exactly what is needed
    }
    if (allocated) {
      buffer claimed(sizeof(unsigned long long), mr, stream);
      JOINERY_CUDA_TRY(cudaMemsetAsync(claimed.data(), 0, claimed.size(), s));
      JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));
      write_plan plan;
      plan.claimed = as<unsigned long long>(claimed);
      plan.capacity = n;
      clock.mark("direct write");
      launch_write(m, std::true_type{}, plan);
      auto const rows = static_cast<size_type>(read_scalar(as<unsigned long long>(claimed), stream));
      if (rows <= n) {
        if (rows < n) { shrink_matches(out, rows, with_build, stream, mr); }
        out.count = static_cast<std::uint64_t>(rows);
        out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
        return out;
      }
      out = device_matches{};  // more rows than probe items: count them first
    }
  }

  buffer counts;
  buffer first_rows;  // the match of 1:1 items, so the write phase need not probe them again
  bool const keep_first = !rq.aggregate_only && with_build && rq.build_rows <= 0xffffffffLL;
  if (!rq.aggregate_only) { counts = buffer(sizeof(std::uint32_t) * static_cast<std::size_t>(n), mr, stream); }
  if (keep_first) { first_rows = buffer(sizeof(std::uint32_t) * static_cast<std::size_t>(n), mr, stream); }
  buffer block_rows(sizeof(size_type) * static_cast<std::size_t>(grid.blocks + 1), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(block_rows.data(), 0, block_rows.size(), s));
  JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));

  clock.mark("count");
  kernel_count<<<grid.blocks, policy::threads, smem, s>>>(
      m, n, grid.items_per_block, rq.kind, sums, rq.aggregate_only,
      rq.aggregate_only ? nullptr : as<std::uint32_t>(counts),
      keep_first ? as<std::uint32_t>(first_rows) : nullptr, as<size_type>(block_rows),
      as<unsigned long long>(checksum));
  JOINERY_CHECK_LAUNCH();
  exclusive_scan_with_total(as<size_type>(block_rows), grid.blocks, stream, mr);
  auto const total = read_scalar(as<size_type>(block_rows) + grid.blocks, stream);
  out.count = static_cast<std::uint64_t>(total);
  if (rq.aggregate_only) {
    out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
    return out;
  }
  // GFTR: matchers that can write positions (with_positions()) are asked whether to.
  constexpr bool can_position = requires { m.with_positions(); };
  if constexpr (can_position) {
    out.positions = rq.positions_for &&
                    rq.positions_for(total, M::build_sort_bits(), M::probe_sort_bits());
  }
  allocate_matches(out, total, with_build, rq, algorithm, stream, mr, ids);
  JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));
  write_plan plan;
  plan.counts = as<std::uint32_t>(counts);
  plan.first_rows = keep_first ? as<std::uint32_t>(first_rows) : nullptr;
  plan.block_offsets = as<size_type>(block_rows);
  clock.mark("write");
  auto write = [&](auto const& mw) { launch_write(mw, std::false_type{}, plan); };
  if constexpr (can_position) {
    if (out.positions) {
      write(m.with_positions());
    } else {
      write(m);
    }
  } else {
    write(m);
  }
  out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
  return out;
}

/// Dispatches a key type to the unsigned type of its width.
template <class F>
decltype(auto) dispatch_key_width(type_id t, F&& f) {
  if (size_of(t) == 4) { return f(std::uint32_t{}); }
  return f(std::uint64_t{});
}

}  // namespace joinery::detail::gpu
