#pragma once
// A deliberately simple reference join and group-by, and multiset comparison of results.
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace joinery::test {

/// One output row as comparable values (checksum form: sign-extended to 64 bits; nullopt = null).
using row = std::vector<std::optional<std::uint64_t>>;
using rows = std::vector<row>;

/// Reference join on host tables: the result as (build row, probe row) pairs (semi/anti: probe
/// row only; left outer: -1 for a missing build row), sorted.
rows oracle_join_index(table_view const& build, size_type build_key, table_view const& probe,
                       size_type probe_key, join_kind kind, predicate pred);
/// Reference table-form rows (key, build payloads, probe payloads), sorted.
rows oracle_join_table(table_view const& build, size_type build_key, table_view const& probe,
                       size_type probe_key, join_options const& options);
/// Count and checksum of the table form, from the reference rows.
join_aggregate aggregate_of(rows const& table_rows);

/// A join_result turned into sorted comparable rows (its data copied to the host when needed).
rows index_rows(join_result const& r, join_kind kind);
rows table_rows(table_view const& t);

/// Reference group-by: key, then each aggregate (avg as the bit pattern of the double), sorted.
struct group_row {
  std::uint64_t key = 0;
  std::vector<std::uint64_t> exact;  // count/sum/min/max in checksum form
  std::vector<double> approx;        // avg and floating sums, compared with a tolerance
};
std::vector<group_row> oracle_groupby(table_view const& input, size_type key_column,
                                      std::vector<aggregation> const& aggs);
/// A group-by result (key column, then aggregates; float64 columns compared approximately).
std::vector<group_row> groupby_rows(table_view const& result);

/// Explains the first difference of two sorted multisets ("" when equal).
std::string diff_rows(rows const& expected, rows const& actual);
std::string diff_groups(std::vector<group_row> const& expected,
                        std::vector<group_row> const& actual);

/// Runs `o`'s join of `build` and `probe` (the host tables `host_build` / `host_probe`, keys in
/// column 0, placed anywhere) in every output form: the index form with int64 and int32 row ids
/// and with the three-phase writer, the table form (its rows and aggregate) and the aggregate
/// form, each against the oracle (gtest expectations), and the algorithm and backend that ran
/// against `o`'s unless automatic. `o.output`, `index_type` and `writer` are set here; the index
/// form's results must lie in `index_space` unless it is empty.
void expect_every_form_matches_oracle(table_view const& build, table_view const& probe,
                                      table_view const& host_build, table_view const& host_probe,
                                      join_options o,
                                      std::optional<memory_space> index_space = std::nullopt);

/// A group-by result against the oracle's groups of the host table `input` (key in column 0):
/// the result types of `aggs`, every group, and ascending keys when `sorted` (gtest
/// expectations).
void expect_groups_match_oracle(groupby_result const& r, table_view const& input,
                                std::vector<aggregation> const& aggs, bool sorted);

/// Copies every column of a table into `space` (device space needs a GPU).
table place(table_view const& t, memory_space space);

}  // namespace joinery::test
