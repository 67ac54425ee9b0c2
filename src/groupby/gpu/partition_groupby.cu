// The partition group-bys (Wu et al. 4.3, PGB-TR and PGB-UR): the rows are moved into
// partitions by a hash of their key (hash_partition.cu), so that no key is in two partitions
// and each partition's groups fit a table in one block's shared memory; each block then
// aggregates whole partitions there and writes their groups once, straight into the output.
// There is no global table: at many groups every update stays in shared memory, and the only
// traffic besides the partition passes is one read of each row and one write of each group.
//
// A partition holding more rows than a block should take alone (skew: a hot key's partition)
// is cut into several work items; each writes its partial groups to a region of its own, and a
// second kernel aggregates each such partition's regions again (the same agent, its rows being
// partial accumulators). A partition with more groups than its table stops the run, which
// starts again with retry_bits more partition bits (the estimate of the groups is low under
// skew).
//
// Layers: partition_groupby (host dispatch) -> aggregate_kernel -> aggregate_rows (a work
// item's rows, a tile at a time) -> shared_group_table and accumulate.cuh's update helpers.
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/hash_partition.cuh"
#include "groupby/gpu/detail/shared_group_table.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace joinery::detail::gpu::gb {

namespace {

using policy = partition_groupby_policy;
constexpr int max_accs = policy::max_accumulators;

/// Every accumulator of the plan (by value to the kernels).
struct partition_accs {
  int count = 0;
  acc_op op[max_accs] = {};
  value_kind in[max_accs] = {};
  acc_source src[max_accs] = {};       ///< raw rows: where the value of a row is read
  void const* partial[max_accs] = {};  ///< merge: the partial accumulators read
  std::uint32_t smem_offset[max_accs] = {};
  void* out[max_accs] = {};          ///< final groups' accumulators
  void* partial_out[max_accs] = {};  ///< split partitions' partial groups
};

/// The work items: item i is rows [begin[i], end[i]) (raw rows) or partial regions
/// [begin[i], end[i]) (merge); a raw item with region[i] >= 0 writes partial groups to that
/// region, else final groups. Blocks claim items in order from `next` (largest first).
struct work_items {
  size_type const* begin = nullptr;
  size_type const* end = nullptr;
  int const* region = nullptr;
  size_type count = 0;
  unsigned long long* next = nullptr;
};

template <class K>
struct partition_outputs {
  K* keys = nullptr;                        ///< final groups, at positions claimed from `groups`
  unsigned long long* groups = nullptr;
  K* partial_keys = nullptr;                ///< region r: rows r * region_rows ..
  size_type* partial_groups = nullptr;      ///< rows of each region
  size_type region_rows = 0;
  std::uint32_t const* row_ids32 = nullptr;  ///< PGB-UR: raw row i's values are at row_ids[i]
  size_type const* row_ids64 = nullptr;
  int* overflow = nullptr;                  ///< a table met more groups than it holds
};

/// One tile of a work item's rows [first, first + tile) below `end`: each key numbered in the
/// table, then each accumulator updated. With `combine` (the items of a partition large enough
/// to be split, where hot keys live, and the merges) lanes of one slot are combined first, so
/// that a hot key does not serialise the shared atomics; elsewhere the match that finds them
/// costs more than the rare shared slot. Returns false when a key did not fit the table.
template <bool Merge, class K>
__device__ __forceinline__ bool aggregate_tile(K const* __restrict__ keys, size_type first,
                                               size_type end, partition_accs const& accs,
                                               partition_outputs<K> const& out,
                                               shared_group_table<K> const& t,
                                               unsigned char* smem, int& has_marker,
                                               bool combine) {
  constexpr int ipt = policy::aggregate_items_per_thread;
  constexpr int threads = policy::aggregate_threads;
  unsigned const lane = threadIdx.x & 31;
  size_type row[ipt];
  bool valid[ipt];
  K k[ipt];
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    row[j] = first + j * threads + threadIdx.x;
    valid[j] = row[j] < end;
    k[j] = valid[j] ? __ldg(keys + row[j]) : K{};
  }
  size_type at[ipt];  // where the values of the row are read
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    at[j] = row[j];
    if (!Merge && valid[j]) {
      if (out.row_ids32 != nullptr) { at[j] = static_cast<size_type>(__ldg(out.row_ids32 + row[j])); }
      if (out.row_ids64 != nullptr) { at[j] = __ldg(out.row_ids64 + row[j]); }
    }
  }
  // The values of the first accumulators are loaded with the keys, before any probe: loaded
  // after the probes, each tile waited on two round trips to memory at half occupancy.
  constexpr int prefetched = policy::prefetched_accumulators;
  unsigned long long raw[prefetched][ipt];
