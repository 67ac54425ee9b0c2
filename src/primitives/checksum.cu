// GPU checksum: one CUB transform-reduce, explicitly instantiated over the integer types.
#include "core/cuda_try.hpp"
#include "primitives/checksum_dispatch.hpp"

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

namespace joinery::detail::gpu {

namespace {

template <class T>
struct widen {
  __host__ __device__ std::uint64_t operator()(T v) const {
    if constexpr (cuda::std::is_signed_v<T>) {
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
    } else {
      return static_cast<std::uint64_t>(v);
    }
  }
};

template <class T>
std::uint64_t checksum_typed(T const* d_in, size_type n, stream_ref stream) {
  auto const s = static_cast<cudaStream_t>(stream.handle());
  auto* mr = device_resource();
  std::size_t temp_bytes = 0;
  JOINERY_CUDA_TRY(cub::DeviceReduce::TransformReduce(nullptr, temp_bytes, d_in,
                                                      static_cast<std::uint64_t*>(nullptr), n,
                                                      cuda::std::plus<std::uint64_t>{},
                                                      widen<T>{}, std::uint64_t{0}, s));
  // One allocation: the result word first, then CUB's scratch.
  buffer scratch(temp_bytes + sizeof(std::uint64_t), mr, stream);
  auto* d_out = static_cast<std::uint64_t*>(scratch.data());
  JOINERY_CUDA_TRY(cub::DeviceReduce::TransformReduce(d_out + 1, temp_bytes, d_in, d_out, n,
                                                      cuda::std::plus<std::uint64_t>{},
                                                      widen<T>{}, std::uint64_t{0}, s));
  std::uint64_t result = 0;
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&result, d_out, sizeof(result), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  return result;
}

}  // namespace

std::uint64_t checksum(column_view const& c, stream_ref stream) {
  if (c.empty()) { return 0; }
  switch (c.type()) {
    case type_id::int8: return checksum_typed(static_cast<std::int8_t const*>(c.data()), c.size(), stream);
    case type_id::int16: return checksum_typed(static_cast<std::int16_t const*>(c.data()), c.size(), stream);
    case type_id::int32: return checksum_typed(static_cast<std::int32_t const*>(c.data()), c.size(), stream);
    case type_id::int64: return checksum_typed(static_cast<std::int64_t const*>(c.data()), c.size(), stream);
    case type_id::uint8: return checksum_typed(static_cast<std::uint8_t const*>(c.data()), c.size(), stream);
    case type_id::uint16: return checksum_typed(static_cast<std::uint16_t const*>(c.data()), c.size(), stream);
    case type_id::uint32: return checksum_typed(static_cast<std::uint32_t const*>(c.data()), c.size(), stream);
    case type_id::uint64: return checksum_typed(static_cast<std::uint64_t const*>(c.data()), c.size(), stream);
    default: break;
  }
  JOINERY_FAIL("checksum needs an integer column, not " + std::string(to_string(c.type())));
}

}  // namespace joinery::detail::gpu
