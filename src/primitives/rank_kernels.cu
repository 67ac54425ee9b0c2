// The device steps of the multi-GPU joins on one rank: key statistics, rank of
// each row, row ids. Small grid-stride kernels; the heavy lifting (split, the
// local joins) is elsewhere.
#include "primitives/rank_kernels.hpp"

#include "core/average.hpp"
#include "core/cuda_try.hpp"
#include "core/hash.hpp"
#include "primitives/detail/launch.cuh"

#include <cub/block/block_reduce.cuh>

#include <cuda_runtime_api.h>

namespace joinery::detail::multi_gpu {

namespace {

using gpu::ceil_div;
using gpu::to_cuda;

struct rank_kernel_policy {
  static constexpr int threads = 256;
};

/// The order-preserving code of a key: sign bit flipped for signed types,
/// widened to 64 bits.
template <class K>
__device__ __forceinline__ std::uint64_t code_of(K k) noexcept {
  if constexpr (sizeof(K) == 4) {
    auto u = static_cast<std::uint32_t>(k);
    if constexpr (static_cast<K>(-1) < K{0}) { u ^= 0x80000000U; }
    return u;
  } else {
    auto u = static_cast<std::uint64_t>(k);
    if constexpr (static_cast<K>(-1) < K{0}) { u ^= 0x8000000000000000ULL; }
    return u;
  }
}

template <class K>
__global__ void code_range_kernel(K const* __restrict__ keys, size_type n,
                                  unsigned long long* __restrict__ out) {
  using reduce = cub::BlockReduce<unsigned long long, rank_kernel_policy::threads>;
  __shared__ typename reduce::TempStorage tmp;
  unsigned long long lo = ~0ULL;
  unsigned long long hi = 0;
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    auto const c = code_of(keys[i]);
    lo = c < lo ? c : lo;
    hi = c > hi ? c : hi;
  }
  auto const block_lo = reduce(tmp).Reduce(lo, [](auto a, auto b) { return a < b ? a : b; });
  __syncthreads();
  auto const block_hi = reduce(tmp).Reduce(hi, [](auto a, auto b) { return a > b ? a : b; });
  if (threadIdx.x == 0) {
    atomicMin(out, block_lo);
    atomicMax(out + 1, block_hi);
  }
}

template <class K>
__global__ void bin_histogram_kernel(K const* __restrict__ keys, size_type n, key_bins bins,
                                     unsigned long long* __restrict__ out) {
  __shared__ unsigned int counts[1U << max_bin_bits];
  for (unsigned b = threadIdx.x; b < bins.count; b += blockDim.x) { counts[b] = 0; }
  __syncthreads();
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    atomicAdd(&counts[(code_of(keys[i]) - bins.base) >> bins.shift], 1U);
  }
  __syncthreads();
  for (unsigned b = threadIdx.x; b < bins.count; b += blockDim.x) {
    if (counts[b] != 0) { atomicAdd(out + b, static_cast<unsigned long long>(counts[b])); }
  }
}

template <class K>
__global__ void rank_by_hash_kernel(K const* __restrict__ keys, size_type n, std::uint32_t ranks,
                                    std::uint32_t* __restrict__ out) {
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    // The high half of a full-avalanche mix, scaled to [0, ranks): independent
    // of the bits the local radix join partitions by.
    auto const h = static_cast<std::uint32_t>(fmix64(code_of(keys[i])) >> 32);
    out[i] = static_cast<std::uint32_t>((static_cast<std::uint64_t>(h) * ranks) >> 32);
  }
}

template <class K>
__global__ void rank_by_range_kernel(K const* __restrict__ keys, size_type n, key_bins bins,
                                     std::uint32_t const* __restrict__ rank_of_bin,
                                     std::uint32_t* __restrict__ out) {
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    auto const c = code_of(keys[i]);
    // Keys of this side may lie outside the range both sides' statistics gave:
    // clamp.
    auto const b = c < bins.base ? 0 : (c - bins.base) >> bins.shift;
    out[i] = rank_of_bin[b < bins.count ? b : bins.count - 1];
  }
}

__global__ void sequence_kernel(std::int64_t* __restrict__ out, size_type n, size_type first) {
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    out[i] = first + i;
  }
}

template <class Out>
__global__ void remap_kernel(std::int64_t const* __restrict__ local, size_type n,
                             std::int64_t const* __restrict__ global, Out* __restrict__ out) {
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    auto const l = local[i];
    out[i] = static_cast<Out>(l < 0 ? std::int64_t{-1} : global[l]);
  }
}

