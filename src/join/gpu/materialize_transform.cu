// GFTR payload transforms: a stable radix sort of (key, value) pairs over the bits the join
// sorted its (key, row id) pairs by, or a gather through that sort's row ids. Explicitly
// instantiated for 4/8-byte keys x 1/2/4/8-byte values. Narrow columns of a side travel in
// bundles: packed into one 4- or 8-byte value, transformed once, gathered in one pass.
#include "join/gpu/bundle.cuh"
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

template <class V>
__global__ void __launch_bounds__(permute_policy::threads)
    pack_kernel(bundle_fields f, size_type n, V* __restrict__ out) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    std::uint64_t v = 0;
    for (int c = 0; c < f.count; ++c) { v |= load_field(f.in[c], f.width[c], i) << f.shift[c]; }
    out[i] = static_cast<V>(v);
  }
}

template <class V>
__global__ void __launch_bounds__(permute_policy::threads)
    gather_bundle_kernel(V const* __restrict__ bundle, size_type const* __restrict__ ids,
                         size_type m, bundle_fields f) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
       i += stride) {
    auto const v = static_cast<std::uint64_t>(bundle[ids[i]]);
    for (int c = 0; c < f.count; ++c) { store_field(f.out[c], f.width[c], i, v >> f.shift[c]); }
  }
}

int bundle_blocks(size_type n) {
  return grid_stride_blocks(n, permute_policy::threads, current_sm_count(),
                            permute_policy::blocks_per_sm);
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

void pack_columns(std::vector<void const*> const& cols, std::vector<int> const& widths,
                  size_type n, int value_width, void* out, stream_ref stream) {
  auto f = fields_of(widths, value_width);
  JOINERY_EXPECTS(cols.size() == widths.size(), "one width per bundle column");
  if (n == 0) { return; }
  for (int c = 0; c < f.count; ++c) { f.in[c] = cols[static_cast<std::size_t>(c)]; }
  auto const s = to_cuda(stream);
  if (value_width == 4) {
    pack_kernel<std::uint32_t><<<bundle_blocks(n), permute_policy::threads, 0, s>>>(
        f, n, static_cast<std::uint32_t*>(out));
  } else {
    pack_kernel<std::uint64_t><<<bundle_blocks(n), permute_policy::threads, 0, s>>>(
        f, n, static_cast<std::uint64_t*>(out));
  }
  JOINERY_CHECK_LAUNCH();
}

void gather_bundle(void const* bundle, int value_width, size_type const* ids, size_type m,
                   std::vector<void*> const& outs, std::vector<int> const& widths,
                   stream_ref stream) {
  auto f = fields_of(widths, value_width);
  JOINERY_EXPECTS(outs.size() == widths.size(), "one width per bundle column");
  if (m == 0) { return; }
  for (int c = 0; c < f.count; ++c) { f.out[c] = outs[static_cast<std::size_t>(c)]; }
  auto const s = to_cuda(stream);
  if (value_width == 4) {
    gather_bundle_kernel<std::uint32_t><<<bundle_blocks(m), permute_policy::threads, 0, s>>>(
        static_cast<std::uint32_t const*>(bundle), ids, m, f);
  } else {
    gather_bundle_kernel<std::uint64_t><<<bundle_blocks(m), permute_policy::threads, 0, s>>>(
        static_cast<std::uint64_t const*>(bundle), ids, m, f);
  }
  JOINERY_CHECK_LAUNCH();
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
