// The bandwidths of the materialization model, measured once per device: a device-to-device
// copy, gathers of 4-byte values through int64 ids that are random within 4096-row windows
// (clustered, like GFTR's build side) or random over the whole column (unclustered, GFUR), and
// GFTR's own transform, sort_values_by_keys over one 8-bit digit of random uint32 keys with
// 4- and 8-byte values (a CUB radix sort pass runs well below copy speed). The column is four
// times the L2 cache where memory allows, so the reads mostly reach DRAM as they do on
// join-sized inputs. On an H200 (2^26 rows) the whole probe is about 15 ms of GPU time.
#include "core/cuda_try.hpp"
#include "join/gpu/materialize.hpp"
#include "primitives/detail/hash.cuh"
#include "primitives/detail/launch.cuh"

#include <joinery/primitives/gather.hpp>

#include <algorithm>
#include <map>
#include <mutex>

namespace joinery::detail::gpu {

namespace {

struct bandwidth_probe_policy {
  static constexpr int threads = 256;
  /// Rows of the measured column: 4-byte values filling l2_multiple x the L2 cache (2^26 rows,
  /// 256 MiB, on an H200), within [min_rows, max_rows]; halved while the device cannot hold the
  /// column, its ids, the outputs and the sort's buffers (about 40 bytes a row).
  static constexpr size_type l2_multiple = 4;
  static constexpr size_type max_rows = size_type{1} << 26;
  static constexpr size_type min_rows = size_type{1} << 20;
  static constexpr size_type window = 4096;
  static constexpr int runs = 3;
  /// The sort probe orders by one CUB digit: a histogram pass and one digit pass.
  static constexpr int sort_bits = 8;
};

__global__ void bandwidth_ids_kernel(size_type* __restrict__ ids, size_type n, size_type window) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    auto const h =
      static_cast<size_type>(fmix64(static_cast<std::uint64_t>(i) + 0x9e3779b97f4a7c15ULL) >> 1);
    if (window > 0) {
      size_type const base = i - i % window;
      ids[i] = std::min(base + h % window, n - 1);
    } else {
      ids[i] = h % n;
    }
  }
}

__global__ void bandwidth_keys_kernel(std::uint32_t* __restrict__ keys, size_type n) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    keys[i] = static_cast<std::uint32_t>(fmix64(static_cast<std::uint64_t>(i) ^ 0x5bd1e995ULL));
  }
}

/// The fastest of a few timed runs of `f` after one warm-up, in seconds (noise only slows).
template <class F>
double time_best(cudaStream_t s, F&& f) {
  cudaEvent_t e0{};
  cudaEvent_t e1{};
  JOINERY_CUDA_TRY(cudaEventCreate(&e0));
  JOINERY_CUDA_TRY(cudaEventCreate(&e1));
  double best = 1e30;
  try {
    f();
    for (int r = 0; r < bandwidth_probe_policy::runs; ++r) {
      JOINERY_CUDA_TRY(cudaEventRecord(e0, s));
      f();
      JOINERY_CUDA_TRY(cudaEventRecord(e1, s));
      JOINERY_CUDA_TRY(cudaEventSynchronize(e1));
      float ms = 0;
      JOINERY_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
      best = std::min(best, std::max(static_cast<double>(ms), 1e-3) / 1000.0);
    }
  } catch (...) {
    (void)cudaEventDestroy(e0);
    (void)cudaEventDestroy(e1);
    throw;
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  return best;
}

device_bandwidths measure(size_type n, stream_ref stream) {
  using P = bandwidth_probe_policy;
  auto* const mr = device_resource();
  auto const s = to_cuda(stream);
  column src(type_id::uint32, n, mr, stream);
  column out(type_id::uint32, n, mr, stream);
  column ids(type_id::int64, n, mr, stream);
  JOINERY_CUDA_TRY(
    cudaMemsetAsync(src.data(), 1, sizeof(std::uint32_t) * static_cast<std::size_t>(n), s));
  device_bandwidths bw;
  auto const bytes = static_cast<double>(n) * sizeof(std::uint32_t);
  bw.sequential = 2 * bytes / time_best(s, [&] {
    JOINERY_CUDA_TRY(cudaMemcpyAsync(out.data(), src.data(), static_cast<std::size_t>(bytes),
                                     cudaMemcpyDeviceToDevice, s));
  });
  auto gather_bw = [&](size_type window) {
    auto const blocks = grid_stride_blocks(n, P::threads, current_sm_count(), 8);
    bandwidth_ids_kernel<<<blocks, P::threads, 0, s>>>(ids.data_as<size_type>(), n, window);
    JOINERY_CHECK_LAUNCH();
    return 16.0 * static_cast<double>(n) / time_best(s, [&] {
      (void)gather(src.view(), ids.view(), bounds_check::unchecked, stream, mr);
    });
  };
  bw.clustered_gather = gather_bw(P::window);
  bw.unclustered_gather = gather_bw(0);
  // The transform: random keys (the gathers are done with src), the ids column as values.
  bandwidth_keys_kernel<<<grid_stride_blocks(n, P::threads, current_sm_count(), 8), P::threads,
                          0, s>>>(src.data_as<std::uint32_t>(), n);
  JOINERY_CHECK_LAUNCH();
  column sorted(type_id::int64, n, mr, stream);
  auto sort_bw = [&](std::size_t width) {
    return static_cast<double>(n) * 2.0 * static_cast<double>(sizeof(std::uint32_t) + width) /
           time_best(s, [&] {
             sort_values_by_keys(src.data(), sizeof(std::uint32_t), ids.data(), width, n,
                                 P::sort_bits, sorted.data(), stream, mr);
           });
  };
  bw.sort_pass_4_4 = sort_bw(sizeof(std::uint32_t));
  bw.sort_pass_4_8 = sort_bw(sizeof(std::uint64_t));
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int l2 = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  bw.l2_bytes = static_cast<double>(l2);
  bw.unclustered_column_bytes = bytes;
  return bw;
}

}  // namespace

device_bandwidths measured_bandwidths(stream_ref stream) {
  static std::mutex m;
  static std::map<int, device_bandwidths> cache;
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  std::lock_guard lock(m);
  if (auto it = cache.find(dev); it != cache.end()) { return it->second; }
  using P = bandwidth_probe_policy;
  int l2 = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  size_type n = P::min_rows;
  auto const want_bytes = P::l2_multiple * static_cast<size_type>(l2);
  while (n < P::max_rows && n * static_cast<size_type>(sizeof(std::uint32_t)) < want_bytes) {
    n *= 2;
  }
  for (;; n /= 2) {
    try {
      auto const bw = measure(n, stream);
      cache.emplace(dev, bw);
      return bw;
    } catch (out_of_memory const&) {
      if (n / 2 < P::min_rows) { throw; }
    }
  }
}

}  // namespace joinery::detail::gpu
