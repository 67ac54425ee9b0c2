// GPU hash group-bys.
//
// global_hash (the libcudf-style baseline): a set of (key -> first row) sized for every row; one
// kernel inserts each row's key and updates, with one global atomic per row and aggregate, sparse
// accumulator arrays of |R| entries indexed by the key's first row; the occupied slots then give
// the groups, whose entries are read by index at finalisation.
//
// hash (Wu et al. HGB, Algorithm 1: dense group ids, aggregation in shared memory while the groups
// fit, else in global memory). Wu et al. number the groups in a first pass over the keys and
// aggregate in a second; reading the input twice is most of the run when the groups are few, so
// the first tiers fuse the numbering into the aggregation and read every row once:
//   0. dense: when an evenly spaced sample of the keys spans fewer keys than a block has slots
//      for, a key's offset in that window is its slot (perfect hashing: no hash, no key table,
//      no claiming; a byte per slot marks the groups met): tier 1's one-group loop for blocks
//      whose first rows hold one key, a lean loop (hgb_dense_kernel) for the others. A key
//      outside the window stops the launch like an overflow, and the run goes on with tier 1.
//      A window wider than a block's shared memory is split over a team of blocks that walk the
//      same tiles, each aggregating its slice (a member still loads and tests every row: a team
//      of T costs about T passes), while the bytes every row costs stay few enough to beat tier 2.
//   1. shared: each block (one per SM, as large as it can be) numbers the keys it meets in a
//      shared-memory hash table and aggregates into shared accumulators indexed by the table
//      slot; at the end it merges its groups into a global table and global accumulators with
//      one atomic per group and aggregate. A block that meets more groups than its table holds
//      stops the launch (the flag is checked every tile), and the run goes on with tier 2.
//   2. global: one pass with a global table of (key -> slot) and accumulators indexed by the
//      slot, sized to stay in L2 (capacity: hash_groupby_policy / groupby_tuning); more groups
//      than that stop it, and the run goes on with tier 3 (or, for `automatic`, with the sort
//      group-by, which wins beyond that many groups: Wu et al. Figure 21).
//   3. Wu et al.'s two passes with a table for every row: stage 1 inserts the keys into a set and
//      numbers the occupied slots 0..g-1; stage 2 re-probes each row's key for its id and
//      aggregates with global atomics (or shared ones when the groups fit).
// In tier 1 a warp whose 32 rows are all of one group adds them to a per-lane carry, reduced with
// shuffles and added with one atomic when the group changes (two tile loops: one for a block whose
// first rows hold one key, one general; hgb_shared_kernel); in the other tiers such a warp reduces
// them with shuffles first and issues one atomic. Tiers 1 and 2 leave accumulators indexed by
// global slot; the occupied slots are then numbered into the dense output (group_parts::index maps
// a group to its slot).
//
// Layers: this file's hash_groupby (the order of the tiers, and the rules that stop HGB for
// `automatic`) -> the tiers' host code (hgb_tiers.cu) -> kernels (hgb_shared_agent.cuh,
// hgb_dense_agent.cuh; compiled per key width in hgb_kernels/) -> accumulate.cuh /
// group_table.cuh device helpers. The tiers see keys as the unsigned integers of their width.
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/dense_wsum.cuh"
#include "groupby/estimate.hpp"
#include "groupby/gpu/detail/group_table.cuh"
#include "groupby/gpu/detail/hgb_tiers.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace joinery::detail::gpu::gb {

