// GPU sort group-bys (Wu et al. 4.1.3 and 4.4; He et al.'s sort-based grouping).
//
// sort (SGB-UR): CUB radix sort of (key, row id) pairs, then the aggregation gathers each value
// through the sorted row ids (random reads into the untransformed relation).
// sort_transformed (SGB-TR): the aggregated columns are sorted along with the keys, packed two
// 4-byte columns to a 64-bit word (one (key, word) sort per word), so that the aggregation reads
// them sequentially.
// sort_dictionary (SGB-DE-TR): SGB-TR over dictionary codes instead of the keys. The distinct
// keys go into a hash set (sized for a guess of g, grown when it overflows), are sorted (g keys
// only) and each gets its rank as code, so code order is key order; every row's key is then
// replaced by its 32-bit code and SGB-TR's sorts compare only the codes' ceil(log2 g) low bits:
// fewer radix passes than the key's full width (a quarter of them for 8-byte keys at g <= 2^16)
// and 4-byte sort keys to move, for one build and one probe of the set. Without aggregates the
// sorted dictionary is the whole answer.
//
// All then reduce the runs of equal sort keys: the sorted rows are cut into contiguous ranges, one
// per warp; a first kernel counts the group heads of each range (their exclusive scan gives
// each range its first group id, and the total g); the second walks each range 32 rows at a
// time with a segmented warp scan, writes each group's key at its head and updates each group
// once per warp (a group crossing 32-row steps is carried in shared memory), with an atomic only
// because a group may span ranges. Groups come out sorted by key (the dictionary's run r is the
// group of the r-th smallest key, whose key is the sorted dictionary's entry r).
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/group_table.cuh"
#include "primitives/sort_dispatch.hpp"

#include <cub/device/device_scan.cuh>
#include <cuda/atomic>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace joinery::detail::gpu::gb {

