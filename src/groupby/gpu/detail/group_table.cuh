#pragma once
// Internal: the global hash *set* of the GPU hash group-bys (one slot per distinct key, unlike
// the join multimap of primitives/detail/open_addressing_table.cuh). Linear probing from the
// murmur hash's high bits (fast range, no modulo); a slot holds the key and a value: the row
// that inserted the key (global_hash) or, once the insert phase is over, the key's dense group
// id (hash). Emptiness is marked in the value (all ones), so every key value is storable.
//
//   4-byte keys: one 64-bit word, value in the high 32 bits (values below 2^32 - 1), claimed and
//     published by one 64-bit atomicCAS.
//   8-byte keys: 16 bytes {key, value}, claimed by one 128-bit atomicCAS (sm_90+). Older
//     devices claim the value word with a 64-bit CAS (marking it busy), store the key, then
//     publish the value; a prober that meets a busy slot waits for it.
//
// Concurrency: insert_or_find may run concurrently with itself (a slot goes from empty to full
// once; two inserts of one key meet in one slot). find() runs in a later kernel only, so it may
// read through the non-coherent read-only cache.
//
// Below the device view: the insert kernels' counters (groups placed, overflow), the device
// memory that owns a set, and the numbering of its occupied slots into dense groups, shared by
// the hash group-bys and the dictionary of sort_dictionary (sort_groupby.cu).
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "primitives/detail/hash.cuh"

#include <joinery/types.hpp>

#include <cuda/atomic>
#include <cuda/std/type_traits>

#include <algorithm>

namespace joinery::detail::gpu::gb {

template <class K>
struct group_slots;

template <class K>
  requires(sizeof(K) == 4)
struct group_slots<K> {
  using value_type = std::uint32_t;
  using slot_type = unsigned long long;
  static constexpr value_type empty_value = 0xffffffffU;
  static constexpr slot_type empty_slot = ~0ULL;

  __device__ static slot_type make(K k, value_type v) noexcept {
    return (static_cast<slot_type>(v) << 32) | key_bits(k);
  }
  __device__ static value_type value_of(slot_type s) noexcept {
    return static_cast<value_type>(s >> 32);
  }
  __device__ static bool holds(slot_type s, K k) noexcept {
    return static_cast<std::uint32_t>(s) == static_cast<std::uint32_t>(key_bits(k));
  }
  __device__ static K key_of(slot_type s) noexcept {
    return static_cast<K>(static_cast<std::uint32_t>(s));
  }
  /// A look that may be stale only towards "empty" (the CAS then tells the truth).
  __device__ static slot_type peek(slot_type* p) noexcept {
    return cuda::atomic_ref<slot_type, cuda::thread_scope_device>(*p).load(
        cuda::memory_order_relaxed);
  }
  /// Tries to publish (k, v) into an empty slot; returns the slot's content before the CAS.
  __device__ static slot_type claim(slot_type* p, K k, value_type v) noexcept {
    return atomicCAS(p, empty_slot, make(k, v));
  }
  __device__ static slot_type read_immutable(slot_type const* p) noexcept { return __ldg(p); }
  __device__ static void store(slot_type* p, K k, value_type v) noexcept { *p = make(k, v); }
};

template <class K>
  requires(sizeof(K) == 8)
struct group_slots<K> {
  using value_type = unsigned long long;
  struct alignas(16) slot_type {
    unsigned long long key;
    unsigned long long value;
  };
  static constexpr value_type empty_value = ~0ULL;
  static constexpr value_type busy_value = ~0ULL - 1;  // pre-sm_90 claim in progress

