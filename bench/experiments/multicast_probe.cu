// Probe for issue 7 (session 17), g = 2^14..2^16 with teams of blocks (uniform int32 keys over g
// groups, two int32 value columns):
//   team  T blocks, no cluster, each loading every row with 16-byte __ldg and aggregating the keys
//         of its slice of the window in shared memory (the dense tier's teams, written for one
//         shape). MAX (4-byte accumulators), SUM2x32 (a 64-bit sum as two 32-bit shared atomics,
//         8 bytes a group), SUMLO (a 32-bit partial sum in shared memory, 4 bytes a group; an add
//         that overflows it moves +-2^32 into the group's sum in device memory), SUMSH (session
//         19: SUMLO whose overflows count in shared memory, 16-bit counters biased at 2^15, both
//         sums' in one word a slot; a counter 2^14 from its bias moves 2^14 * 2^32 to device
//         memory; one 2^15 - 2^12 away would be about to carry into its neighbour and is counted
//         as an error; 12 bytes + 1 a group), SUMSH2 (SUMSH with both sums' counts added in one
//         shared atomic a row, 0 when neither overflowed: no branch around it), SUMB8 (session
//         23: SUMSH2 with 8-bit counters biased at 0x80, flushed 0x20 from the bias, and the
//         groups met marked in a bitmap by the add that found a partial at 0, so that at 2^16 the
//         sums fit a team of 3: 10 bytes and a bit a group).
//   mc    (with the argument "multicast") a thread-block cluster of T blocks: member 0 multicasts
//         each tile (cp.async.bulk ... .multicast::cluster) into a ring of S shared-memory stages
//         of every member (mbarrier full/empty pipeline), so that a row crosses from L2 once and
//         not T times; each member aggregates its slice from its own shared memory. Its first run
//         (H200) was 2-6x slower than the plain teams: bench/results/nvidia-h200/
//         multicast-probe-s17.txt.
//   tma   (session 26) the team kernel with each tile brought into a one-tile shared stage by
//         bulk copies, one barrier a tile: slower at g = 2^16 (BENCHMARKS.md, gpu-groupby).
//   col   (session 26) SUMLO in a team split by value column: member m sums column m % 2 over
//         window m / 2, loading only the keys and its column.
//   SUMW  (session 27, with the argument "xchg") SUM with four fire-and-forget shared atomics a
//         row: each column's sum mod 2^32, both columns' sums of their top bytes, an 8-bit count
//         (team_w_kernel; "SUMWR": the count's atomic returned, an early stop). Built as the
//         dense tier's wrapped sums (src/groupby/gpu/dense_wsum.cu).
//   xchg  (session 27, with the argument "xchg" and XCHG=1 in the environment) a cluster of C
//         blocks whose members load disjoint rows and send each to the member owning its slice
//         through distributed shared memory (xchg_kernel), so that a row is loaded once and
//         updated once: 2.7-3.5 ms at 2^16, slower than the teams.
// Each variant is checked against a CPU reference at 2^22 rows, then timed at 2^28.
//
//   [XCHG=1] joinery_exp_multicast [multicast|xchg]   one line per variant: median ms, G rows/s, OK / WRONG
#include "exp_timing.cuh"

#include <cooperative_groups.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

namespace {

constexpr int max_stages = 4;
constexpr std::size_t smem_limit = 232448 - 1024;  // the opt-in limit less the static share

__device__ __forceinline__ std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}

__global__ void fill(int* k, int* v0, int* v1, long long n, int groups, int seed) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    k[i] = static_cast<int>(mix(i * 3 + seed) % groups);
    v0[i] = static_cast<int>(mix(i * 3 + 1 + seed * 7));
    v1[i] = static_cast<int>(mix(i * 3 + 2 + seed * 13));
  }
}

enum { MAX32 = 0, SUM2x32 = 1, SUMLO = 2, SUMSH = 3, SUMSH2 = 4, SUMB8 = 5 };

__device__ unsigned g_danger;  // SUMSH: counters that neared their range

template <int OP>
constexpr int acc_bytes = OP == SUM2x32 ? 8 : 4;
/// Counter bytes a slot after the second accumulator's array (both sums' counters).
template <int OP>
constexpr int cnt_bytes = OP == SUMB8 ? 2 : OP >= SUMSH ? 4 : 0;
/// SUMB8 marks the groups it met in a bitmap (a bit a slot), the others in a byte a slot.
template <int OP>
std::size_t seen_bytes(std::size_t slots) {
  return OP == SUMB8 ? (slots + 31) / 32 * 4 : slots;
}

template <int OP>
__device__ __forceinline__ void upd(unsigned char* acc, unsigned slot, int v) {
  if constexpr (OP == MAX32) {
    atomicMax(reinterpret_cast<int*>(acc) + slot, v);
  } else {
    unsigned* w = reinterpret_cast<unsigned*>(acc) + 2 * slot;
    unsigned const lo = static_cast<unsigned>(v);
    unsigned const old = atomicAdd(w, lo);
    unsigned const high = (v < 0 ? 0xffffffffu : 0u) + (old + lo < old ? 1u : 0u);
    if (high != 0) { atomicAdd(w + 1, high); }
  }
}

template <int OP>
__device__ void reset(unsigned char* a0, unsigned char* a1, unsigned char* seen, int slots,
                      int threads) {
  for (int i = threadIdx.x; i < slots; i += threads) {
    if constexpr (OP == MAX32) {
      reinterpret_cast<int*>(a0)[i] = INT_MIN;
      reinterpret_cast<int*>(a1)[i] = INT_MIN;
    } else if constexpr (OP == SUMB8) {
      reinterpret_cast<int*>(a0)[i] = 0;
      reinterpret_cast<int*>(a1)[i] = 0;
      if (i < (slots + 1) / 2) { reinterpret_cast<unsigned*>(a1 + slots * 4)[i] = 0x80808080u; }
      if (i < (slots + 31) / 32) { reinterpret_cast<unsigned*>(seen)[i] = 0; }
      continue;
    } else if constexpr (OP == SUMLO || OP == SUMSH || OP == SUMSH2) {
      reinterpret_cast<int*>(a0)[i] = 0;
      reinterpret_cast<int*>(a1)[i] = 0;
      if constexpr (OP != SUMLO) { reinterpret_cast<unsigned*>(a1 + slots * 4)[i] = 0x80008000u; }
    } else {
      reinterpret_cast<long long*>(a0)[i] = 0;
      reinterpret_cast<long long*>(a1)[i] = 0;
    }
    seen[i] = 0;
  }
}

template <int OP>
__device__ void merge(unsigned char const* a0, unsigned char const* a1, unsigned char const* seen,
                      int slots, long long first_key, int groups, int threads, long long* out0,
                      long long* out1, unsigned* seen_out) {
  for (int i = threadIdx.x; i < slots; i += threads) {
    long long const g = first_key + i;
    bool const met = OP == SUMB8 ? (reinterpret_cast<unsigned const*>(seen)[i >> 5] >> (i & 31)) & 1u
                                 : seen[i] != 0;
    if (!met || g >= groups) { continue; }
    atomicOr(seen_out + g, 1u);
    if constexpr (OP == MAX32) {
      atomicMax(out0 + g, static_cast<long long>(reinterpret_cast<int const*>(a0)[i]));
      atomicMax(out1 + g, static_cast<long long>(reinterpret_cast<int const*>(a1)[i]));
    } else if constexpr (OP == SUMSH || OP == SUMSH2 || OP == SUMB8) {
      long long c0 = 0, c1 = 0;  // the counters less their bias: units of 2^32
      auto const* cnt = reinterpret_cast<unsigned const*>(a1 + slots * 4);
      if constexpr (OP == SUMB8) {
        unsigned const c = cnt[i >> 1] >> ((i & 1) * 16);
        c0 = static_cast<long long>(c & 0xffu) - 0x80;
        c1 = static_cast<long long>((c >> 8) & 0xffu) - 0x80;
      } else {
        c0 = static_cast<long long>(cnt[i] & 0xffffu) - 0x8000;
        c1 = static_cast<long long>(cnt[i] >> 16) - 0x8000;
      }
      atomicAdd(reinterpret_cast<unsigned long long*>(out0) + g,
                static_cast<unsigned long long>(
                    static_cast<long long>(reinterpret_cast<int const*>(a0)[i])) +
                    (static_cast<unsigned long long>(c0) << 32));
      atomicAdd(reinterpret_cast<unsigned long long*>(out1) + g,
                static_cast<unsigned long long>(
                    static_cast<long long>(reinterpret_cast<int const*>(a1)[i])) +
                    (static_cast<unsigned long long>(c1) << 32));
    } else if constexpr (OP == SUMLO) {
      atomicAdd(reinterpret_cast<unsigned long long*>(out0) + g,
                static_cast<unsigned long long>(
                    static_cast<long long>(reinterpret_cast<int const*>(a0)[i])));
      atomicAdd(reinterpret_cast<unsigned long long*>(out1) + g,
                static_cast<unsigned long long>(
                    static_cast<long long>(reinterpret_cast<int const*>(a1)[i])));
    } else {
      atomicAdd(reinterpret_cast<unsigned long long*>(out0) + g,
                reinterpret_cast<unsigned long long const*>(a0)[i]);
      atomicAdd(reinterpret_cast<unsigned long long*>(out1) + g,
                reinterpret_cast<unsigned long long const*>(a1)[i]);
    }
  }
}

