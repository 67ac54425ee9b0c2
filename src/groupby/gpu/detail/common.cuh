#pragma once
// Internal (host side of the GPU group-bys, included by src/groupby/gpu/*.cu): what an algorithm
// hands to the common finalisation, the tuning policies, phase timing and batching.
#include "core/cuda_try.hpp"
#include "groupby/gpu/gpu_groupby.hpp"
#include "groupby/gpu/plan.hpp"
#include "primitives/detail/launch.cuh"

#include <joinery/column.hpp>
#include <joinery/memory.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace joinery::detail::gpu::gb {

/// Launch shape and sizing of the hash group-bys (global_hash, hash).
struct hash_groupby_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int items_per_thread = 4;  ///< keys per thread per tile, loaded before probing
  static constexpr int tile_items = threads_per_block * items_per_thread;
  static constexpr int max_blocks_per_sm = 8;  ///< grid-stride cap of the global-memory kernels
  /// Slots per key of the global table: 2 (load 1/2), as libcudf's static_set.
  static constexpr size_type slots_per_group = 2;
  /// HGB tier 1: one block of this many threads per SM, so its table gets all the shared memory
  /// (and a block holds up to slots / 2 groups); table sizes tried, in slots.
  static constexpr int shared_threads = 1024;
  static constexpr int min_shared_slots = 64;
  static constexpr int max_shared_slots = 1 << 16;
  /// Shared bytes left to the kernel's static variables.
  static constexpr std::size_t static_shared_reserve = 1024;
  /// HGB tiers 1 and 2: accumulators per launch, their values loaded before the first atomic
  /// (more would spill at 64 registers a thread, the most a block of 1024 threads allows).
  static constexpr int fused_accs = 2;
  /// HGB tier 2: a warp looks for lanes sharing a slot (skew) once in this many of its tiles.
  static constexpr int peer_probe_tiles = 8;
  /// HGB's dense tier: the most slots a block holds (a team of blocks holds a window of up to
  /// max_dense_team times that; its keys are sampled by dense_sample_block, dense_wsum.cuh).
  static constexpr int max_dense_slots = 1 << 18;
  /// HGB's dense tier: the most blocks of a team (a window wider than one block's shared
  /// memory), what a member's pass over a row costs and the most a layout may cost a row, in
  /// value bytes' worth of issue (see dense_layout_for). On the H200 at 2^28 rows, g = 2^16
  /// (int32 keys, two int32 values): MAX in one pass of 3 blocks (cost 72) 137 G rows/s against
  /// two passes of 2 (80) 106; SUM in one pass of 5 (120) 63.5 against two of 3 (120) 64.0;
  /// g = 2^14 SUM in one pass of 2 (48) 147 against two of one block (40) 166. The bound is the
  /// cost of a layout of 6 blocks and 2 passes (g = 2^18 MAX), measured about even with tier 2
  /// (34 against 31-33 G rows/s) with slower dense loops than the present ones: a conservative
  /// bound.
  static constexpr int max_dense_team = 8;
  static constexpr std::size_t dense_pass_cost = 16;
  static constexpr std::size_t max_dense_row_cost = 240;
  /// HGB's dense tier: rows a thread loads before its first update (hgb_dense_kernel: two of
  /// tier 1's tiles). On the H200 (a stand-alone probe at 2^28 rows) 8 beat 4 by
  /// 0-19% (teams gain most: each member's loads, mostly L2 hits, need more in flight).
  static constexpr int dense_items_per_thread = 8;
  /// HGB's dense tier: SUM of int32 values as 32-bit partials in shared memory (acc_op::sum_lo32:
  /// half the bytes a group, so smaller teams) from this span of sampled keys, when the hottest
  /// of an evenly spaced sample holds less than this share of the rows. Its cost is the spills:
  /// with uniform 32-bit values about a quarter of the adds overflow, one device-memory atomic
  /// each. Spread over 2^17 slots (g = 2^16, two sums) the L2 absorbs them; over 2^15 (g = 2^14)
  /// a probe ran 121 G rows/s against 219 for 8-byte sums (H200); and a hot key
  /// would pile its spills onto one address.
  static constexpr size_type dense_lo32_min_span = size_type{3} << 14;
  static constexpr double dense_lo32_max_hot_share = 0.01;
  /// Counted sum_lo32 (acc_spec::counted): the overflows count in a 16-bit counter a group in
  /// shared memory, biased by lo32_count_bias; one 2^14 from the bias moves 2^14 to the spill
  /// array, and one lo32_count_limit from it (a carry into its neighbour would follow) stops
  /// the run like an overflow. 2 more bytes a group, no device-memory atomic per overflow: taken
  /// when it runs in one pass of at most dense_counts_max_team blocks and the work (team x
  /// passes) is smaller than 8-byte sums'. A probe (H200, two sums, 2^28 rows) ran g = 2^14 in
  /// one block in 0.82 ms against 1.24 for 8-byte sums in a team of 2 and 2.24 for spills,
  /// 2^15 in a team of 2 in 1.30 (spills, 3: 1.90), but 2^16 in a team of 4 in 2.43 (spills, 3:
  /// 1.90): a team's warps run the update for every row, at 1/team of their lanes.
  static constexpr unsigned lo32_count_bias = 0x8000;
  static constexpr int lo32_count_flush = 0x4000;
  static constexpr int lo32_count_limit = 0x7000;
  /// A count beyond this (a one-group block's carry of many rows) skips the counter.
  static constexpr int lo32_count_direct = 256;
  static constexpr int dense_counts_max_team = 2;
  /// HGB tier 2: smallest first table (groups), when even that exceeds the L2 cache.
  static constexpr size_type min_l2_groups = size_type{1} << 16;
  /// automatic, past tier 1: keys sampled (evenly spaced, one block, sorted in registers) for
  /// the hottest key's share of the rows, and the share from which PGB-TR runs instead of tier
  /// 2: none (above 1). On the H200 at 2^28 rows, Zipf 1.5 (the hottest key about 38%), PGB-TR
  /// ran 8.3-12.8 G rows/s at g = 2^16..2^20 against tier 2's 14.1-19.6 and SGB-TR's 13.5-16.3
  /// (tuning may still ask for it).
  static constexpr int skew_threads = 1024;
  static constexpr int skew_items_per_thread = 2;
  static constexpr int skew_samples = skew_threads * skew_items_per_thread;
  static constexpr double skew_partition_share = 2.0;
  /// automatic, past tier 1, the hottest key's share below skew_partition_share but at least
  /// skew_sort_share: HGB stops before tier 2 from skew_sort_groups estimated groups
  /// (estimate_groups), and PGB-TR runs where it takes the plan, else the sort group-by (SGB-TR;
  /// for 8-byte keys SGB-DE-TR up to sort_groupby_policy::dictionary_automatic_groups).
  /// automatic asks for one PGB-TR partition's groups (groupby_gpu.cu). On the H200 at 2^28 rows at Zipf 1
  /// (the hottest key 7-9%), tier 2 ran 17-19 G rows/s at g = 2^16 and
  /// SGB-TR 14-15, at 2^18 11-14 and 14-15, at 2^20 8-10 and 15-16. The estimate (a lower bound
  /// under such skew) of Zipf-1 keys is 2^14.3-2^14.5 at g = 2^16 and 2^15.1-2^15.3 at 2^18
  /// (simulated, 2^14 samples): the bound sits between.
  static constexpr double skew_sort_share = 0.04;
  static constexpr size_type skew_sort_groups = 28000;
  /// skew_sort_groups for 8-byte keys, whose sort costs more. On the H200 at 2^28 rows (int64
  /// Zipf 1, SUM) tier 2 took 21.5-22.7 ms at g = 2^18 against 31-32 for SGB-TR and 21.4 for
  /// SGB-DE-TR, and 55-58 at 2^20 against 29.4-29.7 and 24.0; the estimates of
  /// those keys are 34379 and 54033 (a CPU replica of estimate_groups on the benchmark's keys),
  /// and the bound sits between.
  static constexpr size_type skew_sort_groups_wide = 43000;
  /// automatic, past tier 1 without such skew, 4-byte keys: PGB-TR instead of tier 2 from this
  /// many estimated groups, and instead of the sort group-by past tier 2's first table. On the
  /// H200 at 2^28 rows (spread int32 keys, MAX / SUM of two int32 columns; BENCHMARKS.md,
  /// "partition group-by") tier 2 ran 33.3 / 29.8 G rows/s at g = 2^18 against PGB-TR's
  /// 30.1 / 29.4, and 24.0 / 19.6 at 2^20 against 25.9 / 23.0; past 2^20 PGB-TR 17-18 against
  /// SGB-TR's 14.6-15.
  static constexpr size_type partition_groups = size_type{1} << 19;
  /// automatic, past tier 1 without such skew: PGB-TR instead of tier 2 at any g for a plan of
  /// this many accumulators or more, or of counts alone: tier 2 makes one device-memory atomic
  /// a row and accumulator, PGB-TR one in shared memory. On the H200 at 2^28 rows (spread keys,
  /// g = 2^14..2^18) MAX + MIN + SUM + COUNT of two int32 columns (7 accumulators) ran 24-25 G
  /// rows/s in PGB-TR against tier 2's 9-10, COUNT(*) 67-71 against 52-55.
  static constexpr std::size_t partition_accumulators = 5;
  /// automatic, float sums (compare-and-swap loops on shared memory, where every lane on a hot
  /// key retries): from float_sum_sort_share of the rows on the hottest key, where float sums
  /// are at least float_sum_sort_weight of the accumulators, the sort group-by runs instead of
  /// tier 1; past tier 1, from skew_sort_share, at any weight. On the H200 at 2^28 rows, AVG of
  /// a float64 column under Zipf 1.5 (the hottest key 38-46%) ran 8-13 G rows/s in HGB and 18
  /// in SGB-TR at every g; under Zipf 1 past tier 1 (g >= 2^14) 4-15 in HGB and PGB-TR against
  /// 16-18.
  static constexpr double float_sum_sort_share = 0.25;
  static constexpr double float_sum_sort_weight = 1.0 / 3.0;
};

