#pragma once
// Internal: hash functors over the four key types for the GPU hash tables (host and device).
// The scalar functions (fmix32/fmix64, multiply-shift, fast range) live in core/hash.hpp.
#include "core/hash.hpp"

#include <cuda/std/cstdint>
#include <cuda/std/type_traits>

namespace joinery::detail::gpu {

/// The key's bit pattern, zero-extended to 64 bits (an injective map of each key type).
template <class Key>
__host__ __device__ constexpr std::uint64_t key_bits(Key k) noexcept {
  static_assert(cuda::std::is_integral_v<Key> && (sizeof(Key) == 4 || sizeof(Key) == 8));
  return static_cast<std::uint64_t>(static_cast<cuda::std::make_unsigned_t<Key>>(k));
}

/// The key's value widened to 64 bits (sign-extended for signed keys) and seen as unsigned: a
/// difference of two such values, taken mod 2^64, is the exact distance of the keys.
template <class Key>
__host__ __device__ constexpr std::uint64_t key_value_bits(Key k) noexcept {
  if constexpr (cuda::std::is_signed_v<Key>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(k));
  } else {
    return static_cast<std::uint64_t>(k);
  }
}

/// MurmurHash3 finaliser of the key: fmix32 for 4-byte keys, fmix64 for 8-byte keys.
struct murmur_hash {
  template <class Key>
  __host__ __device__ constexpr auto operator()(Key k) const noexcept {
    if constexpr (sizeof(Key) == 4) {
      return fmix32(static_cast<std::uint32_t>(key_bits(k)));
    } else {
      return fmix64(key_bits(k));
    }
  }
};

/// Multiply-shift (Fibonacci hashing): the full product a*k mod 2^w (w = key width). Its high
/// bits are the multiply-shift hash; tables take the high bits (see to_slot).
struct multiply_shift_hash {
  template <class Key>
  __host__ __device__ constexpr auto operator()(Key k) const noexcept {
    if constexpr (sizeof(Key) == 4) {
      return static_cast<std::uint32_t>(multiply_shift_a32 * static_cast<std::uint32_t>(key_bits(k)));
    } else {
      return multiply_shift_a64 * key_bits(k);
    }
  }
};

/// Maps a 32- or 64-bit hash onto [0, n) by its high bits (fast range, no division).
template <class H>
__host__ __device__ constexpr std::uint64_t to_slot(H h, std::uint64_t n) noexcept {
  static_assert(sizeof(H) == 4 || sizeof(H) == 8);
  if constexpr (sizeof(H) == 4) {
    return fast_range64(static_cast<std::uint64_t>(h) << 32, n);
  } else {
    return fast_range64(h, n);
  }
}

}  // namespace joinery::detail::gpu