  __device__ static slot_type make(K k, value_type v) noexcept {
    return {static_cast<unsigned long long>(key_bits(k)), v};
  }
  __device__ static value_type value_of(slot_type s) noexcept { return s.value; }
  __device__ static bool holds(slot_type s, K k) noexcept {
    return s.key == static_cast<unsigned long long>(key_bits(k));
  }
  __device__ static K key_of(slot_type s) noexcept { return static_cast<K>(s.key); }
  __device__ static slot_type peek(slot_type* p) noexcept {
    auto const v = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(p->value).load(
        cuda::memory_order_acquire);
    if (v == empty_value) { return {0, empty_value}; }
    // A published value is followed by an immutable key.
    return {cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(p->key).load(
                cuda::memory_order_relaxed),
            v};
  }
  __device__ static slot_type claim(slot_type* p, K k, value_type v) noexcept {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    slot_type const empty{~0ULL, empty_value};
    slot_type old = atomicCAS(p, empty, make(k, v));
    // The empty slot is all ones, key included, so a failed CAS returns the full slot.
    return old.value == empty_value ? slot_type{0, empty_value} : old;
#else
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> value(p->value);
    unsigned long long expected = empty_value;
    if (value.compare_exchange_strong(expected, busy_value, cuda::memory_order_relaxed)) {
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(p->key).store(
          key_bits(k), cuda::memory_order_relaxed);
      value.store(v, cuda::memory_order_release);
      return {0, empty_value};
    }
    while (expected == busy_value) { expected = value.load(cuda::memory_order_acquire); }
    return {cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(p->key).load(
                cuda::memory_order_relaxed),
            expected};
#endif
  }
  __device__ static slot_type read_immutable(slot_type const* p) noexcept {
    auto const v = __ldg(reinterpret_cast<ulonglong2 const*>(p));
    return {v.x, v.y};
  }
  __device__ static void store(slot_type* p, K k, value_type v) noexcept { *p = make(k, v); }
};

/// Counters of the insert kernels: [0] keys placed (groups), [1] overflow flag.
struct insert_counters {
  unsigned long long placed;
  unsigned long long overflow;
};

/// Whether any block raised the overflow flag (one thread's relaxed read).
__device__ __forceinline__ bool overflow_raised(insert_counters const* c) {
  return cuda::atomic_ref<unsigned long long const, cuda::thread_scope_device>(c->overflow)
           .load(cuda::memory_order_relaxed) != 0;
}

/// Trivially copyable device view of the set.
template <class K>
struct group_table_ref {
  using layout = group_slots<K>;
  using slot_type = typename layout::slot_type;
  using value_type = typename layout::value_type;

  slot_type* slots = nullptr;
  size_type num_slots = 0;

  __device__ size_type home(K k) const noexcept {
    return static_cast<size_type>(to_slot(murmur_hash{}(k), static_cast<std::uint64_t>(num_slots)));
  }
  __device__ size_type next(size_type i) const noexcept { return i + 1 == num_slots ? 0 : i + 1; }

  /// Finds k or inserts (k, v). Returns the slot index (-1 when the table is full) and sets
  /// `inserted` when this call placed the key and `stored` to the slot's value. With `stop`, a
  /// probe gives up (-1) once another thread raised its overflow flag (checked every 32 slots):
  /// warps that insert on past an overflow fill the table, and in a full one every new key
  /// probes all of its slots (sort_dictionary, int64 Zipf 1 at g = 2^18 on the H200: 202 ms in
  /// the pass that overflowed).
  __device__ size_type insert_or_find(K k, value_type v, bool& inserted, value_type& stored,
                                      insert_counters const* stop = nullptr) const noexcept {
    inserted = false;
    auto i = home(k);
    for (size_type probes = 0; probes < num_slots; ++probes) {
      if (stop != nullptr && (probes & 31) == 31 && overflow_raised(stop)) { return -1; }
      slot_type* const p = slots + i;
      auto s = layout::peek(p);
      if (layout::value_of(s) == layout::empty_value) {
        s = layout::claim(p, k, v);
        if (layout::value_of(s) == layout::empty_value) {
          inserted = true;
          stored = v;
          return i;
        }
      }
      if (layout::holds(s, k)) {
        stored = layout::value_of(s);
        return i;
      }
      i = next(i);
    }
    return -1;
  }