namespace {

using policy = sort_groupby_policy;

__device__ __forceinline__ unsigned lanemask_le(unsigned lane) { return 0xffffffffU >> (31 - lane); }

/// The rows of range r: [r * range_rows, min(n, (r + 1) * range_rows)).
struct ranges {
  size_type range_rows = 0;
  size_type count = 0;
};

/// heads[r] = number of rows of range r whose key differs from the previous row's (row 0 counts).
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    count_heads_kernel(K const* __restrict__ keys, size_type n, ranges rg,
                       size_type* __restrict__ heads) {
  unsigned const lane = threadIdx.x & 31;
  size_type const warps = static_cast<size_type>(gridDim.x) * policy::warps_per_block;
  for (size_type r = static_cast<size_type>(blockIdx.x) * policy::warps_per_block + threadIdx.x / 32;
       r < rg.count; r += warps) {
    size_type const begin = r * rg.range_rows;
    size_type const end = std::min(n, begin + rg.range_rows);
    size_type total = 0;
    for (size_type s = begin; s < end; s += 32) {
      size_type const i = s + lane;
      bool const valid = i < end;
      K const k = valid ? keys[i] : K{};
      K prev = __shfl_up_sync(full_warp, k, 1);
      if (lane == 0 && i > 0) { prev = keys[i - 1]; }
      total += __popc(__ballot_sync(full_warp, valid && (i == 0 || k != prev)));
    }
    if (lane == 0) { heads[r] = total; }
  }
}

/// The segmented aggregation of sorted rows (see the file comment). heads_before[r]: groups that
/// start before range r. keys_out: written at each group head (nullptr: skip, later batches).
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    sorted_aggregate_kernel(K const* __restrict__ keys, size_type n, ranges rg,
                            size_type const* __restrict__ heads_before, acc_batch batch,
                            K* __restrict__ keys_out) {
  __shared__ acc_value carry[policy::warps_per_block][max_batch_accs];
  unsigned const lane = threadIdx.x & 31;
  int const w = static_cast<int>(threadIdx.x / 32);
  size_type const warps = static_cast<size_type>(gridDim.x) * policy::warps_per_block;
  for (size_type r = static_cast<size_type>(blockIdx.x) * policy::warps_per_block + w;
       r < rg.count; r += warps) {
    size_type const begin = r * rg.range_rows;
    size_type const end = std::min(n, begin + rg.range_rows);
    size_type base = heads_before[r];  // groups that start before row s
    size_type carry_gid = -1;          // the group whose partial sits in carry[w], or -1
    for (size_type s = begin; s < end; s += 32) {
      size_type const i = s + lane;
      bool const valid = i < end;
      K const k = valid ? keys[i] : K{};
      K prev = __shfl_up_sync(full_warp, k, 1);
      if (lane == 0 && i > 0) { prev = keys[i - 1]; }
      bool const head = valid && (i == 0 || k != prev);
      unsigned const heads = __ballot_sync(full_warp, head);
      // Rows before the step's first head continue group base - 1; invalid lanes get -2.
      size_type const gid = valid ? base + __popc(heads & lanemask_le(lane)) - 1 : -2;
      base += __popc(heads);
      if (head && keys_out != nullptr) { keys_out[gid] = k; }
      int const last = static_cast<int>(std::min<size_type>(31, end - s - 1));
      bool const more = s + 32 < end;
      size_type const gid_next = __shfl_down_sync(full_warp, gid, 1);
      bool const run_end = valid && (static_cast<int>(lane) == last || gid_next != gid);
      size_type const gid0 = __shfl_sync(full_warp, gid, 0);
      if (carry_gid >= 0 && carry_gid != gid0) {
        // The carried group ended exactly at the previous step's end.
        if (lane == 0) {
          for (int a = 0; a < batch.count; ++a) {
            atomic_update(batch.op[a], batch.in[a], batch.data[a], carry_gid, carry[w][a]);
          }
        }
        carry_gid = -1;
      }
      for (int a = 0; a < batch.count; ++a) {
        acc_op const op = batch.op[a];
        value_kind const in = batch.in[a];
        acc_value v = valid ? load_row(batch, a, i) : identity(op, in);
#pragma unroll
        for (unsigned d = 1; d < 32; d <<= 1) {
          auto const o = shfl_up(v, d);
          auto const og = __shfl_up_sync(full_warp, gid, d);
          if (lane >= d && og == gid) { v = combine(op, o, v); }
        }
        acc_value const c = carry_gid >= 0 ? carry[w][a] : identity(op, in);
        __syncwarp();  // every lane has read the old carry before it is replaced
        if (run_end) {
          if (gid == carry_gid) { v = combine(op, c, v); }
          if (static_cast<int>(lane) == last && more) {
            carry[w][a] = v;
          } else {
            atomic_update(op, in, batch.data[a], gid, v);
          }
        }
      }
      __syncwarp();  // the new carry is visible to the next step
      carry_gid = more ? __shfl_sync(full_warp, gid, last) : -1;
    }
  }
}

/// ids[i] = i (32-bit row ids for the untransformed sort).
__global__ void iota32_kernel(std::uint32_t* __restrict__ ids, size_type n) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    ids[i] = static_cast<std::uint32_t>(i);
  }
}

/// out[i] = lo[i] | hi[i] << 32: two 4-byte columns in one word that sorts along with the keys.
__global__ void pack_kernel(std::uint32_t const* __restrict__ lo, std::uint32_t const* __restrict__ hi,
                            std::uint64_t* __restrict__ out, size_type n) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = static_cast<std::uint64_t>(lo[i]) | (static_cast<std::uint64_t>(hi[i]) << 32);
  }
}

/// One word of transformed values: one 8-byte column, one 4-byte column, or two 4-byte ones.
struct value_word {
  std::vector<size_type> columns;
  std::uint32_t bytes = 0;
};

constexpr int dictionary_tile = policy::threads_per_block * policy::dictionary_items_per_thread;

