// The partition passes of the partition group-bys (Wu et al. 4.3, PGB): rows move into 2^bits
// partitions by the high bits of partition_hash(key), so that each partition holds about
// g / 2^bits groups and one block aggregates it in shared memory (partition_groupby.cu).
//
// A pass splits each of its input segments (one, the whole input, for the first pass; the
// first pass's partitions for the second) into 2^pass_bits partitions by the next pass_bits of
// the hash. Bits past max_pass_bits take two passes: a pass writes one run per partition and
// column a tile, and runs shorter than a few sectors waste the bandwidth (the former single pass
// over 2^11 partitions moved 12 bytes a row at 0.17 TB/s on the H200).
//
// Each block owns one contiguous chunk of one segment. Two kernels:
//   1. histogram: the chunk's rows per partition, written to cells ordered (segment, partition,
//      block of the segment), so that one exclusive scan over the cells gives each block its
//      write cursor in each partition and the partitions of a segment come out in order, where
//      the segment was;
//   2. scatter: a tile at a time, each row takes a rank within its partition from a shared
//      counter (one atomic a row, one a warp where the whole warp shares a partition: a hot
//      key), the tile's keys are staged in shared memory in partition order and written out
//      as one run per partition; every other column is then read coalesced, staged the same
//      way (two staging buffers, so one barrier a column) and written the same way. Reading
//      the values in partition order instead (gathers within the tile) left the pass waiting on
//      scattered loads at a fifth of the copy bandwidth.
#include "groupby/gpu/detail/hash_partition.cuh"

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_pipeline.h>
#include <cuda/std/type_traits>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace joinery::detail::gpu::gb {

namespace {

using policy = hash_partition_policy;

/// Up to max_moved_columns columns a pass moves (by value to the kernel); `in` null: row ids.
struct pass_columns {
  int count = 0;
  void const* in[policy::max_moved_columns + 1] = {};
  void* out[policy::max_moved_columns + 1] = {};
  std::uint32_t bytes[policy::max_moved_columns + 1] = {};
};

/// Block b's chunk of rows [begin, end) of its segment, and where its counts go: cell
/// `cell + d * stride` for partition d (stride: the blocks of the segment).
struct block_chunk {
  size_type begin = 0;
  size_type end = 0;
  size_type cell = 0;
  size_type stride = 0;
};

/// The pass's partition of key k: the pass_bits below the `shift` high bits already used.
template <class K>
__device__ __forceinline__ unsigned digit_of(K k, int shift, unsigned mask) {
  return static_cast<unsigned>(partition_hash(k) >> shift) & mask;
}

/// Adds each valid lane to counter[d] of its partition d and returns its slot among the
/// additions (the counter's old value plus its rank). One atomic a lane, except where every
/// valid lane of the warp has one partition (a hot key): then one atomic for the warp, since
/// 32 atomics on one shared word serialise. The whole warp calls it; `Ranked` false: the
/// counts only.
template <bool Ranked>
__device__ __forceinline__ unsigned warp_claim(unsigned* counter, unsigned d, bool valid) {
  unsigned const active = __ballot_sync(0xffffffffU, valid);
  if (active == 0) { return 0; }
  int const leader = __ffs(static_cast<int>(active)) - 1;
  unsigned const lead_d = __shfl_sync(0xffffffffU, d, leader);
  if (__all_sync(0xffffffffU, !valid || d == lead_d)) {
    unsigned const lane = threadIdx.x & 31;
    if constexpr (Ranked) {
      unsigned first = 0;
      if (static_cast<int>(lane) == leader) { first = atomicAdd(counter + lead_d, __popc(active)); }
      first = __shfl_sync(0xffffffffU, first, leader);
      return first + __popc(active & ((1U << lane) - 1U));
    } else {
      if (static_cast<int>(lane) == leader) { atomicAdd(counter + lead_d, __popc(active)); }
      return 0;
    }
  }
  if (!valid) { return 0; }
  if constexpr (Ranked) {
    return atomicAdd(counter + d, 1U);
  } else {
    atomicAdd(counter + d, 1U);
    return 0;
  }
}

/// Block b counts share b % split of chunk b / split (the chunks' blocks alone left the SMs
/// with too few loads in flight for a pass that only reads); the shares' counts are added.
template <class K>
__global__ void __launch_bounds__(policy::threads)
    histogram_kernel(K const* __restrict__ keys, block_chunk const* __restrict__ chunks,
                     int split, int shift, int pass_bits, size_type* __restrict__ counts) {
  constexpr int ipt = policy::histogram_items;
  constexpr int tile_rows = policy::threads * ipt;
  __shared__ unsigned hist[1 << policy::max_pass_bits];
  unsigned const fanout = 1U << pass_bits;
  for (unsigned d = threadIdx.x; d < fanout; d += blockDim.x) { hist[d] = 0; }
  __syncthreads();
  auto const c = chunks[blockIdx.x / split];
  auto const share = static_cast<size_type>(blockIdx.x % split);
  size_type const tiles = ceil_div(c.end - c.begin, static_cast<size_type>(tile_rows));
  size_type const per_share = ceil_div(tiles, static_cast<size_type>(split));
  size_type const begin = c.begin + share * per_share * tile_rows;
  size_type const end = std::min(c.end, begin + per_share * tile_rows);
  for (size_type first = begin; first < end; first += tile_rows) {
    K k[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      size_type const i = first + j * policy::threads + threadIdx.x;
      k[j] = i < end ? __ldg(keys + i) : K{};
    }
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      warp_claim<false>(hist, digit_of(k[j], shift, fanout - 1),
                        first + j * policy::threads + threadIdx.x < end);
    }
  }
  __syncthreads();
  for (unsigned d = threadIdx.x; d < fanout; d += blockDim.x) {
    if (hist[d] != 0) {
      atomicAdd(reinterpret_cast<unsigned long long*>(counts + c.cell +
                                                       static_cast<size_type>(d) * c.stride),
                static_cast<unsigned long long>(hist[d]));
    }
  }
}

