// GPU radix partitioning with shared-memory software write-combining (Lutz et al. 2022,
// section 4, "Shared"), dispatch layer and kernel: the global digit histogram and its scan give
// each digit's first output row, which seeds one global write cursor per digit (or, with aligned
// flushes, each digit's rotated range: agent_swwc_partition::set_aligned); then one pass in
// which every block buffers tuples per digit in shared memory and writes full buffers at ranges
// taken from the cursors. Explicitly instantiated over the key widths (uint32/uint64) and payload
// widths (none/uint32/uint64).
#include "primitives/detail/agent_swwc_partition.cuh"
#include "primitives/detail/launch.cuh"
#include "primitives/detail/partition_kernels.cuh"
#include "primitives/detail/partition_policy.hpp"
#include "primitives/partition_dispatch.hpp"

#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

namespace joinery::detail::gpu {

template <class Policy, class K, class P, bool Staged, bool Aligned>
__global__ void __launch_bounds__(Policy::threads_per_block, Policy::min_blocks_per_sm)
    swwc_partition_kernel(K const* __restrict__ keys, P const* __restrict__ payload, size_type n,
                          int bit_offset, int bits, unsigned b,
                          unsigned long long* __restrict__ cursors,
                          std::int64_t const* __restrict__ aligned_spans, K* __restrict__ keys_out,
                          P* __restrict__ payload_out,
                          swwc_stage<K, typename agent_swwc_partition<Policy, K, P>::pay_t> stage) {
  using agent_t = agent_swwc_partition<Policy, K, P, Staged, Aligned>;
  agent_t agent(radix_dynamic_smem, 1 << bits, b, radix_digit<K>(bit_offset, bits), keys,
                payload, keys_out, payload_out, cursors);
  if constexpr (Staged) { agent.set_stage(stage); }
  if constexpr (Aligned) { agent.set_aligned(aligned_spans); }
  agent.init();
  __syncthreads();
  size_type const tiles = ceil_div(n, Policy::tile_items);
  for (size_type t = blockIdx.x; t < tiles; t += gridDim.x) {
    size_type const base = t * Policy::tile_items;
    if (base + Policy::tile_items <= n) {
      agent.template consume_tile<true>(base, Policy::tile_items);
    } else {
      agent.template consume_tile<false>(base, static_cast<int>(n - base));
    }
  }
  __syncthreads();
  agent.template flush<true>();
  if constexpr (Staged) {
    __syncthreads();
    agent.commit();
  }
}

/// The chunks' first states (swwc_stage.cuh): the partial chunks at each partition's ends
/// DIRECT, a digit's first R whole chunks STAGED, the rest undecided (zeroed before). One thread
/// a digit; neighbours may both mark the chunk they share, with the same value.
__global__ void stage_init_kernel(std::int64_t const* __restrict__ offsets, int fanout,
                                  int log2_c, int log2_r, unsigned* __restrict__ state) {
  int const d = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (d >= fanout) { return; }
  auto const s = static_cast<unsigned long long>(offsets[d]);
  auto const e = static_cast<unsigned long long>(offsets[d + 1]);
  if (e == s) { return; }
  unsigned long long const c = 1ULL << log2_c;
  if ((s & (c - 1)) != 0) { state[s >> log2_c] = stage_direct; }
  if ((e & (c - 1)) != 0) { state[(e - 1) >> log2_c] = stage_direct; }
  unsigned long long const first_whole = (s + c - 1) >> log2_c;
  unsigned long long const whole_end = e >> log2_c;
  for (unsigned long long k = first_whole; k < whole_end && k < first_whole + (1ULL << log2_r);
       ++k) {
    state[k] = stage_staged;
  }
}


/// tile_start[s] = the tiles of segments 0..s-1 (segment s: rows [seg[s], seg[s + 1])), s in
/// [0, segments]: the tile numbering of a segmented pass, in which no tile crosses a segment.
/// One block; segments <= 2^max_radix_bits.
template <int Threads>
__global__ void __launch_bounds__(Threads)
    segment_tiles_kernel(std::int64_t const* __restrict__ seg, int segments, int tile,
                         size_type* __restrict__ tile_start) {
  using scan = cub::BlockScan<size_type, Threads>;
  __shared__ typename scan::TempStorage storage;
  size_type running = 0;
  for (int at = 0; at <= segments; at += Threads) {
    int const s = at + static_cast<int>(threadIdx.x);
    size_type const tiles = s < segments ? ceil_div(seg[s + 1] - seg[s], size_type{tile}) : 0;
    size_type first = 0;
    size_type total = 0;
    scan(storage).ExclusiveSum(tiles, first, total);
    if (s <= segments) { tile_start[s] = running + first; }
    running += total;
    __syncthreads();
  }
}

/// The tiles [t0, t1) of this block in a segmented pass (an even share of tile_start[segments]
/// tiles): contiguous, so a block changes segment only a few times.
__device__ __forceinline__ void block_tile_range(size_type const* tile_start, int segments,
                                                 size_type& t0, size_type& t1) {
  size_type const tiles = tile_start[segments];
  t0 = tiles * blockIdx.x / gridDim.x;
  t1 = tiles * (blockIdx.x + 1) / gridDim.x;
}

/// The segment of tile t: s with tile_start[s] <= t < tile_start[s + 1], from the previous one
/// (tiles ascend) or by binary search the first time (s < 0).
__device__ __forceinline__ int segment_of_tile(size_type const* tile_start, int segments,
                                               size_type t, int s) {
  if (s < 0) {
    int lo = 0;
    int hi = segments;  // tile_start[segments] > t
    while (hi - lo > 1) {
      int const mid = (lo + hi) / 2;
      if (tile_start[mid] <= t) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
  while (tile_start[s + 1] <= t) { ++s; }
  return s;
}

/// counts[s * 2^bits + d] += rows of segment s whose digit is d: per block a shared histogram of
/// the current segment, added to the global counts when the segment changes.
template <int Threads, int VT, class K>
__global__ void __launch_bounds__(Threads)
    segmented_histogram_kernel(K const* __restrict__ keys, std::int64_t const* __restrict__ seg,
                               size_type const* __restrict__ tile_start, int segments,
                               int bit_offset, int bits,
                               unsigned long long* __restrict__ counts) {
  constexpr int tile = Threads * VT;
  auto* hist = reinterpret_cast<unsigned*>(radix_dynamic_smem);
  int const fanout = 1 << bits;
  radix_digit<K> const digit(bit_offset, bits);
  for (int d = static_cast<int>(threadIdx.x); d < fanout; d += Threads) { hist[d] = 0; }
  size_type t0 = 0;
  size_type t1 = 0;
  block_tile_range(tile_start, segments, t0, t1);
  auto publish = [&](int s) {
    __syncthreads();
    for (int d = static_cast<int>(threadIdx.x); d < fanout; d += Threads) {
      if (hist[d] != 0) {
        atomicAdd(counts + ((static_cast<size_type>(s) << bits) + d), static_cast<unsigned long long>(hist[d]));
        hist[d] = 0;
      }
    }
    __syncthreads();
  };
  int s = -1;
  __syncthreads();
  for (size_type t = t0; t < t1; ++t) {
    int const next = segment_of_tile(tile_start, segments, t, s);
    if (s >= 0 && next != s) { publish(s); }
    s = next;
    size_type const base = seg[s] + (t - tile_start[s]) * tile;
    size_type const left = seg[s + 1] - base;
    int const valid = static_cast<int>(left < tile ? left : tile);
#pragma unroll
    for (int j = 0; j < VT; ++j) {
      int const idx = j * Threads + static_cast<int>(threadIdx.x);
      if (idx < valid) { atomicAdd(hist + digit(keys[base + idx]), 1U); }
    }
  }
  if (s >= 0) { publish(s); }
}

/// The second pass of a two-level partitioning: the digit [bit_offset, bit_offset + bits) within
/// each segment, cursors[s * 2^bits + d] the next output row of digit d of segment s. Buffers are
/// written out whole, and drained whenever the block moves to the next segment.
template <class Policy, class K, class P>
__global__ void __launch_bounds__(Policy::threads_per_block, Policy::min_blocks_per_sm)
    swwc_segmented_kernel(K const* __restrict__ keys, P const* __restrict__ payload,
                          std::int64_t const* __restrict__ seg,
                          size_type const* __restrict__ tile_start, int segments, int bit_offset,
                          int bits, unsigned b, unsigned long long* __restrict__ cursors,
                          K* __restrict__ keys_out, P* __restrict__ payload_out) {
  using agent_t = agent_swwc_partition<Policy, K, P>;
  agent_t agent(radix_dynamic_smem, 1 << bits, b, radix_digit<K>(bit_offset, bits), keys,
                payload, keys_out, payload_out, cursors);
  agent.init();
  size_type t0 = 0;
  size_type t1 = 0;
  block_tile_range(tile_start, segments, t0, t1);
  int s = -1;
  __syncthreads();
  for (size_type t = t0; t < t1; ++t) {
    int const next = segment_of_tile(tile_start, segments, t, s);
    if (next != s) {
      if (s >= 0) {
        __syncthreads();
        agent.template flush<true>();
        __syncthreads();
        agent.reset_list();
      }
      s = next;
      agent.set_cursors(cursors + (static_cast<size_type>(s) << bits));
    }
    size_type const base = seg[s] + (t - tile_start[s]) * Policy::tile_items;
    size_type const left = seg[s + 1] - base;
    if (left >= Policy::tile_items) {
      agent.template consume_tile<true>(base, Policy::tile_items);
    } else {
      agent.template consume_tile<false>(base, static_cast<int>(left));
    }
  }
  __syncthreads();
  agent.template flush<true>();
}


namespace {

/// A tuning field (swwc_tuning) within [lo, hi], else `fallback`. radix_partition refuses fields
/// out of range; internal callers pass none.
int tuned_or(std::optional<int> value, int lo, int hi, int fallback) {
  return value && *value >= lo && *value <= hi ? *value : fallback;
}

template <bool Staged, class Policy, class K, class P>
void swwc_partition_impl(K const* keys, P const* payload, size_type n, int bit_offset, int bits,
                         K* keys_out, P* payload_out, std::int64_t* offsets, bool aligned_flushes,
                         swwc_tuning const& tuning, stream_ref stream, memory_resource* mr) {
  using policy = Policy;
  using agent_t = agent_swwc_partition<policy, K, P, Staged>;
  using pay_t = typename agent_t::pay_t;
  static_assert(agent_t::smem_bytes(1 << policy::max_radix_bits, 1) <= policy::large_smem_bytes,
                "one tuple per digit at the widest digit must fit the large budget");
  auto const s = to_cuda(stream);
  int const fanout = 1 << bits;
  if (n == 0) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(offsets, 0, sizeof(std::int64_t) * (fanout + 1), s));
    return;
  }
  buffer counts(sizeof(std::int64_t) * fanout, mr, stream);
  radix_histogram(keys, n, bit_offset, bits, static_cast<std::int64_t*>(counts.data()), stream, mr);
  prefix_scan(static_cast<std::int64_t const*>(counts.data()), fanout, offsets, stream, mr);
  // Aligned flushes (the agent's set_aligned): positions from zero, two cursors a digit; else the
  // digits' first rows. tuning.aligned_flushes forces them off or on (A/B runs).
  bool const aligned = !Staged && tuning.aligned_flushes.value_or(aligned_flushes);
  buffer cursors(sizeof(unsigned long long) * fanout * (aligned ? 2 : 1), mr, stream);
  if (aligned) {
    JOINERY_CUDA_TRY(cudaMemsetAsync(cursors.data(), 0, cursors.size(), s));
  } else {
    JOINERY_CUDA_TRY(cudaMemcpyAsync(cursors.data(), offsets, sizeof(std::int64_t) * fanout,
                                     cudaMemcpyDeviceToDevice, s));
  }

  int log2_b = swwc_buffer_log2<policy>(fanout, sizeof(K), agent_t::has_payload ? sizeof(P) : 0);
  // tuning.log2_buffer forces the buffer size (A/B runs of the benchmark), up to the policies'
  // max_forced_buffer_tuples and within the large budget.
  if (tuning.log2_buffer) {
    int const forced = *tuning.log2_buffer;
    if (forced >= 0 && forced < 31 && (1 << forced) <= policy::max_forced_buffer_tuples &&
        agent_t::smem_bytes(fanout, 1 << forced) <= policy::large_smem_bytes) {
      log2_b = forced;
    }
  }
  // Hierarchical's chunks (at least 32 rows) must hold a buffer within two of them.
  if constexpr (Staged) { log2_b = std::min(log2_b, 5); }
  auto b = 1U << log2_b;
  // tuning.buffer_tuples (A/B runs) forces a buffer of 48..128 tuples, a multiple of 16, within
  // all of the device's shared memory a block (not with Hierarchical).
  if (int const forced = tuned_or(tuning.buffer_tuples, swwc_tuning::min_buffer_tuples,
                                  policy::max_forced_buffer_tuples, 0);
      !Staged && forced % 16 == 0 && forced > 0 &&
      agent_t::smem_bytes(fanout, forced) <= current_max_block_smem()) {
    b = static_cast<unsigned>(forced);
  }
  // Hierarchical: the chunk states and the staging rings (swwc_stage.cuh).
  swwc_stage<K, pay_t> stage{};
  buffer state;
  buffer staged_keys;
  buffer staged_pay;
  if constexpr (Staged) {
    using hp = hierarchical_partition_policy;
    int log2_c = tuned_or(tuning.log2_chunk, swwc_tuning::min_log2_chunk,
                          swwc_tuning::max_log2_chunk, hp::log2_chunk);
    int log2_r = tuned_or(tuning.log2_ring, 0, swwc_tuning::max_log2_ring, hp::log2_ring);
    // The tuning may not ask for more than 2^26 staged tuples (at most 1 GiB).
    while (bits + log2_r + log2_c > 26 && log2_r > 0) { --log2_r; }
    while (bits + log2_r + log2_c > 26 && log2_c > hp::min_log2_chunk) { --log2_c; }
    auto const chunks = static_cast<std::size_t>(ceil_div(n, size_type{1} << log2_c));
    auto const slots = static_cast<std::size_t>(fanout) << (log2_r + log2_c);
    state = buffer(sizeof(unsigned) * chunks, mr, stream);
    staged_keys = buffer(sizeof(K) * slots, mr, stream);
    if constexpr (agent_t::has_payload) { staged_pay = buffer(sizeof(P) * slots, mr, stream); }
    JOINERY_CUDA_TRY(cudaMemsetAsync(state.data(), 0, state.size(), s));
    constexpr int init_threads = 256;
    stage_init_kernel<<<static_cast<int>(ceil_div(fanout, init_threads)), init_threads, 0, s>>>(
      offsets, fanout, log2_c, log2_r, static_cast<unsigned*>(state.data()));
    JOINERY_CHECK_LAUNCH();
    stage = {static_cast<unsigned*>(state.data()), static_cast<K*>(staged_keys.data()),
             static_cast<pay_t*>(staged_pay.data()), offsets, log2_c, log2_r};
  }
  std::size_t const smem = agent_t::smem_bytes(fanout, static_cast<int>(b));
  auto launch = [&](auto kernel) {
    allow_dynamic_smem(kernel, smem);
    int const resident = resident_blocks_per_sm(kernel, policy::threads_per_block, smem);
    size_type const tiles = ceil_div(n, policy::tile_items);
    int const blocks = static_cast<int>(
      std::min<size_type>(tiles, static_cast<size_type>(current_sm_count()) * resident));
    kernel<<<blocks, policy::threads_per_block, smem, s>>>(
      keys, payload, n, bit_offset, bits, b, static_cast<unsigned long long*>(cursors.data()),
      offsets, keys_out, payload_out, stage);
    JOINERY_CHECK_LAUNCH();
  };
  if constexpr (Staged) {
    launch(swwc_partition_kernel<policy, K, P, true, false>);
  } else {
    if (aligned) {
      launch(swwc_partition_kernel<policy, K, P, false, true>);
    } else {
      launch(swwc_partition_kernel<policy, K, P, false, false>);
    }
  }
}

/// Whether a pointer may be moved in 16-byte vectors (the staged chunks' write-out).
bool vector_aligned(void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

namespace {

/// One swwc or Hierarchical pass with the policy of `variant`.
template <bool Staged, class K, class P>
void swwc_with_variant(swwc_variant variant, bool aligned, K const* keys, P const* payload,
                       size_type n, int bit_offset, int bits, K* keys_out, P* payload_out,
                       std::int64_t* offsets, swwc_tuning const& tuning, stream_ref stream,
                       memory_resource* mr) {
  switch (variant) {
    case swwc_variant::wide:
      swwc_partition_impl<Staged, swwc_partition_policy_wide>(
        keys, payload, n, bit_offset, bits, keys_out, payload_out, offsets, aligned, tuning, stream,
        mr);
      return;
    case swwc_variant::long_tile:
      swwc_partition_impl<Staged, swwc_partition_policy_long>(
        keys, payload, n, bit_offset, bits, keys_out, payload_out, offsets, aligned, tuning, stream,
        mr);
      return;
    case swwc_variant::wide_long:
      swwc_partition_impl<Staged, swwc_partition_policy_wide_long>(
        keys, payload, n, bit_offset, bits, keys_out, payload_out, offsets, aligned, tuning, stream,
        mr);
      return;
    case swwc_variant::base:
      swwc_partition_impl<Staged, swwc_partition_policy>(
        keys, payload, n, bit_offset, bits, keys_out, payload_out, offsets, aligned, tuning, stream,
        mr);
  }
}

/// Key + payload bytes of a tuple.
template <class K, class P>
constexpr std::size_t tuple_bytes() {
  return sizeof(K) + (std::is_same_v<P, no_payload> ? 0 : sizeof(P));
}

/// The policy `chooser` gives the digit width and tuple size, or `fixed` where given;
/// tuning.variant (A/B runs) forces one.
template <class K, class P>
swwc_variant pick_variant(int bits, swwc_variant (*chooser)(int, std::size_t),
                          swwc_tuning const& tuning,
                          std::optional<swwc_variant> fixed = std::nullopt) {
  if (tuning.variant) { return *tuning.variant; }
  return fixed ? *fixed : chooser(bits, tuple_bytes<K, P>());
}

}  // namespace

template <class K, class P>
void swwc_partition(K const* keys, P const* payload, size_type n, int bit_offset, int bits,
                    K* keys_out, P* payload_out, std::int64_t* offsets, stream_ref stream,
                    memory_resource* mr, swwc_tuning const& tuning) {
  // Generated row ids (the radix join's pass, payload == nullptr) keep the base policy, the one
  // the join was measured with.
  bool const row_ids = !std::is_same_v<P, no_payload> && payload == nullptr;
  auto const variant = pick_variant<K, P>(
    bits, &swwc_variant_for, tuning,
    row_ids ? std::optional<swwc_variant>(swwc_variant::base) : std::nullopt);
  bool const aligned = !row_ids && swwc_aligned_for(bits, tuple_bytes<K, P>());
  swwc_with_variant<false>(variant, aligned, keys, payload, n, bit_offset, bits, keys_out,
                           payload_out, offsets, tuning, stream, mr);
}

template <class K, class P>
void hierarchical_partition(K const* keys, P const* payload, size_type n, int bit_offset,
                            int bits, K* keys_out, P* payload_out, std::int64_t* offsets,
                            stream_ref stream, memory_resource* mr, swwc_tuning const& tuning) {
  bool vectors = vector_aligned(keys_out);
  if constexpr (!std::is_same_v<P, no_payload>) { vectors = vectors && vector_aligned(payload_out); }
  auto const variant = pick_variant<K, P>(bits, &hierarchical_variant_for, tuning);
  if (!vectors) {  // chunks are written out in 16-byte moves: Shared's direct writes instead
    swwc_with_variant<false>(variant, swwc_aligned_for(bits, tuple_bytes<K, P>()), keys, payload,
                             n, bit_offset, bits, keys_out, payload_out, offsets, tuning, stream,
                             mr);
    return;
  }
  swwc_with_variant<true>(variant, false, keys, payload, n, bit_offset, bits, keys_out,
                          payload_out, offsets, tuning, stream, mr);
}

template <class K>
void swwc_partition_with_row_ids(K const* keys, size_type n, int bits, K* keys_out,
                                 std::uint32_t* rows_out, std::int64_t* offsets,
                                 stream_ref stream, memory_resource* mr,
                                 swwc_tuning const& tuning) {
  using policy = swwc_partition_policy;
  using agent_t = agent_swwc_partition<policy, K, std::uint32_t>;
  JOINERY_EXPECTS(n <= (size_type{1} << 32), "generated row ids are 32-bit: at most 2^32 rows");
  JOINERY_EXPECTS(bits >= 0 && bits <= 2 * policy::max_radix_bits,
                  "two swwc passes take at most " + std::to_string(2 * policy::max_radix_bits) +
                    " bits");
  auto const s = to_cuda(stream);
  if (bits <= policy::max_radix_bits || n == 0) {
    swwc_partition<K, std::uint32_t>(keys, nullptr, n, 0, bits, keys_out, rows_out, offsets,
                                     stream, mr, tuning);
    return;
  }
  // Low digit [0, lo) second, within the partitions of the high digit [lo, bits) made first.
  int const lo = (bits + 1) / 2;
  int const hi = bits - lo;
  int const segments = 1 << hi;
  int const fanout2 = 1 << lo;
  buffer keys1(sizeof(K) * static_cast<std::size_t>(n), mr, stream);
  buffer rows1(sizeof(std::uint32_t) * static_cast<std::size_t>(n), mr, stream);
  buffer seg(sizeof(std::int64_t) * static_cast<std::size_t>(segments + 1), mr, stream);
  swwc_partition<K, std::uint32_t>(keys, nullptr, n, lo, hi, static_cast<K*>(keys1.data()),
                                   static_cast<std::uint32_t*>(rows1.data()),
                                   static_cast<std::int64_t*>(seg.data()), stream, mr, tuning);
  auto const* seg_p = static_cast<std::int64_t const*>(seg.data());

  buffer tile_start(sizeof(size_type) * static_cast<std::size_t>(segments + 1), mr, stream);
  segment_tiles_kernel<1024><<<1, 1024, 0, s>>>(seg_p, segments, policy::tile_items,
                                                static_cast<size_type*>(tile_start.data()));
  JOINERY_CHECK_LAUNCH();
  auto const* ts = static_cast<size_type const*>(tile_start.data());
  // Tiles of the segmented passes: at most one partial tile per segment more than n / tile.
  size_type const max_tiles = ceil_div(n, size_type{policy::tile_items}) + segments;
  int const sms = current_sm_count();

  auto const total = static_cast<std::size_t>(segments) * static_cast<std::size_t>(fanout2);
  buffer counts(sizeof(std::int64_t) * total, mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(counts.data(), 0, counts.size(), s));
  {
    constexpr int threads = 512;
    constexpr int vt = policy::tile_items / threads;
    auto const kernel = segmented_histogram_kernel<threads, vt, K>;
    std::size_t const smem = sizeof(unsigned) * static_cast<std::size_t>(fanout2);
    int const blocks = static_cast<int>(std::min<size_type>(
      max_tiles, static_cast<size_type>(sms) * resident_blocks_per_sm(kernel, threads, smem)));
    kernel<<<blocks, threads, smem, s>>>(static_cast<K const*>(keys1.data()), seg_p, ts, segments,
                                         0, lo, static_cast<unsigned long long*>(counts.data()));
    JOINERY_CHECK_LAUNCH();
  }
  prefix_scan(static_cast<std::int64_t const*>(counts.data()), static_cast<size_type>(total),
              offsets, stream, mr);
  buffer cursors(sizeof(unsigned long long) * total, mr, stream);
  JOINERY_CUDA_TRY(cudaMemcpyAsync(cursors.data(), offsets, sizeof(std::int64_t) * total,
                                   cudaMemcpyDeviceToDevice, s));

  int const log2_b = swwc_buffer_log2<policy>(fanout2, sizeof(K), sizeof(std::uint32_t));
  auto const kernel = swwc_segmented_kernel<policy, K, std::uint32_t>;
  std::size_t const smem = agent_t::smem_bytes(fanout2, 1 << log2_b);
  allow_dynamic_smem(kernel, smem);
  int const blocks = static_cast<int>(std::min<size_type>(
    max_tiles,
    static_cast<size_type>(sms) * resident_blocks_per_sm(kernel, policy::threads_per_block, smem)));
  kernel<<<blocks, policy::threads_per_block, smem, s>>>(
    static_cast<K const*>(keys1.data()), static_cast<std::uint32_t const*>(rows1.data()), seg_p,
    ts, segments, 0, lo, 1U << log2_b, static_cast<unsigned long long*>(cursors.data()), keys_out,
    rows_out);
  JOINERY_CHECK_LAUNCH();
}

#define JOINERY_INSTANTIATE_SWWC(K, P)                                                       \
  template void swwc_partition<K, P>(K const*, P const*, size_type, int, int, K*, P*,         \
                                     std::int64_t*, stream_ref, memory_resource*,             \
                                     swwc_tuning const&);                                     \
  template void hierarchical_partition<K, P>(K const*, P const*, size_type, int, int, K*, P*, \
                                             std::int64_t*, stream_ref, memory_resource*,     \
                                             swwc_tuning const&);
JOINERY_INSTANTIATE_SWWC(std::uint32_t, no_payload)
JOINERY_INSTANTIATE_SWWC(std::uint32_t, std::uint32_t)
JOINERY_INSTANTIATE_SWWC(std::uint32_t, std::uint64_t)
JOINERY_INSTANTIATE_SWWC(std::uint64_t, no_payload)
JOINERY_INSTANTIATE_SWWC(std::uint64_t, std::uint32_t)
JOINERY_INSTANTIATE_SWWC(std::uint64_t, std::uint64_t)
#undef JOINERY_INSTANTIATE_SWWC
template void swwc_partition_with_row_ids<std::uint32_t>(std::uint32_t const*, size_type, int,
                                                         std::uint32_t*, std::uint32_t*,
                                                         std::int64_t*, stream_ref,
                                                         memory_resource*, swwc_tuning const&);
template void swwc_partition_with_row_ids<std::uint64_t>(std::uint64_t const*, size_type, int,
                                                         std::uint64_t*, std::uint32_t*,
                                                         std::int64_t*, stream_ref,
                                                         memory_resource*, swwc_tuning const&);

}  // namespace joinery::detail::gpu