template <class Sum>
__global__ void average_kernel(Sum const* __restrict__ sums,
                               std::int64_t const* __restrict__ counts, size_type n,
                               double* __restrict__ out) {
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    if constexpr (sizeof(Sum) == 8 && static_cast<Sum>(0.5) != Sum{0}) {
      out[i] = sums[i] / static_cast<double>(counts[i]);
    } else {
      out[i] = exact_average(static_cast<std::uint64_t>(sums[i]), 0, true, false, counts[i]);
    }
  }
}

template <class V>
__global__ void split_halves_kernel(V const* __restrict__ v, size_type n, V* __restrict__ hi,
                                    std::uint64_t* __restrict__ lo) {
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    hi[i] = v[i] >> 32;  // arithmetic for int64
    lo[i] = static_cast<std::uint64_t>(v[i]) & 0xffffffffULL;
  }
}

__global__ void average_halves_kernel(std::uint64_t const* __restrict__ hi_sums,
                                      std::uint64_t const* __restrict__ lo_sums,
                                      std::int64_t const* __restrict__ counts, size_type n,
                                      bool is_signed, double* __restrict__ out) {
  for (size_type i = blockIdx.x * static_cast<size_type>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_type>(gridDim.x) * blockDim.x) {
    // hi_sums holds int64 or uint64 bits: widen by the sign where signed.
    auto const h = is_signed ? static_cast<unsigned __int128>(
                                 static_cast<__int128>(static_cast<std::int64_t>(hi_sums[i])))
                             : static_cast<unsigned __int128>(hi_sums[i]);
    auto const total = (h << 32) + static_cast<unsigned __int128>(lo_sums[i]);
    out[i] = exact_average(static_cast<std::uint64_t>(total),
                           static_cast<std::uint64_t>(total >> 64), is_signed, true, counts[i]);
  }
}

int blocks_for(size_type n) {
  return gpu::grid_stride_blocks(n, rank_kernel_policy::threads, gpu::current_sm_count());
}

/// Calls fn(K{}) with the key column's C++ type.
template <class F>
void with_key_type(type_id t, F&& fn) {
  switch (t) {
    case type_id::int32:
      fn(std::int32_t{});
      return;
    case type_id::uint32:
      fn(std::uint32_t{});
      return;
    case type_id::int64:
      fn(std::int64_t{});
      return;
    case type_id::uint64:
      fn(std::uint64_t{});
      return;
    default:
      break;
  }
  JOINERY_FAIL("multi-GPU join keys are int32, int64, uint32 or uint64, not " +
               std::string(to_string(t)));
}

}  // namespace

code_range key_code_range(column_view const& keys, stream_ref stream) {
  code_range r;
  if (keys.size() == 0) { return r; }
  buffer out(2 * sizeof(unsigned long long), device_resource(), stream);
  unsigned long long const init[2] = {~0ULL, 0ULL};
  JOINERY_CUDA_TRY(
    cudaMemcpyAsync(out.data(), init, sizeof(init), cudaMemcpyHostToDevice, to_cuda(stream)));
  with_key_type(keys.type(), [&](auto k) {
    using K = decltype(k);
    code_range_kernel<K>
      <<<blocks_for(keys.size()), rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
        static_cast<K const*>(keys.data()), keys.size(),
        static_cast<unsigned long long*>(out.data()));
    JOINERY_CHECK_LAUNCH();
  });
  unsigned long long host[2] = {};
  JOINERY_CUDA_TRY(
    cudaMemcpyAsync(host, out.data(), sizeof(host), cudaMemcpyDeviceToHost, to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return {host[0], host[1]};
}

std::vector<std::uint64_t> key_bin_histogram(column_view const& keys, key_bins const& bins,
                                             stream_ref stream) {
  std::vector<std::uint64_t> host(bins.count, 0);
  if (keys.size() == 0) { return host; }
  JOINERY_EXPECTS(bins.count <= (1U << max_bin_bits), "too many key bins");
  buffer out(bins.count * sizeof(unsigned long long), device_resource(), stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(out.data(), 0, out.size(), to_cuda(stream)));
  with_key_type(keys.type(), [&](auto k) {
    using K = decltype(k);
    bin_histogram_kernel<K>
      <<<blocks_for(keys.size()), rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
        static_cast<K const*>(keys.data()), keys.size(), bins,
        static_cast<unsigned long long*>(out.data()));
    JOINERY_CHECK_LAUNCH();
  });
  JOINERY_CUDA_TRY(
    cudaMemcpyAsync(host.data(), out.data(), out.size(), cudaMemcpyDeviceToHost, to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return host;
}

column ranks_of_rows(column_view const& keys, rank_rule const& rule, stream_ref stream,
                     memory_resource* mr) {
  column out(type_id::uint32, keys.size(), mr, stream);
  if (keys.size() == 0) { return out; }
  auto* o = out.data_as<std::uint32_t>();
  buffer table;
  if (rule.by_range) {
    JOINERY_EXPECTS(rule.rank_of_bin.size() == rule.bins.count, "one rank per key bin");
    table = buffer(rule.rank_of_bin.size() * sizeof(std::uint32_t), mr, stream);
    JOINERY_CUDA_TRY(cudaMemcpyAsync(table.data(), rule.rank_of_bin.data(), table.size(),
                                     cudaMemcpyHostToDevice, to_cuda(stream)));
  }
  with_key_type(keys.type(), [&](auto k) {
    using K = decltype(k);
    auto const* kp = static_cast<K const*>(keys.data());
    auto const blocks = blocks_for(keys.size());
    if (rule.by_range) {
      rank_by_range_kernel<K><<<blocks, rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
        kp, keys.size(), rule.bins, static_cast<std::uint32_t const*>(table.data()), o);
    } else {
      rank_by_hash_kernel<K><<<blocks, rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
        kp, keys.size(), static_cast<std::uint32_t>(rule.ranks), o);
    }
    JOINERY_CHECK_LAUNCH();
  });
  // The pageable rank table must outlive the copy that reads it.
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return out;
}

