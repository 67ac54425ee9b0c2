// The GPU joins' sorting steps: CUB radix sort with generated row ids, sign flips, and the
// partition offsets of a radix-sorted column.
#include "join/gpu/join_sort.hpp"
#include "core/cuda_try.hpp"
#include "primitives/detail/launch.cuh"
#include "primitives/partition_dispatch.hpp"
#include "primitives/sort_dispatch.hpp"

#include <cub/device/device_radix_sort.cuh>

namespace joinery::detail::gpu {

namespace {

constexpr int map_threads = 256;

int map_blocks(size_type n) { return grid_stride_blocks(n, map_threads, current_sm_count(), 8); }

__global__ void iota_kernel(std::uint32_t* __restrict__ out, size_type n) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = static_cast<std::uint32_t>(i);
  }
}

template <class U>
__global__ void flip_kernel(U const* __restrict__ in, U* __restrict__ out, size_type n) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  constexpr U flip = static_cast<U>(U{1} << (8 * sizeof(U) - 1));
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = in[i] ^ flip;
  }
}

/// offsets[d] = the first row whose digit is >= d (n if none), d in [0, 2^bits]: a binary search
/// per digit over the rows sorted by digit, so the keys are not read again in full (the searches
/// touch O(2^bits log n) keys, mostly from L2).
template <class U>
__global__ void offsets_kernel(U const* __restrict__ sorted, size_type n, int bits,
                               size_type* __restrict__ offsets) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  U const mask = static_cast<U>((U{1} << bits) - 1);
  size_type const fanout = size_type{1} << bits;
  for (size_type d = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; d <= fanout;
       d += stride) {
    size_type lo = 0;
    size_type hi = n;
    while (lo < hi) {
      size_type const mid = lo + (hi - lo) / 2;
      if (static_cast<size_type>(sorted[mid] & mask) < d) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    offsets[d] = lo;
  }
}

}  // namespace

template <class U>
void sort_with_row_ids(U const* keys_in, U* keys_out, std::uint32_t* rows_out, size_type n,
                       int begin_bit, int end_bit, stream_ref stream, memory_resource* mr) {
  if (n == 0) { return; }
  JOINERY_EXPECTS(n <= max_row_id_rows, "this GPU join carries 32-bit row ids: at most " +
                                          std::to_string(max_row_id_rows) + " rows per side, got " +
                                          std::to_string(n));
  auto const s = to_cuda(stream);
  buffer ids(sizeof(std::uint32_t) * static_cast<std::size_t>(n), mr, stream);
  iota_kernel<<<map_blocks(n), map_threads, 0, s>>>(static_cast<std::uint32_t*>(ids.data()), n);
  JOINERY_CHECK_LAUNCH();
  if (end_bit <= begin_bit) {
    // Nothing to sort by: the identity order.
    JOINERY_CUDA_TRY(cudaMemcpyAsync(keys_out, keys_in, sizeof(U) * static_cast<std::size_t>(n),
                                     cudaMemcpyDeviceToDevice, s));
    JOINERY_CUDA_TRY(cudaMemcpyAsync(rows_out, ids.data(), ids.size(), cudaMemcpyDeviceToDevice, s));
    return;
  }
  std::size_t temp = 0;
  auto const* id_in = static_cast<std::uint32_t const*>(ids.data());
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp, keys_in, keys_out, id_in,
                                                   rows_out, n, begin_bit, end_bit, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.data(), temp, keys_in, keys_out, id_in,
                                                   rows_out, n, begin_bit, end_bit, s));
}

