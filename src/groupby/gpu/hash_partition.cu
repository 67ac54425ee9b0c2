// The partition phase of the GPU partition group-bys (Wu et al. 4.3, PGB): rows are moved into
// 2^bits partitions by the high bits of a second hash of their key's hash, so that each
// partition holds about g / 2^bits groups and is aggregated by blocks with a table in shared
// memory (hash_groupby.cu). The tables index their slots by the key's hash: the shared ones by
// its low bits, the global one by its high bits. Partitioning by the hash's own high bits put
// each partition's groups into one slice of the global table, which overfilled its slice long
// before the table's group count noticed (Zipf 1, g = 2^18: 2.7 s on the H200, where the
// estimate sizes the first table at a quarter of the groups); hashed again, the partition says
// nothing about either table's slots.
//
// Two kernels over the same split of the rows into one contiguous chunk per block:
//   1. histogram: each block counts its chunk's rows per partition in shared memory and writes
//      counts[p * blocks + b] (partition-major, so that one exclusive scan gives every block its
//      write cursor inside every partition and the partitions come out contiguous);
//   2. scatter: each block re-reads its chunk a tile at a time, ranks the tile's rows by
//      partition in shared memory (one atomic per partition per warp: lanes of one partition are
//      ranked by a match, so that a hot key does not serialise on one counter), stages keys, row
//      ids and each moved column in that order, and writes them out as runs per partition.
// run_pgb skips both when there is one partition: the input is that partition.
// All columns of a row move in the same kernel to the same position, so they line up although
// the order within a partition is not the input's. Moved: the key, and either the aggregated
// columns (PGB-TR) or the row's 32- or 64-bit id (PGB-UR).
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "primitives/detail/hash.cuh"

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace joinery::detail::gpu::gb {

namespace {

using policy = partition_groupby_policy;

/// What the scatter moves besides the key (by value to the kernel).
struct moved_columns {
  int count = 0;
  void const* in[policy::max_moved_columns] = {};
  void* out[policy::max_moved_columns] = {};
  std::uint32_t bytes[policy::max_moved_columns] = {};
  std::uint32_t* ids32 = nullptr;  ///< PGB-UR: the rows' ids (at most one of the two)
  size_type* ids64 = nullptr;
};

template <class K>
__device__ __forceinline__ unsigned partition_of(K k, int bits) {
  if (bits == 0) { return 0; }
  auto const h = murmur_hash{}(murmur_hash{}(k));
  return static_cast<unsigned>(h >> (8 * sizeof(h) - static_cast<unsigned>(bits)));
}

/// Adds each valid lane to counter[p] of its partition p with one atomic per partition and
/// warp; returns the lane's slot among the additions (its rank plus the counter's old value).
/// The whole warp calls it.
__device__ __forceinline__ unsigned warp_claim(unsigned* counter, unsigned p, bool valid) {
  unsigned const lane = threadIdx.x & 31;
  unsigned const peers = __match_any_sync(full_warp, valid ? p : ~0U);
  if (!valid) { return 0; }
  int const leader = __ffs(static_cast<int>(peers)) - 1;
  unsigned first = 0;
  if (static_cast<int>(lane) == leader) { first = atomicAdd(counter + p, __popc(peers)); }
  first = __shfl_sync(peers, first, leader);
  return first + __popc(peers & ((1U << lane) - 1U));
}

/// The rows of block b: [b * chunk, min(n, (b + 1) * chunk)).
struct chunking {
  size_type chunk = 0;
  int blocks = 0;
};

/// The rows of a block's chunk in tiles of threads * items_per_thread, striped (row j of a thread
/// is j * threads after row j - 1), so that every load of a step is coalesced and all of a
/// thread's loads are in flight before the first is used.
template <class K, class Tile>
__device__ __forceinline__ void for_each_tile(K const* __restrict__ keys, size_type n, chunking c,
                                              int bits, Tile&& tile) {
  constexpr int ipt = policy::items_per_thread;
  size_type const begin = static_cast<size_type>(blockIdx.x) * c.chunk;
  size_type const end = std::min(n, begin + c.chunk);
  for (size_type first = begin; first < end; first += policy::threads * ipt) {
    size_type row[ipt];
    K k[ipt];
    bool valid[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      row[j] = first + j * policy::threads + threadIdx.x;
      valid[j] = row[j] < end;
      k[j] = valid[j] ? __ldg(keys + row[j]) : K{};
    }
    unsigned p[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) { p[j] = partition_of(k[j], bits); }
    tile(row, k, valid, p);
  }
}

template <class K>
__global__ void __launch_bounds__(policy::threads)
    hash_histogram_kernel(K const* __restrict__ keys, size_type n, chunking c, int bits,
                          size_type* __restrict__ counts) {
  constexpr int ipt = policy::items_per_thread;
  extern __shared__ unsigned hist[];
  unsigned const fanout = 1U << bits;
  for (unsigned p = threadIdx.x; p < fanout; p += blockDim.x) { hist[p] = 0; }
  __syncthreads();
  for_each_tile(keys, n, c, bits, [&](auto const&, auto const&, auto const& valid, auto const& p) {
#pragma unroll
    for (int j = 0; j < ipt; ++j) { warp_claim(hist, p[j], valid[j]); }
  });
  __syncthreads();
  for (unsigned p = threadIdx.x; p < fanout; p += blockDim.x) {
    counts[static_cast<size_type>(p) * c.blocks + blockIdx.x] = hist[p];
  }
}

/// The scatter's shared memory for `fanout` partitions, 8-byte arrays first (aligned): per
/// partition the block's first row; per tile row one value column's value; per tile slot the
/// key; per partition its rows written so far,
/// this tile's count and its first slot in the staged tile; per tile slot the row (tile-local) and
/// its partition.
template <class K>
constexpr std::size_t scatter_shared_bytes(std::size_t fanout) {
  return fanout * (sizeof(size_type) + 3 * sizeof(unsigned)) +
         static_cast<std::size_t>(policy::tile_rows) *
           (sizeof(unsigned long long) + sizeof(K) + 2 * sizeof(unsigned));
}

/// Each tile is ranked by partition in shared memory first (Maltenberger et al.'s block-local
/// pre-scatter, as the block_scatter primitive), then written partition run by partition run:
/// consecutive threads write consecutive rows of one partition, where writing each row straight
/// to its partition sent a warp's 32 stores to up to 32 places (0.13 TB/s at 2048 partitions).
template <class K>
__global__ void __launch_bounds__(policy::threads)
    hash_scatter_kernel(K const* __restrict__ keys, size_type n, chunking c, int bits,
                        size_type const* __restrict__ cursors, K* __restrict__ keys_out,
                        moved_columns const cols) {
  constexpr int ipt = policy::items_per_thread;
  constexpr int tile_rows = policy::tile_rows;
  using block_scan = cub::BlockScan<unsigned, policy::threads>;
  __shared__ typename block_scan::TempStorage scan_storage;
  extern __shared__ __align__(8) unsigned char smem[];
  unsigned const fanout = 1U << bits;
  auto* base = reinterpret_cast<size_type*>(smem);          // the block's first row per partition
  auto* staged_value = reinterpret_cast<unsigned long long*>(base + fanout);  // one column's
  auto* staged_key = reinterpret_cast<K*>(staged_value + tile_rows);  // 8-byte arrays first
  auto* fill = reinterpret_cast<unsigned*>(staged_key + tile_rows);  // rows written before the tile
  auto* count = fill + fanout;                              // this tile's rows per partition
  auto* start = count + fanout;                             // their first slot in the staged tile
  auto* staged_row = start + fanout;                        // tile-local row of each slot
  auto* staged_part = staged_row + tile_rows;
  for (unsigned p = threadIdx.x; p < fanout; p += blockDim.x) {
    base[p] = cursors[static_cast<size_type>(p) * c.blocks + blockIdx.x];
    fill[p] = 0;
  }
  // Each thread scans `per_thread` consecutive partitions' counts (fanout >= threads), or one.
  unsigned const per_thread = fanout > policy::threads ? fanout / policy::threads : 1U;
  size_type const begin = static_cast<size_type>(blockIdx.x) * c.chunk;
  size_type const end = std::min(n, begin + c.chunk);
  for (size_type first = begin; first < end; first += tile_rows) {
    for (unsigned p = threadIdx.x; p < fanout; p += blockDim.x) { count[p] = 0; }
    __syncthreads();
    K k[ipt];
    bool valid[ipt];
    unsigned part[ipt];
    unsigned rank[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      size_type const i = first + j * policy::threads + threadIdx.x;
      valid[j] = i < end;
      k[j] = valid[j] ? __ldg(keys + i) : K{};
      part[j] = partition_of(k[j], bits);
    }
#pragma unroll
    for (int j = 0; j < ipt; ++j) { rank[j] = warp_claim(count, part[j], valid[j]); }
    __syncthreads();
    unsigned sum = 0;
    unsigned const p0 = threadIdx.x * per_thread;
    for (unsigned q = 0; q < per_thread; ++q) {
      if (p0 + q < fanout) { sum += count[p0 + q]; }
    }
    unsigned before = 0;
    block_scan(scan_storage).ExclusiveSum(sum, before);
    for (unsigned q = 0; q < per_thread; ++q) {
      if (p0 + q < fanout) {
        start[p0 + q] = before;
        before += count[p0 + q];
      }
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      if (!valid[j]) { continue; }
      unsigned const slot = start[part[j]] + rank[j];
      staged_row[slot] = static_cast<unsigned>(j * policy::threads + threadIdx.x);
      staged_part[slot] = part[j];
      staged_key[slot] = k[j];
    }
    __syncthreads();
    auto const rows = static_cast<unsigned>(std::min<size_type>(tile_rows, end - first));
    // The keys and the row ids, from the staged slots: consecutive threads write consecutive rows
    // of one partition.
    for (unsigned slot = threadIdx.x; slot < rows; slot += blockDim.x) {
      unsigned const p = staged_part[slot];
      size_type const pos = base[p] + fill[p] + (slot - start[p]);
      keys_out[pos] = staged_key[slot];
      size_type const row = first + staged_row[slot];
      if (cols.ids32 != nullptr) { cols.ids32[pos] = static_cast<std::uint32_t>(row); }
      if (cols.ids64 != nullptr) { cols.ids64[pos] = row; }
    }
    // Each value column through shared memory: read in row order (coalesced), written in slot
    // order (coalesced runs), instead of reading the tile's rows out of order.
    for (int col = 0; col < cols.count; ++col) {
      __syncthreads();  // the previous column's values are written out
      for (unsigned r = threadIdx.x; r < rows; r += blockDim.x) {
        staged_value[r] = cols.bytes[col] == 4
                            ? __ldg(static_cast<std::uint32_t const*>(cols.in[col]) + first + r)
                            : __ldg(static_cast<unsigned long long const*>(cols.in[col]) + first + r);
      }
      __syncthreads();
      for (unsigned slot = threadIdx.x; slot < rows; slot += blockDim.x) {
        unsigned const p = staged_part[slot];
        size_type const pos = base[p] + fill[p] + (slot - start[p]);
        auto const v = staged_value[staged_row[slot]];
        if (cols.bytes[col] == 4) {
          static_cast<std::uint32_t*>(cols.out[col])[pos] = static_cast<std::uint32_t>(v);
        } else {
          static_cast<unsigned long long*>(cols.out[col])[pos] = v;
        }
      }
    }
    __syncthreads();
    for (unsigned p = threadIdx.x; p < fanout; p += blockDim.x) { fill[p] += count[p]; }
  }
}

}  // namespace

template <class K>
hash_partitions hash_partition_rows(K const* keys, size_type n, table_view const& input,
                                    std::vector<size_type> const& columns, bool row_ids, int bits,
                                    stream_ref stream, memory_resource* mr) {
  JOINERY_EXPECTS(bits >= 0 && bits <= policy::max_bits,
                  "partition group-by: " + std::to_string(bits) + " partition bits, at most " +
                    std::to_string(policy::max_bits));
  JOINERY_EXPECTS(columns.size() <= static_cast<std::size_t>(policy::max_moved_columns),
                  "partition_transformed group-by moves at most " +
                    std::to_string(policy::max_moved_columns) + " aggregated columns, got " +
                    std::to_string(columns.size()) + "; use partition or sort_transformed");
  auto const s = to_cuda(stream);
  size_type const fanout = size_type{1} << bits;
  hash_partitions out;
  out.bits = bits;
  out.keys = buffer(static_cast<std::size_t>(n) * sizeof(K), mr, stream);
  moved_columns cols;
  if (row_ids) {
    out.ids64 = n > static_cast<size_type>(0xffffffffLL);
    out.row_ids = buffer(static_cast<std::size_t>(n) * (out.ids64 ? 8 : 4), mr, stream);
    if (out.ids64) {
      cols.ids64 = static_cast<size_type*>(out.row_ids.data());
    } else {
      cols.ids32 = static_cast<std::uint32_t*>(out.row_ids.data());
    }
  } else {
    for (auto c : columns) {
      auto const& col = input.column(c);
      auto const w = static_cast<std::uint32_t>(size_of(col.type()));
      out.columns.emplace_back(static_cast<std::size_t>(n) * w, mr, stream);
      cols.in[cols.count] = col.data();
      cols.out[cols.count] = out.columns.back().data();
      cols.bytes[cols.count] = w;
      ++cols.count;
    }
  }
  chunking c;
  c.blocks = static_cast<int>(std::max<size_type>(
    1, std::min<size_type>(static_cast<size_type>(current_sm_count()) * policy::blocks_per_sm,
                           ceil_div(n, static_cast<size_type>(policy::threads)))));
  c.chunk = ceil_div(ceil_div(n, static_cast<size_type>(c.blocks)), size_type{32}) * 32;
  auto const cells = fanout * c.blocks;
  buffer counts(static_cast<std::size_t>(cells + 1) * sizeof(size_type), mr, stream);
  auto* d_counts = static_cast<size_type*>(counts.data());
  hash_histogram_kernel<K><<<c.blocks, policy::threads, fanout * sizeof(unsigned), s>>>(
    keys, n, c, bits, d_counts);
  JOINERY_CHECK_LAUNCH();
  JOINERY_CUDA_TRY(cudaMemsetAsync(d_counts + cells, 0, sizeof(size_type), s));
  std::size_t temp_bytes = 0;
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d_counts, cells + 1, s));
  {
    buffer temp(scratch_bytes(temp_bytes), mr, stream);
    JOINERY_CUDA_TRY(
      cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, d_counts, cells + 1, s));
  }
  std::size_t const scatter_smem = scatter_shared_bytes<K>(static_cast<std::size_t>(fanout));
  allow_dynamic_smem(hash_scatter_kernel<K>, scatter_smem);
  hash_scatter_kernel<K><<<c.blocks, policy::threads, scatter_smem, s>>>(
    keys, n, c, bits, d_counts, static_cast<K*>(out.keys.data()), cols);
  JOINERY_CHECK_LAUNCH();
  // Partition p starts at its first block's cursor: one strided copy of those cells.
  out.offsets.resize(static_cast<std::size_t>(fanout + 1));
  JOINERY_CUDA_TRY(cudaMemcpy2DAsync(out.offsets.data(), sizeof(size_type), d_counts,
                                     static_cast<std::size_t>(c.blocks) * sizeof(size_type),
                                     sizeof(size_type), static_cast<std::size_t>(fanout),
                                     cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  out.offsets.back() = n;
  return out;
}

#define JOINERY_INSTANTIATE_HASH_PARTITION(K)                                                   \
  template hash_partitions hash_partition_rows<K>(K const*, size_type, table_view const&,      \
                                                  std::vector<size_type> const&, bool, int,    \
                                                  stream_ref, memory_resource*);
JOINERY_INSTANTIATE_HASH_PARTITION(std::int32_t)
JOINERY_INSTANTIATE_HASH_PARTITION(std::int64_t)
JOINERY_INSTANTIATE_HASH_PARTITION(std::uint32_t)
JOINERY_INSTANTIATE_HASH_PARTITION(std::uint64_t)
#undef JOINERY_INSTANTIATE_HASH_PARTITION

}  // namespace joinery::detail::gpu::gb
