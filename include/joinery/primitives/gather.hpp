#pragma once
// GPU gather and scatter by 64-bit row ids, over columns of any 1/2/4/8-byte type (the values are
// moved as bits). Host-only: no CUDA types. Without the CUDA backend they throw logic_error.
#include <joinery/column.hpp>
#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstdint>

namespace joinery {

/// Whether the kernels check every row id against the column size. `checked` costs one flag and
/// one stream synchronization and throws logic_error naming the problem when an id is out of
/// range; `unchecked` (the default, the fast asynchronous path) makes an out-of-range id
/// undefined behaviour. Turn it on while debugging and wherever ids come from untrusted input.
enum class bounds_check : std::uint8_t { unchecked, checked };

/// out[i] = source[row_ids[i]]: a column of row_ids.size() rows of source's type, from `mr`
/// (nullptr: the device resource). `source` and `row_ids` (int64) in device or pinned memory, no
/// nulls; every id in [0, source.size()).
column gather(column_view const& source, column_view const& row_ids,
              bounds_check check = bounds_check::unchecked, stream_ref stream = default_stream(),
              memory_resource_ref mr = nullptr);

/// target[row_ids[i]] = source[i] for every i < source.size() (row_ids.size() == source.size(),
/// same type in source and target; target in device or pinned memory). With duplicate ids one of
/// the values wins, unspecified which.
void scatter(column_view const& source, column_view const& row_ids, column& target,
             bounds_check check = bounds_check::unchecked, stream_ref stream = default_stream());

}  // namespace joinery
