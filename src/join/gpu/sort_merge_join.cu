// Sort-merge join (Rui & Tu 2017 section 3.3, Wu et al. 2025 3.1.1): both sides sorted with
// their row ids by CUB radix sort, then a merge join over the sorted probe side. Neighbouring
// threads take neighbouring sorted probe keys (their binary searches share a path); each finds its
// first key's lower bound in the sorted build side, then reuses it for its later, larger keys,
// and emits the run of equal build keys of each probe key. A primary-key
// build side needs one bound only: the walk stops at the first larger key. Equality is on the bit
// pattern, so keys sort as unsigned (the order only has to be the same on both sides).
#include "join/gpu/join_common.cuh"
#include "join/gpu/join_sort.hpp"

namespace joinery::detail::gpu {

namespace {

using smj_policy = three_phase_policy<256, 4>;

/// Positions (GFTR): the output holds positions in the sorted sides instead of input row ids;
/// with_positions() gives that matcher, a separate write-kernel instantiation.
template <class U, bool Positions = false>
struct merge_matcher {
  using policy = smj_policy;
  U const* build;  // sorted
  std::uint32_t const* build_rows;
  size_type nb;
  U const* probe;  // sorted
  std::uint32_t const* probe_rows;
  key_codec codec;

  merge_matcher<U, true> with_positions() const {
    return {build, build_rows, nb, probe, probe_rows, codec};
  }
  static constexpr int build_sort_bits() { return 8 * static_cast<int>(sizeof(U)); }
  static constexpr int probe_sort_bits() { return 8 * static_cast<int>(sizeof(U)); }

  std::size_t smem_bytes() const { return 0; }
  __device__ void init_block(unsigned char*) const {}

  __device__ size_type lower_bound(U k, size_type lo) const {
    size_type hi = nb;
    while (lo < hi) {
      size_type const mid = lo + (hi - lo) / 2;
      if (build[mid] < k) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  template <int N, int Stride, class F>
  __device__ void match_items(unsigned char*, size_type base, size_type end, unsigned active,
                              F&& f) const {
    size_type lb = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      size_type const item = base + static_cast<size_type>(j) * Stride;
      if (item < end && ((active >> j) & 1u) != 0) {
        U const k = probe[item];
        // A thread's items ascend, so each bound lies at or after the previous one.
        if (lb < nb && build[lb] < k) { lb = lower_bound(k, lb + 1); }
        // Handles are sorted positions; build_row() turns them into what the output holds.
        for (size_type b = lb; b < nb && build[b] == k; ++b) { f(j, b); }
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
  merge_matcher<U> m{as<U>(bk), as<std::uint32_t>(br), nb, as<U>(pk), as<std::uint32_t>(pr),
                     codec_of(rq.key_type, false)};
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