/// This thread's keys of the dictionary tile at `first` (striped), all loads issued before any
/// is used.
template <class K, int N = policy::dictionary_items_per_thread>
__device__ __forceinline__ void load_dictionary_tile(K const* __restrict__ keys, size_type n,
                                                     size_type first, K (&k)[N], bool (&valid)[N]) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    size_type const i = first + threadIdx.x + static_cast<size_type>(j) * policy::threads_per_block;
    valid[j] = i < n;
    k[j] = valid[j] ? keys[i] : K{};
  }
}

/// sort_dictionary's build: every row's key into the set; stops once the set holds more than
/// max_groups keys (the host then grows it). Lanes of a warp holding one key insert it once.
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    dictionary_insert_kernel(group_table_ref<K> table, K const* __restrict__ keys, size_type n,
                             unsigned long long max_groups, insert_counters* counters) {
  constexpr int ipt = policy::dictionary_items_per_thread;
  unsigned const lane = threadIdx.x & 31;
  size_type const stride = static_cast<size_type>(gridDim.x) * dictionary_tile;
  for (size_type first = static_cast<size_type>(blockIdx.x) * dictionary_tile; first < n;
       first += stride) {
    // Every tile: a table past max_groups fills up fast, and a full one probes every slot.
    if (warp_sees_overflow(counters)) { return; }
    K k[ipt];
    bool valid[ipt];
    load_dictionary_tile(keys, n, first, k, valid);
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      // One lane per distinct key of the warp inserts it: a hot key costs one probe per warp.
      unsigned const peers = __match_any_sync(full_warp, k[j]) & __ballot_sync(full_warp, valid[j]);
      bool const leader = valid[j] && __ffs(static_cast<int>(peers)) - 1 == static_cast<int>(lane);
      bool placed = false;
      bool failed = false;
      if (leader) {
        typename group_table_ref<K>::value_type stored{};
        failed = table.insert_or_find(k[j], 0, placed, stored, counters) < 0;
      }
      count_placed(counters, placed, failed, max_groups);
    }
  }
}

/// The dictionary in key order: the r-th smallest key, sorted_keys[r], sits in slot
/// sorted_slots[r] and gets r as its value (its code).
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    dictionary_rank_kernel(group_table_ref<K> table, K const* __restrict__ sorted_keys,
                           std::uint64_t const* __restrict__ sorted_slots, size_type groups) {
  using layout = typename group_table_ref<K>::layout;
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type r = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; r < groups;
       r += stride) {
    layout::store(table.slots + sorted_slots[r], sorted_keys[r],
                  static_cast<typename layout::value_type>(r));
  }
}

/// codes[i] = the code (key rank) of row i's key, which the set holds.
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    dictionary_encode_kernel(group_table_ref<K> table, K const* __restrict__ keys, size_type n,
                             std::uint32_t* __restrict__ codes) {
  constexpr int ipt = policy::dictionary_items_per_thread;
  size_type const stride = static_cast<size_type>(gridDim.x) * dictionary_tile;
  for (size_type first = static_cast<size_type>(blockIdx.x) * dictionary_tile; first < n;
       first += stride) {
    K k[ipt];
    bool valid[ipt];
    load_dictionary_tile(keys, n, first, k, valid);
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      if (valid[j]) {
        codes[first + threadIdx.x + static_cast<size_type>(j) * policy::threads_per_block] =
            static_cast<std::uint32_t>(table.find(k[j]));
      }
    }
  }
}

