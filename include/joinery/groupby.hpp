#pragma once
// The grouped-aggregation entry point.
#include <joinery/common.hpp>
#include <joinery/table.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

namespace joinery {

enum class groupby_algorithm : std::uint8_t {
  /// CPU: hash. GPU: hash while the groups fit its tables in shared memory or the L2 cache, else
  /// sort_transformed (Wu et al. Figure 21); groupby_stats::algorithm names the one that ran.
  automatic,
  global_hash,  ///< libcudf-style: hash table of first rows, atomics into sparse arrays
  hash,         ///< Wu et al. HGB (on the GPU one pass over the input while the groups fit)
  sort,
  sort_transformed,
  sort_dictionary,
  partition,
  partition_transformed,
  /// Several GPUs (groupby_options::devices): each GPU aggregates a share of the rows, partial
  /// groups are exchanged by key and aggregated again (sort_by_key: by key range).
  multi_gpu,
  /// Host-resident input streamed through the GPU in chunks (the next chunk's copy overlapping
  /// this one's aggregation); each chunk's partial groups stay on the device and are merged
  /// there whenever they outgrow a chunk, then aggregated once more at the end.
  streamed,
};

/// count: the group's rows (COUNT(*)); count_valid: its non-NULL values of the column
/// (COUNT(column)); count_distinct: its distinct non-NULL values (COUNT(DISTINCT column); all
/// NaNs one value, -0.0 that of 0.0; strings by their bytes), from a group-by on the keys and
/// the column, so with at most 7 key columns. sum, min, max and avg skip NULL values and are
/// NULL for a group without any. A string column takes count_valid, count_distinct, min and
/// max (byte order) only.
enum class aggregation_kind : std::uint8_t { count, sum, min, max, avg, count_valid, count_distinct };

/// What SUM of an integer column does past its result type's range: wrap (modulo 2^64, as C++
/// and polars do) or error (throw overflow_error, as SQL engines do; the sums are then exact,
/// from the sums of the values' 32-bit halves, for inputs below 2^32 rows).
enum class overflow_policy : std::uint8_t { wrap, error };

/// One aggregate over one column (count ignores the column).
struct aggregation {
  aggregation_kind kind = aggregation_kind::count;
  size_type column = -1;
};

struct groupby_options {
  groupby_algorithm algorithm = groupby_algorithm::automatic;
  joinery::backend backend = joinery::backend::automatic;
  bool sort_by_key = false;  ///< order the groups by key (ascending)
  overflow_policy sum_overflow = overflow_policy::wrap;
  std::size_t device_memory_budget = 0;
  int device = 0;
  /// multi_gpu: the GPUs, one rank each (a GPU may repeat; empty: every GPU present), and how
  /// partial groups move between them.
  std::vector<int> devices;
  exchange_method exchange = exchange_method::automatic;
  /// streamed: input rows per chunk; 0 (the default): from the device memory budget, at most
  /// 2^24.
  size_type streamed_chunk_rows = 0;
};

struct groupby_stats {
  groupby_algorithm algorithm = groupby_algorithm::automatic;
  joinery::backend backend = joinery::backend::automatic;
  std::vector<phase_time> phases;
  std::uint64_t bytes_moved = 0;
  double seconds = 0;
};

/// Result columns: the key (one column per key column), then one column per aggregation in
/// request order. Types: count, count_valid, count_distinct -> int64; sum -> int64 (signed
/// input) / uint64 (unsigned), wrapping unless sum_overflow is error, or float64 (floating input); min/max -> the input type; avg -> float64
/// (exact integer sum / count; over a column with NULLs, the int64 sum / count). bool, dates,
/// timestamps and decimals (DESIGN.md 7.1c): min/max keep the type; sum of bool8 -> int64, of
/// decimal64 -> decimal128 (the scale kept; exact below 2^32 values a group); avg of bool8 /
/// decimal64 -> float64; dates and timestamps take no sum or avg, decimal128 only count and
/// count_valid.
struct groupby_result {
  table columns;
  groupby_stats stats;
  [[nodiscard]] size_type num_groups() const noexcept { return columns.num_rows(); }
};

/// Groups `input` by one key column. Results are allocated from `mr` (nullptr: host memory when
/// the key column is host-resident or the CPU backend runs, else device memory).
groupby_result groupby(table_view const& input, size_type key_column,
                       std::vector<aggregation> const& aggregations,
                       groupby_options const& options = {}, stream_ref stream = default_stream(),
                       memory_resource_ref mr = nullptr);

/// Groups on several key columns (up to 8, any integer, floating-point or string type, NULLs
/// allowed; string columns in host memory, the result then in host memory, DESIGN.md 7.1b):
/// rows whose key columns are all equal form a group; NULL keys form one group per combination
/// (SQL's GROUP BY), all NaNs one group, -0.0 that of 0.0. Aggregated values may be any integer
/// or floating-point type with NULLs. One int32/int64/uint32/uint64 key without NULLs and
/// 4-/8-byte values without NULLs is the one-key group-by above; the rest takes the general key
/// path (keys packed into one integer; keys whose value ranges need more than 64 bits together
/// are refused). With sort_by_key the groups are ordered by the key columns, NULLs last.
groupby_result groupby(table_view const& input, std::vector<size_type> const& key_columns,
                       std::vector<aggregation> const& aggregations,
                       groupby_options const& options = {}, stream_ref stream = default_stream(),
                       memory_resource_ref mr = nullptr);

type_id aggregation_result_type(aggregation_kind k, type_id input);
std::string_view to_string(groupby_algorithm a) noexcept;
std::string_view to_string(aggregation_kind k) noexcept;
std::string_view to_string(overflow_policy p) noexcept;
overflow_policy overflow_policy_from_string(std::string_view name);
groupby_algorithm groupby_algorithm_from_string(std::string_view name);
aggregation_kind aggregation_kind_from_string(std::string_view name);
std::vector<groupby_algorithm> groupby_algorithms_on(backend b);

}  // namespace joinery