#pragma unroll
  for (int a = 0; a < prefetched; ++a) {
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      raw[a][j] = !Merge && a < accs.count && accs.op[a] != acc_op::count && valid[j]
                    ? load_bits(accs.src[a], accs.in[a], at[j])
                    : 0ULL;
    }
  }
  // Each key's home slot, then its home bucket, then the claims of the keys still missing in
  // one loop (hash_groupby's tier 1 probes the same way): a warp walks as often as its
  // unluckiest lane must, not once for every key a lane claims.
  int slot[ipt];
  unsigned missed = 0;
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    slot[j] = valid[j] ? t.find_home(k[j]) : -2;
    if (slot[j] == -1) { slot[j] = t.find_in_bucket(k[j]); }
    if (slot[j] == -1) { missed |= 1U << j; }
  }
  while (missed != 0) {
    int const m = __ffs(static_cast<int>(missed)) - 1;
    missed &= missed - 1;
    K const key = __ldg(keys + first + static_cast<size_type>(m) * threads + threadIdx.x);
    // Slack 1: a lane still finds a key another lane claims as the table's last group.
    int const claimed = t.template insert<true, 1>(key);
#pragma unroll
    for (int j = 0; j < ipt; ++j) { slot[j] = j == m ? claimed : slot[j]; }
  }
  // Lanes that probed different lengths run on together from here: diverged, every later
  // instruction of the tile would issue once per branch (without it the aggregation took 2.7x
  // as long at g = 2^20).
  __syncwarp();
  unsigned peers[ipt];
  bool shared_slot[ipt];
  bool fits = true;
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    if (!valid[j]) { slot[j] = -1; }
    if (valid[j] && slot[j] < 0) { fits = false; }
    if (slot[j] == t.slots) { has_marker = 1; }
    peers[j] = 1U << lane;
    shared_slot[j] = false;
    if (combine) {  // the same on every lane
      // (a ballot per bit of the slot instead of the match took 1.2-1.4x as long under skew)
      peers[j] = __match_any_sync(full_warp, slot[j] >= 0 ? static_cast<unsigned>(slot[j])
                                                          : 0x80000000U | lane);
      shared_slot[j] = __any_sync(full_warp, __popc(peers[j]) > 1);
    }
  }
  // Accumulator a's updates; value(j) gives row j's value bits (raw rows).
  auto const update = [&](int a, auto value) {
    void* acc = smem + accs.smem_offset[a];
    with_static_acc(accs.op[a], accs.in[a], [&](auto op, auto in) {
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        acc_value v{};
        if constexpr (Merge) {
          if (slot[j] >= 0) { v = load_acc(op, in, accs.partial[a], at[j]); }
        } else if constexpr (decltype(op)::value == acc_op::count) {
          v = {1, 0};
        } else {
          if (slot[j] >= 0) { v = to_acc(op, in, value(j)); }
        }
        if (shared_slot[j]) { v = peer_reduce(op, v, peers[j]); }  // warp-uniform branch
        bool const leader =
          !shared_slot[j] || static_cast<int>(lane) == __ffs(static_cast<int>(peers[j])) - 1;
        if (slot[j] >= 0 && leader) { shared_atomic_update(op, in, acc, slot[j], v); }
      }
    });
  };