column row_id_sequence(size_type n, size_type first, stream_ref stream, memory_resource* mr) {
  column out(type_id::int64, n, mr, stream);
  if (n == 0) { return out; }
  sequence_kernel<<<blocks_for(n), rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
    out.data_as<std::int64_t>(), n, first);
  JOINERY_CHECK_LAUNCH();
  return out;
}

void remap_row_ids(column_view const& local, column_view const& global, void* out, type_id out_type,
                   stream_ref stream) {
  auto const n = local.size();
  if (n == 0) { return; }
  auto const* l = local.data_as<std::int64_t>();
  auto const* g = global.data_as<std::int64_t>();
  auto const blocks = blocks_for(n);
  if (out_type == type_id::int32) {
    remap_kernel<std::int32_t><<<blocks, rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
      l, n, g, static_cast<std::int32_t*>(out));
  } else {
    remap_kernel<std::int64_t><<<blocks, rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
      l, n, g, static_cast<std::int64_t*>(out));
  }
  JOINERY_CHECK_LAUNCH();
}

void average_of(column_view const& sums, column_view const& counts, column& out,
                stream_ref stream) {
  auto const n = sums.size();
  if (n == 0) { return; }
  auto const* c = counts.data_as<std::int64_t>();
  auto* o = out.data_as<double>();
  auto const blocks = blocks_for(n);
  auto const s = to_cuda(stream);
  switch (sums.type()) {
    case type_id::int64:
      average_kernel<<<blocks, rank_kernel_policy::threads, 0, s>>>(sums.data_as<std::int64_t>(), c,
                                                                    n, o);
      break;
    case type_id::uint64:
      average_kernel<<<blocks, rank_kernel_policy::threads, 0, s>>>(sums.data_as<std::uint64_t>(),
                                                                    c, n, o);
      break;
    case type_id::float64:
      average_kernel<<<blocks, rank_kernel_policy::threads, 0, s>>>(sums.data_as<double>(), c, n,
                                                                    o);
      break;
    default:
      JOINERY_FAIL("average_of: sums are int64, uint64 or float64");
  }
  JOINERY_CHECK_LAUNCH();
}

void split_halves(column_view const& v, column& hi, column& lo, stream_ref stream) {
  auto const n = v.size();
  if (n == 0) { return; }
  auto const blocks = blocks_for(n);
  auto* l = lo.data_as<std::uint64_t>();
  if (v.type() == type_id::int64) {
    split_halves_kernel<<<blocks, rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
      v.data_as<std::int64_t>(), n, hi.data_as<std::int64_t>(), l);
  } else {
    split_halves_kernel<<<blocks, rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
      v.data_as<std::uint64_t>(), n, hi.data_as<std::uint64_t>(), l);
  }
  JOINERY_CHECK_LAUNCH();
}

void average_of_halves(column_view const& hi_sums, column_view const& lo_sums,
                       column_view const& counts, bool is_signed, column& out, stream_ref stream) {
  auto const n = hi_sums.size();
  if (n == 0) { return; }
  average_halves_kernel<<<blocks_for(n), rank_kernel_policy::threads, 0, to_cuda(stream)>>>(
    static_cast<std::uint64_t const*>(hi_sums.data()), lo_sums.data_as<std::uint64_t>(),
    counts.data_as<std::int64_t>(), n, is_signed, out.data_as<double>());
  JOINERY_CHECK_LAUNCH();
}

}  // namespace joinery::detail::multi_gpu