/// Rows of one thread: IPT consecutive rows, as one vector load a column.
template <int IPT>
__device__ __forceinline__ void load_rows(int const* p, int (&x)[IPT]) {
  if constexpr (IPT == 4) {
    int4 const a = *reinterpret_cast<int4 const*>(p);
    x[0] = a.x; x[1] = a.y; x[2] = a.z; x[3] = a.w;
  } else if constexpr (IPT == 2) {
    int2 const a = *reinterpret_cast<int2 const*>(p);
    x[0] = a.x; x[1] = a.y;
  } else {
    x[0] = *p;
  }
}

/// SUMLO: a 32-bit partial sum in shared memory; an add that overflows it (signed) moves
/// +-2^32 into the group's 64-bit sum in device memory.
__device__ __forceinline__ void add_lo(unsigned char* acc, unsigned slot, int v, long long* out,
                                       unsigned key) {
  int const old = atomicAdd(reinterpret_cast<int*>(acc) + slot, v);
  int const now = static_cast<int>(static_cast<unsigned>(old) + static_cast<unsigned>(v));
  if (((old ^ now) & (v ^ now)) < 0) {
    atomicAdd(reinterpret_cast<unsigned long long*>(out) + key,
              v < 0 ? static_cast<unsigned long long>(-(1LL << 32)) : (1ULL << 32));
  }
}

/// SUMSH: SUMLO with the overflow counted in the slot's 16-bit half of `cnt`.
__device__ __forceinline__ void add_sh(unsigned char* acc, unsigned* cnt, unsigned slot, int v,
                                       int shift, long long* out, unsigned key) {
  int const old = atomicAdd(reinterpret_cast<int*>(acc) + slot, v);
  int const now = static_cast<int>(static_cast<unsigned>(old) + static_cast<unsigned>(v));
  if (((old ^ now) & (v ^ now)) < 0) {
    unsigned const one = 1u << shift;
    unsigned const was = atomicAdd(cnt + slot, v < 0 ? 0u - one : one);
    unsigned const h = (((was >> shift) & 0xffffu) + (v < 0 ? 0xffffu : 1u)) & 0xffffu;
    if (h == 0x8000u + 0x4000u || h == 0x8000u - 0x4000u) {
      bool const up = h > 0x8000u;
      atomicAdd(cnt + slot, up ? 0u - (0x4000u << shift) : (0x4000u << shift));
      atomicAdd(reinterpret_cast<unsigned long long*>(out) + key,
                up ? (0x4000ULL << 32) : static_cast<unsigned long long>(-(0x4000LL << 32)));
    } else if (h >= 0xf000u || h <= 0x1000u) {
      atomicAdd(&g_danger, 1u);
    }
  }
}

/// SUMSH2: both sums of a row, their overflows counted in one shared atomic.
__device__ __forceinline__ void add_sh2(unsigned char* a0, unsigned char* a1, unsigned* cnt,
                                        unsigned slot, int x0, int x1, long long* out0,
                                        long long* out1, unsigned key) {
  int const o0 = atomicAdd(reinterpret_cast<int*>(a0) + slot, x0);
  int const o1 = atomicAdd(reinterpret_cast<int*>(a1) + slot, x1);
  int const n0 = static_cast<int>(static_cast<unsigned>(o0) + static_cast<unsigned>(x0));
  int const n1 = static_cast<int>(static_cast<unsigned>(o1) + static_cast<unsigned>(x1));
  int const d0 = ((o0 ^ n0) & (x0 ^ n0)) < 0 ? (x0 < 0 ? -1 : 1) : 0;
  int const d1 = ((o1 ^ n1) & (x1 ^ n1)) < 0 ? (x1 < 0 ? -1 : 1) : 0;
  unsigned const was =
      atomicAdd(cnt + slot, static_cast<unsigned>(d0) + (static_cast<unsigned>(d1) << 16));
  unsigned const h0 = ((was & 0xffffu) + static_cast<unsigned>(d0)) & 0xffffu;
  unsigned const h1 = ((was >> 16) + static_cast<unsigned>(d1)) & 0xffffu;
  bool const f0 = d0 != 0 && (h0 == 0xc000u || h0 == 0x4000u);
  bool const f1 = d1 != 0 && (h1 == 0xc000u || h1 == 0x4000u);
  if (f0 || f1) {
    if (f0) {
      atomicAdd(cnt + slot, d0 > 0 ? 0u - 0x4000u : 0x4000u);
      atomicAdd(reinterpret_cast<unsigned long long*>(out0) + key,
                d0 > 0 ? (0x4000ULL << 32) : static_cast<unsigned long long>(-(0x4000LL << 32)));
    }
    if (f1) {
      atomicAdd(cnt + slot, d1 > 0 ? 0u - (0x4000u << 16) : (0x4000u << 16));
      atomicAdd(reinterpret_cast<unsigned long long*>(out1) + key,
                d1 > 0 ? (0x4000ULL << 32) : static_cast<unsigned long long>(-(0x4000LL << 32)));
    }
  } else if (h0 - 0x1000u >= 0xe000u || h1 - 0x1000u >= 0xe000u) {
    atomicAdd(&g_danger, 1u);
  }
}

/// SUMB8 (session 23): both sums of a row, their overflows counted in 8-bit counters biased at
/// 0x80, the slot's two in one 16-bit half of a word (2 bytes a slot, not 4); a counter 0x20 from
/// its bias moves 0x20 * 2^32 to device memory. The group's bit is set by the add that found its
/// first partial at 0 (the first add always does), so no byte a slot is stored a row.
__device__ __forceinline__ void add_b8(unsigned char* a0, unsigned char* a1, unsigned* cnt,
                                       unsigned* bits, unsigned slot, int x0, int x1,
                                       long long* out0, long long* out1, unsigned key) {
  int const o0 = atomicAdd(reinterpret_cast<int*>(a0) + slot, x0);
  int const o1 = atomicAdd(reinterpret_cast<int*>(a1) + slot, x1);
  if (o0 == 0) { atomicOr(bits + (slot >> 5), 1u << (slot & 31)); }
  int const n0 = static_cast<int>(static_cast<unsigned>(o0) + static_cast<unsigned>(x0));
  int const n1 = static_cast<int>(static_cast<unsigned>(o1) + static_cast<unsigned>(x1));
  int const d0 = ((o0 ^ n0) & (x0 ^ n0)) < 0 ? (x0 < 0 ? -1 : 1) : 0;
  int const d1 = ((o1 ^ n1) & (x1 ^ n1)) < 0 ? (x1 < 0 ? -1 : 1) : 0;
  unsigned const shift = (slot & 1u) * 16u;
  unsigned* const w = cnt + (slot >> 1);
  unsigned const was = atomicAdd(w, static_cast<unsigned>(d0 + d1 * 256) << shift);
  int const h0 = static_cast<int>((was >> shift) & 0xffu) + d0;
  int const h1 = static_cast<int>((was >> (shift + 8)) & 0xffu) + d1;
  bool const f0 = d0 != 0 && (h0 == 0xa0 || h0 == 0x60);
  bool const f1 = d1 != 0 && (h1 == 0xa0 || h1 == 0x60);
  if (f0 || f1) {
    if (f0) {
      atomicAdd(w, static_cast<unsigned>(d0 > 0 ? -0x20 : 0x20) << shift);
      atomicAdd(reinterpret_cast<unsigned long long*>(out0) + key,
                d0 > 0 ? (0x20ULL << 32) : static_cast<unsigned long long>(-(0x20LL << 32)));
    }
    if (f1) {
      atomicAdd(w, static_cast<unsigned>(d1 > 0 ? -0x20 : 0x20) << (shift + 8));
      atomicAdd(reinterpret_cast<unsigned long long*>(out1) + key,
                d1 > 0 ? (0x20ULL << 32) : static_cast<unsigned long long>(-(0x20LL << 32)));
    }
  } else if (h0 - 0x10 >= 0xe0 || h1 - 0x10 >= 0xe0 || h0 < 0x10 || h1 < 0x10) {
    atomicAdd(&g_danger, 1u);
  }
}