/// SGB-TR's transformed relation: the aggregated `columns` packed into words (8-byte columns
/// alone, 4-byte columns two to a word), each word sorted along with the sort keys on their bits
/// [0, end_bit). `skeys` gets the sorted keys (every sort writes the same stable order again; no
/// columns: the keys are sorted alone) and source_of_column[c] where columns[c]'s sorted values
/// lie, in the returned buffers.
template <class S>
std::vector<buffer> sort_transformed_values(S const* keys, S* skeys, size_type n, int end_bit,
                                            table_view const& input,
                                            std::vector<size_type> const& columns,
                                            std::vector<acc_source>& source_of_column, int sms,
                                            stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  int const flat_blocks = grid_stride_blocks(n, policy::threads_per_block, sms);
  // Greedy packing: 8-byte columns alone, 4-byte columns two to a word.
  std::vector<value_word> words;
  int open4 = -1;
  for (auto c : columns) {
    auto const w = static_cast<std::uint32_t>(size_of(input.column(c).type()));
    if (w == 4 && open4 >= 0) {
      words[static_cast<std::size_t>(open4)].columns.push_back(c);
      words[static_cast<std::size_t>(open4)].bytes = 8;
      open4 = -1;
      continue;
    }
    words.push_back({{c}, w});
    if (w == 4) { open4 = static_cast<int>(words.size() - 1); }
  }
  if (words.empty()) { radix_sort_keys<S>(keys, skeys, n, stream, mr, 0, end_bit); }
  std::vector<buffer> sorted_values;
  for (auto const& word : words) {
    sorted_values.emplace_back(static_cast<std::size_t>(n) * word.bytes, mr, stream);
    void* out = sorted_values.back().data();
    if (word.columns.size() == 2) {
      buffer packed(static_cast<std::size_t>(n) * 8, mr, stream);
      pack_kernel<<<flat_blocks, policy::threads_per_block, 0, s>>>(
          static_cast<std::uint32_t const*>(input.column(word.columns[0]).data()),
          static_cast<std::uint32_t const*>(input.column(word.columns[1]).data()),
          static_cast<std::uint64_t*>(packed.data()), n);
      JOINERY_CHECK_LAUNCH();
      radix_sort_pairs<S, std::uint64_t>(keys, skeys,
                                         static_cast<std::uint64_t const*>(packed.data()),
                                         static_cast<std::uint64_t*>(out), n, stream, mr, 0,
                                         end_bit);
    } else if (word.bytes == 4) {
      radix_sort_pairs<S, std::uint32_t>(
          keys, skeys, static_cast<std::uint32_t const*>(input.column(word.columns[0]).data()),
          static_cast<std::uint32_t*>(out), n, stream, mr, 0, end_bit);
    } else {
      radix_sort_pairs<S, std::uint64_t>(
          keys, skeys, static_cast<std::uint64_t const*>(input.column(word.columns[0]).data()),
          static_cast<std::uint64_t*>(out), n, stream, mr, 0, end_bit);
    }
    for (std::size_t j = 0; j < word.columns.size(); ++j) {
      auto const c = static_cast<std::size_t>(
          std::find(columns.begin(), columns.end(), word.columns[j]) - columns.begin());
      source_of_column[c] = {out, word.bytes, static_cast<std::uint32_t>(4 * j)};
    }
  }
  return sorted_values;
}

/// The sorted rows cut into ranges, about one per resident warp, with the groups that start
/// before each range (the exclusive scan of the ranges' head counts) and in all.
struct sorted_runs {
  ranges rg;
  buffer heads_before;  ///< rg.count + 1 entries, the last one the number of groups
  size_type groups = 0;
  int blocks = 0;  ///< of the range kernels
};

template <class S>
sorted_runs count_runs(S const* skeys, size_type n, int sms, stream_ref stream,
                       memory_resource* mr) {
  auto const s = to_cuda(stream);
  sorted_runs runs;
  auto& rg = runs.rg;
  size_type const want = static_cast<size_type>(sms) * policy::warps_per_sm;
  rg.range_rows = std::max(policy::min_range_rows, ceil_div(ceil_div(n, want), 32) * 32);
  rg.count = ceil_div(n, rg.range_rows);
  runs.blocks = static_cast<int>(ceil_div(rg.count, policy::warps_per_block));
  runs.heads_before =
      buffer(static_cast<std::size_t>(rg.count + 1) * sizeof(size_type), mr, stream);
  auto* d_heads = static_cast<size_type*>(runs.heads_before.data());
  count_heads_kernel<S><<<runs.blocks, policy::threads_per_block, 0, s>>>(skeys, n, rg, d_heads);
  JOINERY_CHECK_LAUNCH();
  JOINERY_CUDA_TRY(cudaMemsetAsync(d_heads + rg.count, 0, sizeof(size_type), s));
  std::size_t temp_bytes = 0;
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d_heads, rg.count + 1, s));
  {
    buffer temp(scratch_bytes(temp_bytes), mr, stream);
    JOINERY_CUDA_TRY(
        cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, d_heads, rg.count + 1, s));
  }
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&runs.groups, d_heads + rg.count, sizeof(runs.groups),
                                   cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  return runs;
}

