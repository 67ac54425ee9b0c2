#pragma once
// Internal, host-only: the multi-GPU joins (multi_gpu_join.cpp; built with the
// CUDA backend).
#include "core/communicator.hpp"
#include "core/rank_plan.hpp"

#include <joinery/join.hpp>

namespace joinery::detail::multi_gpu {

/// The rows of one side a rank starts with: rows `rows` of `part` (in any
/// memory), numbered first_id, first_id + 1, ... in the group.
struct rank_rows {
  table_view part;
  row_range rows;
  size_type first_id = 0;
};

/// multi_gpu_hash or multi_gpu_sort_merge as rank `rank` of `comm` runs it (a
/// collective: every rank calls it): sends every row to the rank of its key
/// (hash or key range), joins what it received with the single-GPU radix or
/// sort-merge join, and returns its piece of the result on its GPU (index form:
/// the rows' ids in the group; aggregate form: its own totals). Its phases in
/// the statistics end when every rank has ended them.
join_result join_on_rank(join_algorithm algo, communicator const& comm, int rank,
                         rank_rows const& build, size_type build_key, rank_rows const& probe,
                         size_type probe_key, join_options const& options);

/// The same over options.devices (empty: every GPU), ranks of this process
/// taking contiguous shares of both sides; the pieces gathered into one result
/// in `mr`'s space (nullptr: the current device).
join_result multi_gpu_join(join_algorithm algo, table_view const& build, size_type build_key,
                           table_view const& probe, size_type probe_key,
                           join_options const& options, stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::multi_gpu
