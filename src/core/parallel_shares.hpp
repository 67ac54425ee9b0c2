#pragma once
// Internal: host loops split into a fixed number of contiguous shares, each visited exactly once
// however many threads the OpenMP team really has (fewer inside a caller's parallel region, with
// OMP_DYNAMIC or under OMP_THREAD_LIMIT), so that per-share counts and offsets stay consistent.
#include <joinery/types.hpp>

#include <omp.h>

#include <algorithm>

namespace joinery::detail {

/// Threads a parallel region opened here will get: one inside a caller's parallel region when
/// nested parallelism is off (where omp_get_max_threads() still names the outer team's size).
inline int usable_threads() {
  if (omp_get_active_level() >= omp_get_max_active_levels()) { return 1; }
  return std::max(1, std::min(omp_get_max_threads(), omp_get_thread_limit()));
}

/// Calls f(begin, end, share) for each of `shares` contiguous shares of [0, n).
template <class F>
void for_each_share(size_type n, int shares, F&& f) {
  auto const per = (n + shares - 1) / shares;
#pragma omp parallel num_threads(shares)
  {
    int const team = omp_get_num_threads();
    for (int t = omp_get_thread_num(); t < shares; t += team) {
      auto const begin = std::min(n, per * t);
      auto const end = std::min(n, begin + per);
      f(begin, end, t);
    }
  }
}

}  // namespace joinery::detail
