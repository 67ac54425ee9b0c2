// GPU hash group-bys.
//
// global_hash (the libcudf-style baseline): a set of (key -> first row) sized for every row; one
// kernel inserts each row's key and updates, with one global atomic per row and aggregate, sparse
// accumulator arrays of |R| entries indexed by the key's first row; the occupied slots then give
// the groups, whose entries are read by index at finalisation.
//
// hash (Wu et al. HGB, Algorithm 1): stage 1 inserts the keys into a set and counts the groups;
// the occupied slots are numbered 0..g-1 (the dense group ids, written back into the slots).
// Stage 2 re-probes each row's key for its id and aggregates into dense arrays: in shared memory
// per block when g accumulators fit (then flushed with one global atomic per group and block),
// else with global atomics. A warp whose 32 rows are all of one group reduces them with
// shuffles first and issues one atomic. The first table holds hash_groupby_policy::initial_groups
// groups; when more turn up, the run restarts with a table for every row (a table sized for |R|
// costs a memset and a scan of 16-32 bytes per row, most of the run when g is small).
//
// Layers: host dispatch (this file's hash_groupby) -> kernels -> per-tile agent code ->
// accumulate.cuh / group_table.cuh device helpers. Instantiated over the four key types.
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/group_table.cuh"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

namespace joinery::detail::gpu::gb {

namespace {

using policy = hash_groupby_policy;

/// Counters of the insert kernels: [0] keys placed (groups), [1] overflow flag.
struct insert_counters {
  unsigned long long placed;
  unsigned long long overflow;
};

/// Adds the warp's placed keys to the counter (one atomic per warp); raises the overflow flag
/// when the set holds more than max_groups. The whole warp calls it.
__device__ __forceinline__ void count_placed(insert_counters* c, bool placed, bool failed,
                                             unsigned long long max_groups) {
  unsigned const mask = __ballot_sync(full_warp, placed);
  bool const any_failed = __any_sync(full_warp, failed);
  if ((threadIdx.x & 31) == 0) {
    if (mask != 0) {
      auto const before = atomicAdd(&c->placed, static_cast<unsigned long long>(__popc(mask)));
      if (before + __popc(mask) > max_groups) { atomicExch(&c->overflow, 1ULL); }
    }
    if (any_failed) { atomicExch(&c->overflow, 1ULL); }
  }
}

/// Whether the block should stop (the table overflowed): read once by thread 0, shared.
__device__ __forceinline__ bool block_sees_overflow(insert_counters const* c) {
  __shared__ int stop;
  __syncthreads();
  if (threadIdx.x == 0) {
    stop = cuda::atomic_ref<unsigned long long const, cuda::thread_scope_device>(c->overflow)
               .load(cuda::memory_order_relaxed) != 0;
  }
  __syncthreads();
  return stop != 0;
}

/// HGB stage 1: every key into the set (value 0 until ids are assigned).
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    hgb_insert_kernel(group_table_ref<K> table, K const* __restrict__ keys, size_type n,
                      unsigned long long max_groups, insert_counters* counters) {
  size_type const tiles = ceil_div(n, policy::tile_items);
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    if (block_sees_overflow(counters)) { return; }
    size_type const base = tile * policy::tile_items + threadIdx.x;
    K k[policy::items_per_thread];
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      size_type const i = base + static_cast<size_type>(j) * policy::threads_per_block;
      if (i < n) { k[j] = keys[i]; }
    }
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      size_type const i = base + static_cast<size_type>(j) * policy::threads_per_block;
      bool placed = false;
      bool failed = false;
      if (i < n) {
        typename group_table_ref<K>::value_type stored{};
        failed = table.insert_or_find(k[j], 0, placed, stored) < 0;
      }
      count_placed(counters, placed, failed, max_groups);
    }
  }
}