/// The scatter's shared memory: per partition the write cursor, the row its run this tile
/// starts at less its first slot, this tile's count and its first slot; per tile slot the row
/// staged there (16-bit) and its partition; two stages of a column's tile at `stage_bytes`
/// bytes a row.
constexpr std::size_t scatter_shared_bytes(std::size_t stage_bytes) {
  constexpr std::size_t fanout = std::size_t{1} << policy::max_pass_bits;
  constexpr auto tile = static_cast<std::size_t>(policy::scatter_tile_rows);
  return fanout * (2 * sizeof(size_type) + 2 * sizeof(unsigned)) +
         tile * (2 * stage_bytes + sizeof(std::uint16_t) + sizeof(std::uint8_t));
}

/// The scatter's work a tile: step 0 ranks the keys and writes them, step c + 1 writes column
/// c. Each step's column arrives in a shared stage by per-thread asynchronous copies issued one
/// step ahead, so that a step's loads overlap the step before it (loads into registers, one
/// column at a time, left the pass waiting on them at a fifth of the copy bandwidth). Each step
/// starts with a barrier, after which the stage it reads is complete and the shared arrays the
/// step before read may be written.
template <class K>
struct scatter_agent {
  static constexpr int threads = policy::scatter_threads;
  static constexpr int items = policy::scatter_items;
  static constexpr int tile_rows = policy::scatter_tile_rows;
  static constexpr int fanout_max = 1 << policy::max_pass_bits;
  static_assert(fanout_max <= 256, "staged partitions are 8-bit");
  static_assert(tile_rows <= 65536, "staged rows are 16-bit");
  static_assert(fanout_max <= threads, "one thread scans each partition's count");
  using block_scan = cub::BlockScan<unsigned, threads>;

  typename block_scan::TempStorage& scan_storage;
  size_type* cursor;    // per partition: where the block's next row of it goes
  size_type* run_base;  // per partition: this tile's run's first row less its first slot
  unsigned* count;      // per partition: this tile's rows of it
  unsigned* start;      // per partition: its first slot in the tile's order
  std::uint16_t* row_of_slot;
  std::uint8_t* part_of_slot;
  unsigned char* stages;  // two of stage_stride bytes
  std::size_t stage_stride;
  K const* keys;
  K* keys_out;
  pass_columns const& cols;
  block_chunk c;
  int shift;
  unsigned fanout;
  size_type pos[items];  // this thread's slots' rows in the output, set by the keys' step

  __device__ __forceinline__ unsigned rows_at(size_type first) const {
    return static_cast<unsigned>(std::min<size_type>(tile_rows, c.end - first));
  }

