#pragma once
// Internal: grid sizing for the grid-stride kernels of the lookup and gather primitives.
#include "primitives/detail/launch.cuh"

#include <algorithm>

namespace joinery::detail::gpu {

/// Blocks for `tiles` tiles of a grid-stride kernel: one block per tile, at most
/// `max_blocks_per_sm` per SM of the current device (the kernel loops over the rest), at least 1.
inline unsigned capped_grid_size(size_type tiles, int max_blocks_per_sm) {
  auto const cap = static_cast<size_type>(std::max(current_sm_count(), 1)) * max_blocks_per_sm;
  return static_cast<unsigned>(std::max<size_type>(1, std::min(tiles, cap)));
}

}  // namespace joinery::detail::gpu