template <int OP, int IPT>
__device__ __forceinline__ void aggregate(int const (&kk)[IPT], int const (&x0)[IPT],
                                          int const (&x1)[IPT], unsigned first_key, int slots,
                                          unsigned char* a0, unsigned char* a1,
                                          unsigned char* seen, long long* out0 = nullptr,
                                          long long* out1 = nullptr) {
#pragma unroll
  for (int j = 0; j < IPT; ++j) {
    unsigned const local = static_cast<unsigned>(kk[j]) - first_key;
    if (local < static_cast<unsigned>(slots)) {
      if constexpr (OP != SUMB8) { seen[local] = 1; }
      if constexpr (OP == SUMB8) {
        auto* cnt = reinterpret_cast<unsigned*>(a1 + static_cast<std::size_t>(slots) * 4);
        add_b8(a0, a1, cnt, reinterpret_cast<unsigned*>(seen), local, x0[j], x1[j], out0, out1,
               static_cast<unsigned>(kk[j]));
      } else if constexpr (OP == SUMSH2) {
        auto* cnt = reinterpret_cast<unsigned*>(a1 + static_cast<std::size_t>(slots) * 4);
        add_sh2(a0, a1, cnt, local, x0[j], x1[j], out0, out1, static_cast<unsigned>(kk[j]));
      } else if constexpr (OP == SUMSH) {
        auto* cnt = reinterpret_cast<unsigned*>(a1 + static_cast<std::size_t>(slots) * 4);
        add_sh(a0, cnt, local, x0[j], 0, out0, static_cast<unsigned>(kk[j]));
        add_sh(a1, cnt, local, x1[j], 16, out1, static_cast<unsigned>(kk[j]));
      } else if constexpr (OP == SUMLO) {
        add_lo(a0, local, x0[j], out0, static_cast<unsigned>(kk[j]));
        add_lo(a1, local, x1[j], out1, static_cast<unsigned>(kk[j]));
      } else {
        upd<OP>(a0, local, x0[j]);
        upd<OP>(a1, local, x1[j]);
      }
    }
  }
}

/// A thread's IPT rows of tile t (THREADS * IPT rows), as runs of 4 in 16-byte loads.
template <int THREADS, int IPT>
__device__ __forceinline__ void load_team_tile(int const* __restrict__ k,
                                               int const* __restrict__ v0,
                                               int const* __restrict__ v1, long long t,
                                               int (&kk)[IPT], int (&x0)[IPT], int (&x1)[IPT]) {
  constexpr long long tile = static_cast<long long>(THREADS) * IPT;
#pragma unroll
  for (int h = 0; h < IPT / 4; ++h) {
    long long const off = t * tile + (static_cast<long long>(h) * THREADS + threadIdx.x) * 4;
    int4 const a = __ldg(reinterpret_cast<int4 const*>(k + off));
    int4 const b = __ldg(reinterpret_cast<int4 const*>(v0 + off));
    int4 const c = __ldg(reinterpret_cast<int4 const*>(v1 + off));
    kk[h * 4] = a.x; kk[h * 4 + 1] = a.y; kk[h * 4 + 2] = a.z; kk[h * 4 + 3] = a.w;
    x0[h * 4] = b.x; x0[h * 4 + 1] = b.y; x0[h * 4 + 2] = b.z; x0[h * 4 + 3] = b.w;
    x1[h * 4] = c.x; x1[h * 4 + 1] = c.y; x1[h * 4 + 2] = c.z; x1[h * 4 + 3] = c.w;
  }
}

/// The tier as built: T consecutive blocks walk the same tiles, each loading every row.
template <int OP>
__global__ void __launch_bounds__(1024, 1)
    team_kernel(int const* __restrict__ k, int const* __restrict__ v0, int const* __restrict__ v1,
                long long n, int slots, int team, int groups, long long* out0, long long* out1,
                unsigned* seen_out) {
  constexpr int threads = 1024;
  constexpr int ipt = 8;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* a0 = smem;
  unsigned char* a1 = smem + static_cast<std::size_t>(slots) * acc_bytes<OP>;
  unsigned char* seen = a1 + static_cast<std::size_t>(slots) * acc_bytes<OP> +
                        ((static_cast<std::size_t>(slots) * cnt_bytes<OP> + 3) & ~std::size_t{3});
  reset<OP>(a0, a1, seen, slots, threads);
  __syncthreads();
  unsigned const first_key = (blockIdx.x % team) * static_cast<unsigned>(slots);
  constexpr long long tile = static_cast<long long>(threads) * ipt;
  long long const tiles = n / tile;
  for (long long t = blockIdx.x / team; t < tiles; t += gridDim.x / team) {
    int kk[ipt], x0[ipt], x1[ipt];
    load_team_tile<threads>(k, v0, v1, t, kk, x0, x1);
    aggregate<OP, ipt>(kk, x0, x1, first_key, slots, a0, a1, seen, out0, out1);
  }
  __syncthreads();
  merge<OP>(a0, a1, seen, slots, first_key, groups, threads, out0, out1, seen_out);
}

/// Session 26: the teams with each tile brought into a one-tile shared stage by three bulk
/// copies (keys, both values) that one thread issues for the block's next tile once every thread
/// has its rows in registers (one barrier a tile), so that a tile's loads overlap the updates of
/// the one before: what took radix_partition_tuples' pass from 1.38 to 1.14 ms.
template <int OP, int IPT>
__global__ void __launch_bounds__(1024, 1)
    tma_team_kernel(int const* __restrict__ k, int const* __restrict__ v0,
                    int const* __restrict__ v1, long long n, int slots, int team, int groups,
                    long long* out0, long long* out1, unsigned* seen_out) {
  constexpr int threads = 1024;
  constexpr int rows = threads * IPT;
  constexpr unsigned col = rows * 4u;
  extern __shared__ __align__(128) unsigned char smem[];
  int* const stage = reinterpret_cast<int*>(smem);
  auto* const bar = reinterpret_cast<std::uint64_t*>(smem + 3 * col);
  unsigned char* a0 = smem + 3 * col + 16;
  unsigned char* a1 = a0 + static_cast<std::size_t>(slots) * acc_bytes<OP>;
  unsigned char* seen = a1 + static_cast<std::size_t>(slots) * acc_bytes<OP> +
                        ((static_cast<std::size_t>(slots) * cnt_bytes<OP> + 3) & ~std::size_t{3});
  reset<OP>(a0, a1, seen, slots, threads);
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  unsigned const first_key = (blockIdx.x % team) * static_cast<unsigned>(slots);
  long long const tiles = n / rows;
  long long const stride = gridDim.x / team;
  auto const issue = [&](long long tt) {
    std::uint32_t const bytes = col;
    std::uint32_t const all = 3 * col;
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar, all);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage, k + tt * rows, bytes, bar);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage + rows, v0 + tt * rows, bytes,
                       bar);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage + 2 * rows, v1 + tt * rows,
                       bytes, bar);
  };
  long long t = blockIdx.x / team;
  if (threadIdx.x == 0 && t < tiles) { issue(t); }
  unsigned parity = 0;
  for (; t < tiles; t += stride) {
    while (!ptx::mbarrier_try_wait_parity(bar, parity)) {}
    parity ^= 1u;
    int kk[IPT], x0[IPT], x1[IPT];
    load_rows<IPT>(stage + threadIdx.x * IPT, kk);
    load_rows<IPT>(stage + rows + threadIdx.x * IPT, x0);
    load_rows<IPT>(stage + 2 * rows + threadIdx.x * IPT, x1);
    __syncthreads();  // the stage is free for the next tile
    if (threadIdx.x == 0 && t + stride < tiles) { issue(t + stride); }
    aggregate<OP, IPT>(kk, x0, x1, first_key, slots, a0, a1, seen, out0, out1);
  }
  __syncthreads();
  merge<OP>(a0, a1, seen, slots, first_key, groups, threads, out0, out1, seen_out);
}

