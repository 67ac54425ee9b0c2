#pragma once
// Internal: the 64-bit mixer shared by hash tables and generators (host and device).
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

}  // namespace joinery::detail
