// GFTR payload transforms: a stable radix sort of (key, value) pairs over the bits the join
// sorted its (key, row id) pairs by, or a gather through that sort's row ids. Explicitly
// instantiated for 4/8-byte keys x 1/2/4/8-byte values.
#include "join/gpu/materialize.hpp"
#include "primitives/detail/launch.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace joinery::detail::gpu {

namespace {

struct permute_policy {
  static constexpr int threads = 256;
  static constexpr int blocks_per_sm = 16;
};

template <class V>
__global__ void __launch_bounds__(permute_policy::threads)
    permute_kernel(V const* __restrict__ values, std::uint32_t const* __restrict__ order,
                   size_type n, V* __restrict__ out) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = values[order[i]];
  }
}

template <class U, class V>
void sort_pairs(U const* keys, V const* values, size_type n, int sort_bits, V* out,
                stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  // The sorted keys are a by-product (the join already holds them); only the values are kept.
  buffer keys_out(sizeof(U) * static_cast<std::size_t>(n), mr, stream);
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(nullptr, temp, keys,
                                                   static_cast<U*>(keys_out.data()), values, out,
                                                   n, 0, sort_bits, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceRadixSort::SortPairs(scratch.data(), temp, keys,
                                                   static_cast<U*>(keys_out.data()), values, out,
                                                   n, 0, sort_bits, s));
}

template <class F>
void dispatch_value_width(std::size_t width, F&& f) {
  switch (width) {
    case 1: f(std::uint8_t{}); return;
    case 2: f(std::uint16_t{}); return;
    case 4: f(std::uint32_t{}); return;
    case 8: f(std::uint64_t{}); return;
    default: break;
  }
  JOINERY_FAIL("join payload values must be 1, 2, 4 or 8 bytes wide, not " +
               std::to_string(width));
}

}  // namespace

void permute_values(void const* values, std::uint32_t const* order, size_type n,
                    std::size_t width, void* out, stream_ref stream) {
  if (n == 0) { return; }
  dispatch_value_width(width, [&](auto v) {
    using V = decltype(v);
    permute_kernel<V><<<grid_stride_blocks(n, permute_policy::threads, current_sm_count(),
                                           permute_policy::blocks_per_sm),
                        permute_policy::threads, 0, to_cuda(stream)>>>(
        static_cast<V const*>(values), order, n, static_cast<V*>(out));
    JOINERY_CHECK_LAUNCH();
  });
}

void sort_values_by_keys(void const* keys, std::size_t key_width, void const* values,
                         std::size_t width, size_type n, int sort_bits, void* out,
                         stream_ref stream, memory_resource* mr) {
  if (n == 0) { return; }
  if (sort_bits <= 0) {  // the identity order, as sort_with_row_ids gives it
    JOINERY_CUDA_TRY(cudaMemcpyAsync(out, values, width * static_cast<std::size_t>(n),
                                     cudaMemcpyDeviceToDevice, to_cuda(stream)));
    return;
  }
  JOINERY_EXPECTS(key_width == 4 || key_width == 8, "join keys are 4 or 8 bytes wide");
  dispatch_value_width(width, [&](auto v) {
    using V = decltype(v);
    if (key_width == 4) {
      sort_pairs(static_cast<std::uint32_t const*>(keys), static_cast<V const*>(values), n,
                 sort_bits, static_cast<V*>(out), stream, mr);
    } else {
      sort_pairs(static_cast<std::uint64_t const*>(keys), static_cast<V const*>(values), n,
                 sort_bits, static_cast<V*>(out), stream, mr);
    }
  });
}

}  // namespace joinery::detail::gpu
