#include "groupby/estimate.hpp"

#include <algorithm>
#include <cmath>

namespace joinery::detail {

size_type groups_from_sample(size_type distinct, size_type samples, size_type rows) {
  if (samples >= rows) { return distinct; }         // every row was seen
  if (distinct >= samples - 1) { return rows; }     // nearly all distinct: no bound below rows
  auto const seen = [&](double g) {
    return g * -std::expm1(-static_cast<double>(samples) / g);
  };
  // seen() grows with g: bisect between the distinct keys seen and every row.
  double lo = static_cast<double>(distinct);
  double hi = static_cast<double>(rows);
  for (int step = 0; step < 64; ++step) {
    double const mid = 0.5 * (lo + hi);
    (seen(mid) < static_cast<double>(distinct) ? lo : hi) = mid;
  }
  // The root sits a hair above the integer when every key was seen (seen(d) < d by e^(-s/d)).
  return std::min(rows, static_cast<size_type>(std::ceil(hi * (1 - 1e-9))));
}

size_type groups_from_profile(size_type distinct, size_type once, size_type twice,
                              size_type samples, size_type rows) {
  auto const uniform = groups_from_sample(distinct, samples, rows);
  if (samples >= rows) { return uniform; }
  auto const f1 = static_cast<double>(once);
  double const chao1 = static_cast<double>(distinct) +
                       (twice > 0 ? f1 * f1 / (2.0 * static_cast<double>(twice))
                                  : f1 * (f1 - 1) / 2.0);
  if (chao1 >= static_cast<double>(rows)) { return rows; }
  return std::max(uniform, static_cast<size_type>(std::ceil(chao1)));
}

}  // namespace joinery::detail
