// GPU stable radix partitioning (Wu et al. 2025, RADIX-PARTITION), dispatch layer: one CUB
// radix sort restricted to the digit's bits [bit_offset, bit_offset + bits) (LSD radix sort is
// stable, so rows of one digit keep their input order), then the partition bounds by binary
// search in the sorted digits. One payload rides along in the sort; several are gathered through
// the sorted row ids. Keys are sorted as the unsigned integer of their width, so that digits are
// bits of the key's own bit pattern (CUB would flip the sign bit of signed keys).
#include "primitives/detail/launch.cuh"
#include "primitives/detail/partition_policy.hpp"
#include "primitives/detail/stable_partition_kernels.cuh"
#include "primitives/partition_dispatch.hpp"

#include <cub/device/device_radix_sort.cuh>

#include <cstdint>
#include <limits>

namespace joinery::detail::gpu {

namespace {

using policy = stable_partition_policy;

template <class K>
void sort_keys(K const* in, K* out, size_type n, int begin_bit, int end_bit, stream_ref stream,
               memory_resource* mr) {
  auto const s = to_cuda(stream);
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortKeys(nullptr, temp, in, out, n, begin_bit, end_bit, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(
    cub::DeviceRadixSort::SortKeys(scratch.data(), temp, in, out, n, begin_bit, end_bit, s));
}

template <class K, class V>
void sort_pairs(K const* keys_in, K* keys_out, V const* values_in, V* values_out, size_type n,
                int begin_bit, int end_bit, stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp, keys_in, keys_out, values_in,
                                                   values_out, n, begin_bit, end_bit, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.data(), temp, keys_in, keys_out,
                                                   values_in, values_out, n, begin_bit, end_bit,
                                                   s));
}

/// Sorts (key, row id) pairs, then gathers every payload by the sorted row ids. I: row id type.
template <class K, class I>
void partition_by_row_ids(K const* keys, size_type n, int begin_bit, int end_bit, K* keys_out,
                          std::vector<payload_io> const& payloads, stream_ref stream,
                          memory_resource* mr) {
  auto const s = to_cuda(stream);
  int const blocks = grid_stride_blocks(n, policy::threads_per_block, current_sm_count());
  buffer ids_in(sizeof(I) * n, mr, stream);
  buffer ids_out(sizeof(I) * n, mr, stream);
  auto* d_ids_in = static_cast<I*>(ids_in.data());
  auto* d_ids_out = static_cast<I*>(ids_out.data());
  iota_kernel<I><<<blocks, policy::threads_per_block, 0, s>>>(d_ids_in, n);
  JOINERY_CHECK_LAUNCH();
  sort_pairs<K, I>(keys, keys_out, d_ids_in, d_ids_out, n, begin_bit, end_bit, stream, mr);
  for (auto const& p : payloads) {
    if (p.width == 4) {
      gather_kernel<std::uint32_t, I><<<blocks, policy::threads_per_block, 0, s>>>(
        static_cast<std::uint32_t const*>(p.in), d_ids_out, n, static_cast<std::uint32_t*>(p.out));
    } else {
      gather_kernel<std::uint64_t, I><<<blocks, policy::threads_per_block, 0, s>>>(
        static_cast<std::uint64_t const*>(p.in), d_ids_out, n, static_cast<std::uint64_t*>(p.out));
    }
    JOINERY_CHECK_LAUNCH();
  }
}

}  // namespace

template <class K>
void stable_partition(K const* keys, size_type n, int bit_offset, int bits, K* keys_out,
                      std::vector<payload_io> const& payloads, std::int64_t* offsets,
                      stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  if (n == 0) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t) * (fanout + 1), s));
    return;
  }
  int const begin_bit = bit_offset;
  int const end_bit = bit_offset + bits;
  if (payloads.empty()) {
    sort_keys(keys, keys_out, n, begin_bit, end_bit, stream, mr);
  } else if (payloads.size() == 1 && payloads[0].width == 4) {
    sort_pairs(keys, keys_out, static_cast<std::uint32_t const*>(payloads[0].in),
               static_cast<std::uint32_t*>(payloads[0].out), n, begin_bit, end_bit, stream, mr);
  } else if (payloads.size() == 1) {
    sort_pairs(keys, keys_out, static_cast<std::uint64_t const*>(payloads[0].in),
               static_cast<std::uint64_t*>(payloads[0].out), n, begin_bit, end_bit, stream, mr);
  } else if (n <= static_cast<size_type>(std::numeric_limits<std::uint32_t>::max())) {
    partition_by_row_ids<K, std::uint32_t>(keys, n, begin_bit, end_bit, keys_out, payloads,
                                           stream, mr);
  } else {
    partition_by_row_ids<K, std::uint64_t>(keys, n, begin_bit, end_bit, keys_out, payloads,
                                           stream, mr);
  }
  // fanout + 1 binary searches over the sorted digits (each O(log n) reads).
  int const blocks = static_cast<int>(ceil_div(fanout + 1, policy::threads_per_block));
  partition_bounds_kernel<K><<<blocks, policy::threads_per_block, 0, s>>>(
    keys_out, n, radix_digit<K>(bit_offset, bits), fanout, offsets);
  JOINERY_CHECK_LAUNCH();
}

template void stable_partition<std::uint32_t>(std::uint32_t const*, size_type, int, int,
                                              std::uint32_t*, std::vector<payload_io> const&,
                                              std::int64_t*, stream_ref, memory_resource*);
template void stable_partition<std::uint64_t>(std::uint64_t const*, size_type, int, int,
                                              std::uint64_t*, std::vector<payload_io> const&,
                                              std::int64_t*, stream_ref, memory_resource*);

}  // namespace joinery::detail::gpu