namespace {

using policy = hash_groupby_policy;

/// The dense tier's sample of the keys, a partial a block (dense_sample_block); on the caller's
/// key type, whose sign orders the sample.
template <class K>
__global__ void __launch_bounds__(dense_sample_threads)
    dense_sample_kernel(K const* __restrict__ keys, size_type n, size_type samples,
                        dense_sample_bits<K>* __restrict__ partials) {
  dense_sample_block<K>(keys, n, samples, partials);
}

/// The dense tier's sample of `keys`, read back and merged on the host.
template <class K>
dense_sample_bits<K> read_dense_sample(K const* keys, size_type n, stream_ref stream,
                                       memory_resource* mr) {
  using sample_type = dense_sample_bits<K>;
  buffer d_partials(dense_sample_blocks * sizeof(sample_type), mr, stream);
  auto* const partials = static_cast<sample_type*>(d_partials.data());
  dense_sample_kernel<K><<<dense_sample_blocks, dense_sample_threads, 0, to_cuda(stream)>>>(
      keys, n, std::min(n, dense_samples), partials);
  JOINERY_CHECK_LAUNCH();
  std::vector<sample_type> h(static_cast<std::size_t>(dense_sample_blocks));
  JOINERY_CUDA_TRY(cudaMemcpyAsync(h.data(), partials, d_partials.size(),
                                   cudaMemcpyDeviceToHost, to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  sample_type merged;
  for (auto const& p : h) { merged.merge(p); }
  return merged;
}


/// Evenly spaced samples (one per n / samples rows) of `keys` into `table`, with how often each
/// slot's key was drawn.
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    sample_keys_kernel(K const* __restrict__ keys, size_type n, size_type samples,
                       group_table_ref<K> table, unsigned int* __restrict__ draws) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < samples;
       i += stride) {
    // i * n < 2^14 * 2^48: no overflow.
    K const k = keys[i * n / samples];
    bool placed = false;
    typename group_table_ref<K>::value_type stored{};
    auto const slot = table.insert_or_find(k, 0, placed, stored);
    if (slot >= 0) { atomicAdd(draws + slot, 1U); }
  }
}

/// The sample's frequency profile: keys drawn at all, once, and twice (profile[0..2]).
__global__ void __launch_bounds__(policy::threads_per_block)
    sample_profile_kernel(unsigned int const* __restrict__ draws, size_type slots,
                          unsigned long long* __restrict__ profile) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < slots;
       i += stride) {
    unsigned const c = draws[i];
    if (c > 0) { atomicAdd(profile, 1ULL); }
    if (c == 1) { atomicAdd(profile + 1, 1ULL); }
    if (c == 2) { atomicAdd(profile + 2, 1ULL); }
  }
}

/// The dense tier's phase name, from what it ran.
std::string dense_phase_name(hgb::dense_tier_report const& r, bool wrapped_sums) {
  std::string name = r.team > 1 ? "aggregate in shared memory, dense keys, teams of " +
                                    std::to_string(r.team)
                                : std::string("aggregate in shared memory, dense keys");
  if (wrapped_sums) { name += ", wrapped 32-bit sums"; }
  if (r.lo32) { name += r.counted ? ", 32-bit sums counted in shared memory" : ", 32-bit sums"; }
  if (r.own_lo32) { name += ", own 32-bit sum kernel"; }
  if (r.narrow) { name += ", 16-byte loads"; }
  return name;
}

/// Whether the plan is the wrapped sums' one shape: SUM of exactly two int32 columns.
bool two_int32_sums(agg_plan const& plan) {
  return plan.accs.size() == 2 &&
         std::all_of(plan.accs.begin(), plan.accs.end(), [](acc_spec const& a) {
           return a.op == acc_op::sum_int && a.in == value_kind::i32;
         });
}

/// The dense tier, the wrapped sums first where they take the plan (groupby_tuning::
/// hgb_dense_wsum); nullopt when the keys span more than a team of blocks holds.
template <class K>
std::optional<group_parts> run_dense(K const* keys, hgb::tier_input<std::make_unsigned_t<K>> const& in,
                                     groupby_tuning const& tuning, std::size_t shared_limit,
                                     phase_clock& clock) {
  if (in.n == 0 || !hgb::dense_tier_fits(in.plan, shared_limit)) { return std::nullopt; }
  // Declining costs one small copy and a synchronisation, not the tier's allocations and
  // launches (sparse keys: about 0.07 ms of a 1.7-2.3 ms run at 2^28 rows when it did). The
  // wrapped sums sample the keys themselves, and the host reads the sample after their pass.
  dense_sample_bits<K> sample;
  bool sampled = false;
  if (tuning.hgb_dense_wsum && two_int32_sums(in.plan)) {
    auto const values = [&](int a) {
      return static_cast<std::int32_t const*>(
          in.input.column(in.plan.accs[static_cast<std::size_t>(a)].column).data());
    };
    int team = 0;
    if (auto parts = dense_wsum_groupby<K>(keys, in.n, values(0), values(1), sample, sampled,
                                           shared_limit, in.sms, team, in.stream, in.mr)) {
      hgb::dense_tier_report report;
      report.team = team;
      clock.lap(dense_phase_name(report, true).c_str());
      return parts;
    }
  }
  if (!sampled) { sample = read_dense_sample<K>(keys, in.n, in.stream, in.mr); }
  hgb::dense_tier_options options;
  options.shared_limit = shared_limit;
  options.one_group = tuning.hgb_one_group;
  // Benchmarks set these (groupby_tuning, `bench gpu-groupby --tuning`) for A/B runs.
  options.max_team = tuning.hgb_dense_team;
  options.max_row_cost = tuning.hgb_dense_row_cost;
  options.forced_batch = tuning.hgb_dense_batch;
  options.allow_narrow = tuning.hgb_dense_narrow;
  options.lo32_kernel = tuning.hgb_dense_lo32_kernel;
  options.lo32 = tuning.hgb_dense_lo32;
  using B = std::make_unsigned_t<K>;
  hgb::dense_tier_report report;
  if (auto parts = hgb::dense_tier<B>(in, static_cast<B>(sample.low()),
                                      static_cast<B>(sample.span()), options, report)) {
    clock.lap(dense_phase_name(report, false).c_str());
    return parts;
  }
  return std::nullopt;
}