/// Launch shape of the sort group-bys' segmented aggregation: each warp owns a contiguous range
/// of sorted rows, keeps the group that crosses its 32-row steps in a carry and flushes each
/// group with one atomic (so g = 1 costs one atomic per warp, not one per 32 rows).
struct sort_groupby_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int warps_per_block = threads_per_block / 32;
  static constexpr int warps_per_sm = 64;           ///< ranges: about one per resident warp
  static constexpr size_type min_range_rows = 1024;  ///< shorter ranges cost more than they spread
  static constexpr int finalize_threads = 256;
  /// sort_dictionary: the fewest groups its first dictionary table holds (else twice the
  /// sampled estimate, estimate_groups) and the factor it grows by when they are more.
  static constexpr size_type dictionary_initial_groups = size_type{1} << 16;
  static constexpr size_type dictionary_growth = 8;
  /// automatic, 8-byte keys, beyond HGB's tables: sort_dictionary up to this many (estimated)
  /// groups, sort_transformed beyond.
  static constexpr size_type dictionary_automatic_groups = size_type{1} << 22;
  /// automatic, 4-byte keys that reach the sort group-by (float sums on a hot key):
  /// sort_dictionary up to this many (estimated) groups unless the plan only counts rows. On the
  /// H200 (2^28 int32 keys) the dictionary ran 1.04-1.64x SGB-TR up to g = 2^16 for MAX, SUM,
  /// AVG(float64) and mixed plans, 0.78-0.95x for COUNT(*) alone, and 0.8x from g = 2^20.
  static constexpr size_type dictionary_automatic_groups_narrow = size_type{1} << 16;
  /// sort_dictionary: keys per thread loaded before the first probe.
  static constexpr int dictionary_items_per_thread = 4;
};

