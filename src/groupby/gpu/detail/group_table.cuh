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
#include "primitives/detail/hash.cuh"

#include <joinery/types.hpp>

#include <cuda/atomic>
#include <cuda/std/type_traits>

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
  /// `inserted` when this call placed the key and `stored` to the slot's value.
  __device__ size_type insert_or_find(K k, value_type v, bool& inserted,
                                      value_type& stored) const noexcept {
    inserted = false;
    auto i = home(k);
    for (size_type probes = 0; probes < num_slots; ++probes) {
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
};

}  // namespace joinery::detail::gpu::gb
