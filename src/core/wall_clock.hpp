#pragma once
// Internal: the wall clock that the statistics' seconds and phase times are read from.
#include <chrono>

namespace joinery::detail {

using clock_type = std::chrono::steady_clock;

inline double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace joinery::detail
