#pragma once
// Internal, host-only: the multi-GPU joins (multi_gpu_join.cpp; built with the
// CUDA backend).
#include <joinery/join.hpp>

namespace joinery::detail::multi_gpu {

/// multi_gpu_hash or multi_gpu_sort_merge over options.devices (empty: every
/// GPU): each rank takes a contiguous share of both sides, sends every row to
/// the rank of its key (hash or key range), and joins what it received with the
/// single-GPU radix or sort-merge join; the ranks' results are gathered into
/// one result in `mr`'s space (nullptr: the current device).
join_result multi_gpu_join(join_algorithm algo, table_view const& build, size_type build_key,
                           table_view const& probe, size_type probe_key,
                           join_options const& options, stream_ref stream, memory_resource* mr);

}  // namespace joinery::detail::multi_gpu