/// HGB: the dense tier, tier 1, then tier 2 (automatic stops before tier 2 where another
/// algorithm serves better), then Wu et al.'s table for every row.
template <class K>
group_parts run_hgb(K const* keys, size_type n, table_view const& input, agg_plan const& plan,
                    groupby_tuning const& tuning, int sms, phase_clock& clock, stream_ref stream,
                    memory_resource* mr) {
  using B = std::make_unsigned_t<K>;
  hgb::tier_input<B> const in{reinterpret_cast<B const*>(keys), n, input, plan,
                              type_to_id_v<K>, sms, stream, mr};
  std::size_t const device_limit = hgb::device_shared_limit();
  std::size_t const shared_limit =
      tuning.hgb_shared_bytes >= 0
        ? std::min<std::size_t>(static_cast<std::size_t>(tuning.hgb_shared_bytes), device_limit)
        : device_limit;
  if (tuning.hgb_dense_keys) {
    if (auto parts = run_dense<K>(keys, in, tuning, shared_limit, clock)) {
      return std::move(*parts);
    }
    clock.lap("dense keys: the keys span more than a team of blocks holds");
  }
  // automatic stops HGB where another algorithm serves better: incomplete, with
  // partition_next for PGB-TR (when it takes the plan), else the sort group-by.
  group_parts none;
  none.incomplete = true;
  double hot_share = -1;  // the hottest key's share of the rows, sampled once
  auto const hottest = [&] {
    if (hot_share < 0) { hot_share = hgb::hot_key_share<B>(in.keys, n, stream, mr); }
    return hot_share;
  };
  std::size_t float_sums = 0;
  for (auto const& a : plan.accs) { float_sums += a.op == acc_op::sum_float ? 1 : 0; }
  if (tuning.stop_beyond_first_table && float_sums > 0 &&
      static_cast<double>(float_sums) >=
        policy::float_sum_sort_weight * static_cast<double>(plan.accs.size()) &&
      hottest() >= policy::float_sum_sort_share) {
    clock.lap("a hot key on float sums: sort instead");
    return none;
  }
  if (auto parts = hgb::shared_tier<B>(in, shared_limit, tuning.hgb_one_group)) {
    clock.lap("aggregate in shared memory");
    return std::move(*parts);
  }
  clock.lap("shared memory: too many groups");
  if (tuning.stop_beyond_first_table) {
    // automatic: under skew tier 2's atomics pile up on the hot slots. Skew over many groups:
    // PGB-TR (the caller's skew_sort_groups) or the sort group-by; from skew_partition_share,
    // PGB-TR at once.
    double const limit = tuning.skew_partition_share >= 0 ? tuning.skew_partition_share
                                                          : policy::skew_partition_share;
    auto const sort_groups = tuning.skew_sort_groups != 0 ? tuning.skew_sort_groups
                             : sizeof(K) == 8             ? policy::skew_sort_groups_wide
                                                          : policy::skew_sort_groups;
    bool const look = limit <= 1 || sort_groups > 0 || float_sums > 0;
    double const share = look ? hottest() : 0.0;
    if (limit <= 1 && share >= limit) {
      clock.lap("skewed keys: partition instead of the global table");
      none.partition_next = true;
      return none;
    }
    bool const skewed = share >= policy::skew_sort_share;
    if (skewed && float_sums > 0) {
      clock.lap("skewed keys, float sums: sort instead of the global table");
      return none;
    }
    bool const counts_only = std::all_of(plan.accs.begin(), plan.accs.end(),
                                         [](acc_spec const& a) { return a.op == acc_op::count; });
    if (!skewed && (plan.accs.size() >= policy::partition_accumulators || counts_only)) {
      clock.lap("many accumulators or counts only: partition instead of the global table");
      none.partition_next = true;
      return none;
    }
    size_type const estimate = estimate_groups<K>(keys, n, sms, stream, mr);
    if (sort_groups > 0 && skewed && estimate >= sort_groups) {
      clock.lap("skewed keys, many groups: stop before the global table");
      none.partition_next = true;
      return none;
    }
    if (!skewed && estimate >= policy::partition_groups) {
      clock.lap("many groups: partition instead of the global table");
      none.partition_next = true;
      return none;
    }
  }
  size_type capacity = std::min<size_type>(
      n, tuning.hgb_initial_groups > 0 ? tuning.hgb_initial_groups : hgb::l2_groups(plan, sizeof(K)));
  for (;;) {
    if (auto parts = hgb::global_tier<B>(in, capacity)) {
      clock.lap("aggregate in global memory");
      return std::move(*parts);
    }
    JOINERY_EXPECTS(capacity < n, "hash group-by: the hash table for every row overflowed");
    if (tuning.stop_beyond_first_table) {
      clock.lap("global table: too many groups");
      none.partition_next = true;  // PGB-TR beats the sort there (partition_groups)
      return none;
    }
    capacity = n;
  }
}

}  // namespace

