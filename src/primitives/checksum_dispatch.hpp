#pragma once
// Internal host-callable entry of the GPU checksum (defined in checksum.cu).
#include <joinery/column.hpp>

#include <cstdint>

namespace joinery::detail::gpu {
/// Device column, no nulls.
std::uint64_t checksum(column_view const& c, stream_ref stream);
}  // namespace joinery::detail::gpu