/// Numbers the occupied slots 0..g-1 (one atomic per warp): HGB writes the id into the slot,
/// global_hash records the slot's first row at the id (`first_rows`); both write the key.
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    assign_ids_kernel(group_table_ref<K> table, K* __restrict__ keys_out,
                      size_type* __restrict__ first_rows, unsigned long long* counter) {
  using layout = typename group_table_ref<K>::layout;
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  unsigned const lane = threadIdx.x & 31;
  for (size_type i0 = static_cast<size_type>(blockIdx.x) * blockDim.x; i0 < table.num_slots;
       i0 += stride) {
    size_type const i = i0 + threadIdx.x;
    typename layout::slot_type s{};
    bool occupied = false;
    if (i < table.num_slots) {
      s = table.slots[i];
      occupied = layout::value_of(s) != layout::empty_value;
    }
    unsigned const mask = __ballot_sync(full_warp, occupied);
    unsigned long long first = 0;
    if (lane == 0 && mask != 0) { first = atomicAdd(counter, static_cast<unsigned long long>(__popc(mask))); }
    first = __shfl_sync(full_warp, first, 0);
    if (occupied) {
      auto const gid = static_cast<size_type>(first + __popc(mask & ((1U << lane) - 1U)));
      auto const key = layout::key_of(s);
      keys_out[gid] = key;
      if (first_rows != nullptr) {
        first_rows[gid] = static_cast<size_type>(layout::value_of(s));
      } else {
        layout::store(table.slots + i, key, static_cast<typename layout::value_type>(gid));
      }
    }
  }
}

/// One row's update of every accumulator of the batch: a warp whose valid rows are all of one
/// group (uniform) reduces them with shuffles and lane 0 updates once. The whole warp calls it.
template <class AccPtr>
__device__ __forceinline__ void update_rows(acc_batch const& batch, AccPtr acc_ptr,
                                            size_type const (&gid)[policy::items_per_thread],
                                            size_type const (&row)[policy::items_per_thread],
                                            bool const (&valid)[policy::items_per_thread],
                                            bool combine_warp) {
  bool uniform[policy::items_per_thread];
#pragma unroll
  for (int j = 0; j < policy::items_per_thread; ++j) {
    auto const leader = __shfl_sync(full_warp, gid[j], 0);
    uniform[j] = combine_warp && __all_sync(full_warp, valid[j] && gid[j] == leader);
  }
  unsigned const lane = threadIdx.x & 31;
  for (int a = 0; a < batch.count; ++a) {
    acc_op const op = batch.op[a];
    value_kind const in = batch.in[a];
    void* const acc = acc_ptr(a);
    acc_value v[policy::items_per_thread];
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      v[j] = valid[j] ? load_row(batch, a, row[j]) : identity(op, in);
    }
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      if (uniform[j]) {
        auto const r = warp_reduce(op, v[j]);
        if (lane == 0) { atomic_update(op, in, acc, gid[j], r); }
      } else if (valid[j]) {
        atomic_update(op, in, acc, gid[j], v[j]);
      }
    }
  }
}