template <class U>
void partition_with_row_ids(U const* keys_in, U* keys_out, std::uint32_t* rows_out, size_type n,
                            int bits, stream_ref stream, memory_resource* mr) {
  if (n == 0) { return; }
  JOINERY_EXPECTS(n <= max_row_id_rows, "this GPU join carries 32-bit row ids: at most " +
                                          std::to_string(max_row_id_rows) + " rows per side, got " +
                                          std::to_string(n));
  if (bits <= 0) {
    sort_with_row_ids(keys_in, keys_out, rows_out, n, 0, bits, stream, mr);
    return;
  }
  // swwc's digit: all of it up to 8 bits; 9 or 10 bits when that leaves CUB one 8-bit pass
  // instead of two (on the H200 swwc took 2.2 / 2.5 / 3.3 ms for 2^28 rows at 8 / 9 / 10 bits,
  // a CUB pass about 2.1); else 8.
  int const low = bits <= 8 ? bits : (bits == 17 || bits == 18 ? bits - 8 : 8);
  using offset_t = std::int64_t;
  buffer digit_offsets(sizeof(offset_t) * ((std::size_t{1} << low) + 1), mr, stream);
  if (low == bits) {
    swwc_partition<U, std::uint32_t>(keys_in, nullptr, n, 0, bits, keys_out, rows_out,
                                     static_cast<offset_t*>(digit_offsets.data()), stream, mr);
    return;
  }
  buffer keys1(sizeof(U) * static_cast<std::size_t>(n), mr, stream);
  buffer rows1(sizeof(std::uint32_t) * static_cast<std::size_t>(n), mr, stream);
  swwc_partition<U, std::uint32_t>(keys_in, nullptr, n, 0, low, static_cast<U*>(keys1.data()),
                                   static_cast<std::uint32_t*>(rows1.data()),
                                   static_cast<offset_t*>(digit_offsets.data()), stream, mr);
  sort_pairs_by_bits(static_cast<U const*>(keys1.data()), keys_out,
                     static_cast<std::uint32_t const*>(rows1.data()), rows_out, n, low, bits,
                     stream, mr);
}

template <class U, class V>
void sort_pairs_by_bits(U const* keys_in, U* keys_out, V const* values_in, V* values_out,
                        size_type n, int begin_bit, int end_bit, stream_ref stream,
                        memory_resource* mr) {
  if (n == 0) { return; }
  auto const s = to_cuda(stream);
  if (end_bit <= begin_bit) {
    JOINERY_CUDA_TRY(cudaMemcpyAsync(keys_out, keys_in, sizeof(U) * static_cast<std::size_t>(n),
                                     cudaMemcpyDeviceToDevice, s));
    JOINERY_CUDA_TRY(cudaMemcpyAsync(values_out, values_in,
                                     sizeof(V) * static_cast<std::size_t>(n),
                                     cudaMemcpyDeviceToDevice, s));
    return;
  }
  // The primitive's CUB sort (primitives/sort.cu): no second instantiation of it here.
  radix_sort_pairs<U, V>(keys_in, keys_out, values_in, values_out, n, stream, mr, begin_bit,
                         end_bit);
}

template <class U>
void flip_sign_bits(U const* in, U* out, size_type n, stream_ref stream) {
  if (n == 0) { return; }
  flip_kernel<<<map_blocks(n), map_threads, 0, to_cuda(stream)>>>(in, out, n);
  JOINERY_CHECK_LAUNCH();
}

template <class U>
void radix_partition_offsets(U const* sorted, size_type n, int bits, size_type* offsets,
                             stream_ref stream) {
  offsets_kernel<<<map_blocks((size_type{1} << bits) + 1), map_threads, 0, to_cuda(stream)>>>(
    sorted, n, bits, offsets);
  JOINERY_CHECK_LAUNCH();
}

#define JOINERY_INSTANTIATE(U)                                                                 \
  template void sort_with_row_ids<U>(U const*, U*, std::uint32_t*, size_type, int, int,       \
                                     stream_ref, memory_resource*);                           \
  template void partition_with_row_ids<U>(U const*, U*, std::uint32_t*, size_type, int,      \
                                          stream_ref, memory_resource*);                      \
  template void flip_sign_bits<U>(U const*, U*, size_type, stream_ref);                       \
  template void radix_partition_offsets<U>(U const*, size_type, int, size_type*, stream_ref); \
  template void sort_pairs_by_bits<U, std::uint32_t>(U const*, U*, std::uint32_t const*,      \
                                                     std::uint32_t*, size_type, int, int,     \
                                                     stream_ref, memory_resource*);           \
  template void sort_pairs_by_bits<U, std::uint64_t>(U const*, U*, std::uint64_t const*,      \
                                                     std::uint64_t*, size_type, int, int,     \
                                                     stream_ref, memory_resource*);
JOINERY_INSTANTIATE(std::uint32_t)
JOINERY_INSTANTIATE(std::uint64_t)
#undef JOINERY_INSTANTIATE

}  // namespace joinery::detail::gpu