  /// The copies of step `step` of the tile at `first` into stage `buf`, as one commit group
  /// (none for row ids).
  __device__ __forceinline__ void issue(size_type first, int step, int buf) const {
    unsigned const rows = rows_at(first);
    void const* src = step == 0 ? static_cast<void const*>(keys) : cols.in[step - 1];
    unsigned const bytes = step == 0 ? static_cast<unsigned>(sizeof(K)) : cols.bytes[step - 1];
    auto const copy = [&](auto width) {
      constexpr unsigned w = decltype(width)::value;
      auto const* from = static_cast<unsigned char const*>(src) + first * w;
#pragma unroll
      for (int j = 0; j < items; ++j) {
        unsigned const i = j * threads + threadIdx.x;
        if (i < rows) { __pipeline_memcpy_async((stages + buf * stage_stride) + i * w, from + i * w, w); }
      }
    };
    if (src != nullptr) {
      if (bytes == 4) {
        copy(cuda::std::integral_constant<unsigned, 4>{});
      } else {
        copy(cuda::std::integral_constant<unsigned, 8>{});
      }
    }
    __pipeline_commit();
  }

  /// Ranks the tile's keys by partition, writes them to their runs and sets pos.
  __device__ __forceinline__ void keys_step(size_type first, int buf) {
    unsigned const rows = rows_at(first);
    auto const* staged = reinterpret_cast<K const*>((stages + buf * stage_stride));
    unsigned part[items];
    unsigned rank[items];
#pragma unroll
    for (int j = 0; j < items; ++j) {
      unsigned const i = j * threads + threadIdx.x;
      part[j] = i < rows ? digit_of(staged[i], shift, fanout - 1) : 0U;
      rank[j] = warp_claim<true>(count, part[j], i < rows);
    }
    __syncthreads();
    unsigned const d = threadIdx.x;
    unsigned before = 0;
    block_scan(scan_storage).ExclusiveSum(d < fanout ? count[d] : 0U, before);
    if (d < fanout) {
      start[d] = before;
      run_base[d] = cursor[d] - before;
      cursor[d] += count[d];
      count[d] = 0;
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < items; ++j) {
      unsigned const i = j * threads + threadIdx.x;
      if (i >= rows) { continue; }
      unsigned const slot = start[part[j]] + rank[j];
      row_of_slot[slot] = static_cast<std::uint16_t>(i);
      part_of_slot[slot] = static_cast<std::uint8_t>(part[j]);
    }
    __syncthreads();
    // Consecutive threads take consecutive slots: each partition's run is written in order.
#pragma unroll
    for (int j = 0; j < items; ++j) {
      unsigned const s = j * threads + threadIdx.x;
      if (s >= rows) { continue; }
      pos[j] = run_base[part_of_slot[s]] + s;
      keys_out[pos[j]] = staged[row_of_slot[s]];
    }
  }

  /// Column c of the tile: each slot's value read from the stage at its row, written to pos.
  template <class V>
  __device__ __forceinline__ void column_step(size_type first, int col, int buf) const {
    unsigned const rows = rows_at(first);
    auto const* staged = reinterpret_cast<V const*>((stages + buf * stage_stride));
    auto* out = static_cast<V*>(cols.out[col]);
    bool const ids = cols.in[col] == nullptr;
#pragma unroll
    for (int j = 0; j < items; ++j) {
      unsigned const s = j * threads + threadIdx.x;
      if (s >= rows) { continue; }
      unsigned const row = row_of_slot[s];
      out[pos[j]] = ids ? static_cast<V>(first + row) : staged[row];
    }
  }

  __device__ __forceinline__ void run() {
    int const steps = 1 + cols.count;
    size_type first = c.begin;
    int step = 0;
    int buf = 0;
    if (first < c.end) { issue(first, 0, 0); }
    while (first < c.end) {
      int next_step = step + 1;
      size_type next_first = first;
      if (next_step == steps) {
        next_step = 0;
        next_first += tile_rows;
      }
      // After the barrier this step's stage is complete, and every thread is done with the
      // step before, which read the other stage: the next step's copies may go there.
      __pipeline_wait_prior(0);
      __syncthreads();
      if (next_first < c.end) { issue(next_first, next_step, buf ^ 1); }
      if (step == 0) {
        keys_step(first, buf);
      } else if (cols.bytes[step - 1] == 4) {
        column_step<std::uint32_t>(first, step - 1, buf);
      } else {
        column_step<unsigned long long>(first, step - 1, buf);
      }
      step = next_step;
      first = next_first;
      buf ^= 1;
    }
  }
};