/// Session 26: a team split by value column. Member m sums column m % 2 over window m / 2 of the
/// keys in SUMLO partials (4 bytes and a seen byte a group, overflows spilled as in SUMLO), and
/// loads only the keys and its column: at g = 2^16 a window of 2^15 groups (160 KiB) in a team of
/// 4, or 21,846 in a team of 6 (two blocks an SM).
__global__ void __launch_bounds__(1024)
    col_team_kernel(int const* __restrict__ k, int const* __restrict__ v0,
                    int const* __restrict__ v1, long long n, int slots, int team, int groups,
                    long long* out0, long long* out1, unsigned* seen_out) {
  constexpr int threads = 1024;
  constexpr int ipt = 8;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* const acc = smem;
  unsigned char* const seen = smem + static_cast<std::size_t>(slots) * 4;
  for (int i = threadIdx.x; i < slots; i += threads) {
    reinterpret_cast<int*>(acc)[i] = 0;
    seen[i] = 0;
  }
  __syncthreads();
  int const member = static_cast<int>(blockIdx.x % team);
  int const col = member & 1;
  unsigned const first_key = static_cast<unsigned>(member >> 1) * static_cast<unsigned>(slots);
  int const* __restrict__ v = col ? v1 : v0;
  long long* const out = col ? out1 : out0;
  constexpr long long tile = static_cast<long long>(threads) * ipt;
  long long const tiles = n / tile;
  for (long long t = blockIdx.x / team; t < tiles; t += gridDim.x / team) {
    int kk[ipt], x[ipt];
#pragma unroll
    for (int h = 0; h < ipt / 4; ++h) {
      long long const off = t * tile + (static_cast<long long>(h) * threads + threadIdx.x) * 4;
      int4 const a = __ldg(reinterpret_cast<int4 const*>(k + off));
      int4 const b = __ldg(reinterpret_cast<int4 const*>(v + off));
      kk[h * 4] = a.x; kk[h * 4 + 1] = a.y; kk[h * 4 + 2] = a.z; kk[h * 4 + 3] = a.w;
      x[h * 4] = b.x; x[h * 4 + 1] = b.y; x[h * 4 + 2] = b.z; x[h * 4 + 3] = b.w;
    }
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      unsigned const local = static_cast<unsigned>(kk[j]) - first_key;
      if (local < static_cast<unsigned>(slots)) {
        seen[local] = 1;
        add_lo(acc, local, x[j], out, static_cast<unsigned>(kk[j]));
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < slots; i += threads) {
    long long const g = static_cast<long long>(first_key) + i;
    if (seen[i] == 0 || g >= groups) { continue; }
    if (col == 0) { atomicOr(seen_out + g, 1u); }
    atomicAdd(reinterpret_cast<unsigned long long*>(out) + g,
              static_cast<unsigned long long>(
                  static_cast<long long>(reinterpret_cast<int const*>(acc)[i])));
  }
}

/// Session 27: a thread-block cluster of C blocks (one an SM) shares the window, each block
/// holding the accumulators of its slice, and exchanges rows through distributed shared memory
/// instead of every member loading every row: each step, member r loads its own 1024 * IPT rows
/// of the cluster's C * 1024 * IPT, sends each row (its slot in the owner's slice and both values,
/// 10 bytes) into the owner's inbox (one region a sender, `cap` rows; a warp takes its rows'
/// places with one shared atomic a destination), a cluster barrier, then each member aggregates
/// its inbox. Two inboxes alternate, so one barrier a step suffices (a sender writes an inbox
/// again only after the barrier its owner reached once done with it). Rows a full region cannot
/// take go to the group's device-memory result directly (exact, for skew). The next step's rows
/// are loaded before the barrier.
template <int OP, int C, int IPT, int MODE>
__global__ void __launch_bounds__(1024, 1)
    xchg_kernel(int const* __restrict__ k, int const* __restrict__ v0, int const* __restrict__ v1,
                long long n, int slots, int cap, int groups, long long* out0, long long* out1,
                unsigned* seen_out) {
  static_assert(OP == MAX32 || OP == SUMLO, "MAX or spilled 32-bit sums");
  constexpr int threads = 1024;
  constexpr long long sub = static_cast<long long>(threads) * IPT;
  constexpr long long step_rows = sub * C;
  extern __shared__ __align__(128) unsigned char smem[];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned const me = cluster.block_rank();
  unsigned const lane = threadIdx.x & 31u;
  auto const rows = static_cast<std::size_t>(slots);
  unsigned char* a0 = smem;
  unsigned char* a1 = smem + rows * 4;
  unsigned char* seen = a1 + rows * 4;
  std::size_t off = (rows * 9 + 15) & ~std::size_t{15};
  unsigned* cnt = reinterpret_cast<unsigned*>(smem + off);  // [2][C] this sender's places taken
  unsigned* hdr = cnt + 2 * C;                              // [2][C] rows each sender sent here
  off += (4 * C * 4 + 15) & ~std::size_t{15};
  uint2* vals = reinterpret_cast<uint2*>(smem + off);                     // [2][C][cap]
  auto* sl = reinterpret_cast<unsigned short*>(vals + 2 * C * static_cast<std::size_t>(cap));
  reset<OP>(a0, a1, seen, slots, threads);
  if (threadIdx.x < 2 * C) { cnt[threadIdx.x] = 0; }
  unsigned const first_key = me * static_cast<unsigned>(slots);
  cluster.sync();
  long long const tiles = n / step_rows;
  long long const clusters = gridDim.x / C;
  int kk[IPT], x0[IPT], x1[IPT];
  auto const load = [&](long long t) {
    if (t >= tiles) { return; }
#pragma unroll
    for (int h = 0; h < IPT / 2; ++h) {
      long long const o = t * step_rows + me * sub + (static_cast<long long>(h) * threads + threadIdx.x) * 2;
      int2 const a = __ldg(reinterpret_cast<int2 const*>(k + o));
      int2 const b = __ldg(reinterpret_cast<int2 const*>(v0 + o));
      int2 const c = __ldg(reinterpret_cast<int2 const*>(v1 + o));
      kk[2 * h] = a.x; kk[2 * h + 1] = a.y;
      x0[2 * h] = b.x; x0[2 * h + 1] = b.y;
      x1[2 * h] = c.x; x1[2 * h + 1] = c.y;
    }
  };
  auto const direct = [&](unsigned key, int x, int y) {
    atomicOr(seen_out + key, 1u);
    if constexpr (OP == MAX32) {
      atomicMax(out0 + key, static_cast<long long>(x));
      atomicMax(out1 + key, static_cast<long long>(y));
    } else {
      atomicAdd(reinterpret_cast<unsigned long long*>(out0) + key,
                static_cast<unsigned long long>(static_cast<long long>(x)));
      atomicAdd(reinterpret_cast<unsigned long long*>(out1) + key,
                static_cast<unsigned long long>(static_cast<long long>(y)));
    }
  };
  int p = 0;
  load(blockIdx.x / C);
  for (long long t = blockIdx.x / C; t < tiles; t += clusters, p ^= 1) {
#pragma unroll
    for (int j = 0; j < IPT; ++j) {
      auto const key = static_cast<unsigned>(kk[j]);
      unsigned o = 0;
#pragma unroll
      for (int q = 1; q < C; ++q) { o += key >= static_cast<unsigned>(q * slots) ? 1u : 0u; }
      unsigned const slot = key - o * static_cast<unsigned>(slots);
      unsigned mine = 0, lane_q = 0;
#pragma unroll
      for (int q = 0; q < C; ++q) {
        unsigned const m = __ballot_sync(0xffffffffu, o == static_cast<unsigned>(q));
        if (o == static_cast<unsigned>(q)) { mine = m; }
        if (lane == static_cast<unsigned>(q)) { lane_q = m; }
      }
      unsigned base = 0;
      if (lane < C && lane_q != 0) { base = atomicAdd(cnt + p * C + lane, __popc(lane_q)); }
      base = __shfl_sync(0xffffffffu, base, static_cast<int>(o));
      unsigned const pos = base + __popc(mine & ((1u << lane) - 1u));
      if (pos < static_cast<unsigned>(cap)) {
        // MODE 1 and 2 (timing only, wrong sums): every row into this block's own inbox, in
        // the region of its owner.
        unsigned const to = MODE == 0 ? o : me;
        std::size_t const idx = (static_cast<std::size_t>(p) * C + (MODE == 0 ? me : o)) * cap + pos;
        cluster.map_shared_rank(vals, to)[idx] =
            make_uint2(static_cast<unsigned>(x0[j]), static_cast<unsigned>(x1[j]));
        cluster.map_shared_rank(sl, to)[idx] = static_cast<unsigned short>(slot);
      } else {
        direct(key, x0[j], x1[j]);
      }
    }
    load(t + clusters);
    __syncthreads();
    if (threadIdx.x < C) {
      unsigned* const peer = cluster.map_shared_rank(hdr, MODE == 0 ? threadIdx.x : me);
      peer[p * C + (MODE == 0 ? me : threadIdx.x)] =
          min(cnt[p * C + threadIdx.x], static_cast<unsigned>(cap));
      cnt[p * C + threadIdx.x] = 0;
    }
    // MODE 2: no cluster barrier (a block barrier), to time the exchange without it.
    if constexpr (MODE == 2) {
      __syncthreads();
    } else {
      cluster.sync();
    }
    unsigned ends[C];
    unsigned total = 0;
#pragma unroll
    for (int s = 0; s < C; ++s) {
      total += hdr[p * C + s];
      ends[s] = total;
    }
    for (unsigned i = threadIdx.x; i < total; i += threads) {
      unsigned s = 0, before = 0;
#pragma unroll
      for (int q = 0; q < C - 1; ++q) {
        bool const later = i >= ends[q];
        s += later ? 1u : 0u;
        before = later ? ends[q] : before;
      }
      std::size_t const idx = (static_cast<std::size_t>(p) * C + s) * cap + (i - before);
      unsigned const slot = sl[idx];
      uint2 const v = vals[idx];
      seen[slot] = 1;
      if constexpr (OP == SUMLO) {
        add_lo(a0, slot, static_cast<int>(v.x), out0, first_key + slot);
        add_lo(a1, slot, static_cast<int>(v.y), out1, first_key + slot);
      } else {
        upd<OP>(a0, slot, static_cast<int>(v.x));
        upd<OP>(a1, slot, static_cast<int>(v.y));
      }
    }
  }
  // Rows past the last full step: straight to device memory.
  for (long long i = tiles * step_rows + blockIdx.x * static_cast<long long>(threads) + threadIdx.x;
       i < n; i += static_cast<long long>(gridDim.x) * threads) {
    direct(static_cast<unsigned>(k[i]), v0[i], v1[i]);
  }
  __syncthreads();
  merge<OP>(a0, a1, seen, slots, first_key, groups, threads, out0, out1, seen_out);
}

/// Waits for the phase of `parity` of a barrier of this block.
__device__ __forceinline__ void wait_parity(std::uint64_t* bar, unsigned parity) {
  while (!ptx::mbarrier_try_wait_parity(bar, parity)) {}
}

/// The cluster variant: member 0's thread 0 multicasts tile after tile into a ring of `stages`
/// stages of every member; a stage is refilled once every warp of every member arrived on member
/// 0's empty barrier of that stage. Each member's full barrier of a stage takes one arrival (its
/// thread 0, with the tile's bytes expected) and the copies' bytes.
template <int OP, int THREADS, int IPT>
__global__ void __launch_bounds__(THREADS, 1)
    mc_kernel(int const* __restrict__ k, int const* __restrict__ v0, int const* __restrict__ v1,
              long long n, int slots, int stages, int groups, long long* out0, long long* out1,
              unsigned* seen_out) {
  constexpr int rows = THREADS * IPT;
  constexpr unsigned col_bytes = rows * 4u;
  constexpr unsigned stage_bytes = 3 * col_bytes;
  constexpr int warps = THREADS / 32;
  extern __shared__ __align__(128) unsigned char smem[];
  auto* full = reinterpret_cast<std::uint64_t*>(smem + stages * stage_bytes);
  auto* empty = full + max_stages;
  unsigned char* a0 = reinterpret_cast<unsigned char*>(empty + max_stages);
  unsigned char* a1 = a0 + static_cast<std::size_t>(slots) * acc_bytes<OP>;
  unsigned char* seen = a1 + static_cast<std::size_t>(slots) * acc_bytes<OP>;

  cg::cluster_group cluster = cg::this_cluster();
  unsigned const team = cluster.num_blocks();
  unsigned const member = cluster.block_rank();
  long long const cid = blockIdx.x / team;
  long long const clusters = gridDim.x / team;
  long long const tiles = n / rows;
  long long const uses = tiles > cid ? (tiles - cid + clusters - 1) / clusters : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      ptx::mbarrier_init(full + s, 1);
      ptx::mbarrier_init(empty + s, team * warps);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  reset<OP>(a0, a1, seen, slots, THREADS);
  cluster.sync();  // every member's barriers exist before a copy or a remote arrival
  std::uint64_t* const empty0 = cluster.map_shared_rank(empty, 0);
  std::uint16_t const mask = static_cast<std::uint16_t>((1u << team) - 1u);
  auto const issue = [&](long long use) {
    int const s = static_cast<int>(use % stages);
    long long const row = (cid + use * clusters) * rows;
    unsigned char* dst = smem + s * stage_bytes;
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst, k + row, col_bytes, full + s, mask);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst + col_bytes, v0 + row, col_bytes,
                       full + s, mask);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, dst + 2 * col_bytes, v1 + row,
                       col_bytes, full + s, mask);
  };
  if (threadIdx.x == 0) {
    for (long long u = 0; u < stages && u < uses; ++u) {
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cluster, ptx::space_shared,
                                     full + u, stage_bytes);
      if (member == 0) { issue(u); }
    }
  }
  unsigned const first_key = member * static_cast<unsigned>(slots);
  for (long long use = 0; use < uses; ++use) {
    int const s = static_cast<int>(use % stages);
    if (member == 0 && threadIdx.x == 0 && use >= 1 && use - 1 + stages < uses) {
      long long const prev = use - 1;
      int const ps = static_cast<int>(prev % stages);
      unsigned const pp = static_cast<unsigned>((prev / stages) & 1);
      while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, empty + ps, pp)) {}
      issue(prev + stages);
    }
    wait_parity(full + s, static_cast<unsigned>((use / stages) & 1));
    auto const* base = reinterpret_cast<int const*>(smem + s * stage_bytes);
    int kk[IPT], x0[IPT], x1[IPT];
    load_rows<IPT>(base + threadIdx.x * IPT, kk);
    load_rows<IPT>(base + rows + threadIdx.x * IPT, x0);
    load_rows<IPT>(base + 2 * rows + threadIdx.x * IPT, x1);
    __syncwarp();
    if ((threadIdx.x & 31) == 0) {
      ptx::mbarrier_arrive(ptx::sem_release, ptx::scope_cluster, ptx::space_cluster, empty0 + s);
    }
    if (threadIdx.x == 0 && use + stages < uses) {
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cluster, ptx::space_shared,
                                     full + s, stage_bytes);
    }
    aggregate<OP, IPT>(kk, x0, x1, first_key, slots, a0, a1, seen, out0, out1);
  }
  cluster.sync();  // no member leaves while copies or arrivals may still reach it
  merge<OP>(a0, a1, seen, slots, first_key, groups, THREADS, out0, out1, seen_out);
}