/// Aggregates the sorted rows into accumulators for runs.groups groups (set in `parts`, whose
/// keys the caller provides); `keys_out`, when given, gets each group's sort key.
/// source_of_column[c]: where columns[c]'s values lie, read through ids' row ids when it has them.
template <class S>
void aggregate_runs(S const* skeys, size_type n, sorted_runs const& runs, agg_plan const& plan,
                    std::vector<size_type> const& columns,
                    std::vector<acc_source> const& source_of_column, acc_batch const& ids,
                    S* keys_out, group_parts& parts, stream_ref stream, memory_resource* mr) {
  parts.groups = runs.groups;
  parts.sorted = true;
  parts.accs = make_accumulators(plan, runs.groups, stream, mr);
  auto batches = make_batches(plan, parts.accs, 0, [&](int a) {
    auto const col = plan.accs[static_cast<std::size_t>(a)].column;
    return source_of_column[static_cast<std::size_t>(
        std::find(columns.begin(), columns.end(), col) - columns.begin())];
  });
  if (batches.empty() && keys_out != nullptr) { batches.emplace_back(); }  // the keys alone
  for (std::size_t b = 0; b < batches.size(); ++b) {
    auto batch = batches[b];
    batch.row_ids32 = ids.row_ids32;
    batch.row_ids64 = ids.row_ids64;
    sorted_aggregate_kernel<S><<<runs.blocks, policy::threads_per_block, 0, to_cuda(stream)>>>(
        skeys, n, runs.rg, static_cast<size_type const*>(runs.heads_before.data()), batch,
        b == 0 ? keys_out : nullptr);
    JOINERY_CHECK_LAUNCH();
  }
}

}  // namespace

template <class K>
group_parts sort_groupby(K const* keys, size_type n, table_view const& input,
                         agg_plan const& plan, bool transformed, phase_clock& clock,
                         stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  int const sms = current_sm_count();
  auto const columns = aggregated_columns(plan);
  buffer sorted_keys(static_cast<std::size_t>(n) * sizeof(K), mr, stream);
  auto* skeys = static_cast<K*>(sorted_keys.data());
  std::vector<buffer> sorted_values;            // TR: one per word; UR: the row ids
  std::vector<acc_source> source_of_column(columns.size());
  acc_batch ids{};                               // UR: the row ids every batch reads through
  if (!transformed) {
    if (columns.empty()) {
      radix_sort_keys<K>(keys, skeys, n, stream, mr);
    } else if (n <= static_cast<size_type>(std::numeric_limits<std::uint32_t>::max())) {
      int const flat_blocks = grid_stride_blocks(n, policy::threads_per_block, sms);
      buffer iota(static_cast<std::size_t>(n) * sizeof(std::uint32_t), mr, stream);
      iota32_kernel<<<flat_blocks, policy::threads_per_block, 0, s>>>(
          static_cast<std::uint32_t*>(iota.data()), n);
      JOINERY_CHECK_LAUNCH();
      sorted_values.emplace_back(static_cast<std::size_t>(n) * sizeof(std::uint32_t), mr, stream);
      radix_sort_pairs<K, std::uint32_t>(keys, skeys, static_cast<std::uint32_t const*>(iota.data()),
                                         static_cast<std::uint32_t*>(sorted_values.back().data()),
                                         n, stream, mr);
      ids.row_ids32 = static_cast<std::uint32_t const*>(sorted_values.back().data());
    } else {
      sorted_values.emplace_back(static_cast<std::size_t>(n) * sizeof(std::int64_t), mr, stream);
      radix_sort_row_ids<K>(keys, skeys, static_cast<std::int64_t*>(sorted_values.back().data()),
                            n, stream, mr);
      ids.row_ids64 = static_cast<std::int64_t const*>(sorted_values.back().data());
    }
    for (std::size_t c = 0; c < columns.size(); ++c) {
      auto const& col = input.column(columns[c]);
      source_of_column[c] = {col.data(), static_cast<std::uint32_t>(size_of(col.type())), 0};
    }
  } else {
    sorted_values = sort_transformed_values<K>(keys, skeys, n, static_cast<int>(8 * sizeof(K)),
                                               input, columns, source_of_column, sms, stream, mr);
  }
  clock.lap("sort");

  auto const runs = count_runs<K>(skeys, n, sms, stream, mr);
  group_parts parts;
  parts.keys = column(type_to_id_v<K>, runs.groups, mr, stream);
  aggregate_runs<K>(skeys, n, runs, plan, columns, source_of_column, ids,
                    static_cast<K*>(parts.keys.data()), parts, stream, mr);
  clock.lap("aggregate");
  return parts;
}