#pragma unroll
  for (int a = 0; a < prefetched; ++a) {
    if (a < accs.count) { update(a, [&](int j) { return raw[a][j]; }); }
  }
  for (int a = prefetched; a < accs.count; ++a) {
    update(a, [&](int j) { return load_bits(accs.src[a], accs.in[a], at[j]); });
  }
  return fits;
}

/// Empties the table and sets the accumulators (slots + 1 entries) to their identities.
template <class K>
__device__ void reset_table(shared_group_table<K> const& t, partition_accs const& accs,
                            unsigned char* smem, int& groups, int& has_marker) {
  for (int i = threadIdx.x; i < t.slots; i += blockDim.x) { t.clear(i); }
  for (int a = 0; a < accs.count; ++a) {
    for (int i = threadIdx.x; i <= t.slots; i += blockDim.x) {
      store_identity(accs.op[a], accs.in[a], smem + accs.smem_offset[a], i);
    }
  }
  if (threadIdx.x == 0) {
    groups = 0;
    has_marker = 0;
  }
}

/// Each block takes work items in turn: aggregates the item's rows in its table, then writes
/// the table's groups, final ones at positions claimed from out.groups, partial ones to the
/// item's region. Every block stops once a table overflowed (the host partitions again).
template <class K, bool Merge>
__global__ void __launch_bounds__(policy::aggregate_threads, 1)
    aggregate_kernel(K const* __restrict__ keys, work_items items, partition_accs accs,
                     int slots, int max_groups,
                     partition_outputs<K> out) {
  constexpr int tile_rows = policy::aggregate_threads * policy::aggregate_items_per_thread;
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int groups;
  __shared__ int has_marker;
  __shared__ size_type base;
  __shared__ int written;
  __shared__ size_type claimed;
  using table_t = shared_group_table<K>;
  table_t const t{reinterpret_cast<typename table_t::bits_type*>(smem), slots,
                  max_groups, &groups};
  for (;;) {
    // Claimed in turn, not by a fixed stride: items differ in size (a hot key's partition is cut
    // into pieces), and a block that drew two large ones set the launch's time under skew.
    if (threadIdx.x == 0) { claimed = static_cast<size_type>(atomicAdd(items.next, 1ULL)); }
    __syncthreads();
    size_type const item = claimed;
    if (item >= items.count) { break; }
    reset_table(t, accs, smem, groups, has_marker);
    __syncthreads();
    bool fits = true;
    bool const combine = Merge || items.region[item] >= 0;
    auto const rows = [&](size_type begin, size_type end) {
      // The decisions are the warp's: its lanes must stay together for the tile's shuffles.
      for (size_type first = begin; first < end && fits; first += tile_rows) {
        if (__any_sync(full_warp, *static_cast<int volatile*>(out.overflow) != 0)) {
          fits = false;
        } else if (!__all_sync(full_warp, aggregate_tile<Merge>(keys, first, end, accs, out, t,
                                                                smem, has_marker, combine))) {
          if ((threadIdx.x & 31) == 0) { atomicExch(out.overflow, 1); }
          fits = false;
        }
      }
    };
    if constexpr (Merge) {
      for (size_type r = items.begin[item]; r < items.end[item]; ++r) {
        rows(r * out.region_rows, r * out.region_rows + out.partial_groups[r]);
      }
    } else {
      rows(items.begin[item], items.end[item]);
    }
    if (__syncthreads_or(!fits)) { return; }
    int const region = Merge ? -1 : items.region[item];
    if (threadIdx.x == 0) {
      auto const total = static_cast<size_type>(groups) + has_marker;
      if (region < 0) {
        base = static_cast<size_type>(
          atomicAdd(out.groups, static_cast<unsigned long long>(total)));
      } else {
        base = static_cast<size_type>(region) * out.region_rows;
        out.partial_groups[region] = total;
      }
      written = 0;
    }
    __syncthreads();
    K* keys_out = region < 0 ? out.keys : out.partial_keys;
    for (int i = threadIdx.x; i <= t.slots; i += blockDim.x) {
      if (!t.occupied(i, has_marker)) { continue; }
      size_type const pos = base + atomicAdd(&written, 1);
      keys_out[pos] = t.key_at(i);
      for (int a = 0; a < accs.count; ++a) {
        auto const v = load_acc(accs.op[a], accs.in[a], smem + accs.smem_offset[a], i);
        store_acc(accs.op[a], accs.in[a], region < 0 ? accs.out[a] : accs.partial_out[a], pos, v);
      }
    }
    __syncthreads();  // the table is read out before the next item empties it
  }
}

