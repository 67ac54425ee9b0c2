#pragma once
// The wrapping checksum that --summary and the tests use, over a column in any memory space.
#include <joinery/column.hpp>

#include <cstdint>

namespace joinery {

/// Wrapping uint64 sum of the column's valid values, each sign-extended to 64 bits first (nulls
/// add 0). Host columns are summed with OpenMP, device columns on the GPU. Integer columns only;
/// bool, dates, timestamps and decimals by their stored integers (a decimal128 value adds its
/// two 64-bit halves); strings by their hashes.
std::uint64_t checksum(column_view const& c, stream_ref stream = default_stream());

}  // namespace joinery