template <class K>
group_parts dictionary_groupby(K const* keys, size_type n, table_view const& input,
                               agg_plan const& plan, groupby_tuning const& tuning,
                               phase_clock& clock, stream_ref stream, memory_resource* mr) {
  if constexpr (sizeof(K) == 4) {
    // The set's 4-byte-key slots hold 32-bit values, all ones marking an empty slot.
    JOINERY_EXPECTS(n < static_cast<size_type>(0xffffffffLL),
                    "sort_dictionary group-by with 4-byte keys takes fewer than 2^32 - 1 rows, "
                    "got " + std::to_string(n) + "; use sort_transformed");
  }
  auto const s = to_cuda(stream);
  int const sms = current_sm_count();
  int const tile_blocks = grid_stride_blocks(n, dictionary_tile, sms);

  // 1. The distinct keys into a set sized for a first guess of g, grown while it overflows (a
  //    pass that overflows stops early: its warps watch the flag).
  size_type capacity = std::min<size_type>(
      n, tuning.dictionary_initial_groups > 0
             ? tuning.dictionary_initial_groups
             : std::max(policy::dictionary_initial_groups,
                        2 * estimate_groups<K>(keys, n, sms, stream, mr)));
  buffer counters(sizeof(insert_counters), mr, stream);
  auto* c = static_cast<insert_counters*>(counters.data());
  std::optional<group_table<K>> table;
  size_type groups = 0;
  for (;;) {
    table.emplace(capacity, stream, mr);
    JOINERY_CUDA_TRY(cudaMemsetAsync(c, 0, sizeof(insert_counters), s));
    dictionary_insert_kernel<K><<<tile_blocks, policy::threads_per_block, 0, s>>>(
        table->ref, keys, n, static_cast<unsigned long long>(capacity), c);
    JOINERY_CHECK_LAUNCH();
    auto const h = read_counters(counters, stream);
    if (h.overflow == 0) {
      groups = static_cast<size_type>(h.placed);
      break;
    }
    JOINERY_EXPECTS(capacity < n, "sort_dictionary group-by: the dictionary table for every row "
                                  "overflowed");
    capacity = std::min(n, capacity * policy::dictionary_growth);
  }
  JOINERY_EXPECTS(groups <= (size_type{1} << 32),
                  "sort_dictionary group-by: " + std::to_string(groups) +
                    " distinct keys do not fit its 32-bit codes; use sort_transformed");
  clock.lap("build dictionary");

  // 2. The codes: the occupied slots numbered, the g keys sorted with their slots, each key's
  //    rank stored in its slot; then every row's key looked up. The sorted keys are the output's
  //    keys (the r-th run of sorted codes is the group of code r).
  column dictionary(type_to_id_v<K>, groups, mr, stream);
  {
    column unsorted(type_to_id_v<K>, groups, mr, stream);
    buffer slots(static_cast<std::size_t>(groups) * sizeof(std::uint64_t), mr, stream);
    buffer sorted_slots(static_cast<std::size_t>(groups) * sizeof(std::uint64_t), mr, stream);
    assign_ids(*table, unsorted, static_cast<size_type*>(slots.data()), true, sms, stream, mr);
    radix_sort_pairs<K, std::uint64_t>(
        static_cast<K const*>(unsorted.data()), static_cast<K*>(dictionary.data()),
        static_cast<std::uint64_t const*>(slots.data()),
        static_cast<std::uint64_t*>(sorted_slots.data()), groups, stream, mr);
    int const rank_blocks = grid_stride_blocks(groups, policy::threads_per_block, sms);
    dictionary_rank_kernel<K><<<rank_blocks, policy::threads_per_block, 0, s>>>(
        table->ref, static_cast<K const*>(dictionary.data()),
        static_cast<std::uint64_t const*>(sorted_slots.data()), groups);
    JOINERY_CHECK_LAUNCH();
  }
  group_parts parts;
  parts.groups = groups;
  parts.sorted = true;
  buffer codes(static_cast<std::size_t>(n) * sizeof(std::uint32_t), mr, stream);
  dictionary_encode_kernel<K><<<tile_blocks, policy::threads_per_block, 0, s>>>(
      table->ref, keys, n, static_cast<std::uint32_t*>(codes.data()));
  JOINERY_CHECK_LAUNCH();
  table.reset();
  clock.lap("encode");

  // 3. SGB-TR's sorts over the codes' ceil(log2 g) low bits (at least one), then its reduction.
  int bits = 1;
  while ((size_type{1} << bits) < groups) { ++bits; }
  auto const columns = aggregated_columns(plan);
  std::vector<acc_source> source_of_column(columns.size());
  buffer sorted_codes(static_cast<std::size_t>(n) * sizeof(std::uint32_t), mr, stream);
  auto* scodes = static_cast<std::uint32_t*>(sorted_codes.data());
  auto const sorted_values = sort_transformed_values<std::uint32_t>(
      static_cast<std::uint32_t const*>(codes.data()), scodes, n, bits, input, columns,
      source_of_column, sms, stream, mr);
  codes = buffer();
  clock.lap("sort");

  auto const runs = count_runs<std::uint32_t>(scodes, n, sms, stream, mr);
  JOINERY_EXPECTS(runs.groups == groups,
                  "sort_dictionary group-by: internal error: the sorted codes form " +
                    std::to_string(runs.groups) + " runs for " + std::to_string(groups) +
                    " distinct keys");
  parts.keys = std::move(dictionary);
  aggregate_runs<std::uint32_t>(scodes, n, runs, plan, columns, source_of_column, acc_batch{},
                                nullptr, parts, stream, mr);
  clock.lap("aggregate");
  return parts;
}

#define JOINERY_INSTANTIATE_SORT_GROUPBY(K)                                                    \
  template group_parts sort_groupby<K>(K const*, size_type, table_view const&, agg_plan const&, \
                                       bool, phase_clock&, stream_ref, memory_resource*);      \
  template group_parts dictionary_groupby<K>(K const*, size_type, table_view const&,           \
                                             agg_plan const&, groupby_tuning const&,           \
                                             phase_clock&, stream_ref, memory_resource*);
JOINERY_INSTANTIATE_SORT_GROUPBY(std::int32_t)
JOINERY_INSTANTIATE_SORT_GROUPBY(std::int64_t)
JOINERY_INSTANTIATE_SORT_GROUPBY(std::uint32_t)
JOINERY_INSTANTIATE_SORT_GROUPBY(std::uint64_t)
#undef JOINERY_INSTANTIATE_SORT_GROUPBY

}  // namespace joinery::detail::gpu::gb
