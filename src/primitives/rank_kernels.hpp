#pragma once
// Internal, host-only: the device steps of the multi-GPU joins and group-by on
// one rank (rank_kernels.cu), each on the current device and `stream`.
#include "core/rank_plan.hpp"

#include <joinery/column.hpp>
#include <joinery/memory.hpp>

#include <cstdint>
#include <vector>

namespace joinery::detail::multi_gpu {

/// The smallest and largest order-preserving code of a device key column (min >
/// max when empty); waits for the stream.
struct code_range {
  std::uint64_t min = ~std::uint64_t{0};
  std::uint64_t max = 0;
};
code_range key_code_range(column_view const& keys, stream_ref stream);

/// Rows of a device key column per bin of `bins`; waits for the stream.
std::vector<std::uint64_t> key_bin_histogram(column_view const& keys, key_bins const& bins,
                                             stream_ref stream);

/// How rows find their rank: by a hash of the key (hash-partitioned join), or
/// by the key's bin (range-partitioned sort-merge join: `rank_of_bin`, one
/// entry per bin of `bins`).
struct rank_rule {
  int ranks = 1;
  bool by_range = false;
  key_bins bins;
  std::vector<std::uint32_t> rank_of_bin;
};

/// The rank of every row of a device key column (uint32, device).
column ranks_of_rows(column_view const& keys, rank_rule const& rule, stream_ref stream,
                     memory_resource* mr);

/// first, first + 1, ..., first + n - 1 (int64, device).
column row_id_sequence(size_type n, size_type first, stream_ref stream, memory_resource* mr);

/// out[i] = local[i] < 0 ? -1 : global[local[i]] for int64 `local` ids into
/// `global` (int64), written as `out_type` (int32 or int64) to device memory
/// `out`.
void remap_row_ids(column_view const& local, column_view const& global, void* out, type_id out_type,
                   stream_ref stream);

/// out[i] = the average of sums[i] over counts[i] rows (int64 counts): exact
/// integer sums (int64 or uint64, below 2^63) as the group-bys' exact_average,
/// float64 sums divided. Device columns.
void average_of(column_view const& sums, column_view const& counts, column& out, stream_ref stream);

/// The 32-bit halves of an 8-byte integer device column, so that partial sums
/// stay exact: hi[i] = v[i] >> 32 (arithmetic for int64, into int64; logical
/// for uint64, into uint64) and lo[i] = v[i] & 0xffffffff (uint64). v = hi *
/// 2^32 + lo.
void split_halves(column_view const& v, column& hi, column& lo, stream_ref stream);

/// out[i] = the average over counts[i] rows of the exact 128-bit sum hi_sums[i]
/// * 2^32 + lo_sums[i] (signed when `is_signed`), as exact_average gives it.
void average_of_halves(column_view const& hi_sums, column_view const& lo_sums,
                       column_view const& counts, bool is_signed, column& out, stream_ref stream);

}  // namespace joinery::detail::multi_gpu
