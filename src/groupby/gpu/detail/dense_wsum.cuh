#pragma once
// Internal (src/groupby/gpu/*.cu): the dense tier's wrapped sums, SUM of two int32 columns over
// dense keys with fire-and-forget shared atomics only (dense_wsum.cu; DESIGN.md, "The dense
// tier").
#include "groupby/gpu/detail/common.cuh"
#include "primitives/detail/hash.cuh"

#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/type_traits>

#include <cstdint>
#include <optional>

namespace joinery::detail::gpu::gb {

/// The dense tier's sample of the keys: the smallest sampled key and the complement of the
/// largest, as bits that order like the keys (signed keys with the sign bit flipped), so that
/// both merge as minima. Each block of a sample writes its own (dense_sample_block); the device
/// (wsum_kernel) or the host (after one copy) merges the blocks', so no start value is needed.
template <class K>
struct dense_sample_bits {
  using bits_type = cuda::std::conditional_t<sizeof(K) == 4, unsigned int, unsigned long long>;
  static constexpr bits_type flip =
      cuda::std::is_signed_v<K> ? bits_type{1} << (8 * sizeof(K) - 1) : bits_type{0};
  bits_type lo = ~bits_type{0};      ///< the smallest key's ordered bits
  bits_type hi_not = ~bits_type{0};  ///< the complement of the largest key's ordered bits

