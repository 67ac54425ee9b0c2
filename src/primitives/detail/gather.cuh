#pragma once
// Internal: gather and scatter kernels by 64-bit row ids (He et al.'s gather/scatter primitives).
//
// Each thread owns VT consecutive items of a tile (blocked arrangement), VT * sizeof(T) a multiple
// of 16 bytes: the contiguous side (gather's output, scatter's input) and the row ids move in
// 16-byte vectors, so a warp's access to them is 512 contiguous bytes; the random side is one
// access per item. The vector path needs the contiguous pointers 16-byte aligned (checked on the
// host); the last partial items of a thread and unaligned inputs take the scalar path. Every index
// is 64-bit (tiles, items and ids), so columns past 2^31 elements are addressed correctly.
#include "primitives/detail/grid_size.cuh"

#include <joinery/types.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

struct gather_policy {
  static constexpr int threads_per_block = 256;
  static constexpr int vector_bytes = 16;
  /// Items per thread per tile for T: at least one 16-byte vector and at least 4 items in flight.
  template <class T>
  static constexpr int items_per_thread =
      vector_bytes / static_cast<int>(sizeof(T)) > 4 ? vector_bytes / static_cast<int>(sizeof(T))
                                                     : 4;
  template <class T>
  static constexpr int tile_items = threads_per_block * items_per_thread<T>;
  static constexpr int max_blocks_per_sm = 8;
};

/// Copies Bytes (a multiple of 16) between 16-byte aligned locations as 16-byte vectors.
template <int Bytes>
__device__ __forceinline__ void copy_vectors(void* dst, void const* src) {
  static_assert(Bytes % 16 == 0);
  auto* d = static_cast<uint4*>(dst);
  auto const* s = static_cast<uint4 const*>(src);
#pragma unroll
  for (int k = 0; k < Bytes / 16; ++k) { d[k] = s[k]; }
}

__device__ __forceinline__ bool id_in_range(size_type id, size_type size) {
  return static_cast<std::uint64_t>(id) < static_cast<std::uint64_t>(size);  // negatives too
}

/// One tile of a gather: out[i] = src[ids[i]].
template <class Policy, class T, bool Checked>
struct gather_agent {
  static constexpr int vt = Policy::template items_per_thread<T>;
  static constexpr int tile_items = Policy::template tile_items<T>;

  __device__ static bool process(size_type tile, T const* __restrict__ src, size_type src_size,
                                 size_type const* __restrict__ ids, size_type n,
                                 T* __restrict__ out, bool vector) {
    bool ok = true;
    size_type const first = tile * tile_items + static_cast<size_type>(threadIdx.x) * vt;
    if (vector && first + vt <= n) {
      alignas(16) size_type id[vt];
      alignas(16) T v[vt];
      copy_vectors<vt * sizeof(size_type)>(id, ids + first);
#pragma unroll
      for (int j = 0; j < vt; ++j) {
        if (Checked && !id_in_range(id[j], src_size)) {
          ok = false;
          v[j] = T{};
        } else {
          v[j] = src[id[j]];
        }
      }
      copy_vectors<vt * sizeof(T)>(out + first, v);
    } else {
      for (int j = 0; j < vt; ++j) {
        size_type const i = first + j;
        if (i >= n) { break; }
        size_type const id = ids[i];
        if (Checked && !id_in_range(id, src_size)) {
          ok = false;
          out[i] = T{};
        } else {
          out[i] = src[id];
        }
      }
    }
    return ok;
  }
};

/// One tile of a scatter: target[ids[i]] = src[i].
template <class Policy, class T, bool Checked>
struct scatter_agent {
  static constexpr int vt = Policy::template items_per_thread<T>;
  static constexpr int tile_items = Policy::template tile_items<T>;

  __device__ static bool process(size_type tile, T const* __restrict__ src, size_type n,
                                 size_type const* __restrict__ ids, T* __restrict__ target,
                                 size_type target_size, bool vector) {
    bool ok = true;
    size_type const first = tile * tile_items + static_cast<size_type>(threadIdx.x) * vt;
    if (vector && first + vt <= n) {
      alignas(16) size_type id[vt];
      alignas(16) T v[vt];
      copy_vectors<vt * sizeof(size_type)>(id, ids + first);
      copy_vectors<vt * sizeof(T)>(v, src + first);
#pragma unroll
      for (int j = 0; j < vt; ++j) {
        if (Checked && !id_in_range(id[j], target_size)) {
          ok = false;
        } else {
          target[id[j]] = v[j];
        }
      }
    } else {
      for (int j = 0; j < vt; ++j) {
        size_type const i = first + j;
        if (i >= n) { break; }
        size_type const id = ids[i];
        if (Checked && !id_in_range(id, target_size)) {
          ok = false;
        } else {
          target[id] = src[i];
        }
      }
    }
    return ok;
  }
};

template <class Policy, class T, bool Checked>
__global__ void __launch_bounds__(Policy::threads_per_block)
    gather_kernel(T const* __restrict__ src, size_type src_size, size_type const* __restrict__ ids,
                  size_type n, T* __restrict__ out, bool vector, unsigned int* bad) {
  using agent = gather_agent<Policy, T, Checked>;
  size_type const tiles = ceil_div(n, agent::tile_items);
  bool ok = true;
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    ok &= agent::process(tile, src, src_size, ids, n, out, vector);
  }
  if (Checked && !ok) { atomicOr(bad, 1U); }
}

template <class Policy, class T, bool Checked>
__global__ void __launch_bounds__(Policy::threads_per_block)
    scatter_kernel(T const* __restrict__ src, size_type n, size_type const* __restrict__ ids,
                   T* __restrict__ target, size_type target_size, bool vector, unsigned int* bad) {
  using agent = scatter_agent<Policy, T, Checked>;
  size_type const tiles = ceil_div(n, agent::tile_items);
  bool ok = true;
  for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    ok &= agent::process(tile, src, n, ids, target, target_size, vector);
  }
  if (Checked && !ok) { atomicOr(bad, 1U); }
}

}  // namespace joinery::detail::gpu