/// Compacted teams (session 19): as team_kernel, but each warp first moves the rows of its
/// block's slice into a 32-row stage in shared memory (ballot, rank) and updates the stage once
/// it is full, all lanes busy. In team_kernel a warp runs the update body for every row in
/// which any lane holds one of its rows: with teams of T that is every row, at 1/T lanes busy.
constexpr std::size_t compact_stage_bytes = 32 * 32 * 3 * sizeof(int);

template <int OP>
__global__ void __launch_bounds__(1024, 1)
    team_compact_kernel(int const* __restrict__ k, int const* __restrict__ v0,
                        int const* __restrict__ v1, long long n, int slots, int team, int groups,
                        long long* out0, long long* out1, unsigned* seen_out) {
  constexpr int threads = 1024;
  constexpr int ipt = 8;
  extern __shared__ __align__(128) unsigned char smem[];
  unsigned char* a0 = smem;
  unsigned char* a1 = smem + static_cast<std::size_t>(slots) * acc_bytes<OP>;
  unsigned char* seen =
      a1 + static_cast<std::size_t>(slots) * (acc_bytes<OP> + (OP >= SUMSH ? 4 : 0));
  auto* stage = reinterpret_cast<int*>(seen + ((static_cast<std::size_t>(slots) + 15) & ~15ULL));
  unsigned const lane = threadIdx.x & 31;
  int* sk = stage + (threadIdx.x >> 5) * 96;
  int* s0 = sk + 32;
  int* s1 = sk + 64;
  reset<OP>(a0, a1, seen, slots, threads);
  __syncthreads();
  unsigned const first_key = (blockIdx.x % team) * static_cast<unsigned>(slots);
  constexpr long long tile = static_cast<long long>(threads) * ipt;
  long long const tiles = n / tile;
  int count = 0;
  auto const drain = [&] {
    __syncwarp();
    if (static_cast<int>(lane) < count) {
      int kk1[1] = {sk[lane]}, x01[1] = {s0[lane]}, x11[1] = {s1[lane]};
      aggregate<OP, 1>(kk1, x01, x11, first_key, slots, a0, a1, seen, out0, out1);
    }
    __syncwarp();
    count = 0;
  };
  for (long long t = blockIdx.x / team; t < tiles; t += gridDim.x / team) {
    int kk[ipt], x0[ipt], x1[ipt];
    load_team_tile<threads>(k, v0, v1, t, kk, x0, x1);
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      bool const mine = static_cast<unsigned>(kk[j]) - first_key < static_cast<unsigned>(slots);
      unsigned const ballot = __ballot_sync(0xffffffffu, mine);
      int const more = __popc(ballot);
      if (count + more > 32) { drain(); }
      if (mine) {
        int const at = count + __popc(ballot & ((1u << lane) - 1u));
        sk[at] = kk[j];
        s0[at] = x0[j];
        s1[at] = x1[j];
      }
      count += more;
    }
  }
  drain();
  __syncthreads();
  merge<OP>(a0, a1, seen, slots, first_key, groups, threads, out0, out1, seen_out);
}