/// HGB stage 2: ids by re-probing, then dense aggregation (Shared: per-block arrays in shared
/// memory flushed at the end; else global atomics).
template <class K, bool Shared>
__global__ void __launch_bounds__(policy::threads_per_block)
    hgb_aggregate_kernel(group_table_ref<K> table, K const* __restrict__ keys, size_type n,
                         acc_batch batch, size_type groups) {
  extern __shared__ __align__(16) unsigned char smem[];
  if constexpr (Shared) {
    for (int a = 0; a < batch.count; ++a) {
      for (size_type g = threadIdx.x; g < groups; g += blockDim.x) {
        store_identity(batch.op[a], batch.in[a], smem + batch.smem_offset[a], g);
      }
    }
    __syncthreads();
  }
  auto acc_ptr = [&](int a) -> void* {
    if constexpr (Shared) {
      return smem + batch.smem_offset[a];
    } else {
      return batch.data[a];
    }
  };
  size_type const tiles = ceil_div(n, policy::tile_items);
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    size_type const base = tile * policy::tile_items + threadIdx.x;
    K k[policy::items_per_thread];
    size_type row[policy::items_per_thread];
    bool valid[policy::items_per_thread];
    size_type gid[policy::items_per_thread];
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      row[j] = base + static_cast<size_type>(j) * policy::threads_per_block;
      valid[j] = row[j] < n;
      if (valid[j]) { k[j] = __ldg(keys + row[j]); }
    }
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      gid[j] = valid[j] ? static_cast<size_type>(table.find(k[j])) : -1;
    }
    update_rows(batch, acc_ptr, gid, row, valid, true);
  }
  if constexpr (Shared) {
    __syncthreads();
    for (int a = 0; a < batch.count; ++a) {
      for (size_type g = threadIdx.x; g < groups; g += blockDim.x) {
        auto const v = load_acc(batch.op[a], batch.in[a], smem + batch.smem_offset[a], g);
        if (!is_identity(batch.op[a], batch.in[a], v)) {
          atomic_update(batch.op[a], batch.in[a], batch.data[a], g, v);
        }
      }
    }
  }
}

/// global_hash: insert (key, row) and update the sparse accumulators at the key's first row,
/// one atomic per row and aggregate (libcudf's scheme). `counters` counts groups (first batch).
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    global_hash_kernel(group_table_ref<K> table, K const* __restrict__ keys, size_type n,
                       acc_batch batch, insert_counters* counters) {
  size_type const tiles = ceil_div(n, policy::tile_items);
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    size_type const base = tile * policy::tile_items + threadIdx.x;
    K k[policy::items_per_thread];
    size_type row[policy::items_per_thread];
    bool valid[policy::items_per_thread];
    size_type first[policy::items_per_thread];
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      row[j] = base + static_cast<size_type>(j) * policy::threads_per_block;
      valid[j] = row[j] < n;
      if (valid[j]) { k[j] = keys[row[j]]; }
    }
#pragma unroll
    for (int j = 0; j < policy::items_per_thread; ++j) {
      bool placed = false;
      bool failed = false;
      first[j] = -1;
      if (valid[j]) {
        typename group_table_ref<K>::value_type stored{};
        failed = table.insert_or_find(
                     k[j], static_cast<typename group_table_ref<K>::value_type>(row[j]), placed,
                     stored) < 0;
        first[j] = static_cast<size_type>(stored);
      }
      if (counters != nullptr) { count_placed(counters, placed, failed, ~0ULL); }
    }
    update_rows(batch, [&](int a) { return batch.data[a]; }, first, row, valid, false);
  }
}

/// Device memory for a set of `groups` keys, emptied (all ones).
template <class K>
struct group_table {
  buffer slots;
  group_table_ref<K> ref;
  group_table(size_type groups, stream_ref stream, memory_resource* mr) {
    ref.num_slots = std::max<size_type>(policy::slots_per_group * groups, groups + 1);
    auto const bytes = static_cast<std::size_t>(ref.num_slots) *
                       sizeof(typename group_table_ref<K>::slot_type);
    slots = buffer(bytes, mr, stream);
    ref.slots = static_cast<typename group_table_ref<K>::slot_type*>(slots.data());
    JOINERY_CUDA_TRY(cudaMemsetAsync(slots.data(), 0xff, bytes, to_cuda(stream)));
  }
};

int grid_for(size_type n, int sms) {
  return static_cast<int>(std::max<size_type>(
      1, std::min<size_type>(ceil_div(n, policy::tile_items),
                             static_cast<size_type>(sms) * policy::max_blocks_per_sm)));
}

insert_counters read_counters(buffer const& b, stream_ref stream) {
  insert_counters h{};
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, b.data(), sizeof(h), cudaMemcpyDeviceToHost, to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return h;
}

