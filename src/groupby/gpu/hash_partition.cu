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
//   2. scatter: a tile at a time, the rows are ranked by partition in shared memory (one atomic
//      per partition and warp: lanes of one partition are ranked by a match, so that a hot key
//      does not serialise on one counter), their keys staged in partition order, and every
//      column written as one run per partition, its values read in that order from the tile
//      (which the L1 cache holds).
#include "groupby/gpu/detail/hash_partition.cuh"

#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace joinery::detail::gpu::gb {

namespace {

using policy = partition_groupby_policy;

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

/// The lanes of the warp whose valid `d` (below 2^bits) equals this lane's: one ballot a bit,
/// where __match_any_sync took most of the histogram kernel's time (it was compute-bound at a
/// sixth of the copy bandwidth on the H200). The whole warp calls it.
__device__ __forceinline__ unsigned warp_peers(unsigned d, bool valid, int bits) {
  unsigned peers = __ballot_sync(0xffffffffU, valid);
  for (int b = 0; b < bits; ++b) {
    unsigned const set = __ballot_sync(0xffffffffU, (d >> b) & 1U);
    peers &= ((d >> b) & 1U) ? set : ~set;
  }
  return peers;
}

/// Adds each valid lane to counter[d] of its partition d with one atomic per partition and
/// warp; returns the lane's slot among the additions (its rank plus the counter's old value).
/// The whole warp calls it.
__device__ __forceinline__ unsigned warp_claim(unsigned* counter, unsigned d, bool valid,
                                               int bits) {
  unsigned const lane = threadIdx.x & 31;
  unsigned const peers = warp_peers(d, valid, bits);
  if (!valid) { return 0; }
  int const leader = __ffs(static_cast<int>(peers)) - 1;
  unsigned first = 0;
  if (static_cast<int>(lane) == leader) { first = atomicAdd(counter + d, __popc(peers)); }
  first = __shfl_sync(peers, first, leader);
  return first + __popc(peers & ((1U << lane) - 1U));
}

template <class K>
__global__ void __launch_bounds__(policy::threads)
    histogram_kernel(K const* __restrict__ keys, block_chunk const* __restrict__ chunks,
                     int shift, int pass_bits, size_type* __restrict__ counts) {
  constexpr int ipt = policy::items_per_thread;
  __shared__ unsigned hist[1 << policy::max_pass_bits];
  unsigned const fanout = 1U << pass_bits;
  for (unsigned d = threadIdx.x; d < fanout; d += blockDim.x) { hist[d] = 0; }
  __syncthreads();
  auto const c = chunks[blockIdx.x];
  for (size_type first = c.begin; first < c.end; first += policy::tile_rows) {
    K k[ipt];
    bool valid[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      size_type const i = first + j * policy::threads + threadIdx.x;
      valid[j] = i < c.end;
      k[j] = valid[j] ? __ldg(keys + i) : K{};
    }
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      warp_claim(hist, digit_of(k[j], shift, fanout - 1), valid[j], pass_bits);
    }
  }
  __syncthreads();
  for (unsigned d = threadIdx.x; d < fanout; d += blockDim.x) {
    counts[c.cell + static_cast<size_type>(d) * c.stride] = hist[d];
  }
}

/// The scatter's shared memory: per partition the write cursor, this tile's count and its first
/// staged slot; per tile slot the key, the tile-local row and the partition.
template <class K>
constexpr std::size_t scatter_shared_bytes() {
  constexpr std::size_t fanout = std::size_t{1} << policy::max_pass_bits;
  return fanout * (sizeof(size_type) + 2 * sizeof(unsigned)) +
         static_cast<std::size_t>(policy::tile_rows) *
           (sizeof(K) + sizeof(std::uint16_t) + sizeof(std::uint8_t));
}