struct data {
  int *k, *v0, *v1;
  long long n;
  int groups;
  std::vector<int> hk, hv0, hv1;
};

struct outputs {
  long long *o0, *o1;
  unsigned* so;
};

template <int OP>
bool check(data const& d, outputs const& o) {
  int const g = d.groups;
  std::vector<long long> r0(g), r1(g);
  std::vector<unsigned> rs(g);
  EXP_CHECK(cudaMemcpy(r0.data(), o.o0, g * 8, cudaMemcpyDeviceToHost));
  EXP_CHECK(cudaMemcpy(r1.data(), o.o1, g * 8, cudaMemcpyDeviceToHost));
  EXP_CHECK(cudaMemcpy(rs.data(), o.so, g * 4, cudaMemcpyDeviceToHost));
  std::vector<long long> e0(g, OP == MAX32 ? INT64_MIN : 0), e1(g, OP == MAX32 ? INT64_MIN : 0);
  std::vector<unsigned> es(g, 0);
  for (std::size_t i = 0; i < d.hk.size(); ++i) {
    int const x = d.hk[i];
    es[x] = 1;
    if (OP == MAX32) {
      e0[x] = std::max<long long>(e0[x], d.hv0[i]);
      e1[x] = std::max<long long>(e1[x], d.hv1[i]);
    } else {
      e0[x] += d.hv0[i];
      e1[x] += d.hv1[i];
    }
  }
  for (int x = 0; x < g; ++x) {
    if (es[x] != rs[x] || (es[x] && (e0[x] != r0[x] || e1[x] != r1[x]))) { return false; }
  }
  return true;
}

template <int OP>
void clear(data const& d, outputs const& o) {
  EXP_CHECK(cudaMemset(o.o0, OP == MAX32 ? 0x80 : 0, d.groups * 8));
  EXP_CHECK(cudaMemset(o.o1, OP == MAX32 ? 0x80 : 0, d.groups * 8));
  EXP_CHECK(cudaMemset(o.so, 0, d.groups * 4));
}

template <int OP>
void report(char const* what, data const& d, int team, char const* shape, std::size_t smem,
            int grid, float ms, bool checked, bool ok) {
  std::printf("%-7s g=%-6d %-4s T=%d %-16s smem=%-6zu grid=%-4d %.3f ms %6.1f G rows/s %s\n",
              OP == MAX32     ? "MAX"
              : OP == SUM2x32 ? "SUM2x32"
              : OP == SUMLO   ? "SUMLO"
              : OP == SUMSH   ? "SUMSH"
              : OP == SUMSH2  ? "SUMSH2"
                              : "SUMB8", d.groups, what, team, shape, smem, grid, ms,
              static_cast<double>(d.n) / ms / 1e6, checked ? (ok ? "OK" : "WRONG") : "");
}

/// One team variant: `staged` runs team_compact_kernel (its stage after the seen flags), else
/// team_kernel.
template <int OP>
void run_team(data const& d, outputs const& o, int team, int sms, bool checked, bool staged) {
  int const slots = (d.groups + team - 1) / team;
  auto const rows = static_cast<std::size_t>(slots);
  if (staged && OP == SUMB8) { return; }
  std::size_t const accs =
      rows * 2 * acc_bytes<OP> + ((rows * cnt_bytes<OP> + 3) & ~std::size_t{3});
  std::size_t const smem = staged ? accs + ((rows + 15) & ~std::size_t{15}) + compact_stage_bytes
                                  : accs + seen_bytes<OP>(rows);
  if (smem > smem_limit) { return; }
  auto kern = staged ? team_compact_kernel<OP> : team_kernel<OP>;
  EXP_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(smem)));
  int const grid = sms / team * team;
  auto const launch = [&] {
    clear<OP>(d, o);
    kern<<<grid, 1024, smem>>>(d.k, d.v0, d.v1, d.n, slots, team, d.groups, o.o0, o.o1, o.so);
  };
  float const ms = median_ms(launch);
  unsigned danger = 0;
  if constexpr (OP >= SUMSH) {
    EXP_CHECK(cudaMemcpyFromSymbol(&danger, g_danger, sizeof danger));
    unsigned const zero = 0;
    EXP_CHECK(cudaMemcpyToSymbol(g_danger, &zero, sizeof zero));
  }
  std::string shape = staged ? "staged" : "ldg ipt=8";
  if (danger != 0) { shape += " DANGER"; }
  report<OP>(staged ? "cmp" : "team", d, team, shape.c_str(), smem, grid, ms, checked,
             checked && check<OP>(d, o));
}

template <int OP, int IPT>
void run_tma(data const& d, outputs const& o, int team, int sms, bool checked) {
  int const slots = (d.groups + team - 1) / team;
  auto const rows = static_cast<std::size_t>(slots);
  std::size_t const accs =
      rows * 2 * acc_bytes<OP> + ((rows * cnt_bytes<OP> + 3) & ~std::size_t{3});
  std::size_t const smem = 3 * 1024 * IPT * 4 + 16 + accs + seen_bytes<OP>(rows);
  if (smem > smem_limit) { return; }
  auto kern = tma_team_kernel<OP, IPT>;
  EXP_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(smem)));
  int const grid = sms / team * team;
  auto const launch = [&] {
    clear<OP>(d, o);
    kern<<<grid, 1024, smem>>>(d.k, d.v0, d.v1, d.n, slots, team, d.groups, o.o0, o.o1, o.so);
  };
  float const ms = median_ms(launch);
  char shape[32];
  std::snprintf(shape, sizeof shape, "bulk ipt=%d", IPT);
  report<OP>("tma", d, team, shape, smem, grid, ms, checked, checked && check<OP>(d, o));
}

void run_col(data const& d, outputs const& o, int team, int sms, bool checked) {
  int const windows = team / 2;
  int const slots = (d.groups + windows - 1) / windows;
  std::size_t const smem = (static_cast<std::size_t>(slots) * 5 + 15) & ~std::size_t{15};
  if (smem > smem_limit) { return; }
  EXP_CHECK(cudaFuncSetAttribute(col_team_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(smem)));
  int per_sm = 0;
  EXP_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, col_team_kernel, 1024, smem));
  int const grid = std::max(per_sm, 1) * sms / team * team;
  auto const launch = [&] {
    clear<SUMLO>(d, o);
    col_team_kernel<<<grid, 1024, smem>>>(d.k, d.v0, d.v1, d.n, slots, team, d.groups, o.o0, o.o1,
                                          o.so);
  };
  float const ms = median_ms(launch);
  char shape[32];
  std::snprintf(shape, sizeof shape, "by column, %d/SM", per_sm);
  report<SUMLO>("col", d, team, shape, smem, grid, ms, checked, checked && check<SUMLO>(d, o));
}