/// The partition group-bys (PGB-UR, PGB-TR): the aggregation of each partition in a block's
/// shared memory (partition_groupby.cu); the partition passes take hash_partition_policy
/// (hash_partition.cuh).
struct partition_groupby_policy {
  /// Aggregation: one block of aggregate_threads per SM, its table as large as the shared memory
  /// allows (at most three quarters of its slots groups).
  static constexpr int aggregate_threads = 1024;
  static constexpr int aggregate_items_per_thread = 4;
  /// Accumulators whose values a tile loads together with its keys (the others' after the
  /// probes).
  static constexpr int prefetched_accumulators = 2;
  static constexpr int max_table_slots = 1 << 13;
  static constexpr int max_accumulators = 32;
  /// A partition of more rows than an SM's share of the input is cut into pieces of a
  /// split_pieces-th of that share (items are claimed largest first, so that a hot key's pieces
  /// and the other partitions even out over the SMs).
  static constexpr int split_pieces = 4;
  /// Partition bits added when a partition held more groups than its table (the sampled
  /// estimate is low under skew, and each attempt partitions the rows again).
  static constexpr int retry_bits = 4;
  /// Keys sampled (evenly spaced) to estimate the number of groups, which sets the fanout.
  static constexpr size_type sample_rows = size_type{1} << 14;
};

