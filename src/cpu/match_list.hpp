#pragma once
// Internal: the host-side result of a join before it takes its output form.
#include <joinery/join.hpp>

#include <cstdint>
#include <vector>

namespace joinery::detail {

/// Row-id pairs. Semi/anti joins leave `build` empty; left outer uses -1 for "no build row".
struct match_list {
  std::vector<std::int64_t> build;
  std::vector<std::int64_t> probe;
};

/// Row-id pairs as host int64 columns (build_rows empty for semi/anti joins).
struct match_columns {
  column build_rows;
  column probe_rows;
};

/// The matches of several threads' lists as one pair of columns, each list copied by its own
/// thread (the copies and the first touch of the output pages run in parallel).
match_columns concatenate(std::vector<match_list> const& parts);

/// Turns matches into the requested output form (host memory), filling the aggregate too.
join_result assemble_host_result(match_columns&& matches, table_view const& build,
                                 table_view const& probe, size_type probe_key,
                                 join_options const& options);

/// value as the checksum sees it: sign-extended to 64 bits, then taken modulo 2^64.
template <class T>
constexpr std::uint64_t checksum_value(T v) noexcept {
  if constexpr (std::is_signed_v<T>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
  } else {
    return static_cast<std::uint64_t>(v);
  }
}

}  // namespace joinery::detail
