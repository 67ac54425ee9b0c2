#pragma once
// Internal, host-only: how a group-by's aggregates are made from partial ones, for the group-bys
// that aggregate shares of the rows and merge the partial groups (several GPUs; chunks of host
// data streamed through one GPU).
#include <joinery/groupby.hpp>

#include <algorithm>
#include <vector>

namespace joinery::detail {

/// How each requested aggregate is made from partial ones. A share carries the key, the
/// aggregated input columns, and the 32-bit halves of the 8-byte integer columns an average
/// reads (appended by whoever aggregates the share: their sums stay exact); partial aggregate j
/// is column j + 1 of the partial results and of their merges. Merging (final_aggs) keeps that
/// layout, so partial results can be merged any number of times.
struct partial_plan {
  std::vector<size_type> carried;       // input columns: the key, then the aggregated ones
  std::vector<size_type> halves_of;     // carried positions whose halves are appended
  std::vector<aggregation> partial;     // over the share (carried columns, then halves)
  std::vector<aggregation> final_aggs;  // over the partial result
  struct output {
    aggregation_kind kind = aggregation_kind::count;
    int value = -1;  // partial index of the count / sum / min / max, or of an
                     // average's sum
    int high = -1;   // an 8-byte integer average: partial index of the high halves' sum
    int count = -1;  // an average: partial index of the count
    bool is_signed = false;
  };
  std::vector<output> outputs;

  int partial_of(aggregation_kind k, size_type column) {
    for (std::size_t j = 0; j < partial.size(); ++j) {
      if (partial[j].kind == k && (k == aggregation_kind::count || partial[j].column == column)) {
        return static_cast<int>(j);
      }
    }
    partial.push_back({k, column});
    return static_cast<int>(partial.size()) - 1;
  }
  size_type carried_at(size_type input_column) {
    auto const it = std::find(carried.begin(), carried.end(), input_column);
    if (it != carried.end()) { return static_cast<size_type>(it - carried.begin()); }
    carried.push_back(input_column);
    return static_cast<size_type>(carried.size()) - 1;
  }
};

/// The plan for grouping `input` by `key` with `aggs`.
partial_plan plan_partial_aggregates(table_view const& input, size_type key,
                                     std::vector<aggregation> const& aggs);

}  // namespace joinery::detail