/// Smallest b with 2^b >= x (x >= 1).
int ceil_log2(size_type x) {
  int b = 0;
  while ((size_type{1} << b) < x) { ++b; }
  return b;
}

/// The block's shared memory for a table of `slots` slots: the keys, then each accumulator's
/// slots + 1 entries (the last for the all-ones key), each array 16-byte aligned.
template <class K>
std::size_t table_bytes(agg_plan const& plan, int slots, partition_accs* accs) {
  auto const align = [](std::size_t b) { return (b + 15) & ~std::size_t{15}; };
  std::size_t bytes = align(static_cast<std::size_t>(slots) * sizeof(K));
  for (std::size_t a = 0; a < plan.accs.size(); ++a) {
    if (accs != nullptr) { accs->smem_offset[a] = static_cast<std::uint32_t>(bytes); }
    bytes += align(static_cast<std::size_t>(slots + 1) * acc_bytes(plan.accs[a].op, plan.accs[a].in));
  }
  return bytes;
}

/// Work items of one partitioning: a partition of at most item_rows rows is one item writing
/// final groups; a larger one is cut into pieces of about item_rows / split_pieces rows writing
/// partial regions, merged by one item. Items are listed largest first, the order blocks claim
/// them in (longest processing time first: the small ones fill in where large ones end).
struct item_plan {
  std::vector<size_type> begin, end;
  std::vector<int> region;
  std::vector<size_type> merge_begin, merge_end;  // regions of each split partition
  int regions = 0;
};

item_plan plan_items(std::vector<size_type> const& offsets, size_type item_rows) {
  item_plan p;
  for (std::size_t q = 0; q + 1 < offsets.size(); ++q) {
    auto const rows = offsets[q + 1] - offsets[q];
    if (rows == 0) { continue; }
    auto const cuts = ceil_div(rows, item_rows);
    if (cuts == 1) {
      p.begin.push_back(offsets[q]);
      p.end.push_back(offsets[q + 1]);
      p.region.push_back(-1);
      continue;
    }
    auto const pieces = ceil_div(rows, std::max<size_type>(1, item_rows / policy::split_pieces));
    auto const per = ceil_div(rows, pieces);
    p.merge_begin.push_back(p.regions);
    for (size_type c = 0; c < pieces; ++c) {
      auto const b = offsets[q] + c * per;
      if (b >= offsets[q + 1]) { break; }
      p.begin.push_back(b);
      p.end.push_back(std::min(offsets[q + 1], b + per));
      p.region.push_back(p.regions++);
    }
    p.merge_end.push_back(p.regions);
  }
  std::vector<std::size_t> order(p.begin.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return p.end[a] - p.begin[a] > p.end[b] - p.begin[b];
  });
  item_plan sorted = p;
  for (std::size_t i = 0; i < order.size(); ++i) {
    sorted.begin[i] = p.begin[order[i]];
    sorted.end[i] = p.end[order[i]];
    sorted.region[i] = p.region[order[i]];
  }
  return sorted;
}

template <class T>
buffer to_device(std::vector<T> const& v, stream_ref stream, memory_resource* mr) {
  buffer b(std::max<std::size_t>(1, v.size()) * sizeof(T), mr, stream);
  if (!v.empty()) {
    JOINERY_CUDA_TRY(cudaMemcpyAsync(b.data(), v.data(), v.size() * sizeof(T),
                                     cudaMemcpyHostToDevice, to_cuda(stream)));
  }
  return b;
}

}  // namespace

