#pragma once
// Internal: the CPU backend's join algorithms (OpenMP). Inputs are host-accessible key columns.
#include "join/match_list.hpp"

namespace joinery::detail::cpu {

/// One shared table of the distinct build keys, each owning a contiguous run of build row ids,
/// so many-to-many and heavy-hitter keys cost one probe per probe row.
match_list no_partition_hash_join(column_view const& build_key, column_view const& probe_key,
                                  join_kind kind);

/// Blocked nested loops; the only CPU family for the band predicate.
match_list nested_loop_join(column_view const& build_key, column_view const& probe_key,
                            join_kind kind, predicate pred);

/// Per-probe-row emission shared by the algorithms: given the probe row's matching build rows
/// (as a callable that visits them), appends what `kind` asks for.
template <class Visit>
void emit_matches(join_kind kind, std::int64_t probe_row, std::int64_t match_count,
                  Visit&& visit_build_rows, match_list& out) {
  switch (kind) {
    case join_kind::inner:
      visit_build_rows([&](std::int64_t b) {
        out.build.push_back(b);
        out.probe.push_back(probe_row);
      });
      break;
    case join_kind::left_outer:
      if (match_count == 0) {
        out.build.push_back(-1);
        out.probe.push_back(probe_row);
      } else {
        visit_build_rows([&](std::int64_t b) {
          out.build.push_back(b);
          out.probe.push_back(probe_row);
        });
      }
      break;
    case join_kind::left_semi:
      if (match_count > 0) { out.probe.push_back(probe_row); }
      break;
    case join_kind::left_anti:
      if (match_count == 0) { out.probe.push_back(probe_row); }
      break;
  }
}

/// Concatenates per-thread lists in thread order (deterministic for a static schedule).
match_list concatenate(std::vector<match_list>&& parts);

}  // namespace joinery::detail::cpu
