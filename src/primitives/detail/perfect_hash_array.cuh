#pragma once
// Internal: perfect hashing for dense unique keys (Lutz et al.'s no-partitioning join with a
// perfect hash): a direct array of row ids indexed by key - min.
//
// The index of key k is key_value_bits(k) - key_value_bits(min) taken mod 2^64: the exact distance
// for every key type (signed keys are sign-extended first), and a key below min wraps to an index
// >= range, so one unsigned comparison rejects keys on both sides. Empty entries are -1 (0xff
// bytes); inserts claim an entry with a 64-bit CAS, so a duplicate key is detected (its CAS finds
// the entry taken) and reported through a device flag. (Plain stores and a second pass that
// checks each key's entry cost more: 12.0 ms against 8.9 for 2^27 keys on an H200, since a
// random 8-byte store costs a read-modify-write of its sector like the CAS does.)
#include "core/cuda_try.hpp"
#include "primitives/detail/grid_size.cuh"
#include "primitives/detail/hash.cuh"
#include "primitives/detail/lookup_agent.cuh"

#include <joinery/types.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

struct perfect_hash_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int items_per_thread = 4;
  static constexpr int tile_items = threads_per_block * items_per_thread;
  static constexpr int max_blocks_per_sm = 8;
};

/// Trivially copyable device view of a perfect-hash array.
template <class Key>
class perfect_hash_ref {
 public:
  static constexpr unsigned long long empty = ~0ULL;  // row id -1

  perfect_hash_ref() = default;
  __host__ __device__ perfect_hash_ref(size_type* rows, Key min_key, size_type range) noexcept
      : rows_(rows), min_bits_(key_value_bits(min_key)), range_(static_cast<std::uint64_t>(range)) {}

  [[nodiscard]] __host__ __device__ std::uint64_t index_of(Key k) const noexcept {
    return key_value_bits(k) - min_bits_;
  }
  /// Stores row under k; false when k is outside the range or already present.
  __device__ bool insert(Key k, size_type row) const noexcept {
    auto const i = index_of(k);
    if (i >= range_) { return false; }
    auto* p = reinterpret_cast<unsigned long long*>(rows_ + i);
    return atomicCAS(p, empty, static_cast<unsigned long long>(row)) == empty;
  }
  /// Row of k, -1 when absent.
  __device__ size_type find(Key k) const noexcept {
    auto const i = index_of(k);
    return i < range_ ? rows_[i] : size_type{-1};
  }

 private:
  size_type* rows_ = nullptr;
  std::uint64_t min_bits_ = 0;
  std::uint64_t range_ = 0;
};

template <class Policy, class Key>
__global__ void __launch_bounds__(Policy::threads_per_block)
    perfect_hash_insert_kernel(perfect_hash_ref<Key> ref, Key const* __restrict__ keys, size_type n,
                               unsigned int* __restrict__ failed) {
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type i, Key k) {
    if (!ref.insert(k, i)) { atomicOr(failed, 1U); }
  });
}

/// Fills an array emptied to -1 with the rows of `keys`; `failed` (a zeroed device flag) is
/// raised when a key is out of range or duplicated.
template <class Policy, class Key>
void perfect_hash_build(perfect_hash_ref<Key> const& ref, Key const* keys, size_type n,
                        unsigned int* failed, cudaStream_t stream) {
  auto const grid = capped_grid_size(ceil_div(n, static_cast<size_type>(Policy::tile_items)),
                                     Policy::max_blocks_per_sm);
  perfect_hash_insert_kernel<Policy><<<grid, Policy::threads_per_block, 0, stream>>>(ref, keys, n,
                                                                                     failed);
  JOINERY_CHECK_LAUNCH();
}

template <class Policy, class Key>
__global__ void __launch_bounds__(Policy::threads_per_block)
    perfect_hash_find_kernel(perfect_hash_ref<Key> ref, Key const* __restrict__ keys, size_type n,
                             size_type* __restrict__ out) {
  lookup_agent<Policy>::for_each_key(keys, n, [&](size_type i, Key k) { out[i] = ref.find(k); });
}

template <class Policy, class Key>
__global__ void __launch_bounds__(Policy::threads_per_block)
    perfect_hash_contains_kernel(perfect_hash_ref<Key> ref, Key const* __restrict__ keys,
                                 size_type n, std::uint8_t* __restrict__ out) {
  lookup_agent<Policy>::for_each_key(keys, n,
                                     [&](size_type i, Key k) { out[i] = ref.find(k) >= 0 ? 1 : 0; });
}

}  // namespace joinery::detail::gpu
