// The inner-join output size from a correlated hash sample (gpu_join.hpp,
// estimate_inner_join_rows): GFTR's radix join must choose its strategy before partitioning, when
// the output size is not known yet.
//
// A key is in the sample when the low r bits of its murmur hash are zero, on both sides alike, so a
// sampled probe key finds all of its sampled build matches (correlated sampling; Vengerov et al.,
// VLDB 2015). The sampled keys of a prefix of the build side go into a small multiplicity map
// (key -> count, linear probing in device memory), then those of a prefix of the probe side are
// looked up: matches x 2^r x (|R| / build prefix) x (|S| / probe prefix). The prefixes stand for
// their sides when rows are in no particular key order (a build side sorted by key, probed by
// keys skewed toward one end, would be misjudged). Three kernels and one read back; the cost is
// reading the two prefixes (at most 2^24 keys each) once.
#include "core/cuda_try.hpp"
#include "join/gpu/gpu_join.hpp"
#include "join/gpu/join_common.cuh"
#include "primitives/detail/hash.cuh"
#include "primitives/detail/launch.cuh"

#include <cmath>

namespace joinery::detail::gpu {

namespace {

struct estimate_policy {
  static constexpr int threads = 256;
  /// Build keys sampled (about), and the map's slots (a power of two, 4x that).
  static constexpr size_type sample_rows = size_type{1} << 16;
  static constexpr size_type slots = size_type{1} << 18;
  /// Rows looked at on each side: a prefix (the sides' row order is taken as random).
  static constexpr size_type prefix_rows = size_type{1} << 24;
  /// Probing steps after which an insert gives up (the map is then reported full).
  static constexpr int max_steps = 4096;
};

struct estimate_totals {
  unsigned long long matches;
  unsigned long long full;
};

template <class U>
struct sample_map {
  U* keys;
  std::uint32_t* counts;
  U empty;  // a key outside the sample, so never a sampled key
  std::uint64_t mask;  // sampling bits of the hash
};

template <class U>
__device__ __forceinline__ bool sampled(U k, std::uint64_t mask) {
  return (static_cast<std::uint64_t>(murmur_hash{}(k)) & mask) == 0;
}

/// The first slot of k: multiply-shift, independent of the murmur bits that sample it.
template <class U>
__device__ __forceinline__ size_type home_slot(U k) {
  return static_cast<size_type>(to_slot(multiply_shift_hash{}(k),
                                        static_cast<std::uint64_t>(estimate_policy::slots)));
}

template <class U>
__device__ __forceinline__ U cas(U* at, U expected, U desired) {
  if constexpr (sizeof(U) == 4) {
    return atomicCAS(reinterpret_cast<unsigned int*>(at), expected, desired);
  } else {
    return atomicCAS(reinterpret_cast<unsigned long long*>(at), expected, desired);
  }
}

template <class U>
__global__ void __launch_bounds__(estimate_policy::threads)
    clear_map_kernel(sample_map<U> map) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < estimate_policy::slots; i += stride) {
    map.keys[i] = map.empty;
    map.counts[i] = 0;
  }
}

template <class U>
__global__ void __launch_bounds__(estimate_policy::threads)
    insert_sample_kernel(U const* __restrict__ keys, size_type n, sample_map<U> map,
                         estimate_totals* totals) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  constexpr size_type last = estimate_policy::slots - 1;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    U const k = keys[i];
    if (!sampled(k, map.mask)) { continue; }
    size_type slot = home_slot(k);
    bool placed = false;
    for (int step = 0; step < estimate_policy::max_steps; ++step) {
      U const seen = cas(map.keys + slot, map.empty, k);
      if (seen == map.empty || seen == k) {
        atomicAdd(map.counts + slot, 1u);
        placed = true;
        break;
      }
      slot = (slot + 1) & last;
    }
    if (!placed) { atomicAdd(&totals->full, 1ull); }
  }
}