acc_source column_source(table_view const& input, agg_plan const& plan, int a) {
  auto const& c = input.column(plan.accs[static_cast<std::size_t>(a)].column);
  return {c.data(), static_cast<std::uint32_t>(size_of(c.type())), 0};
}

/// The id-assignment kernel over the set: keys (and first rows) of g groups.
template <class K>
void assign_ids(group_table<K>& t, size_type groups, column& keys_out, size_type* first_rows,
                int sms, stream_ref stream, memory_resource* mr) {
  buffer counter(sizeof(unsigned long long), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(counter.data(), 0, sizeof(unsigned long long), to_cuda(stream)));
  int const blocks = grid_stride_blocks(t.ref.num_slots, policy::threads_per_block, sms);
  assign_ids_kernel<K><<<blocks, policy::threads_per_block, 0, to_cuda(stream)>>>(
      t.ref, static_cast<K*>(keys_out.data()), first_rows,
      static_cast<unsigned long long*>(counter.data()));
  JOINERY_CHECK_LAUNCH();
  (void)groups;
}

template <class K>
group_parts run_global_hash(K const* keys, size_type n, table_view const& input,
                            agg_plan const& plan, int sms, phase_clock& clock, stream_ref stream,
                            memory_resource* mr) {
  auto const s = to_cuda(stream);
  group_table<K> table(n, stream, mr);
  // Sparse accumulators: one entry per input row, as libcudf.
  auto sparse = make_accumulators(plan, n, stream, mr);
  auto batches = make_batches(plan, sparse, 0, [&](int a) { return column_source(input, plan, a); });
  buffer counters(sizeof(insert_counters), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(counters.data(), 0, sizeof(insert_counters), s));
  auto* c = static_cast<insert_counters*>(counters.data());
  for (std::size_t b = 0; b < std::max<std::size_t>(batches.size(), 1); ++b) {
    acc_batch const batch = batches.empty() ? acc_batch{} : batches[b];
    global_hash_kernel<K><<<grid_for(n, sms), policy::threads_per_block, 0, s>>>(
        table.ref, keys, n, batch, b == 0 ? c : nullptr);
    JOINERY_CHECK_LAUNCH();
  }
  auto const h = read_counters(counters, stream);
  JOINERY_EXPECTS(h.overflow == 0, "global_hash group-by: the hash table overflowed");
  clock.lap("insert and aggregate");
  group_parts parts;
  parts.groups = static_cast<size_type>(h.placed);
  parts.keys = column(type_to_id_v<K>, parts.groups, mr, stream);
  parts.index = buffer(static_cast<std::size_t>(parts.groups) * sizeof(size_type), mr, stream);
  assign_ids(table, parts.groups, parts.keys, static_cast<size_type*>(parts.index.data()), sms,
             stream, mr);
  parts.accs = std::move(sparse);
  clock.lap("compact groups");
  return parts;
}

