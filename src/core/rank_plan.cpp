// How the multi-GPU joins split rows over ranks.
#include "core/rank_plan.hpp"

#include <algorithm>
#include <bit>
#include <numeric>

namespace joinery::detail {

row_range rank_share(size_type rows, int ranks, int rank) noexcept {
  auto const at = [&](int r) {
    // rows * r / ranks without overflow for any 64-bit row count.
    auto const q = rows / ranks;
    auto const rem = rows % ranks;
    return q * r + rem * r / ranks;
  };
  return {at(rank), at(rank + 1)};
}

key_bins bins_over(std::uint64_t min_code, std::uint64_t max_code) noexcept {
  if (min_code > max_code) { return {0, 0, 1}; }
  auto const span = max_code - min_code;
  auto const width = static_cast<unsigned>(std::bit_width(span));
  auto const shift = width > max_bin_bits ? width - max_bin_bits : 0U;
  return {min_code, shift, static_cast<std::uint32_t>((span >> shift) + 1)};
}

std::vector<std::uint32_t> ranks_of_bins(std::vector<std::uint64_t> const& histogram, int ranks) {
  std::vector<std::uint32_t> rank(histogram.size(), 0);
  auto const total = std::accumulate(histogram.begin(), histogram.end(), std::uint64_t{0});
  if (ranks <= 1 || total == 0) { return rank; }
  std::uint64_t before = 0;  // rows of the bins before this one
  std::uint32_t r = 0;
  for (std::size_t b = 0; b < histogram.size(); ++b) {
    // Move on to the next rank once this one has its share, choosing the
    // boundary nearer the target: a bin goes to the next rank when more than
    // half of it lies past the target.
    while (r + 1 < static_cast<std::uint32_t>(ranks)) {
      auto const target = static_cast<double>(total) * (r + 1) / ranks;
      auto const mid = static_cast<double>(before) + static_cast<double>(histogram[b]) / 2;
      if (mid <= target) { break; }
      ++r;
    }
    rank[b] = r;
    before += histogram[b];
  }
  return rank;
}

}  // namespace joinery::detail