template <int OP, int THREADS, int IPT>
void run_mc(data const& d, outputs const& o, int team, bool checked) {
  int const slots = (d.groups + team - 1) / team;
  constexpr std::size_t stage_bytes = 3 * THREADS * IPT * 4;
  std::size_t const table = static_cast<std::size_t>(slots) * (2 * acc_bytes<OP> + 1) +
                            2 * max_stages * 8;
  int stages = max_stages;
  while (stages >= 2 && stages * stage_bytes + table > smem_limit) { --stages; }
  if (stages < 2) { return; }
  std::size_t const smem = stages * stage_bytes + table;
  auto kern = mc_kernel<OP, THREADS, IPT>;
  EXP_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(smem)));
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(team);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.blockDim = dim3(THREADS);
  cfg.dynamicSmemBytes = smem;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  cfg.gridDim = dim3(static_cast<unsigned>(team));
  int clusters = 0;
  EXP_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg));
  if (clusters == 0) { return; }
  cfg.gridDim = dim3(static_cast<unsigned>(clusters * team));
  auto const launch = [&] {
    clear<OP>(d, o);
    EXP_CHECK(cudaLaunchKernelEx(&cfg, kern, static_cast<int const*>(d.k),
                                 static_cast<int const*>(d.v0), static_cast<int const*>(d.v1), d.n,
                                 slots, stages, d.groups, o.o0, o.o1, o.so));
  };
  float const ms = median_ms(launch);
  char shape[32];
  std::snprintf(shape, sizeof shape, "thr=%d ipt=%d S=%d", THREADS, IPT, stages);
  report<OP>("mc", d, team, shape, smem, clusters * team, ms, checked,
             checked && check<OP>(d, o));
}

/// Session 27: SUM of both columns with no returned atomic. A slot holds each column's sum
/// modulo 2^32 (S), one word W with both columns' sums of their top bytes (v >> 24, signed, in
/// 16-bit halves) and an 8-bit row count (four a word): four fire-and-forget shared atomics a
/// row, 13 bytes a group (2^16 groups in a team of 4). While a slot met n <= 255 rows, sum =
/// 2^24 * H + ((S - 2^24 * H) mod 2^32): the rest, the sum of the low 24 bits, lies in
/// [0, n * 2^24) below 2^32, and |H| <= 255 * 128 fits its half. A count that passed 255 wrapped
/// and carried out of its byte, so the counts decoded then sum to less than the rows the block
/// took; the block reports that (g_danger) and such a run would start over the other way.
/// Returned: the count's atomic returns the old word, and a count that was at 255 raises a flag
/// that stops the block at its next tile (what a kernel that starts over would do).
template <bool Returned>
__global__ void __launch_bounds__(1024, 1)
    team_w_kernel(int const* __restrict__ k, int const* __restrict__ v0, int const* __restrict__ v1,
                  long long n, int slots, int team, int groups, long long* out0, long long* out1,
                  unsigned* seen_out) {
  constexpr int threads = 1024;
  constexpr int ipt = 8;
  extern __shared__ __align__(128) unsigned char smem[];
  auto const rows = static_cast<std::size_t>(slots);
  unsigned* const s0 = reinterpret_cast<unsigned*>(smem);
  unsigned* const s1 = s0 + rows;
  unsigned* const w = s1 + rows;
  unsigned* const cnt = w + rows;  // (slots + 3) / 4 words
  __shared__ unsigned long long counted;
  for (int i = threadIdx.x; i < slots; i += threads) {
    s0[i] = 0;
    s1[i] = 0;
    w[i] = 0;
    if (i < (slots + 3) / 4) { cnt[i] = 0; }
  }
  if (threadIdx.x == 0) { counted = 0; }
  __syncthreads();
  unsigned const first_key = (blockIdx.x % team) * static_cast<unsigned>(slots);
  constexpr long long tile = static_cast<long long>(threads) * ipt;
  long long const tiles = n / tile;
  unsigned mine = 0;
  bool stop = false;
  for (long long t = blockIdx.x / team; t < tiles && !stop; t += gridDim.x / team) {
    bool const flag = Returned && (threadIdx.x & 31) == 0 && *const_cast<unsigned volatile*>(&g_danger) != 0;
    int kk[ipt], x0[ipt], x1[ipt];
    load_team_tile<threads>(k, v0, v1, t, kk, x0, x1);
    bool full = false;
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      unsigned const local = static_cast<unsigned>(kk[j]) - first_key;
      if (local < static_cast<unsigned>(slots)) {
        ++mine;
        atomicAdd(s0 + local, static_cast<unsigned>(x0[j]));
        atomicAdd(s1 + local, static_cast<unsigned>(x1[j]));
        atomicAdd(w + local, static_cast<unsigned>(x0[j] >> 24) +
                                 (static_cast<unsigned>(x1[j] >> 24) << 16));
        unsigned const shift = (local & 3u) * 8u;
        if constexpr (Returned) {
          full |= ((atomicAdd(cnt + (local >> 2), 1u << shift) >> shift) & 0xffu) == 0xffu;
        } else {
          atomicAdd(cnt + (local >> 2), 1u << shift);
        }
      }
    }
    if (Returned && full) { atomicAdd(&g_danger, 1u); }
    if constexpr (Returned) { stop = __shfl_sync(0xffffffffu, flag ? 1 : 0, 0) != 0; }
  }
  __syncthreads();
  unsigned decoded = 0;
  for (int i = threadIdx.x; i < slots; i += threads) {
    unsigned const c = (cnt[i >> 2] >> ((i & 3) * 8)) & 0xffu;
    long long const g = static_cast<long long>(first_key) + i;
    if (c == 0 || g >= groups) { continue; }
    decoded += c;
    int const h0 = static_cast<short>(w[i] & 0xffffu);
    int const h1 = static_cast<int>(w[i] - static_cast<unsigned>(h0)) >> 16;
    long long const sum0 = static_cast<long long>(h0) * (1LL << 24) +
                           static_cast<long long>(s0[i] - (static_cast<unsigned>(h0) << 24));
    long long const sum1 = static_cast<long long>(h1) * (1LL << 24) +
                           static_cast<long long>(s1[i] - (static_cast<unsigned>(h1) << 24));
    atomicOr(seen_out + g, 1u);
    atomicAdd(reinterpret_cast<unsigned long long*>(out0) + g, static_cast<unsigned long long>(sum0));
    atomicAdd(reinterpret_cast<unsigned long long*>(out1) + g, static_cast<unsigned long long>(sum1));
  }
  atomicAdd(&counted, static_cast<unsigned long long>(mine) - decoded);
  __syncthreads();
  if (threadIdx.x == 0 && counted != 0) { atomicAdd(&g_danger, 1u); }
}

template <bool Returned>
void run_w(data const& d, outputs const& o, int team, int sms, bool checked) {
  int const slots = (d.groups + team - 1) / team;
  auto const rows = static_cast<std::size_t>(slots);
  std::size_t const smem = rows * 12 + (rows + 3) / 4 * 4;
  if (smem > smem_limit) { return; }
  auto kern = team_w_kernel<Returned>;
  EXP_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(smem)));
  int const grid = sms / team * team;
  auto const launch = [&] {
    clear<SUMLO>(d, o);
    kern<<<grid, 1024, smem>>>(d.k, d.v0, d.v1, d.n, slots, team, d.groups, o.o0, o.o1, o.so);
  };
  float const ms = median_ms(launch);
  unsigned danger = 0;
  EXP_CHECK(cudaMemcpyFromSymbol(&danger, g_danger, sizeof danger));
  unsigned const zero = 0;
  EXP_CHECK(cudaMemcpyToSymbol(g_danger, &zero, sizeof zero));
  bool const ok = checked && check<SUMLO>(d, o);
  std::printf("SUMW%s g=%-6d team T=%d %-16s smem=%-6zu grid=%-4d %.3f ms %6.1f G rows/s %s\n",
              Returned ? "R  " : "   ", d.groups, team, danger != 0 ? "ldg ipt=8 COUNTS" : "ldg ipt=8", smem, grid, ms,
              static_cast<double>(d.n) / ms / 1e6, checked ? (ok ? "OK" : "WRONG") : "");
}