template <class K>
group_parts run_hgb(K const* keys, size_type n, table_view const& input, agg_plan const& plan,
                    groupby_tuning const& tuning, int sms, phase_clock& clock, stream_ref stream,
                    memory_resource* mr) {
  auto const s = to_cuda(stream);
  buffer counters(sizeof(insert_counters), mr, stream);
  size_type capacity = std::min<size_type>(
      n, tuning.hgb_initial_groups > 0 ? tuning.hgb_initial_groups : policy::initial_groups);
  // Stage 1: the set, restarted once with room for every row if the first one overflows.
  std::unique_ptr<group_table<K>> table;
  insert_counters h{};
  for (;;) {
    table = std::make_unique<group_table<K>>(capacity, stream, mr);
    JOINERY_CUDA_TRY(cudaMemsetAsync(counters.data(), 0, sizeof(insert_counters), s));
    hgb_insert_kernel<K><<<grid_for(n, sms), policy::threads_per_block, 0, s>>>(
        table->ref, keys, n, static_cast<unsigned long long>(capacity),
        static_cast<insert_counters*>(counters.data()));
    JOINERY_CHECK_LAUNCH();
    h = read_counters(counters, stream);
    if (h.overflow == 0) { break; }
    JOINERY_EXPECTS(capacity < n, "hash group-by: the hash table for every row overflowed");
    capacity = n;
  }
  group_parts parts;
  parts.groups = static_cast<size_type>(h.placed);
  parts.keys = column(type_to_id_v<K>, parts.groups, mr, stream);
  assign_ids(*table, parts.groups, parts.keys, nullptr, sms, stream, mr);
  clock.lap("assign group ids");

  // Stage 2: dense aggregation.
  parts.accs = make_accumulators(plan, parts.groups, stream, mr);
  auto const batches =
      make_batches(plan, parts.accs, parts.groups, [&](int a) { return column_source(input, plan, a); });
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int optin = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  std::size_t const shared_limit =
      tuning.hgb_shared_bytes >= 0
        ? std::min<std::size_t>(static_cast<std::size_t>(tuning.hgb_shared_bytes),
                                static_cast<std::size_t>(optin))
        : std::min<std::size_t>(policy::max_shared_bytes, static_cast<std::size_t>(optin));
  for (std::size_t b = 0; b < batches.size(); ++b) {
    auto const& batch = batches[b];
    auto const need = batch_shared_bytes(plan, b * max_batch_accs,
                                         static_cast<std::size_t>(batch.count), parts.groups);
    if (need <= shared_limit) {
      auto kernel = hgb_aggregate_kernel<K, true>;
      JOINERY_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(need)));
      // As many blocks as fit at once: each flushes its g groups at the end.
      int const per_sm = resident_blocks_per_sm(kernel, policy::threads_per_block, need);
      int const blocks = static_cast<int>(std::max<size_type>(
          1, std::min<size_type>(ceil_div(n, policy::tile_items),
                                 static_cast<size_type>(sms) * per_sm)));
      kernel<<<blocks, policy::threads_per_block, need, s>>>(table->ref, keys, n, batch,
                                                             parts.groups);
    } else {
      hgb_aggregate_kernel<K, false><<<grid_for(n, sms), policy::threads_per_block, 0, s>>>(
          table->ref, keys, n, batch, parts.groups);
    }
    JOINERY_CHECK_LAUNCH();
  }
  clock.lap("aggregate");
  return parts;
}

}  // namespace

template <class K>
group_parts hash_groupby(K const* keys, size_type n, table_view const& input,
                         agg_plan const& plan, bool baseline, groupby_tuning const& tuning,
                         phase_clock& clock, stream_ref stream, memory_resource* mr) {
  if constexpr (sizeof(K) == 4) {
    // Slot values (first rows, group ids) are 32-bit with all ones marking an empty slot.
    JOINERY_EXPECTS(n < static_cast<size_type>(0xffffffffLL),
                    std::string(baseline ? "global_hash" : "hash") +
                      " group-by with 4-byte keys takes fewer than 2^32 - 1 rows, got " +
                      std::to_string(n) + "; use the sort algorithm");
  }
  int const sms = current_sm_count();
  return baseline ? run_global_hash<K>(keys, n, input, plan, sms, clock, stream, mr)
                  : run_hgb<K>(keys, n, input, plan, tuning, sms, clock, stream, mr);
}

#define JOINERY_INSTANTIATE_HASH_GROUPBY(K)                                                    \
  template group_parts hash_groupby<K>(K const*, size_type, table_view const&, agg_plan const&, \
                                       bool, groupby_tuning const&, phase_clock&, stream_ref,   \
                                       memory_resource*);
JOINERY_INSTANTIATE_HASH_GROUPBY(std::int32_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::int64_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::uint32_t)
JOINERY_INSTANTIATE_HASH_GROUPBY(std::uint64_t)
#undef JOINERY_INSTANTIATE_HASH_GROUPBY

}  // namespace joinery::detail::gpu::gb
