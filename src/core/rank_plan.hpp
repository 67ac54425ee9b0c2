#pragma once
// Internal, host-only: how the multi-GPU joins split rows over ranks
// (DESIGN.md, "Several GPUs"). Pure arithmetic, so that the CPU build tests it
// too.
#include <joinery/types.hpp>

#include <cstdint>
#include <vector>

namespace joinery::detail {

/// Rows [first, last) of `rows` that rank `rank` of `ranks` starts with
/// (contiguous, sizes differing by at most one).
struct row_range {
  size_type first = 0;
  size_type last = 0;
};
row_range rank_share(size_type rows, int ranks, int rank) noexcept;

/// Bins over the order-preserving 64-bit codes of keys (signed keys with the
/// sign bit flipped): bin(code) = (code - base) >> shift, at most
/// 2^max_bin_bits bins from the smallest code to the largest, so that a narrow
/// key range still spreads over every bin.
struct key_bins {
  std::uint64_t base = 0;
  unsigned shift = 0;
  std::uint32_t count = 1;
};
inline constexpr unsigned max_bin_bits = 12;
/// The bins over [min_code, max_code] (min_code > max_code: no keys, one bin).
key_bins bins_over(std::uint64_t min_code, std::uint64_t max_code) noexcept;

/// The rank of every bin, from the bins' row counts summed over every rank and
/// both sides: contiguous runs of bins, each rank's run taking about total /
/// ranks rows, so that the ranks' key ranges follow one another (a sort-merge
/// join's output is ordered across ranks). A bin is never split: one hot key
/// lands on one rank whole.
std::vector<std::uint32_t> ranks_of_bins(std::vector<std::uint64_t> const& histogram, int ranks);

}  // namespace joinery::detail
