#pragma once
// Internal (host side of the dispatch layer): device facts and grid planning for the radix
// kernels. Included only by .cu files.
#include "core/cuda_try.hpp"

#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace joinery::detail::gpu {

inline cudaStream_t to_cuda(stream_ref s) noexcept { return static_cast<cudaStream_t>(s.handle()); }

/// ceil(a / b) for a >= 0, b > 0, without overflow near the top of the range.
__host__ __device__ constexpr size_type ceil_div(size_type a, size_type b) noexcept {
  return a / b + (a % b != 0);
}

/// SMs of the current device.
inline int current_sm_count() {
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int sms = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

/// The most dynamic shared memory a block of the current device may opt into.
inline std::size_t current_max_block_smem() {
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  int bytes = 0;
  JOINERY_CUDA_TRY(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return static_cast<std::size_t>(bytes);
}

/// Lets the kernel at `entry` take `bytes` of dynamic shared memory on the current device. The
/// limit only ever grows, under a lock: host threads that launch one kernel with different sizes
/// at once (ranks sharing a GPU, concurrent joins) would otherwise lower it under each other's
/// launch. The CUDA attribute is per kernel and device, so is the record.
inline void allow_dynamic_smem_at(void const* entry, std::size_t bytes) {
  static std::mutex m;
  static std::map<std::pair<void const*, int>, std::size_t> granted;
  int dev = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&dev));
  std::lock_guard lock(m);
  auto& most = granted[{entry, dev}];
  if (bytes <= most) { return; }
  JOINERY_CUDA_TRY(cudaFuncSetAttribute(entry, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(bytes)));
  most = bytes;
}

template <class Kernel>
void allow_dynamic_smem(Kernel kernel, std::size_t bytes) {
  allow_dynamic_smem_at(reinterpret_cast<void const*>(kernel), bytes);
}

/// Blocks of `kernel` resident per SM with this block size and dynamic shared memory (>= 1).
template <class Kernel>
int resident_blocks_per_sm(Kernel kernel, int threads, std::size_t dynamic_smem) {
  int blocks = 0;
  JOINERY_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads,
                                                                 dynamic_smem));
  return std::max(blocks, 1);
}

/// A grid whose block b owns rows [b * items_per_block, min(n, (b + 1) * items_per_block)).
struct range_grid {
  int blocks = 0;
  size_type items_per_block = 0;
};

/// About `max_blocks` blocks of whole tiles each, none owning more than `max_items_per_block`
/// rows (then more blocks); no empty block. n > 0.
inline range_grid plan_range_grid(size_type n, int tile, size_type max_items_per_block,
                                  int max_blocks) {
  size_type const tiles = ceil_div(n, tile);
  size_type tiles_per_block = ceil_div(tiles, std::max(max_blocks, 1));
  tiles_per_block = std::max<size_type>(1, std::min(tiles_per_block, max_items_per_block / tile));
  range_grid g;
  g.items_per_block = tiles_per_block * tile;
  size_type const blocks = ceil_div(n, g.items_per_block);
  JOINERY_EXPECTS(blocks <= INT_MAX, "too many rows for one grid: " + std::to_string(n));
  g.blocks = static_cast<int>(blocks);
  return g;
}

/// Blocks for a grid-stride loop over n items (at least one).
inline int grid_stride_blocks(size_type n, int threads, int sms, int blocks_per_sm = 16) {
  size_type const want = std::max<size_type>(1, ceil_div(n, threads));
  return static_cast<int>(std::min<size_type>(want, static_cast<size_type>(sms) * blocks_per_sm));
}

/// Scratch size that is never 0: CUB treats a null temporary pointer as a size query.
constexpr std::size_t scratch_bytes(std::size_t cub_bytes) noexcept {
  return cub_bytes < 16 ? 16 : cub_bytes;
}

}  // namespace joinery::detail::gpu