template <class K>
__global__ void __launch_bounds__(policy::threads)
    scatter_kernel(K const* __restrict__ keys, block_chunk const* __restrict__ chunks, int shift,
                   int pass_bits, size_type const* __restrict__ cursors, K* __restrict__ keys_out,
                   pass_columns const cols) {
  constexpr int ipt = policy::items_per_thread;
  constexpr int fanout_max = 1 << policy::max_pass_bits;
  static_assert(policy::tile_rows <= 65536, "tile rows are staged as 16-bit offsets");
  using block_scan = cub::BlockScan<unsigned, policy::threads>;
  __shared__ typename block_scan::TempStorage scan_storage;
  extern __shared__ __align__(16) unsigned char smem[];
  auto* cursor = reinterpret_cast<size_type*>(smem);
  auto* staged_key = reinterpret_cast<K*>(cursor + fanout_max);
  auto* count = reinterpret_cast<unsigned*>(staged_key + policy::tile_rows);
  auto* start = count + fanout_max;
  auto* staged_row = reinterpret_cast<std::uint16_t*>(start + fanout_max);
  auto* staged_part = reinterpret_cast<std::uint8_t*>(staged_row + policy::tile_rows);
  unsigned const fanout = 1U << pass_bits;
  auto const c = chunks[blockIdx.x];
  for (unsigned d = threadIdx.x; d < fanout; d += blockDim.x) {
    cursor[d] = cursors[c.cell + static_cast<size_type>(d) * c.stride];
    count[d] = 0;
  }
  __syncthreads();
  for (size_type first = c.begin; first < c.end; first += policy::tile_rows) {
    auto const rows = static_cast<unsigned>(std::min<size_type>(policy::tile_rows, c.end - first));
    K k[ipt];
    unsigned part[ipt];
    unsigned rank[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      unsigned const i = j * policy::threads + threadIdx.x;
      k[j] = i < rows ? __ldg(keys + first + i) : K{};
    }
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      part[j] = digit_of(k[j], shift, fanout - 1);
      rank[j] = warp_claim(count, part[j], j * policy::threads + threadIdx.x < rows, pass_bits);
    }
    __syncthreads();
    unsigned before = 0;
    block_scan(scan_storage).ExclusiveSum(threadIdx.x < fanout ? count[threadIdx.x] : 0U, before);
    if (threadIdx.x < fanout) { start[threadIdx.x] = before; }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      unsigned const i = j * policy::threads + threadIdx.x;
      if (i >= rows) { continue; }
      unsigned const slot = start[part[j]] + rank[j];
      staged_key[slot] = k[j];
      staged_row[slot] = static_cast<std::uint16_t>(i);
      staged_part[slot] = static_cast<std::uint8_t>(part[j]);
    }
    __syncthreads();
    // Consecutive threads write consecutive rows of one partition, in every column. A thread's
    // slots are read, and its values loaded, all before the first is written: one slot at a time
    // left each load's latency exposed (the pass ran at a fifth of the copy bandwidth).
    size_type pos[ipt];
    size_type row[ipt];
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      unsigned const slot = j * policy::threads + threadIdx.x;
      if (slot >= rows) { continue; }
      unsigned const d = staged_part[slot];
      pos[j] = cursor[d] + (slot - start[d]);
      row[j] = first + staged_row[slot];
      keys_out[pos[j]] = staged_key[slot];
    }
    for (int col = 0; col < cols.count; ++col) {
      bool const ids = cols.in[col] == nullptr;
      if (cols.bytes[col] == 4) {
        auto const* in = static_cast<std::uint32_t const*>(cols.in[col]);
        auto* out = static_cast<std::uint32_t*>(cols.out[col]);
        std::uint32_t v[ipt];
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          bool const here = j * policy::threads + threadIdx.x < rows;
          v[j] = !here ? 0U : ids ? static_cast<std::uint32_t>(row[j]) : __ldg(in + row[j]);
        }
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          if (j * policy::threads + threadIdx.x < rows) { out[pos[j]] = v[j]; }
        }
      } else {
        auto const* in = static_cast<unsigned long long const*>(cols.in[col]);
        auto* out = static_cast<unsigned long long*>(cols.out[col]);
        unsigned long long v[ipt];
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          bool const here = j * policy::threads + threadIdx.x < rows;
          v[j] = !here ? 0ULL : ids ? static_cast<unsigned long long>(row[j]) : __ldg(in + row[j]);
        }
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          if (j * policy::threads + threadIdx.x < rows) { out[pos[j]] = v[j]; }
        }
      }
    }
    __syncthreads();
    for (unsigned d = threadIdx.x; d < fanout; d += blockDim.x) {
      cursor[d] += count[d];
      count[d] = 0;
    }
    __syncthreads();
  }
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
  // Chunks of about the same rows: a segment of r rows gets ceil(r / chunk) blocks.
  size_type const chunk = std::max<size_type>(
    policy::tile_rows,
    ceil_div(n, static_cast<size_type>(current_sm_count()) * policy::blocks_per_sm));
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
  histogram_kernel<K><<<blocks, policy::threads, 0, s>>>(keys, d_chunks, shift, pass_bits,
                                                         d_counts);
  JOINERY_CHECK_LAUNCH();
  JOINERY_CUDA_TRY(cudaMemsetAsync(d_counts + cells, 0, sizeof(size_type), s));
  std::size_t temp_bytes = 0;
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d_counts, cells + 1, s));
  {
    buffer temp(scratch_bytes(temp_bytes), mr, stream);
    JOINERY_CUDA_TRY(
      cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, d_counts, cells + 1, s));
  }
  std::size_t const smem = scatter_shared_bytes<K>();
  allow_dynamic_smem(scatter_kernel<K>, smem);
  scatter_kernel<K><<<blocks, policy::threads, smem, s>>>(keys, d_chunks, shift, pass_bits,
                                                          d_counts, keys_out, cols);
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