/// The number of distinct keys, estimated from evenly spaced samples (hash_groupby.cu: the
/// larger of the uniform model's and Chao1's estimates); low under strong skew. PGB's fanout and
/// sort_dictionary's first table follow it.
template <class K>
size_type estimate_groups(K const* keys, size_type n, int sms, stream_ref stream,
                          memory_resource* mr);

/// What an algorithm produced: g groups, their keys, one accumulator array per plan accumulator,
/// and optionally the entry of each group in those arrays (index[i]; else entry i).
struct group_parts {
  size_type groups = 0;
  column keys;
  std::vector<buffer> accs;
  buffer index;  ///< int64, groups entries, or empty
  bool sorted = false;
  /// HGB stopped at its first global table, or before it
  /// (groupby_tuning::stop_beyond_first_table): nothing else is set; the caller runs another
  /// algorithm (the sort group-by, or with `partition_next` PGB-TR).
  bool incomplete = false;
  /// With incomplete: the caller runs PGB-TR where it takes the plan (past tier 1 with many
  /// estimated groups, many accumulators or counts alone, skew over many groups, or past the
  /// first global table); without, the sort group-by.
  bool partition_next = false;
};

/// Phase times, as the GPU ran them: a lap records an event on the stream (only when someone
/// listens) and finish() waits for the last one and writes the times between them. No lap
/// waits: a wait there left the GPU idle while the host launched the next phase (about 10 us a
/// lap; the public group-by waits for the stream at the end anyway).
class phase_clock {
 public:
  phase_clock(std::vector<phase_time>* phases, stream_ref stream)
      : phases_(phases), stream_(stream) {
    if (phases_ != nullptr) { record(); }
  }
  phase_clock(phase_clock const&) = delete;
  phase_clock& operator=(phase_clock const&) = delete;
  ~phase_clock() {
    for (auto e : events_) { cudaEventDestroy(e); }  // no throw from a destructor
  }
  void lap(char const* name) {
    if (phases_ == nullptr) { return; }
    names_.emplace_back(name);
    record();
  }
  /// Waits for the last lap and appends the phases' times (nothing without a listener).
  void finish() {
    if (phases_ == nullptr || names_.empty()) { return; }
    JOINERY_CUDA_TRY(cudaEventSynchronize(events_.back()));
    for (std::size_t i = 0; i < names_.size(); ++i) {
      float ms = 0;
      JOINERY_CUDA_TRY(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
      phases_->push_back({names_[i], static_cast<double>(ms) / 1e3});
    }
    names_.clear();
  }

 private:
  void record() {
    cudaEvent_t e{};
    JOINERY_CUDA_TRY(cudaEventCreate(&e));
    events_.push_back(e);
    JOINERY_CUDA_TRY(cudaEventRecord(e, to_cuda(stream_)));
  }
  std::vector<phase_time>* phases_;
  stream_ref stream_;
  std::vector<cudaEvent_t> events_;
  std::vector<std::string> names_;
};

/// Dense accumulator arrays of `groups` entries each, set to their identities.
inline std::vector<buffer> make_accumulators(agg_plan const& plan, size_type groups,
                                             stream_ref stream, memory_resource* mr) {
  std::vector<buffer> accs;
  for (auto const& a : plan.accs) {
    auto const bytes = static_cast<std::size_t>(groups) * static_cast<std::size_t>(a.bytes());
    accs.emplace_back(bytes, mr, stream);
    if (bytes > 0) {
      JOINERY_CUDA_TRY(
          cudaMemsetAsync(accs.back().data(), acc_identity_byte(a.op), bytes, to_cuda(stream)));
    }
  }
  return accs;
}

/// Splits the plan's accumulators into launches of at most `per_batch` (<= max_batch_accs); `source(a)` says
/// where accumulator a reads its values. Shared-memory offsets are laid out for `groups` groups.
template <class Source>
std::vector<acc_batch> make_batches(agg_plan const& plan, std::vector<buffer>& accs,
                                    size_type groups, Source&& source,
                                    int per_batch = max_batch_accs) {
  std::vector<acc_batch> batches;
  for (std::size_t a = 0; a < plan.accs.size(); ++a) {
    if (a % static_cast<std::size_t>(per_batch) == 0) { batches.emplace_back(); }
    auto& b = batches.back();
    int const j = b.count++;
    b.op[j] = plan.accs[a].op;
    b.in[j] = plan.accs[a].in;
    b.src[j] = plan.accs[a].column >= 0 ? source(static_cast<int>(a)) : acc_source{};
    b.data[j] = accs[a].data();
    // 16-byte aligned arrays: every accumulator width divides 16.
    std::size_t const bytes = (static_cast<std::size_t>(groups) * plan.accs[a].bytes() + 15) & ~std::size_t{15};
    b.smem_offset[j] = b.smem_bytes;
    if (plan.accs[a].counted) {  // the partials, then the counters
      b.count_offset[j] = static_cast<std::uint32_t>(b.smem_bytes + static_cast<std::size_t>(groups) * 4);
    }
    b.smem_bytes = static_cast<std::uint32_t>(
        std::min<std::size_t>(b.smem_bytes + bytes, std::size_t{0xffffffffU}));
  }
  return batches;
}

/// Shared bytes a batch needs for `groups` groups (0 when it cannot be represented).
inline std::size_t batch_shared_bytes(agg_plan const& plan, std::size_t first, std::size_t count,
                                      size_type groups) {
  std::size_t total = 0;
  for (std::size_t a = first; a < first + count; ++a) {
    total += (static_cast<std::size_t>(groups) * plan.accs[a].bytes() + 15) & ~std::size_t{15};
  }
  return total;
}

/// The hash group-bys (hash_groupby.cu): `baseline` picks global_hash, else HGB.
template <class K>
group_parts hash_groupby(K const* keys, size_type n, table_view const& input,
                         agg_plan const& plan, bool baseline, groupby_tuning const& tuning,
                         phase_clock& clock, stream_ref stream, memory_resource* mr);

/// The partition group-bys (partition_groupby.cu, on hash_partition.cu's partitions):
/// `transformed` moves the aggregated columns with the keys (PGB-TR), else the row ids, through
/// which the aggregation gathers (PGB-UR).
template <class K>
group_parts partition_groupby(K const* keys, size_type n, table_view const& input,
                              agg_plan const& plan, bool transformed, groupby_tuning const& tuning,
                              phase_clock& clock, stream_ref stream, memory_resource* mr);

/// The sort group-bys (sort_groupby.cu): `transformed` sorts the values along (SGB-TR), else
/// sorts row ids and gathers (SGB-UR). Groups come out sorted.
template <class K>
group_parts sort_groupby(K const* keys, size_type n, table_view const& input,
                         agg_plan const& plan, bool transformed, phase_clock& clock,
                         stream_ref stream, memory_resource* mr);

/// sort_dictionary (sort_groupby.cu, Wu et al.'s SGB-DE-TR): SGB-TR over 32-bit dictionary codes
/// of the keys, ranked in key order, sorted on their ceil(log2 g) low bits only. Groups come out
/// sorted.
template <class K>
group_parts dictionary_groupby(K const* keys, size_type n, table_view const& input,
                               agg_plan const& plan, groupby_tuning const& tuning,
                               phase_clock& clock, stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::gpu::gb
