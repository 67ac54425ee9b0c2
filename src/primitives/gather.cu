// GPU gather / scatter: dispatch over the value width (1, 2, 4, 8 bytes, moved as unsigned words)
// and the bounds check, explicit instantiation of the kernels.
#include "core/cuda_try.hpp"
#include "primitives/detail/gather.cuh"
#include "primitives/gather_impl.hpp"

#include <cstdint>

namespace joinery::detail {

namespace gpu {

#define JOINERY_INSTANTIATE_GATHER(T, CHECKED)                                                   \
  template __global__ void gather_kernel<gather_policy, T, CHECKED>(                              \
      T const*, size_type, size_type const*, size_type, T*, bool, unsigned int*);                \
  template __global__ void scatter_kernel<gather_policy, T, CHECKED>(                             \
      T const*, size_type, size_type const*, T*, size_type, bool, unsigned int*);
JOINERY_INSTANTIATE_GATHER(std::uint8_t, false)
JOINERY_INSTANTIATE_GATHER(std::uint8_t, true)
JOINERY_INSTANTIATE_GATHER(std::uint16_t, false)
JOINERY_INSTANTIATE_GATHER(std::uint16_t, true)
JOINERY_INSTANTIATE_GATHER(std::uint32_t, false)
JOINERY_INSTANTIATE_GATHER(std::uint32_t, true)
JOINERY_INSTANTIATE_GATHER(std::uint64_t, false)
JOINERY_INSTANTIATE_GATHER(std::uint64_t, true)
#undef JOINERY_INSTANTIATE_GATHER

namespace {

bool aligned16(void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/// A device flag for the checked kernels, read back after the launch.
class bad_id_flag {
 public:
  explicit bad_id_flag(stream_ref stream)
      : stream_(static_cast<cudaStream_t>(stream.handle())),
        buf_(sizeof(unsigned int), device_resource(), stream) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(buf_.data(), 0, sizeof(unsigned int), stream_));
  }
  unsigned int* get() { return static_cast<unsigned int*>(buf_.data()); }
  bool raised() {
    unsigned int h = 0;
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, get(), sizeof(h), cudaMemcpyDeviceToHost, stream_));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(stream_));
    return h != 0;
  }

 private:
  cudaStream_t stream_;
  buffer buf_;
};

template <class T, bool Checked>
bool gather_typed(T const* src, size_type src_size, size_type const* ids, size_type n, T* out,
                  stream_ref stream) {
  using agent = gather_agent<gather_policy, T, Checked>;
  auto const s = static_cast<cudaStream_t>(stream.handle());
  bool const vector = aligned16(ids) && aligned16(out);
  auto const grid = capped_grid_size(ceil_div(n, agent::tile_items), gather_policy::max_blocks_per_sm);
  if constexpr (Checked) {
    bad_id_flag flag(stream);
    gather_kernel<gather_policy, T, true>
        <<<grid, gather_policy::threads_per_block, 0, s>>>(src, src_size, ids, n, out, vector,
                                                           flag.get());
    JOINERY_CHECK_LAUNCH();
    return !flag.raised();
  } else {
    gather_kernel<gather_policy, T, false>
        <<<grid, gather_policy::threads_per_block, 0, s>>>(src, src_size, ids, n, out, vector,
                                                           nullptr);
    JOINERY_CHECK_LAUNCH();
    return true;
  }
}

template <class T, bool Checked>
bool scatter_typed(T const* src, size_type n, size_type const* ids, T* target,
                   size_type target_size, stream_ref stream) {
  using agent = scatter_agent<gather_policy, T, Checked>;
  auto const s = static_cast<cudaStream_t>(stream.handle());
  bool const vector = aligned16(ids) && aligned16(src);
  auto const grid = capped_grid_size(ceil_div(n, agent::tile_items), gather_policy::max_blocks_per_sm);
  if constexpr (Checked) {
    bad_id_flag flag(stream);
    scatter_kernel<gather_policy, T, true>
        <<<grid, gather_policy::threads_per_block, 0, s>>>(src, n, ids, target, target_size,
                                                           vector, flag.get());
    JOINERY_CHECK_LAUNCH();
    return !flag.raised();
  } else {
    scatter_kernel<gather_policy, T, false>
        <<<grid, gather_policy::threads_per_block, 0, s>>>(src, n, ids, target, target_size,
                                                           vector, nullptr);
    JOINERY_CHECK_LAUNCH();
    return true;
  }
}

/// Calls f(type_tag<U>{}) with the unsigned word of `width` bytes.
template <class F>
bool dispatch_width(std::size_t width, F&& f) {
  switch (width) {
    case 1: return f(type_tag<std::uint8_t>{});
    case 2: return f(type_tag<std::uint16_t>{});
    case 4: return f(type_tag<std::uint32_t>{});
    case 8: return f(type_tag<std::uint64_t>{});
    default: break;
  }
  JOINERY_FAIL("gather/scatter values must be 1, 2, 4 or 8 bytes wide, not " +
               std::to_string(width));
}

}  // namespace
}  // namespace gpu

bool gather(void const* source, size_type source_size, size_type const* row_ids, size_type n,
            void* out, std::size_t width, bool checked, stream_ref stream) {
  if (n == 0) { return true; }
  return gpu::dispatch_width(width, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto const* src = static_cast<T const*>(source);
    auto* dst = static_cast<T*>(out);
    return checked ? gpu::gather_typed<T, true>(src, source_size, row_ids, n, dst, stream)
                   : gpu::gather_typed<T, false>(src, source_size, row_ids, n, dst, stream);
  });
}

bool scatter(void const* source, size_type n, size_type const* row_ids, void* target,
             size_type target_size, std::size_t width, bool checked, stream_ref stream) {
  if (n == 0) { return true; }
  return gpu::dispatch_width(width, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto const* src = static_cast<T const*>(source);
    auto* dst = static_cast<T*>(target);
    return checked ? gpu::scatter_typed<T, true>(src, n, row_ids, dst, target_size, stream)
                   : gpu::scatter_typed<T, false>(src, n, row_ids, dst, target_size, stream);
  });
}

}  // namespace joinery::detail