  __host__ __device__ static bits_type ordered(K k) {
    return static_cast<bits_type>(key_bits(k)) ^ flip;
  }
  __host__ __device__ void merge(dense_sample_bits const& o) {
    lo = o.lo < lo ? o.lo : lo;
    hi_not = o.hi_not < hi_not ? o.hi_not : hi_not;
  }
  /// The smallest sampled key's bits.
  __host__ __device__ bits_type low() const { return lo ^ flip; }
  /// How many keys past the smallest the largest lies (exact in bits: 0 <= span < 2^bits).
  __host__ __device__ bits_type span() const { return static_cast<bits_type>(~hi_not - lo); }
};

/// Keys sampled for the dense tier's window (evenly spaced, one a thread) and the threads of a
/// sampling block: one block that walked them all waited 19 us on their round trips (the
/// samples lie 64 KB and more apart at 2^28 rows; H200); 64 blocks take 3-4 us.
inline constexpr size_type dense_samples = size_type{1} << 14;
inline constexpr int dense_sample_threads = 256;
inline constexpr int dense_sample_blocks = static_cast<int>(dense_samples / dense_sample_threads);

/// Block-wide (dense_sample_threads threads, block b < dense_sample_blocks): the smallest and
/// largest of samples b * dense_sample_threads .. + dense_sample_threads of `samples` evenly
/// spaced keys into `partials[b]` (no key: the merge's identity).
template <class K>
__device__ void dense_sample_block(K const* __restrict__ keys, size_type n, size_type samples,
                                   dense_sample_bits<K>* __restrict__ partials) {
  using sample_type = dense_sample_bits<K>;
  using bits_type = typename sample_type::bits_type;
  bits_type lo = ~bits_type{0};
  bits_type hi_not = ~bits_type{0};
  size_type const i = static_cast<size_type>(blockIdx.x) * dense_sample_threads + threadIdx.x;
  if (i < samples) {
    bits_type const o = sample_type::ordered(__ldg(keys + i * n / samples));  // < 2^14 * 2^48
    lo = o;
    hi_not = ~o;
  }
  using reduce = cub::BlockReduce<bits_type, dense_sample_threads>;
  __shared__ typename reduce::TempStorage lo_storage;
  __shared__ typename reduce::TempStorage hi_storage;
  bits_type const block_lo = reduce(lo_storage).Reduce(lo, cuda::minimum<>{});
  bits_type const block_hi_not = reduce(hi_storage).Reduce(hi_not, cuda::minimum<>{});
  if (threadIdx.x == 0) { partials[blockIdx.x] = sample_type{block_lo, block_hi_not}; }
}

/// Launch shape and limits of dense_wsum_groupby.
///
/// A group's slot in a block holds each column's sum modulo 2^32 (S), one word with both
/// columns' sums of their top bytes (v >> 24, signed) in 16-bit halves (H), and an 8-bit count
/// of its rows: 13 bytes, four shared atomics a row whose results nobody waits for. While a slot
/// met n <= 255 rows, sum = 2^24 * H + ((S - 2^24 * H) mod 2^32): the sum of the low 24 bits
/// lies in [0, n * 2^24), below 2^32, and |H| <= 255 * 128 fits its half. A count that passed 255
/// carried out of its byte (256 rows lost from the blocks' counts), as a key outside the window
/// is counted by no member: the counts then sum to less than the rows, and the run is abandoned
/// (the dense tier's other forms run instead).
struct dense_wsum_policy {
  static constexpr int threads = 1024;
  static constexpr int items_per_thread = 8;  ///< two runs of 4 rows (16-byte loads) a thread
  static constexpr int tile_rows = threads * items_per_thread;
  static constexpr std::size_t slot_bytes = 13;
  /// Teams of up to this many blocks (g = 2^16: 4). A standalone probe on the H200 (2^28 rows,
  /// two full-range int32 columns) ran 2^16 groups in 1.76 ms with 4 blocks and 2.02 with 5,
  /// against 1.99 for 32-bit partials with spills in a team of 3. The same with 8-byte keys: in
  /// the library at g = 2^16 (H200) a team of 4 runs SUM in 2.31 ms against 2.67-2.70 for the
  /// 32-bit partials.
  static constexpr int max_team = 4;
  /// The most rows a block may expect a group to take (rows / (teams * keys in the window)):
  /// counts stop at 255, and a uniform group's count spreads about sqrt(mean).
  static constexpr std::int64_t max_mean_rows = 128;
  /// A count read back at this many: a hot group near its limit (or past it, wrapped), and the
  /// run stops early rather than at the end (a sorted or skewed input).
  static constexpr unsigned early_stop_count = 0xe0;
  /// A warp reads the run's stop flag on one of this many of its tiles (the block's 32 warps in
  /// turn: one read a block and tile).
  static constexpr unsigned stop_poll_tiles = 32;
  /// A warp's threads read their first row's count back (early_stop_count) on one of this many
  /// of its tiles (a second form of the tile): on every tile it costs 5% at g = 2^16 (H200);
  /// reading the count with a plain shared load instead costs 10%.
  static constexpr unsigned count_probe_tiles = 4;
};

/// SUM of the int32 columns `v0` and `v1` over `n` keys, as the dense tier's teams of blocks with
/// the wrapped sums above. One launch samples the keys (dense_sample_block) and zeros the run's
/// arrays, and the pass lays its teams out from the sample on the device: the host does not
/// wait between the sample and the pass. nullopt, at the cost of a look at the sizes, when the
/// columns lie off 16-byte boundaries; after the kernel read the sample and declined (too wide a
/// window, too many rows a group), or after a pass when a key fell outside the window or a
/// block's group met more than 255 rows. Once the kernel ran, `sampled` is true and
/// `host_sample` holds the sample (what the dense tier's other forms need). `team` gets the
/// blocks of a team. `smem_limit`: the dynamic shared memory a block may take (the dense tier's
/// limit, net of hash_groupby_policy::static_shared_reserve). The accumulators of the result are
/// the two int64 sums, indexed by the group's offset in the window.
template <class K>
std::optional<group_parts> dense_wsum_groupby(K const* keys, size_type n, std::int32_t const* v0,
                                              std::int32_t const* v1,
                                              dense_sample_bits<K>& host_sample, bool& sampled,
                                              std::size_t smem_limit, int sms, int& team,
                                              stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::gpu::gb
