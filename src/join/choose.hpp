#pragma once
// Internal: which join algorithm `automatic` runs, and the row limits of the GPU algorithms.
#include <joinery/join.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace joinery::detail {

/// Largest side of the GPU joins that number rows in 32 bits (radix_hash, sort_merge,
/// indexed_nested_loop); the others take 64-bit row counts.
inline constexpr size_type gpu_row_id32_max_rows = (size_type{1} << 32) - 1;

/// Why `algo` cannot run these sizes on backend `be` (a message naming the limit and what would
/// run), or nothing when it can.
std::optional<std::string> size_refusal(backend be, join_algorithm algo, size_type build_rows,
                                        size_type probe_rows);

/// The algorithm `automatic` runs among `available` (those of backend `be`): the fastest family
/// that can run the predicate and the sizes.
join_algorithm automatic_join_algorithm(backend be, std::vector<join_algorithm> const& available,
                                        bool band, size_type build_rows, size_type probe_rows);

/// Device bytes an in-GPU join is taken to need: its inputs on the device three times over (the
/// copy, the partitioned or sorted copy, temporaries) and one output row per probe row.
std::size_t in_gpu_join_bytes(std::size_t build_input_bytes, std::size_t probe_input_bytes,
                              size_type probe_rows, std::size_t output_row_bytes);

/// Probe sides of at least this many rows in pinned host memory are streamed when only an
/// aggregate comes back: the join then hides behind the copies (BENCHMARKS.md, "Data in host
/// memory"). Pageable ones are not: staged through the host, the in-GPU join's one copy per
/// column measured faster.
inline constexpr size_type streamed_aggregate_min_rows = size_type{1} << 22;

/// Whether automatic runs streamed instead of an in-GPU join on the GPU: for an equality join
/// whose probe side is in host memory, when its in-GPU join would not fit the budget, or when
/// the result is an aggregate of a large pinned probe side. (Results that come back to host memory
/// chunk by chunk cost more than one copy of the whole result.)
bool prefer_streamed(bool band, memory_space probe_space, std::size_t in_gpu_bytes,
                     std::size_t budget, bool aggregate_output = false, size_type probe_rows = 0);

/// Whether a join that automatic streams (prefer_streamed) runs triton instead: when the build
/// side, which the streamed join keeps on the device with its hash table (about twice its key
/// bytes), would take more than half the budget and leave too little for the probe chunks.
bool prefer_triton(std::size_t build_input_bytes, std::size_t build_table_bytes,
                   std::size_t budget);

}  // namespace joinery::detail