template <int OP, int C, int IPT, int MODE = 0>
void run_xchg(data const& d, outputs const& o, bool checked) {
  int const slots = (d.groups + C - 1) / C;
  if (slots > 65536) { return; }
  auto const rows = static_cast<std::size_t>(slots);
  std::size_t const fixed = ((rows * 9 + 15) & ~std::size_t{15}) + ((4 * C * 4 + 15) & ~std::size_t{15});
  if (fixed >= smem_limit) { return; }
  // Places a sender region: as many as fit, at most twice a sender's expected rows a step.
  std::size_t cap = (smem_limit - fixed) / (2 * C * 10);
  cap = std::min<std::size_t>(cap, 2 * 1024 * IPT / C) & ~std::size_t{31};
  if (cap < 1024 * IPT / C + 64) { return; }  // expected rows plus margin must fit
  std::size_t const smem = fixed + 2 * C * cap * 10;
  auto kern = xchg_kernel<OP, C, IPT, MODE>;
  EXP_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(smem)));
  if (C > 8) {
    EXP_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(C);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.blockDim = dim3(1024);
  cfg.dynamicSmemBytes = smem;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  cfg.gridDim = dim3(static_cast<unsigned>(C));
  int clusters = 0;
  EXP_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kern, &cfg));
  if (clusters == 0) { return; }
  cfg.gridDim = dim3(static_cast<unsigned>(clusters * C));
  auto const launch = [&] {
    clear<OP>(d, o);
    EXP_CHECK(cudaLaunchKernelEx(&cfg, kern, static_cast<int const*>(d.k),
                                 static_cast<int const*>(d.v0), static_cast<int const*>(d.v1), d.n,
                                 slots, static_cast<int>(cap), d.groups, o.o0, o.o1, o.so));
  };
  float const ms = median_ms(launch);
  char shape[40];
  std::snprintf(shape, sizeof shape, "ipt=%d cap=%zu%s", IPT, cap,
                MODE == 1 ? " local" : MODE == 2 ? " local nobar" : "");
  report<OP>("xchg", d, C, shape, smem, clusters * C, ms, checked, checked && check<OP>(d, o));
}

/// Session 27's comparison: the exchange against the plain teams, same data.
void xchg_variants(data const& d, outputs const& o, int sms, bool checked) {
  int const lg = 31 - __builtin_clz(static_cast<unsigned>(d.groups));
  if (lg == 16) {
    run_team<MAX32>(d, o, 3, sms, checked, false);
    run_team<MAX32>(d, o, 4, sms, checked, false);
    run_team<SUMLO>(d, o, 3, sms, checked, false);
    run_w<false>(d, o, 4, sms, checked);
    run_w<true>(d, o, 4, sms, checked);
    run_w<false>(d, o, 5, sms, checked);
  } else {
    run_team<MAX32>(d, o, 2, sms, checked, false);
    run_team<SUMLO>(d, o, 2, sms, checked, false);
    run_w<false>(d, o, lg == 15 ? 2 : 1, sms, checked);
    run_w<true>(d, o, lg == 15 ? 2 : 1, sms, checked);
    run_w<true>(d, o, lg == 15 ? 3 : 2, sms, checked);
  }
  if (std::getenv("XCHG") == nullptr) { return; }
  run_xchg<MAX32, 4, 2>(d, o, checked);
  run_xchg<MAX32, 4, 2, 1>(d, o, checked);
  run_xchg<MAX32, 4, 2, 2>(d, o, checked);
  run_xchg<SUMLO, 4, 2>(d, o, checked);
  run_xchg<SUMLO, 4, 4>(d, o, checked);
  run_xchg<MAX32, 8, 4>(d, o, checked);
  run_xchg<SUMLO, 8, 4>(d, o, checked);
  run_xchg<SUMLO, 2, 2>(d, o, checked);
  run_xchg<SUMLO, 3, 2>(d, o, checked);
}

template <int OP>
void variants(data const& d, outputs const& o, int sms, bool checked,
              std::initializer_list<int> teams, bool multicast) {
  for (int team : teams) {
    run_team<OP>(d, o, team, sms, checked, false);
    run_tma<OP, 4>(d, o, team, sms, checked);
    run_tma<OP, 2>(d, o, team, sms, checked);
    if (team > 1) { run_team<OP>(d, o, team, sms, checked, true); }
    if constexpr (OP < SUMSH) {
      if (!multicast) { continue; }
      run_mc<OP, 1024, 4>(d, o, team, checked);
      run_mc<OP, 1024, 2>(d, o, team, checked);
      run_mc<OP, 512, 4>(d, o, team, checked);
      run_mc<OP, 256, 4>(d, o, team, checked);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  cudaDeviceProp p{};
  EXP_CHECK(cudaGetDeviceProperties(&p, 0));
  int const sms = p.multiProcessorCount;
  long long const big = 1LL << 28;
  long long const small = 1LL << 22;
  data d{};
  outputs o{};
  EXP_CHECK(cudaMalloc(&d.k, big * 4));
  EXP_CHECK(cudaMalloc(&d.v0, big * 4));
  EXP_CHECK(cudaMalloc(&d.v1, big * 4));
  EXP_CHECK(cudaMalloc(&o.o0, (1 << 17) * 8));
  EXP_CHECK(cudaMalloc(&o.o1, (1 << 17) * 8));
  EXP_CHECK(cudaMalloc(&o.so, (1 << 17) * 4));
  // "multicast" as the first argument adds the cluster variants (session 17: far slower).
  bool const multicast = argc > 1 && std::string(argv[1]) == "multicast";
  // "xchg": only session 27's exchange through distributed shared memory and its baselines.
  bool const xchg = argc > 1 && std::string(argv[1]) == "xchg";
  std::printf("%s, %d SMs\n", p.name, sms);
  // PROBE_BIG_ONLY=1: only the unchecked pass at g = 2^16 (a profiler's run, session 28).
  bool const big_only = std::getenv("PROBE_BIG_ONLY") != nullptr;
  for (int pass = big_only ? 1 : 0; pass < 2; ++pass) {
    bool const checked = pass == 0;
    d.n = checked ? small : big;
    for (int lg : {14, 15, 16}) {
      if (big_only && lg != 16) { continue; }
      d.groups = 1 << lg;
      fill<<<1024, 256>>>(d.k, d.v0, d.v1, d.n, d.groups, lg);
      EXP_CHECK(cudaDeviceSynchronize());
      if (checked) {
        d.hk.resize(d.n);
        d.hv0.resize(d.n);
        d.hv1.resize(d.n);
        EXP_CHECK(cudaMemcpy(d.hk.data(), d.k, d.n * 4, cudaMemcpyDeviceToHost));
        EXP_CHECK(cudaMemcpy(d.hv0.data(), d.v0, d.n * 4, cudaMemcpyDeviceToHost));
        EXP_CHECK(cudaMemcpy(d.hv1.data(), d.v1, d.n * 4, cudaMemcpyDeviceToHost));
      }
      if (xchg) {
        xchg_variants(d, o, sms, checked);
      } else if (lg == 14) {
        variants<MAX32>(d, o, sms, checked, {1, 2}, multicast);
        variants<SUM2x32>(d, o, sms, checked, {2, 3}, multicast);
        variants<SUMLO>(d, o, sms, checked, {1, 2}, false);
        variants<SUMSH>(d, o, sms, checked, {1, 2}, false);
        variants<SUMSH2>(d, o, sms, checked, {1, 2}, false);
        variants<SUMB8>(d, o, sms, checked, {1}, false);
      } else if (lg == 15) {
        variants<MAX32>(d, o, sms, checked, {2, 3}, multicast);
        variants<SUM2x32>(d, o, sms, checked, {3, 4}, multicast);
        variants<SUMLO>(d, o, sms, checked, {2, 3}, false);
        for (int team : {2, 4}) { run_col(d, o, team, sms, checked); }
        variants<SUMSH>(d, o, sms, checked, {2, 3}, false);
        variants<SUMSH2>(d, o, sms, checked, {2, 3}, false);
        variants<SUMB8>(d, o, sms, checked, {2}, false);
      } else {
        variants<MAX32>(d, o, sms, checked, {3, 4, 6}, multicast);
        variants<SUM2x32>(d, o, sms, checked, {5, 6, 8}, multicast);
        variants<SUMLO>(d, o, sms, checked, {3, 4}, false);
        for (int team : {4, 6, 8}) { run_col(d, o, team, sms, checked); }
        variants<SUMSH>(d, o, sms, checked, {4, 5}, false);
        variants<SUMSH2>(d, o, sms, checked, {4, 5}, false);
        variants<SUMB8>(d, o, sms, checked, {3, 4}, false);
      }
    }
  }
  return 0;
}
