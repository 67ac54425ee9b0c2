// He et al. 2008 split, dispatch layer: a check (and numbering) pass over the partition ids
// (a count of ids outside [0, fanout), row ids 0..n-1), then either the stable block-scatter
// partitioning (partition_block_scatter.cu) of (id, row id) pairs, whose grouped row ids the
// caller gathers its columns by, or, when every column is 4 or 8 bytes wide, the stable CUB
// partitioning (partition_stable.cu) of the ids carrying the columns themselves.
#include "primitives/detail/launch.cuh"
#include "primitives/partition_dispatch.hpp"

#include <cstdint>

namespace joinery::detail::gpu {

namespace {

constexpr int split_threads = 256;

__global__ void __launch_bounds__(split_threads)
    number_rows_kernel(std::uint32_t const* __restrict__ ids, size_type n, std::uint32_t fanout,
                       std::uint64_t* __restrict__ rows,
                       unsigned long long* __restrict__ outside) {
  unsigned long long bad = 0;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    if (rows != nullptr) { rows[i] = static_cast<std::uint64_t>(i); }
    bad += ids[i] >= fanout;  // int32 ids below 0 are >= 2^31 as uint32
  }
  if (bad != 0) { atomicAdd(outside, bad); }
}

/// Digit bits of a split into `fanout` groups: the smallest 2^bits >= fanout (at least 1 bit).
int split_bits(int fanout) {
  int bits = 1;
  while ((1 << bits) < fanout) { ++bits; }
  return bits;
}

/// The check pass: how many ids lie outside [0, fanout) (one synchronisation); with `rows`,
/// also rows[i] = i.
size_type count_outside(std::uint32_t const* ids, size_type n, int fanout, std::uint64_t* rows,
                        stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  buffer outside(sizeof(unsigned long long), mr, stream);
  auto* d_outside = static_cast<unsigned long long*>(outside.data());
  JOINERY_CUDA_TRY(cudaMemsetAsync(d_outside, 0, sizeof(unsigned long long), s));
  if (n > 0) {
    number_rows_kernel<<<grid_stride_blocks(n, split_threads, current_sm_count(), 8),
                         split_threads, 0, s>>>(ids, n, static_cast<std::uint32_t>(fanout), rows,
                                                d_outside);
    JOINERY_CHECK_LAUNCH();
  }
  unsigned long long bad = 0;
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&bad, d_outside, sizeof(bad), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  return static_cast<size_type>(bad);
}

/// Every id < fanout <= 2^bits, so digits [fanout, 2^bits) are empty and the first fanout + 1
/// of the 2^bits + 1 offsets are the split's.
void copy_split_offsets(std::int64_t const* all_offsets, int fanout, std::int64_t* offsets,
                        stream_ref stream) {
  JOINERY_CUDA_TRY(cudaMemcpyAsync(offsets, all_offsets,
                                   sizeof(std::int64_t) * (static_cast<std::size_t>(fanout) + 1),
                                   cudaMemcpyDeviceToDevice, to_cuda(stream)));
}

}  // namespace

size_type split_rows(std::uint32_t const* ids, size_type n, int fanout, std::int64_t* rows_out,
                     std::int64_t* offsets, stream_ref stream, memory_resource* mr) {
  int const bits = split_bits(fanout);
  buffer rows(sizeof(std::uint64_t) * static_cast<std::size_t>(n > 0 ? n : 1), mr, stream);
  auto* d_rows = static_cast<std::uint64_t*>(rows.data());
  if (auto const bad = count_outside(ids, n, fanout, d_rows, stream, mr); bad != 0) { return bad; }
  buffer ids_out(sizeof(std::uint32_t) * static_cast<std::size_t>(n > 0 ? n : 1), mr, stream);
  buffer all_offsets(sizeof(std::int64_t) * ((std::size_t{1} << bits) + 1), mr, stream);
  block_scatter_partition<std::uint32_t, std::uint64_t>(
    ids, d_rows, n, 0, bits, static_cast<std::uint32_t*>(ids_out.data()),
    reinterpret_cast<std::uint64_t*>(rows_out), static_cast<std::int64_t*>(all_offsets.data()),
    stream, mr);
  copy_split_offsets(static_cast<std::int64_t const*>(all_offsets.data()), fanout, offsets, stream);
  return 0;
}

size_type split_wide_columns(std::uint32_t const* ids, size_type n, int fanout,
                             std::vector<payload_io> const& columns, std::int64_t* offsets,
                             stream_ref stream, memory_resource* mr) {
  int const bits = split_bits(fanout);
  if (auto const bad = count_outside(ids, n, fanout, nullptr, stream, mr); bad != 0) { return bad; }
  buffer ids_out(sizeof(std::uint32_t) * static_cast<std::size_t>(n > 0 ? n : 1), mr, stream);
  buffer all_offsets(sizeof(std::int64_t) * ((std::size_t{1} << bits) + 1), mr, stream);
  stable_partition<std::uint32_t>(ids, n, 0, bits, static_cast<std::uint32_t*>(ids_out.data()),
                                  columns, static_cast<std::int64_t*>(all_offsets.data()), stream,
                                  mr);
  copy_split_offsets(static_cast<std::int64_t const*>(all_offsets.data()), fanout, offsets, stream);
  return 0;
}

}  // namespace joinery::detail::gpu
