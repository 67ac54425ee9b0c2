// Sort-merge join (Rui & Tu 2017 section 3.3, Wu et al. 2025 3.1.1): both sides sorted with
// their row ids by CUB radix sort, then a merge join over the sorted probe side. Like merge path,
// the merge is cut into independent pieces first: for each tile of sorted probe keys a small
// kernel finds the window of the sorted build side that can match it (the lower bound of its
// first key, the upper bound of its last). The join stages a tile's window in shared memory
// (when it is at most two tiles long, as in PK-FK joins) and searches it there, instead of
// searching the whole build side in global memory. Within a tile, each thread finds its
// first key's lower bound in the window and reuses it for its later, larger keys, and emits the
// run of equal build keys of each probe key; a primary-key build side needs one bound only (the
// walk stops at the first larger key). Equality is on the bit pattern, so keys sort as unsigned
// (the order only has to be the same on both sides).
#include "join/gpu/join_common.cuh"
#include "join/gpu/join_sort.hpp"

namespace joinery::detail::gpu {

namespace {

using smj_policy = three_phase_policy<256, 4>;

/// First position in sorted[lo, hi) whose key is not below k (Upper: above k).
template <bool Upper, class U>
__device__ __forceinline__ size_type search(U const* sorted, size_type lo, size_type hi, U k) {
  while (lo < hi) {
    size_type const mid = lo + (hi - lo) / 2;
    if (Upper ? !(k < sorted[mid]) : sorted[mid] < k) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/// The build window of every probe tile: [lower bound of its first key, upper bound of its last).
template <class U>
__global__ void merge_window_kernel(U const* __restrict__ build, size_type nb,
                                    U const* __restrict__ probe, size_type np,
                                    size_type* __restrict__ window) {
  constexpr size_type tile = smj_policy::tile;
  size_type const tiles = ceil_div(np, tile);
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type t = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; t < tiles;
       t += stride) {
    size_type const first = t * tile;
    size_type const last = (first + tile < np ? first + tile : np) - 1;
    size_type const lo = search<false>(build, size_type{0}, nb, probe[first]);
    window[2 * t] = lo;
    window[2 * t + 1] = search<true>(build, lo, nb, probe[last]);
  }
}

/// Positions (GFTR): the output holds positions in the sorted sides instead of input row ids;
/// with_positions() gives that matcher, a separate write-kernel instantiation.
template <class U, bool Positions = false>
struct merge_matcher {
  using policy = smj_policy;
  /// Build keys of a tile's window staged in shared memory (larger windows, from duplicates
  /// or sparse probe keys, are searched in global memory).
  static constexpr size_type staged_keys = 2 * policy::tile;
  U const* build;  // sorted
  std::uint32_t const* build_rows;
  size_type nb;
  U const* probe;  // sorted
  std::uint32_t const* probe_rows;
  size_type const* window;  // two entries per tile of policy::tile probe keys
  key_codec codec;

  merge_matcher<U, true> with_positions() const {
    return {build, build_rows, nb, probe, probe_rows, window, codec};
  }
  static constexpr int build_sort_bits() { return 8 * static_cast<int>(sizeof(U)); }
  static constexpr int probe_sort_bits() { return 8 * static_cast<int>(sizeof(U)); }

  std::size_t smem_bytes() const { return sizeof(U) * static_cast<std::size_t>(staged_keys); }
  __device__ void init_block(unsigned char*) const {}

  template <int N, int Stride, class F>
  __device__ void match_items(unsigned char* smem, size_type base, size_type end, unsigned active,
                              F&& f) const {
    // The driver's tiles start at multiples of policy::tile, thread t holding its items from
    // tile start + t on.
    size_type const w = (base - threadIdx.x) / policy::tile;
    size_type const lo = window[2 * w];
    size_type const hi = window[2 * w + 1];
    bool const staged = hi - lo <= staged_keys;  // block-uniform
    auto* keys = reinterpret_cast<U*>(smem);
    if (staged) {
      __syncthreads();  // the previous call's readers are done
      for (size_type t = threadIdx.x; t < hi - lo; t += policy::threads) { keys[t] = build[lo + t]; }
      __syncthreads();
      match_in<N, Stride>(keys, lo, hi - lo, base, end, active, f);
    } else {
      match_in<N, Stride>(build + lo, lo, hi - lo, base, end, active, f);
    }
  }

  /// Matches of this thread's items in sorted[0, len), which holds build[first, first + len).
  template <int N, int Stride, class F>
  __device__ void match_in(U const* sorted, size_type first, size_type len, size_type base,
                           size_type end, unsigned active, F&& f) const {
    size_type lb = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      size_type const item = base + static_cast<size_type>(j) * Stride;
      if (item < end && ((active >> j) & 1u) != 0) {
        U const k = probe[item];
        // A thread's items ascend, so each bound lies at or after the previous one.
        if (lb < len && sorted[lb] < k) { lb = search<false>(sorted, lb + 1, len, k); }
        // Handles are sorted positions; build_row() turns them into what the output holds.
        for (size_type b = lb; b < len && sorted[b] == k; ++b) { f(j, first + b); }
      }
    }
  }
  __device__ size_type build_row(size_type b) const {
    return Positions ? b : static_cast<size_type>(build_rows[b]);
  }
  __device__ size_type probe_row(size_type item) const {
    return Positions ? item : static_cast<size_type>(probe_rows[item]);
  }
  __device__ std::uint64_t probe_value(size_type item) const {
    return checksum_of(probe[item], codec);
  }
};

template <class U>
device_matches run(join_request const& rq, stream_ref stream, memory_resource* mr) {
  phase_clock clock(stream);
  clock.mark("sort build");
  auto const nb = rq.build_rows;
  auto const np = rq.probe_rows;
  buffer bk(sizeof(U) * static_cast<std::size_t>(nb), mr, stream);
  buffer br(sizeof(std::uint32_t) * static_cast<std::size_t>(nb), mr, stream);
  sort_with_row_ids(static_cast<U const*>(rq.build_keys), as<U>(bk), as<std::uint32_t>(br), nb, 0,
                    8 * static_cast<int>(sizeof(U)), stream, mr);
  clock.mark("sort probe");
  buffer pk(sizeof(U) * static_cast<std::size_t>(np), mr, stream);
  buffer pr(sizeof(std::uint32_t) * static_cast<std::size_t>(np), mr, stream);
  sort_with_row_ids(static_cast<U const*>(rq.probe_keys), as<U>(pk), as<std::uint32_t>(pr), np, 0,
                    8 * static_cast<int>(sizeof(U)), stream, mr);
  buffer window(2 * sizeof(size_type) *
                  static_cast<std::size_t>(std::max<size_type>(1, ceil_div(np, smj_policy::tile))),
                mr, stream);
  if (np > 0) {
    clock.mark("merge windows");
    merge_window_kernel<U><<<grid_stride_blocks(ceil_div(np, smj_policy::tile), 256,
                                                current_sm_count(), 8),
                             256, 0, to_cuda(stream)>>>(as<U>(bk), nb, as<U>(pk), np,
                                                        as<size_type>(window));
    JOINERY_CHECK_LAUNCH();
  }
  merge_matcher<U> m{as<U>(bk),           as<std::uint32_t>(br), nb, as<U>(pk),
                     as<std::uint32_t>(pr), as<size_type>(window), codec_of(rq.key_type, false)};
  auto out = run_three_phase(m, np, rq, m.codec, "sort_merge", clock, stream, mr);
  out.phases = clock.finish();
  if (out.positions) {  // GFTR: the caller transforms the payloads with the same sorts
    out.build_side = {std::move(bk), std::move(br), m.build_sort_bits()};
    out.probe_side = {std::move(pk), std::move(pr), m.probe_sort_bits()};
  }
  return out;
}

}  // namespace

device_matches sort_merge_join(join_request const& rq, stream_ref stream, memory_resource* mr) {
  return dispatch_key_width(rq.key_type,
                            [&](auto u) { return run<decltype(u)>(rq, stream, mr); });
}

}  // namespace joinery::detail::gpu
