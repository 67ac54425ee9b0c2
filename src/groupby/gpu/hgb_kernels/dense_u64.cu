// HGB's dense-tier kernels for 64-bit keys, one block a window (hgb_kernel_sets.cuh).
#include "groupby/gpu/detail/hgb_dense_agent.cuh"

namespace joinery::detail::gpu::gb::hgb {
template dense_kernel_set<std::uint64_t> dense_kernels<std::uint64_t, false>();
}  // namespace joinery::detail::gpu::gb::hgb
