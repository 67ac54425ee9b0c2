// HGB's tiers, host side (hgb_tiers.cuh): their shared memory and table sizes, the frame that
// runs a fused tier's launches and numbers its groups, the dense tier's layout and kernel
// choices, and global_hash. The kernels come from hgb_kernel_sets.cuh; the order in which the
// tiers run, and the rules that stop them for `automatic`, are hash_groupby.cu's.
#include "groupby/gpu/detail/hgb_tiers.cuh"

#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/group_table.cuh"
#include "groupby/gpu/detail/hgb_kernel_sets.cuh"

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cuda/functional>
#include <cuda/std/limits>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <vector>

namespace joinery::detail::gpu::gb::hgb {

namespace {

using policy = hash_groupby_policy;

int grid_for(size_type n, int sms) {
  return static_cast<int>(std::max<size_type>(
      1, std::min<size_type>(ceil_div(n, policy::tile_items),
                             static_cast<size_type>(sms) * policy::max_blocks_per_sm)));
}

acc_source column_source(table_view const& input, agg_plan const& plan, int a) {
  auto const& c = input.column(plan.accs[static_cast<std::size_t>(a)].column);
  return {c.data(), static_cast<std::uint32_t>(size_of(c.type())), 0};
}

/// The groups of a set whose accumulators are indexed by slot (HGB's tiers) or by first row
/// (global_hash, whose set holds first rows); their keys a column of `key_type`.
template <class B>
group_parts compact_groups(group_table<B>& t, size_type groups, std::vector<buffer>&& accs,
                           bool slot_index, type_id key_type, int sms, stream_ref stream,
                           memory_resource* mr) {
  group_parts parts;
  parts.groups = groups;
  parts.keys = column(key_type, groups, mr, stream);
  parts.index = buffer(static_cast<std::size_t>(groups) * sizeof(size_type), mr, stream);
  assign_ids(t, parts.keys, static_cast<size_type*>(parts.index.data()), slot_index, sms, stream,
             mr);
  parts.accs = std::move(accs);
  return parts;
}

/// Tier 1's table size: the largest power of two of slots whose keys and accumulators (for the
/// longest batch) fit `limit` bytes, or 0 when not even the smallest does.
struct shared_shape {
  int slots = 0;
  std::uint32_t bytes = 0;  // keys after the accumulators
  std::uint32_t keys_offset = 0;
};

/// The shared memory of a table of `slots` slots: accumulators for the longest batch, then keys.
template <class K>
shared_shape shared_shape_of(agg_plan const& plan, int slots) {
  std::size_t accs = 0;
  for (std::size_t first = 0; first < plan.accs.size(); first += policy::fused_accs) {
    auto const count = std::min<std::size_t>(policy::fused_accs, plan.accs.size() - first);
    accs = std::max(accs, batch_shared_bytes(plan, first, count, slots + 1));
  }
  accs = (accs + 15) & ~std::size_t{15};  // the keys are read 16 bytes at a time
  std::size_t const keys = (static_cast<std::size_t>(slots + 1) * sizeof(K) + 15) & ~std::size_t{15};
  return {slots, static_cast<std::uint32_t>(accs + keys), static_cast<std::uint32_t>(accs)};
}

template <class K>
shared_shape shared_shape_for(agg_plan const& plan, std::size_t limit) {
  shared_shape best;
  for (int slots = policy::min_shared_slots; slots <= policy::max_shared_slots; slots *= 2) {
    auto const shape = shared_shape_of<K>(plan, slots);
    if (shape.bytes > limit) { break; }
    best = shape;
  }
  return best;
}

/// Launches one fused-tier kernel per batch (keys only: one launch with an empty batch).
template <class K, class Launch>
void for_each_batch(std::vector<acc_batch> const& batches, Launch&& launch) {
  if (batches.empty()) {  // the groups still have to be found
    launch(acc_batch{});
    return;
  }
  for (auto const& batch : batches) { launch(batch); }
}

/// The frame of both fused tiers: a global table for `capacity` groups with accumulators indexed
/// by its slots (shared-memory offsets laid out for `shared_entries`), one launch per batch of at
/// most `batch_accs` accumulators (`launch(batch, table_ref, counters)`), then the groups
/// numbered; nullopt on overflow.
template <class B, class Launch>
std::optional<group_parts> run_fused_tier(tier_input<B> const& in, size_type capacity,
                                          size_type shared_entries, Launch&& launch,
                                          int batch_accs = policy::fused_accs,
                                          agg_plan const* shared_plan = nullptr) {
  group_table<B> table(capacity, in.stream, in.mr);
  auto accs = make_accumulators(in.plan, table.ref.num_slots, in.stream, in.mr);
  // shared_plan: the same accumulators, some in another shared-memory form (sum_lo32).
  auto const batches =
      make_batches(shared_plan != nullptr ? *shared_plan : in.plan, accs, shared_entries,
                   [&](int a) { return column_source(in.input, in.plan, a); }, batch_accs);
  buffer counters(sizeof(insert_counters), in.mr, in.stream);
  JOINERY_CUDA_TRY(
      cudaMemsetAsync(counters.data(), 0, sizeof(insert_counters), to_cuda(in.stream)));
  for_each_batch<B>(batches, [&](acc_batch const& batch) {
    launch(batch, table.ref, static_cast<insert_counters*>(counters.data()));
    JOINERY_CHECK_LAUNCH();
  });
  auto const h = read_counters(counters, in.stream);
  if (h.overflow != 0) { return std::nullopt; }
  return compact_groups(table, static_cast<size_type>(h.placed), std::move(accs), true,
                        in.key_type, in.sms, in.stream, in.mr);
}

/// The most frequent of `samples` (<= policy::skew_samples) evenly spaced keys: how many of the
/// samples hold it. One block: the samples sorted in registers, then each run's length found by
/// a binary search for its end.
template <class B>
__global__ void __launch_bounds__(policy::skew_threads)
    hot_key_kernel(B const* __restrict__ keys, size_type n, int samples,
                   unsigned int* __restrict__ hottest) {
  constexpr int ipt = policy::skew_items_per_thread;
  using sort = cub::BlockRadixSort<B, policy::skew_threads, ipt>;
  using reduce = cub::BlockReduce<unsigned int, policy::skew_threads>;
  // One after the other: the sort, the sorted samples, the reduction (48 KB of static shared
  // memory would not hold them side by side for 8-byte keys).
  __shared__ union {
    typename sort::TempStorage sort;
    B sorted[policy::skew_samples];
    typename reduce::TempStorage reduce;
  } storage;
  B* const sorted = storage.sorted;
  B k[ipt];
  bool valid[ipt];
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    int const i = static_cast<int>(threadIdx.x) * ipt + j;
    valid[j] = i < samples;
    // Missing samples sort last as the largest key and are not counted (valid, below).
    k[j] = valid[j] ? __ldg(keys + static_cast<size_type>(i) * n / samples)
                    : cuda::std::numeric_limits<B>::max();
  }
  sort(storage.sort).Sort(k);  // blocked: thread t holds sorted positions t * ipt + j
  __syncthreads();             // the sort's storage becomes the sorted samples
#pragma unroll
  for (int j = 0; j < ipt; ++j) { sorted[threadIdx.x * ipt + j] = k[j]; }
  __syncthreads();
  unsigned int longest = 0;
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    int const i = static_cast<int>(threadIdx.x) * ipt + j;
    if (i < samples && (i == 0 || sorted[i - 1] != sorted[i])) {  // a run starts at i
      int lo = i + 1;  // first position past the run, in [i + 1, samples]
      int hi = samples;
      while (lo < hi) {
        int const mid = (lo + hi) / 2;
        if (sorted[mid] == sorted[i]) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      longest = max(longest, static_cast<unsigned int>(lo - i));
    }
  }
  __syncthreads();  // the reduction reuses the samples' storage
  auto const most = reduce(storage.reduce).Reduce(longest, cuda::maximum<>{});
  if (threadIdx.x == 0) { *hottest = most; }
}


/// The dense tier's shared memory: the most slots (at most policy::max_dense_slots) whose
/// accumulators for the longest batch of at most `batch_accs`, then one seen byte each, fit
/// `limit`; slots 0 when none.
shared_shape dense_shape_for(agg_plan const& plan, std::size_t limit, int batch_accs) {
  auto const per_batch = static_cast<std::size_t>(batch_accs);
  auto const shape_of = [&](int slots) {
    std::size_t accs = 0;
    for (std::size_t first = 0; first < plan.accs.size(); first += per_batch) {
      auto const count = std::min<std::size_t>(per_batch, plan.accs.size() - first);
      accs = std::max(accs, batch_shared_bytes(plan, first, count, slots + 1));
    }
    accs = (accs + 15) & ~std::size_t{15};
    std::size_t const seen = (static_cast<std::size_t>(slots) + 1 + 15) & ~std::size_t{15};
    return shared_shape{slots, static_cast<std::uint32_t>(std::min<std::size_t>(accs + seen, 0xffffffffU)),
                        static_cast<std::uint32_t>(accs)};
  };
  int lo = 0;  // fits (or 0)
  int hi = policy::max_dense_slots + 1;  // does not fit
  while (hi - lo > 1) {
    int const mid = lo + (hi - lo) / 2;
    (shape_of(mid).bytes <= limit ? lo : hi) = mid;
  }
  return lo == 0 ? shared_shape{} : shape_of(lo);
}

/// The dense tier's launch: how many accumulators a pass takes, the shared memory of a block,
/// and the blocks of a team (the window holds team * shape.slots keys).
struct dense_layout {
  int batch_accs = 0;
  shared_shape shape{};
  int team = 0;
};

/// The dense layout for sampled keys `span` keys apart; nullopt when none fits. One block a
/// window when it can, with batches of policy::fused_accs accumulators, else of one (SUM of two
/// columns at g = 2^14: 8-byte accumulators, 256 KB for both). Else teams of at most `max_team`
/// blocks. The tier is bound by issue: every member loads and tests every row of its team's
/// tiles in every pass, so a layout costs a row team * (passes * policy::dense_pass_cost +
/// value bytes), in value bytes' worth of instructions; the cheapest wins (at equal cost the
/// smaller team), if at most `max_row_cost`: beyond that tier 2 is faster.
std::optional<dense_layout> dense_layout_for(agg_plan const& plan, std::size_t limit,
                                             std::uint64_t span, int max_team,
                                             std::size_t max_row_cost, int forced_batch) {
  auto const accs = static_cast<int>(plan.accs.size());
  std::size_t values = 0;
  for (auto const& a : plan.accs) {
    values += a.op == acc_op::count ? 0 : static_cast<std::size_t>(value_bytes(a.in));
  }
  std::optional<dense_layout> best;
  std::size_t best_cost = 0;
  for (int const batch_accs : {policy::fused_accs, 1}) {
    if (batch_accs == 1 && accs < 2) { continue; }
    if (forced_batch > 0 && batch_accs != forced_batch) { continue; }
    auto const shape = dense_shape_for(plan, limit, batch_accs);
    if (shape.slots == 0) { continue; }
    auto const slots = static_cast<std::uint64_t>(shape.slots);
    if (span / slots >= static_cast<std::uint64_t>(max_team)) { continue; }
    int const team = static_cast<int>(span / slots) + 1;  // team * slots > span
    if (team == 1) { return dense_layout{batch_accs, shape, 1}; }
    auto const passes = static_cast<std::size_t>(std::max(1, (accs + batch_accs - 1) / batch_accs));
    std::size_t const cost =
      static_cast<std::size_t>(team) * (passes * policy::dense_pass_cost + values);
    // At equal cost the smaller team: under skew a hot key's member works for the whole team
    // (g = 2^16 SUM at Zipf 1.5: one pass of 5 ran 40.5 G rows/s, two of 3 51.3).
    if (cost <= max_row_cost && (!best || cost < best_cost ||
                                 (cost == best_cost && team < best->team))) {
      best = dense_layout{batch_accs, shape, team};
      best_cost = cost;
    }
  }
  return best;
}


/// Whether the dense tier may load `batch` in load_dense_tiles' narrow form: the keys and every
/// loaded column 16-byte aligned, every loaded value 4 bytes, packed.
template <class B>
bool dense_narrow_batch(B const* keys, acc_batch const& batch) {
  auto const aligned = [](void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  if (!aligned(keys)) { return false; }
  for (int a = 0; a < batch.count; ++a) {
    if (batch.op[a] == acc_op::count) { continue; }
    auto const& src = batch.src[a];
    if (value_bytes(batch.in[a]) != 4 || src.stride != 4 ||
        !aligned(static_cast<unsigned char const*>(src.base) + src.offset)) {
      return false;
    }
  }
  return true;
}
/// Lets each of the fused kernels take `bytes` of dynamic shared memory; the blocks of
/// policy::shared_threads an SM holds of the one that holds fewest.
template <class... Kernels>
int prepare_kernels(std::uint32_t bytes, Kernels... kernels) {
  int per_sm = std::numeric_limits<int>::max();
  ((allow_dynamic_smem(kernels, bytes),
    per_sm = std::min(per_sm, resident_blocks_per_sm(kernels, policy::shared_threads, bytes))),
   ...);
  return per_sm;
}

}  // namespace

template <class B>
double hot_key_share(B const* keys, size_type n, stream_ref stream, memory_resource* mr) {
  if (n == 0) { return 0; }
  int const samples = static_cast<int>(std::min<size_type>(n, policy::skew_samples));
  buffer hottest(sizeof(unsigned int), mr, stream);
  hot_key_kernel<B><<<1, policy::skew_threads, 0, to_cuda(stream)>>>(
      keys, n, samples, static_cast<unsigned int*>(hottest.data()));
  JOINERY_CHECK_LAUNCH();
  unsigned int h = 0;
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, hottest.data(), sizeof(h), cudaMemcpyDeviceToHost,
                                   to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return static_cast<double>(h) / static_cast<double>(samples);
}

bool dense_tier_fits(agg_plan const& plan, std::size_t limit) {
  // One accumulator a pass leaves a block the most slots.
  return dense_shape_for(plan, limit, 1).slots != 0;
}

/// The dense tier (ahead of tier 1): when a sample of the keys spans fewer keys than the
/// shared memory of a team of blocks has slots for, each key's slot is its offset in that window
/// (perfect hashing, as DuckDB's perfect-hash aggregate does from min/max statistics): no
/// hashing, no key comparisons, no claiming. nullopt when the sample spans too many keys or a
/// key falls outside the window (the run goes on with the hashed tiers); the sample spans too
/// many keys when even `max_team` blocks (at most policy::max_dense_team) hold too few slots or
/// a team would cost a row more than `max_row_cost` (dense_layout_for). allow_narrow: batches
/// that dense_narrow_batch accepts run the narrow kernel; lo32_kernel: those whose every
/// accumulator is a sum_lo32 of int32 values run hgb_dense_kernel's Lo32Only instantiation
/// (narrow_lo32); lo32: sums of int32 values as sum_lo32 partials, counted or not
/// (acc_spec::counted). `report` says which of these ran.
template <class B>
std::optional<group_parts> dense_tier(tier_input<B> const& in, B low, B span,
                                      dense_tier_options const& options,
                                      dense_tier_report& report) {
  auto const& plan = in.plan;
  auto const n = in.n;
  auto const stream = in.stream;
  if (n == 0) { return std::nullopt; }  // the caller checked dense_tier_fits
  int const max_team = options.max_team > 0 ? std::min(options.max_team, policy::max_dense_team)
                                            : policy::max_dense_team;
  auto const max_row_cost = options.max_row_cost > 0
                              ? static_cast<std::size_t>(options.max_row_cost)
                              : policy::max_dense_row_cost;
  auto const layout_of = [&](agg_plan const& p) {
    return dense_layout_for(p, options.shared_limit, static_cast<std::uint64_t>(span), max_team,
                            max_row_cost, options.forced_batch);
  };
  // Sums of int32 values as 32-bit partials: half the shared memory a group, so fewer members
  // (g = 2^16, two sums: one pass of 3 instead of two).
  agg_plan lo32_plan = plan;
  bool has_lo32 = false;
  for (auto& a : lo32_plan.accs) {
    if (a.op == acc_op::sum_int && a.in == value_kind::i32) {
      a.op = acc_op::sum_lo32;
      has_lo32 = true;
    }
  }
  // Counted (2 more bytes a group, no spill per overflow): in one pass of a small team
  // (policy::dense_counts_max_team) that does less work than 8-byte sums. No hot-key gate: a
  // hot key's overflows count in shared memory like its adds. Not over several passes: at
  // g = 2^16 two passes of a team of 2 ran SUM in 4.1 ms against 2.6 for spills in one pass of
  // 3 (H200), each pass updating one sum through the general loop.
  agg_plan counted_plan = lo32_plan;
  for (auto& a : counted_plan.accs) { a.counted = a.op == acc_op::sum_lo32; }
  int const lo32 = options.lo32;
  report = dense_tier_report{};
  if (has_lo32 && lo32 >= 0 && lo32 != 1) {
    if (auto const counted = layout_of(counted_plan)) {
      auto const accs = static_cast<int>(plan.accs.size());
      auto const work = [&](dense_layout const& l) {
        return l.team * ((accs + l.batch_accs - 1) / l.batch_accs);
      };
      auto const wide = layout_of(plan);
      report.counted = lo32 == 2 || (counted->team <= policy::dense_counts_max_team &&
                                     work(*counted) == counted->team &&
                                     (!wide || work(*counted) < work(*wide)));
      report.lo32 = report.counted;
    }
  }
  if (has_lo32 && lo32 >= 0 && !report.counted && layout_of(lo32_plan)) {
    report.lo32 = lo32 > 0 || (static_cast<std::uint64_t>(span) >=
                                 static_cast<std::uint64_t>(policy::dense_lo32_min_span) &&
                               hot_key_share<B>(in.keys, n, stream, in.mr) <
                                 policy::dense_lo32_max_hot_share);
  }
  agg_plan const& shared_plan = report.counted ? counted_plan : report.lo32 ? lo32_plan : plan;
  auto const layout = layout_of(shared_plan);
  if (!layout) { return std::nullopt; }
  auto const& shape = layout->shape;
  report.team = layout->team;
  // The window centred on the sampled keys, so that keys a little beyond them still fit
  // (modulo 2^bits, like the keys' offsets).
  auto const window_slots =
      static_cast<B>(static_cast<B>(layout->team) * static_cast<B>(shape.slots));
  dense_window<B> const window{static_cast<B>(low - (window_slots - 1 - span) / 2),
                               layout->team};
  bool const in_teams = layout->team > 1;
  auto const kernels = in_teams ? dense_kernels<B, true>() : dense_kernels<B, false>();
  report.narrow = true;
  int const per_sm = prepare_kernels(shape.bytes, kernels.general, kernels.narrow,
                                     kernels.narrow_lo32, kernels.one_group);
  JOINERY_EXPECTS(per_sm > 0, "hash group-by: the dense shared-memory kernel cannot be resident");
  // Whole teams, all resident at once (a member that waited for a free SM would read its
  // team's tiles long after the others, from DRAM again), unless the device holds fewer blocks
  // than one team: then one team, its members in turn (correct, only slower).
  size_type const teams = std::max<size_type>(
      1, std::min<size_type>(ceil_div(n, static_cast<size_type>(policy::shared_threads) *
                                           policy::items_per_thread),
                             static_cast<size_type>(in.sms) * per_sm / layout->team));
  int const blocks = static_cast<int>(teams * layout->team);
  // Every key of a completed run lies in the window: at most team * slots groups in all.
  auto const capacity =
      std::min<size_type>(n, static_cast<size_type>(layout->team) * shape.slots);
  // sum_lo32's spills: a 32-bit count per slot of the window and accumulator of a batch, zeroed
  // before each batch and added to the global sums after it.
  auto const spill_slots = static_cast<size_type>(window_slots);
  buffer spill;
  if (report.lo32) {
    spill = buffer(static_cast<std::size_t>(layout->batch_accs) *
                     static_cast<std::size_t>(spill_slots) * sizeof(unsigned),
                   in.mr, stream);
  }
  auto const s = to_cuda(stream);
  return run_fused_tier<B>(
      in, capacity, shape.slots + 1,
      [&](acc_batch const& shared_batch, group_table_ref<B> table, insert_counters* counters) {
        acc_batch batch = shared_batch;
        bool spills = false;
        for (int a = 0; a < batch.count; ++a) {
          if (batch.op[a] != acc_op::sum_lo32) { continue; }
          batch.spill[a] = static_cast<unsigned*>(spill.data()) + a * spill_slots;
          spills = true;
        }
        if (spills) { JOINERY_CUDA_TRY(cudaMemsetAsync(spill.data(), 0, spill.size(), s)); }
        kernels.one_group<<<blocks, policy::shared_threads, shape.bytes, s>>>(
            in.keys, n, batch, shape.slots, 0, shape.keys_offset, table, counters,
            options.one_group, window);
        JOINERY_CHECK_LAUNCH();
        bool const narrow_batch = options.allow_narrow && dense_narrow_batch(in.keys, batch);
        report.narrow = report.narrow && narrow_batch;
        bool lo32_only = options.lo32_kernel && batch.count == policy::fused_accs;
        for (int a = 0; a < batch.count; ++a) {
          lo32_only =
              lo32_only && batch.op[a] == acc_op::sum_lo32 && batch.in[a] == value_kind::i32;
        }
        auto const dense = !narrow_batch ? kernels.general
                           : lo32_only   ? kernels.narrow_lo32
                                         : kernels.narrow;
        report.own_lo32 = report.own_lo32 ||
                          (dense == kernels.narrow_lo32 && kernels.narrow_lo32 != kernels.narrow);
        dense<<<blocks, policy::shared_threads, shape.bytes, s>>>(
            in.keys, n, batch, shape.slots, shape.keys_offset, table, counters,
            options.one_group, window);
        if (spills) {
          JOINERY_CHECK_LAUNCH();
          kernels.lo32_fixup<<<grid_stride_blocks(spill_slots, policy::threads_per_block, in.sms),
                               policy::threads_per_block, 0, s>>>(batch, window, spill_slots,
                                                                 table, counters);
        }
      },
      layout->batch_accs, report.lo32 ? &shared_plan : nullptr);
}

template <class B>
std::optional<group_parts> shared_tier(tier_input<B> const& in, std::size_t limit,
                                       int one_group) {
  auto const shape = shared_shape_for<B>(in.plan, limit);
  if (shape.slots == 0) { return std::nullopt; }
  int const max_groups = shape.slots / 2;
  auto const kernels = hashed_kernels<B>();
  int const per_sm =
      prepare_kernels(shape.bytes, kernels.shared_general, kernels.shared_one_group);
  JOINERY_EXPECTS(per_sm > 0, "hash group-by: the shared-memory kernel cannot be resident");
  int const blocks = static_cast<int>(std::max<size_type>(
      1, std::min<size_type>(ceil_div(in.n, static_cast<size_type>(policy::shared_threads) *
                                              policy::items_per_thread),
                             static_cast<size_type>(in.sms) * per_sm)));
  // Every block's groups fit the global table, so merging cannot overflow it.
  auto const capacity =
      std::min<size_type>(in.n, static_cast<size_type>(blocks) * (max_groups + 1));
  return run_fused_tier<B>(
      in, capacity, shape.slots + 1,
      [&](acc_batch const& batch, group_table_ref<B> table, insert_counters* counters) {
        // The one-group blocks first: with g = 1 the general launch is the one that returns.
        shared_kernel_fn<B> const order[] = {kernels.shared_one_group, kernels.shared_general};
        for (auto const kernel : order) {
          kernel<<<blocks, policy::shared_threads, shape.bytes, to_cuda(in.stream)>>>(
              in.keys, in.n, batch, shape.slots, max_groups, shape.keys_offset, table, counters,
              one_group, dense_window<B>{0, 1});
          JOINERY_CHECK_LAUNCH();
        }
      });
}

template <class B>
std::optional<group_parts> global_tier(tier_input<B> const& in, size_type capacity) {
  auto const kernel = hashed_kernels<B>().global;
  return run_fused_tier<B>(
      in, capacity, 0,
      [&](acc_batch const& batch, group_table_ref<B> table, insert_counters* counters) {
        kernel<<<grid_for(in.n, in.sms), policy::threads_per_block, 0, to_cuda(in.stream)>>>(
            table, in.keys, in.n, batch, static_cast<unsigned long long>(capacity), counters);
      });
}

template <class B>
group_parts global_hash(tier_input<B> const& in, phase_clock& clock) {
  auto const s = to_cuda(in.stream);
  auto const kernel = hashed_kernels<B>().global_hash;
  group_table<B> table(in.n, in.stream, in.mr);
  // Sparse accumulators: one entry per input row, as libcudf.
  auto sparse = make_accumulators(in.plan, in.n, in.stream, in.mr);
  auto batches = make_batches(in.plan, sparse, 0,
                              [&](int a) { return column_source(in.input, in.plan, a); });
  buffer counters(sizeof(insert_counters), in.mr, in.stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(counters.data(), 0, sizeof(insert_counters), s));
  auto* c = static_cast<insert_counters*>(counters.data());
  for (std::size_t b = 0; b < std::max<std::size_t>(batches.size(), 1); ++b) {
    acc_batch const batch = batches.empty() ? acc_batch{} : batches[b];
    kernel<<<grid_for(in.n, in.sms), policy::threads_per_block, 0, s>>>(
        table.ref, in.keys, in.n, batch, b == 0 ? c : nullptr);
    JOINERY_CHECK_LAUNCH();
  }
  auto const h = read_counters(counters, in.stream);
  JOINERY_EXPECTS(h.overflow == 0, "global_hash group-by: the hash table overflowed");
  clock.lap("insert and aggregate");
  auto parts = compact_groups(table, static_cast<size_type>(h.placed), std::move(sparse), false,
                              in.key_type, in.sms, in.stream, in.mr);
  clock.lap("compact groups");
  return parts;
}

/// Tier 2's first capacity: the groups whose table and accumulators (2 slots per group) fit the
/// device's L2 cache, so the atomics stay on chip.
size_type l2_groups(agg_plan const& plan, std::size_t key_bytes) {
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int l2 = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  std::size_t const per_group =
      static_cast<std::size_t>(policy::slots_per_group) *
      (2 * key_bytes + plan.bytes_per_group());  // a slot holds the key and a key-wide value
  size_type groups = policy::min_l2_groups;
  while (static_cast<std::size_t>(2 * groups) * per_group <= static_cast<std::size_t>(l2)) {
    groups *= 2;
  }
  return groups;
}

/// Dynamic shared memory a block of the fused kernels may take on this device, with room for the
/// kernels' own static shared variables.
std::size_t device_shared_limit() {
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int optin = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return static_cast<std::size_t>(optin) - policy::static_shared_reserve;
}


#define JOINERY_INSTANTIATE_HGB_TIERS(B)                                                       \
  template double hot_key_share<B>(B const*, size_type, stream_ref, memory_resource*);         \
  template std::optional<group_parts> dense_tier<B>(tier_input<B> const&, B, B,                 \
                                                    dense_tier_options const&,                  \
                                                    dense_tier_report&);                        \
  template std::optional<group_parts> shared_tier<B>(tier_input<B> const&, std::size_t, int);  \
  template std::optional<group_parts> global_tier<B>(tier_input<B> const&, size_type);         \
  template group_parts global_hash<B>(tier_input<B> const&, phase_clock&);
JOINERY_INSTANTIATE_HGB_TIERS(std::uint32_t)
JOINERY_INSTANTIATE_HGB_TIERS(std::uint64_t)
#undef JOINERY_INSTANTIATE_HGB_TIERS

}  // namespace joinery::detail::gpu::gb::hgb