/// The number of groups, estimated from evenly spaced samples (groups_from_profile: the larger of
/// the uniform model's and Chao1's estimate; Chao1 follows skew's tail of rarely drawn keys,
/// which the uniform model takes for a few groups). Still low under strong skew: the partition
/// group-by then finds partitions too full for their tables and partitions again, finer.
template <class K>
size_type estimate_groups(K const* keys, size_type n, int sms, stream_ref stream,
                          memory_resource* mr) {
  using ppolicy = partition_groupby_policy;
  size_type const samples = std::min(n, ppolicy::sample_rows);
  if (samples == 0) { return 0; }
  auto const s = to_cuda(stream);
  group_table<K> t(samples, stream, mr);
  auto const slots = t.ref.num_slots;
  buffer draws(static_cast<std::size_t>(slots) * sizeof(unsigned int), mr, stream);
  buffer profile(3 * sizeof(unsigned long long), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(draws.data(), 0, draws.size(), s));
  JOINERY_CUDA_TRY(cudaMemsetAsync(profile.data(), 0, profile.size(), s));
  sample_keys_kernel<K>
      <<<grid_stride_blocks(samples, policy::threads_per_block, sms), policy::threads_per_block, 0,
         s>>>(keys, n, samples, t.ref, static_cast<unsigned int*>(draws.data()));
  JOINERY_CHECK_LAUNCH();
  sample_profile_kernel<<<grid_stride_blocks(slots, policy::threads_per_block, sms),
                          policy::threads_per_block, 0, s>>>(
      static_cast<unsigned int const*>(draws.data()), slots,
      static_cast<unsigned long long*>(profile.data()));
  JOINERY_CHECK_LAUNCH();
  unsigned long long h[3] = {};
  JOINERY_CUDA_TRY(cudaMemcpyAsync(h, profile.data(), sizeof(h), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  return groups_from_profile(static_cast<size_type>(h[0]), static_cast<size_type>(h[1]),
                             static_cast<size_type>(h[2]), samples, n);
}

namespace {

/// The global table's slots of 4-byte keys hold 32-bit values (first rows, group ids) with all
/// ones marking an empty slot: fewer than 2^32 - 1 rows.
template <class K>
void check_slot_values(size_type n, char const* algorithm) {
  if constexpr (sizeof(K) == 4) {
    JOINERY_EXPECTS(n < static_cast<size_type>(0xffffffffLL),
                    std::string(algorithm) +
                      " group-by with 4-byte keys takes fewer than 2^32 - 1 rows, got " +
                      std::to_string(n) + "; use the sort algorithm");
  }
}

}  // namespace

template <class K>
group_parts hash_groupby(K const* keys, size_type n, table_view const& input,
                         agg_plan const& plan, bool baseline, groupby_tuning const& tuning,
                         phase_clock& clock, stream_ref stream, memory_resource* mr) {
  check_slot_values<K>(n, baseline ? "global_hash" : "hash");
  int const sms = current_sm_count();
  if (baseline) {
    using B = std::make_unsigned_t<K>;
    return hgb::global_hash<B>({reinterpret_cast<B const*>(keys), n, input, plan, type_to_id_v<K>,
                                sms, stream, mr},
                               clock);
  }
  return run_hgb<K>(keys, n, input, plan, tuning, sms, clock, stream, mr);
}

#define JOINERY_INSTANTIATE_HASH_GROUPBY(K)                                                    \
  template group_parts hash_groupby<K>(K const*, size_type, table_view const&, agg_plan const&, \
                                       bool, groupby_tuning const&, phase_clock&, stream_ref,   \
                                       memory_resource*);                                       \
  template size_type estimate_groups<K>(K const*, size_type, int, stream_ref, memory_resource*);
JOINERY_INSTANTIATE_HASH_GROUPBY(std::int32_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::int64_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::uint32_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::uint64_t)
#undef JOINERY_INSTANTIATE_HASH_GROUPBY

}  // namespace joinery::detail::gpu::gb
