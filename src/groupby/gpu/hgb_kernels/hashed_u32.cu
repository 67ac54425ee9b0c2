// HGB's hashed tiers' kernels for 32-bit keys (hgb_kernel_sets.cuh).
#include "groupby/gpu/detail/hgb_shared_agent.cuh"

namespace joinery::detail::gpu::gb::hgb {
template hashed_kernel_set<std::uint32_t> hashed_kernels<std::uint32_t>();
}  // namespace joinery::detail::gpu::gb::hgb