template <class K>
__global__ void __launch_bounds__(policy::scatter_threads, policy::scatter_blocks_per_sm)
    scatter_kernel(K const* __restrict__ keys, block_chunk const* __restrict__ chunks, int shift,
                   int pass_bits, size_type const* __restrict__ cursors, K* __restrict__ keys_out,
                   __grid_constant__ pass_columns const cols, unsigned stage_bytes) {
  constexpr int fanout_max = 1 << policy::max_pass_bits;
  constexpr int tile_rows = policy::scatter_tile_rows;
  using agent = scatter_agent<K>;
  __shared__ typename agent::block_scan::TempStorage scan_storage;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* cursor = reinterpret_cast<size_type*>(smem);
  auto* run_base = cursor + fanout_max;
  auto* stage0 = reinterpret_cast<unsigned char*>(run_base + fanout_max);
  auto* stage1 = stage0 + static_cast<std::size_t>(tile_rows) * stage_bytes;
  auto* count = reinterpret_cast<unsigned*>(stage1 + static_cast<std::size_t>(tile_rows) * stage_bytes);
  auto* start = count + fanout_max;
  auto* row_of_slot = reinterpret_cast<std::uint16_t*>(start + fanout_max);
  auto* part_of_slot = reinterpret_cast<std::uint8_t*>(row_of_slot + tile_rows);
  unsigned const fanout = 1U << pass_bits;
  auto const c = chunks[blockIdx.x];
  for (unsigned d = threadIdx.x; d < fanout; d += blockDim.x) {
    cursor[d] = cursors[c.cell + static_cast<size_type>(d) * c.stride];
    count[d] = 0;
  }
  // The first step's barrier orders these writes before any use.
  agent a{scan_storage, cursor, run_base, count, start, row_of_slot, part_of_slot,
          stage0, static_cast<std::size_t>(stage1 - stage0), keys, keys_out, cols, c, shift,
          fanout, {}};
  a.run();
}

/// One pass: each segment [segments[s], segments[s + 1]) of the input split into 2^pass_bits
/// partitions by the hash's bits below `used_bits`; returns the offsets of the segments'
/// partitions in order (segments * 2^pass_bits + 1 entries).
template <class K>
std::vector<size_type> partition_pass(K const* keys, std::vector<size_type> const& segments,
                                      int used_bits, int pass_bits, pass_columns const& cols,
                                      K* keys_out, stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  auto const n = segments.back();
  auto const fanout = size_type{1} << pass_bits;
  int const shift = static_cast<int>(8 * sizeof(decltype(partition_hash(K{})))) - used_bits -
                    pass_bits;
  // Chunks of about the same rows, one a scatter block: a segment of r rows gets
  // ceil(r / chunk) blocks.
  size_type const chunk = std::max<size_type>(
    policy::scatter_tile_rows,
    ceil_div(n, static_cast<size_type>(current_sm_count()) * policy::scatter_blocks_per_sm));
  std::vector<block_chunk> chunks;
  std::vector<size_type> first_cell;  // per segment, -1 when it has no rows
  size_type cells = 0;
  for (std::size_t seg = 0; seg + 1 < segments.size(); ++seg) {
    auto const rows = segments[seg + 1] - segments[seg];
    auto const blocks = ceil_div(rows, chunk);
    first_cell.push_back(blocks > 0 ? cells : -1);
    auto const per_block = blocks > 0 ? ceil_div(rows, blocks) : 0;
    for (size_type b = 0; b < blocks; ++b) {
      block_chunk c;
      c.begin = segments[seg] + b * per_block;
      c.end = std::min(segments[seg + 1], c.begin + per_block);
      c.cell = cells + b;
      c.stride = blocks;
      chunks.push_back(c);
    }
    cells += blocks * fanout;
  }
  std::vector<size_type> offsets;
  offsets.reserve(static_cast<std::size_t>((segments.size() - 1) * fanout + 1));
  if (chunks.empty()) {
    offsets.assign(static_cast<std::size_t>((segments.size() - 1) * fanout + 1), 0);
    return offsets;
  }
  buffer chunk_buf(chunks.size() * sizeof(block_chunk), mr, stream);
  JOINERY_CUDA_TRY(cudaMemcpyAsync(chunk_buf.data(), chunks.data(), chunk_buf.size(),
                                   cudaMemcpyHostToDevice, s));
  auto const* d_chunks = static_cast<block_chunk const*>(chunk_buf.data());
  auto const blocks = static_cast<unsigned>(chunks.size());
  buffer counts(static_cast<std::size_t>(cells + 1) * sizeof(size_type), mr, stream);
  auto* d_counts = static_cast<size_type*>(counts.data());
  JOINERY_CUDA_TRY(cudaMemsetAsync(d_counts, 0, counts.size(), s));
  constexpr int split = policy::histogram_split;
  histogram_kernel<K><<<blocks * split, policy::threads, 0, s>>>(keys, d_chunks, split, shift,
                                                                 pass_bits, d_counts);
  JOINERY_CHECK_LAUNCH();
  std::size_t temp_bytes = 0;
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d_counts, cells + 1, s));
  {
    buffer temp(scratch_bytes(temp_bytes), mr, stream);
    JOINERY_CUDA_TRY(
      cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, d_counts, cells + 1, s));
  }
  // The stages hold the widest column a row.
  unsigned stage_bytes = sizeof(K);
  for (int c = 0; c < cols.count; ++c) { stage_bytes = std::max(stage_bytes, cols.bytes[c]); }
  std::size_t const smem = scatter_shared_bytes(stage_bytes);
  allow_dynamic_smem(scatter_kernel<K>, smem);
  scatter_kernel<K><<<blocks, policy::scatter_threads, smem, s>>>(
    keys, d_chunks, shift, pass_bits, d_counts, keys_out, cols, stage_bytes);
  JOINERY_CHECK_LAUNCH();
  std::vector<size_type> scanned(static_cast<std::size_t>(cells + 1));
  JOINERY_CUDA_TRY(cudaMemcpyAsync(scanned.data(), d_counts, scanned.size() * sizeof(size_type),
                                   cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  // Partition d of segment seg starts at its first block's cursor; a segment without rows has
  // all its partitions empty, where it was.
  for (std::size_t seg = 0; seg + 1 < segments.size(); ++seg) {
    auto const blocks_of = first_cell[seg] < 0 ? 0 : ceil_div(segments[seg + 1] - segments[seg], chunk);
    for (size_type d = 0; d < fanout; ++d) {
      offsets.push_back(first_cell[seg] < 0 ? segments[seg]
                                            : scanned[static_cast<std::size_t>(
                                                first_cell[seg] + d * blocks_of)]);
    }
  }
  offsets.push_back(n);
  return offsets;
}

}  // namespace

