#pragma once
// Internal: integer hash functions shared by hash tables, partitioners and generators. Header-only,
// constexpr, callable on the host and (when compiled by nvcc) on the device.
#include <cstdint>

#if defined(__CUDACC__)
#define JOINERY_HOST_DEVICE __host__ __device__
#else
#define JOINERY_HOST_DEVICE
#endif

namespace joinery::detail {

/// A bijective 64-bit avalanche mixer (splitmix64's finaliser constants): consecutive keys land
/// far apart, so dense key ranges do not cluster in linear-probing tables.
JOINERY_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// MurmurHash3's 32-bit finaliser (fmix32): bijective, full avalanche; fmix32(0) == 0.
JOINERY_HOST_DEVICE constexpr std::uint32_t fmix32(std::uint32_t h) noexcept {
  h ^= h >> 16;
  h *= 0x85ebca6bU;
  h ^= h >> 13;
  h *= 0xc2b2ae35U;
  h ^= h >> 16;
  return h;
}

/// MurmurHash3's 64-bit finaliser (fmix64): bijective, full avalanche; fmix64(0) == 0.
JOINERY_HOST_DEVICE constexpr std::uint64_t fmix64(std::uint64_t k) noexcept {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

/// Odd multipliers (2^w / golden ratio, rounded to odd) for multiply-shift hashing.
inline constexpr std::uint32_t multiply_shift_a32 = 0x9e3779b9U;
inline constexpr std::uint64_t multiply_shift_a64 = 0x9e3779b97f4a7c15ULL;

/// Dietzfelbinger's multiply-shift: the top `bits` bits of a*x mod 2^32 (`a` odd), a hash into
/// [0, 2^bits). bits in [0, 32]; 0 bits gives 0.
JOINERY_HOST_DEVICE constexpr std::uint32_t multiply_shift32(
    std::uint32_t x, unsigned bits, std::uint32_t a = multiply_shift_a32) noexcept {
  return bits == 0 ? 0U : static_cast<std::uint32_t>(a * x) >> (32U - bits);
}

/// 64-bit multiply-shift: the top `bits` bits of a*x mod 2^64 (`a` odd). bits in [0, 64].
JOINERY_HOST_DEVICE constexpr std::uint64_t multiply_shift64(
    std::uint64_t x, unsigned bits, std::uint64_t a = multiply_shift_a64) noexcept {
  return bits == 0 ? 0ULL : (a * x) >> (64U - bits);
}

/// Maps a 64-bit hash uniformly onto [0, n) without a division (Lemire's fast range): the high
/// 64 bits of h * n. Uses the hash's high bits, so it suits multiply-shift hashes too.
JOINERY_HOST_DEVICE constexpr std::uint64_t fast_range64(std::uint64_t h, std::uint64_t n) noexcept {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

}  // namespace joinery::detail