template <class U>
__global__ void __launch_bounds__(estimate_policy::threads)
    probe_sample_kernel(U const* __restrict__ keys, size_type n, sample_map<U> map,
                        estimate_totals* totals) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  constexpr size_type last = estimate_policy::slots - 1;
  unsigned long long found = 0;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    U const k = keys[i];
    if (!sampled(k, map.mask)) { continue; }
    size_type slot = home_slot(k);
    for (size_type step = 0; step < estimate_policy::slots; ++step) {
      U const seen = map.keys[slot];
      if (seen == k) {
        found += map.counts[slot];
        break;
      }
      if (seen == map.empty) { break; }
      slot = (slot + 1) & last;
    }
  }
  if (found != 0) { atomicAdd(&totals->matches, found); }
}

/// The smallest key value whose hash falls outside the sample (mask != 0, so one exists close by).
template <class U>
U empty_key_for(std::uint64_t mask) {
  for (U k = 0;; ++k) {
    auto const h = sizeof(U) == 4 ? static_cast<std::uint64_t>(fmix32(static_cast<std::uint32_t>(k)))
                                  : fmix64(static_cast<std::uint64_t>(k));
    if ((h & mask) != 0) { return k; }
  }
}

template <class U>
std::optional<size_type> estimate(join_request const& rq, stream_ref stream,
                                  memory_resource* mr) {
  using P = estimate_policy;
  // At least one sampling bit, so that an empty-slot key outside the sample exists.
  size_type const build_prefix = std::min(rq.build_rows, P::prefix_rows);
  size_type const probe_prefix = std::min(rq.probe_rows, P::prefix_rows);
  int rate_bits = 1;
  while ((build_prefix >> rate_bits) > P::sample_rows) { ++rate_bits; }
  sample_map<U> map{};
  map.mask = (std::uint64_t{1} << rate_bits) - 1;
  map.empty = empty_key_for<U>(map.mask);
  buffer keys(sizeof(U) * static_cast<std::size_t>(P::slots), mr, stream);
  buffer counts(sizeof(std::uint32_t) * static_cast<std::size_t>(P::slots), mr, stream);
  buffer totals(sizeof(estimate_totals), mr, stream);
  map.keys = as<U>(keys);
  map.counts = as<std::uint32_t>(counts);
  auto const s = to_cuda(stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(totals.data(), 0, totals.size(), s));
  int const sms = current_sm_count();
  clear_map_kernel<U><<<grid_stride_blocks(P::slots, P::threads, sms, 8), P::threads, 0, s>>>(map);
  JOINERY_CHECK_LAUNCH();
  insert_sample_kernel<U><<<grid_stride_blocks(build_prefix, P::threads, sms, 8), P::threads, 0,
                            s>>>(static_cast<U const*>(rq.build_keys), build_prefix, map,
                                 as<estimate_totals>(totals));
  JOINERY_CHECK_LAUNCH();
  probe_sample_kernel<U><<<grid_stride_blocks(probe_prefix, P::threads, sms, 8), P::threads, 0,
                           s>>>(static_cast<U const*>(rq.probe_keys), probe_prefix, map,
                                as<estimate_totals>(totals));
  JOINERY_CHECK_LAUNCH();
  auto const t = read_scalar(as<estimate_totals>(totals), stream);
  if (t.full != 0) { return std::nullopt; }  // the build sample did not fit the map
  double const scale = std::ldexp(1.0, rate_bits) *
                       (static_cast<double>(rq.build_rows) / static_cast<double>(build_prefix)) *
                       (static_cast<double>(rq.probe_rows) / static_cast<double>(probe_prefix));
  return static_cast<size_type>(std::llround(static_cast<double>(t.matches) * scale));
}

}  // namespace

std::optional<size_type> estimate_inner_join_rows(join_request const& rq, stream_ref stream,
                                                  memory_resource* mr) {
  if (rq.build_rows == 0 || rq.probe_rows == 0) { return size_type{0}; }
  return dispatch_key_width(rq.key_type,
                            [&](auto u) { return estimate<decltype(u)>(rq, stream, mr); });
}

}  // namespace joinery::detail::gpu
