// How a group-by's aggregates are made from partial ones (partial_plan.hpp).
#include "groupby/partial_plan.hpp"

#include <algorithm>

namespace joinery::detail {

partial_plan plan_partial_aggregates(table_view const& input, size_type key,
                                     std::vector<aggregation> const& aggs) {
  partial_plan p;
  p.carried.push_back(key);
  for (auto const& a : aggs) {
    if (a.kind != aggregation_kind::count) { (void)p.carried_at(a.column); }
  }
  auto const first_half = static_cast<size_type>(p.carried.size());  // halves go after these
  for (auto const& a : aggs) {
    partial_plan::output o;
    o.kind = a.kind;
    if (a.kind == aggregation_kind::count) {
      o.value = p.partial_of(aggregation_kind::count, -1);
    } else if (a.kind != aggregation_kind::avg) {
      o.value = p.partial_of(a.kind, p.carried_at(a.column));
    } else {
      auto const t = input.column(a.column).type();
      auto const at = p.carried_at(a.column);
      o.count = p.partial_of(aggregation_kind::count, -1);
      o.is_signed = is_signed(t);
      if (is_floating(t) || size_of(t) == 4) {
        o.value = p.partial_of(aggregation_kind::sum,
                               at);  // exact in 64 bits below 2^32 rows
      } else {
        auto it = std::find(p.halves_of.begin(), p.halves_of.end(), at);
        if (it == p.halves_of.end()) {
          p.halves_of.push_back(at);
          it = p.halves_of.end() - 1;
        }
        auto const h = first_half + 2 * static_cast<size_type>(it - p.halves_of.begin());
        o.high = p.partial_of(aggregation_kind::sum, h);
        o.value = p.partial_of(aggregation_kind::sum, h + 1);  // the low halves
      }
    }
    p.outputs.push_back(o);
  }
  for (std::size_t j = 0; j < p.partial.size(); ++j) {
    auto const k = p.partial[j].kind;
    // Counts (of rows or of values) add up.
    auto const merged =
      k == aggregation_kind::count || k == aggregation_kind::count_valid ? aggregation_kind::sum : k;
    p.final_aggs.push_back({merged, static_cast<size_type>(j + 1)});
  }
  return p;
}

}  // namespace joinery::detail