template <class K>
group_parts partition_groupby(K const* keys, size_type n, table_view const& input,
                              agg_plan const& plan, bool transformed, groupby_tuning const& tuning,
                              phase_clock& clock, stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  auto const name = transformed ? std::string("partition_transformed") : std::string("partition");
  JOINERY_EXPECTS(plan.accs.size() <= static_cast<std::size_t>(max_accs),
                  name + " group-by: at most " + std::to_string(max_accs) +
                    " accumulators (distinct sums, counts, minima and maxima), the request needs " +
                    std::to_string(plan.accs.size()) + "; use hash or sort_transformed");
  int const sms = current_sm_count();

  // The largest table (a power of two of slots) the shared memory holds, or the tuning's.
  std::size_t const limit = current_max_block_smem() - 64;  // the kernel's static variables
  int slots = 0;
  for (int sl = policy::max_table_slots; sl >= 64 && slots == 0; sl /= 2) {
    if (table_bytes<K>(plan, sl, nullptr) <= limit) { slots = sl; }
  }
  JOINERY_EXPECTS(slots > 0, name + " group-by: not even a table of 64 groups fits this device's "
                                    "shared memory with these aggregates");
  if (tuning.pgb_slots > 0) {
    JOINERY_EXPECTS((tuning.pgb_slots & (tuning.pgb_slots - 1)) == 0 && tuning.pgb_slots >= 64,
                    name + " group-by: table slots must be a power of two from 64, got " +
                      std::to_string(tuning.pgb_slots));
    slots = std::min(slots, tuning.pgb_slots);
  }
  int const max_groups = slots / 4 * 3;
  partition_accs accs;
  accs.count = static_cast<int>(plan.accs.size());
  std::size_t const smem = table_bytes<K>(plan, slots, &accs);

  auto const columns = aggregated_columns(plan);
  // PGB-TR moves the aggregated columns; beyond max_moved_columns, or PGB-UR, the row ids.
  bool const move_values =
    transformed && columns.size() <= static_cast<std::size_t>(hash_partition_policy::max_moved_columns);
  bool const ids64 = n > static_cast<size_type>(std::numeric_limits<std::uint32_t>::max());
  std::vector<moved_column> moved;
  if (move_values) {
    for (auto c : columns) {
      moved.push_back({input.column(c).data(),
                       static_cast<std::uint32_t>(size_of(input.column(c).type()))});
    }
  } else if (!columns.empty()) {
    moved.push_back({nullptr, ids64 ? 8U : 4U});
  }

  // A partition expects five sixths of the groups its table holds at most; once there is more
  // than one partition there are at least as many as SMs, so that none has to be split (its
  // items' partial groups aggregated again) unless a hot key makes it large.
  int bits = tuning.pgb_bits;
  if (bits < 0) {
    auto const expected = estimate_groups<K>(keys, n, sms, stream, mr);
    bits = ceil_log2(std::max<size_type>(1, ceil_div(expected, max_groups / 6 * 5)));
    if (bits == 0) {
      // One partition is the input itself, and aggregating it in blocks' shared-memory tables
      // is HGB (its dense tier and tier 1, with their one-group and warp-carry loops: 150-290 G
      // rows/s at g <= 2^6 on the H200 against this agent's 33).
      auto t = tuning;
      t.stop_beyond_first_table = false;
      return hash_groupby<K>(keys, n, input, plan, false, t, clock, stream, mr);
    }
    bits = std::min(hash_partition_policy::max_bits, std::max(bits, ceil_log2(sms)));
  }
  JOINERY_EXPECTS(bits >= 0 && bits <= hash_partition_policy::max_bits,
                  name + " group-by: partition bits must be 0 to " +
                    std::to_string(hash_partition_policy::max_bits) + ", got " + std::to_string(bits));
  auto kernel = aggregate_kernel<K, false>;
  auto merge = aggregate_kernel<K, true>;
  allow_dynamic_smem(kernel, smem);
  allow_dynamic_smem(merge, smem);
  constexpr size_type tile_rows =
    static_cast<size_type>(policy::aggregate_threads) * policy::aggregate_items_per_thread;
  // About one item per SM for the whole input: a partition larger than that is cut.
  size_type const item_rows =
    ceil_div(ceil_div(n, static_cast<size_type>(sms)), tile_rows) * tile_rows;
  for (;;) {
    hash_partitions parts_in;
    if (bits > 0) {
      parts_in = hash_partition_rows<K>(keys, n, moved, bits, stream, mr);
      clock.lap("partition");
    } else {
      parts_in.offsets = {0, n};
    }
    auto const* pkeys = bits > 0 ? static_cast<K const*>(parts_in.keys.data()) : keys;
    for (int a = 0; a < accs.count; ++a) {
      auto const& spec = plan.accs[static_cast<std::size_t>(a)];
      accs.op[a] = spec.op;
      accs.in[a] = spec.in;
      if (spec.column < 0) { continue; }
      auto const& col = input.column(spec.column);
      auto const width = static_cast<std::uint32_t>(size_of(col.type()));
      void const* base = col.data();
      if (bits > 0 && move_values) {
        auto const c = std::find(columns.begin(), columns.end(), spec.column) - columns.begin();
        base = parts_in.columns[static_cast<std::size_t>(c)].data();
      }
      accs.src[a] = acc_source{base, width, 0};
    }
    partition_outputs<K> out;
    if (bits > 0 && !move_values && !columns.empty()) {
      if (ids64) {
        out.row_ids64 = static_cast<size_type const*>(parts_in.columns[0].data());
      } else {
        out.row_ids32 = static_cast<std::uint32_t const*>(parts_in.columns[0].data());
      }
    }
    auto const items = plan_items(parts_in.offsets, item_rows);
    auto const finals = static_cast<size_type>(
      std::count(items.region.begin(), items.region.end(), -1) + items.merge_begin.size());
    // A table holds at most max_groups keys and the all-ones key.
    size_type const region_rows = max_groups + 1;
    size_type const capacity = std::min(n, finals * region_rows);
    buffer out_keys(static_cast<std::size_t>(capacity) * sizeof(K), mr, stream);
    std::vector<buffer> out_accs, partial_accs;
    auto const partial_rows = static_cast<size_type>(items.regions) * region_rows;
    buffer partial_keys(static_cast<std::size_t>(std::max<size_type>(1, partial_rows)) * sizeof(K),
                        mr, stream);
    for (int a = 0; a < accs.count; ++a) {
      auto const w = static_cast<std::size_t>(acc_bytes(accs.op[a], accs.in[a]));
      out_accs.emplace_back(static_cast<std::size_t>(std::max<size_type>(1, capacity)) * w, mr,
                            stream);
      partial_accs.emplace_back(static_cast<std::size_t>(std::max<size_type>(1, partial_rows)) * w,
                                mr, stream);
      accs.out[a] = out_accs.back().data();
      accs.partial_out[a] = partial_accs.back().data();
      accs.partial[a] = partial_accs.back().data();
    }
    // The counters: final groups, overflow flag, each region's rows, then the next item of the
    // aggregation and of the merge.
    std::size_t const claims_at = 16 + static_cast<std::size_t>(items.regions) * sizeof(size_type);
    buffer counters(claims_at + 2 * sizeof(unsigned long long), mr, stream);
    JOINERY_CUDA_TRY(cudaMemsetAsync(counters.data(), 0, counters.size(), s));
    auto* counter_bytes = static_cast<unsigned char*>(counters.data());
    out.keys = static_cast<K*>(out_keys.data());
    out.groups = reinterpret_cast<unsigned long long*>(counter_bytes);
    out.overflow = reinterpret_cast<int*>(counter_bytes + sizeof(unsigned long long));
    out.partial_keys = static_cast<K*>(partial_keys.data());
    out.partial_groups = reinterpret_cast<size_type*>(counter_bytes + 16);
    out.region_rows = region_rows;

    auto const begin = to_device(items.begin, stream, mr);
    auto const end = to_device(items.end, stream, mr);
    auto const region = to_device(items.region, stream, mr);
    work_items w;
    w.begin = static_cast<size_type const*>(begin.data());
    w.end = static_cast<size_type const*>(end.data());
    w.region = static_cast<int const*>(region.data());
    w.count = static_cast<size_type>(items.begin.size());
    w.next = reinterpret_cast<unsigned long long*>(counter_bytes + claims_at);
    int const per_sm = resident_blocks_per_sm(kernel, policy::aggregate_threads, smem);
    auto const grid = [&](size_type count) {
      return static_cast<unsigned>(
        std::max<size_type>(1, std::min<size_type>(count, static_cast<size_type>(sms) * per_sm)));
    };
    kernel<<<grid(w.count), policy::aggregate_threads, smem, s>>>(pkeys, w, accs, slots,
                                                                    max_groups, out);
    JOINERY_CHECK_LAUNCH();
    clock.lap("aggregate partitions");
    buffer merge_begin, merge_end;
    if (items.regions > 0) {
      merge_begin = to_device(items.merge_begin, stream, mr);
      merge_end = to_device(items.merge_end, stream, mr);
      work_items m;
      m.begin = static_cast<size_type const*>(merge_begin.data());
      m.end = static_cast<size_type const*>(merge_end.data());
      m.count = static_cast<size_type>(items.merge_begin.size());
      m.next = w.next + 1;
      merge<<<grid(m.count), policy::aggregate_threads, smem, s>>>(
        out.partial_keys, m, accs, slots, max_groups, out);
      JOINERY_CHECK_LAUNCH();
      clock.lap("merge split partitions");
    }
    unsigned long long counts[2] = {};
    JOINERY_CUDA_TRY(cudaMemcpyAsync(counts, counters.data(), sizeof(counts),
                                     cudaMemcpyDeviceToHost, s));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
    if ((counts[1] & 0xffffffffULL) == 0) {
      group_parts parts;
      parts.groups = static_cast<size_type>(counts[0]);
      parts.keys = column(type_to_id_v<K>, parts.groups, mr, stream);
      JOINERY_CUDA_TRY(cudaMemcpyAsync(parts.keys.data(), out_keys.data(),
                                       static_cast<std::size_t>(parts.groups) * sizeof(K),
                                       cudaMemcpyDeviceToDevice, s));
      parts.accs = std::move(out_accs);
      return parts;
    }
    // A partition met more groups than its table holds: partition finer.
    if (bits == hash_partition_policy::max_bits && tuning.stop_beyond_first_table) {
      group_parts none;  // automatic runs the sort group-by instead
      none.incomplete = true;
      return none;
    }
    JOINERY_EXPECTS(bits < hash_partition_policy::max_bits,
                    name + " group-by: a partition of 2^" + std::to_string(hash_partition_policy::max_bits) +
                      " holds more than " + std::to_string(max_groups) +
                      " groups; use hash or sort_transformed for this many groups");
    bits = std::min(hash_partition_policy::max_bits, bits + policy::retry_bits);
  }
}

#define JOINERY_INSTANTIATE_PARTITION_GROUPBY(K)                                                \
  template group_parts partition_groupby<K>(K const*, size_type, table_view const&,             \
                                            agg_plan const&, bool, groupby_tuning const&,       \
                                            phase_clock&, stream_ref, memory_resource*);
JOINERY_INSTANTIATE_PARTITION_GROUPBY(std::int32_t)
JOINERY_INSTANTIATE_PARTITION_GROUPBY(std::int64_t)
JOINERY_INSTANTIATE_PARTITION_GROUPBY(std::uint32_t)
JOINERY_INSTANTIATE_PARTITION_GROUPBY(std::uint64_t)
#undef JOINERY_INSTANTIATE_PARTITION_GROUPBY

}  // namespace joinery::detail::gpu::gb