  /// The value stored with k (which must be present), after the inserts have completed.
  __device__ value_type find(K k) const noexcept {
    auto i = home(k);
    for (size_type probes = 0; probes < num_slots; ++probes) {
      auto const s = layout::read_immutable(slots + i);
      if (layout::value_of(s) == layout::empty_value) { return layout::empty_value; }
      if (layout::holds(s, k)) { return layout::value_of(s); }
      i = next(i);
    }
    return layout::empty_value;
  }

  /// The slot holding k (inserted by an earlier kernel), or -1 when k is absent.
  __device__ size_type find_slot(K k) const noexcept {
    auto i = home(k);
    for (size_type probes = 0; probes < num_slots; ++probes) {
      auto const s = layout::read_immutable(slots + i);
      if (layout::value_of(s) == layout::empty_value) { return -1; }
      if (layout::holds(s, k)) { return i; }
      i = next(i);
    }
    return -1;
  }
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

/// overflow_raised for a warp: lane 0 reads the flag (the whole warp calls it).
__device__ __forceinline__ bool warp_sees_overflow(insert_counters const* c) {
  bool const flag = (threadIdx.x & 31) == 0 && overflow_raised(c);
  return __shfl_sync(full_warp, flag ? 1 : 0, 0) != 0;
}

/// Numbers the occupied slots 0..g-1 (one atomic per warp) and writes each group's key;
/// `index[gid]` gets the slot's value (global_hash: the key's first row) or, with `slot_index`,
/// the slot itself (HGB: accumulators indexed by slot).
template <class K>
__global__ void __launch_bounds__(hash_groupby_policy::threads_per_block)
    assign_ids_kernel(group_table_ref<K> table, K* __restrict__ keys_out,
                      size_type* __restrict__ index, bool slot_index,
                      unsigned long long* counter) {
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
      keys_out[gid] = layout::key_of(s);
      index[gid] = slot_index ? i : static_cast<size_type>(layout::value_of(s));
    }
  }
}

/// Device memory for a set of `groups` keys, emptied (all ones).
template <class K>
struct group_table {
  buffer slots;
  group_table_ref<K> ref;
  group_table(size_type groups, stream_ref stream, memory_resource* mr) {
    ref.num_slots = std::max<size_type>(hash_groupby_policy::slots_per_group * groups, groups + 1);
    auto const bytes = static_cast<std::size_t>(ref.num_slots) *
                       sizeof(typename group_table_ref<K>::slot_type);
    slots = buffer(bytes, mr, stream);
    ref.slots = static_cast<typename group_table_ref<K>::slot_type*>(slots.data());
    JOINERY_CUDA_TRY(cudaMemsetAsync(slots.data(), 0xff, bytes, to_cuda(stream)));
  }
};

/// The counters, read back (synchronizes the stream).
inline insert_counters read_counters(buffer const& b, stream_ref stream) {
  insert_counters h{};
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, b.data(), sizeof(h), cudaMemcpyDeviceToHost, to_cuda(stream)));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return h;
}

/// Numbers the set's occupied slots: the keys of the groups and each one's index entry (its
/// first row, or with `slot_index` its slot).
template <class K>
void assign_ids(group_table<K>& t, column& keys_out, size_type* index, bool slot_index, int sms,
                stream_ref stream, memory_resource* mr) {
  buffer counter(sizeof(unsigned long long), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(counter.data(), 0, sizeof(unsigned long long), to_cuda(stream)));
  int const blocks =
      grid_stride_blocks(t.ref.num_slots, hash_groupby_policy::threads_per_block, sms);
  assign_ids_kernel<K><<<blocks, hash_groupby_policy::threads_per_block, 0, to_cuda(stream)>>>(
      t.ref, static_cast<K*>(keys_out.data()), index, slot_index,
      static_cast<unsigned long long*>(counter.data()));
  JOINERY_CHECK_LAUNCH();
}

}  // namespace joinery::detail::gpu::gb
