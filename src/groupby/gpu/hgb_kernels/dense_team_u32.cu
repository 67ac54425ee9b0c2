// HGB's dense-tier kernels for 32-bit keys, teams of blocks (hgb_kernel_sets.cuh).
#include "groupby/gpu/detail/hgb_dense_agent.cuh"

namespace joinery::detail::gpu::gb::hgb {
template dense_kernel_set<std::uint32_t> dense_kernels<std::uint32_t, true>();
}  // namespace joinery::detail::gpu::gb::hgb