template <class K>
hash_partitions hash_partition_rows(K const* keys, size_type n,
                                    std::vector<moved_column> const& columns, int bits,
                                    stream_ref stream, memory_resource* mr) {
  JOINERY_EXPECTS(bits >= 1 && bits <= policy::max_bits,
                  "partition group-by: " + std::to_string(bits) + " partition bits, 1 to " +
                    std::to_string(policy::max_bits));
  JOINERY_EXPECTS(columns.size() <= static_cast<std::size_t>(policy::max_moved_columns) + 1,
                  "partition group-by: at most " + std::to_string(policy::max_moved_columns + 1) +
                    " moved columns, got " + std::to_string(columns.size()));
  int const first_bits = bits > policy::max_pass_bits ? (bits + 1) / 2 : bits;
  int const second_bits = bits - first_bits;
  // Each pass writes a fresh set of buffers: the second reads the first's.
  auto const allocate = [&](hash_partitions& out, pass_columns& cols) {
    out.keys = buffer(static_cast<std::size_t>(n) * sizeof(K), mr, stream);
    cols.count = static_cast<int>(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) {
      out.columns.emplace_back(static_cast<std::size_t>(n) * columns[c].bytes, mr, stream);
      cols.out[c] = out.columns.back().data();
      cols.bytes[c] = columns[c].bytes;
    }
  };
  hash_partitions first;
  first.bits = first_bits;
  pass_columns cols;
  allocate(first, cols);
  for (std::size_t c = 0; c < columns.size(); ++c) { cols.in[c] = columns[c].in; }
  first.offsets = partition_pass<K>(keys, {0, n}, 0, first_bits, cols,
                                    static_cast<K*>(first.keys.data()), stream, mr);
  if (second_bits == 0) { return first; }
  hash_partitions second;
  second.bits = bits;
  pass_columns cols2;
  allocate(second, cols2);
  for (std::size_t c = 0; c < columns.size(); ++c) { cols2.in[c] = first.columns[c].data(); }
  second.offsets = partition_pass<K>(static_cast<K const*>(first.keys.data()), first.offsets,
                                     first_bits, second_bits, cols2,
                                     static_cast<K*>(second.keys.data()), stream, mr);
  return second;
}

#define JOINERY_INSTANTIATE_HASH_PARTITION(K)                                                   \
  template hash_partitions hash_partition_rows<K>(K const*, size_type,                         \
                                                  std::vector<moved_column> const&, int,       \
                                                  stream_ref, memory_resource*);
JOINERY_INSTANTIATE_HASH_PARTITION(std::int32_t)
JOINERY_INSTANTIATE_HASH_PARTITION(std::int64_t)
JOINERY_INSTANTIATE_HASH_PARTITION(std::uint32_t)
JOINERY_INSTANTIATE_HASH_PARTITION(std::uint64_t)
#undef JOINERY_INSTANTIATE_HASH_PARTITION

}  // namespace joinery::detail::gpu::gb
