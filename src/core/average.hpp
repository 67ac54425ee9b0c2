#pragma once
// Internal: AVG of an exact integer sum, the same bits on the host and on the device, so that
// both backends return identical averages.
#include "core/hash.hpp"  // JOINERY_HOST_DEVICE

#include <cstdint>

namespace joinery::detail {

/// The average of an exact sum (hi:lo, 128-bit two's complement when `is_signed`; only lo when
/// not `wide`) over `count` rows: q + r / count with the integer quotient q and remainder r, each
/// converted with one rounding (q lies within the input type's range, being an average). One
/// formula, evaluated in IEEE double on either side (no fused operations), gives one result.
JOINERY_HOST_DEVICE inline double exact_average(std::uint64_t lo, std::uint64_t hi, bool is_signed,
                                                bool wide, long long count) {
  if (!wide) {
    if (is_signed) {
      auto const v = static_cast<long long>(lo);
      return static_cast<double>(v / count) +
             static_cast<double>(v % count) / static_cast<double>(count);
    }
    auto const c = static_cast<unsigned long long>(count);
    return static_cast<double>(lo / c) + static_cast<double>(lo % c) / static_cast<double>(count);
  }
  auto const u = (static_cast<unsigned __int128>(hi) << 64) | lo;
  if (is_signed) {
    auto const v = static_cast<__int128>(u);
    auto const q = static_cast<long long>(v / count);
    auto const r = static_cast<long long>(v % count);
    return static_cast<double>(q) + static_cast<double>(r) / static_cast<double>(count);
  }
  auto const c = static_cast<unsigned __int128>(count);
  return static_cast<double>(static_cast<unsigned long long>(u / c)) +
         static_cast<double>(static_cast<unsigned long long>(u % c)) / static_cast<double>(count);
}

}  // namespace joinery::detail
