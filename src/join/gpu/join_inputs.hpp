#pragma once
// Internal, host-only: the GPU joins' inputs on the device and the pieces of their output forms
// that every driver shares (run_join.cu defines them; streamed_join.cu uses them too).
#include <joinery/column.hpp>
#include <joinery/join.hpp>
#include <joinery/table.hpp>

#include <cstdint>
#include <vector>

namespace joinery::detail::gpu {

/// Device copies of the columns a join reads that are not on the device yet; the others keep
/// their views (and are never read).
struct device_inputs {
  std::vector<column> owned;
  std::vector<column_view> cols;
};
device_inputs on_device(table_view const& t, size_type key, std::vector<size_type> const& payloads,
                        stream_ref stream);

/// Per-row wrapping sums (device uint64) of the columns `which` of `cols`, empty when there
/// are none: the aggregate form's checksum adds them per output row.
buffer row_sums_of(std::vector<column_view> const& cols, std::vector<size_type> const& which,
                   size_type n, stream_ref stream, memory_resource* mr);

/// out[i] = src[rows[i]], null where rows[i] < 0 (a left outer join's missing build row).
column gather_nullable(column_view const& src, column_view const& rows, stream_ref stream,
                       memory_resource* mr);

/// *sum (device) += the wrapping sum of a device column's values, sign-extended.
void add_column_sum(column_view const& col, unsigned long long* sum, stream_ref stream);

/// Same-typed pieces (masks included) one after another, in the space of `mr` (streamed_join.cu).
column concatenate(std::vector<column> const& pieces, type_id type, memory_resource* mr,
                   stream_ref stream);

/// The batches of a join delivered piece by piece (streamed, triton) as one result in `total`:
/// the index form's row ids (join_options::index_type), or the table's columns of `table_types`.
void concatenate_batches(std::vector<join_result>& batches, join_options const& options,
                         bool probe_only, std::vector<type_id> const& table_types,
                         join_result& total, memory_resource* mr, stream_ref stream);

/// `c` in the space of `mr` (unchanged when mr is null or already there).
column to_space(column&& c, memory_resource* mr, stream_ref stream);

}  // namespace joinery::detail::gpu
