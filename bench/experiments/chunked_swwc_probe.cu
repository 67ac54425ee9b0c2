// Probe for issue 4's 70%-of-copy target at 8 bits: software write-combining with block-private
// ranges and (key, payload) tuples written interleaved, as the Triton artifact's output is.
//
// Session 25's write-pattern table (partition_sol.cu) says a pass needs a writer's own 512-byte
// runs to get past ~70% of copy; with separate key and payload arrays that takes 128-tuple
// buffers a digit (256 KiB at 8 bits), but with the pair written as one 8-byte tuple a 64-tuple
// buffer is one 512-byte run, and 256 digits of them fit one block (128 KiB). Here each block
// (one an SM) partitions its own contiguous chunk of the input into its own range of each
// digit (per-block histograms scanned digit-major), so no global atomics and every full buffer
// goes to a 512-byte aligned run of the block's own range.
//
// A digit's buffer is a ring of R slots over the digit's virtual positions (claimed by one
// shared atomic a tuple); position p sits at ring slot p mod R and lands at row base + p, where
// base + the range's first position is the range's first row and base is a multiple of R. The
// ring holds the chunk of R positions its first unflushed position lies in. Two ways with a tuple
// whose position lies past that chunk (the buffer is full):
//   retry:  wait for the flush, then try again (two more barriers when any tuple waits);
//   direct: store it straight to its row (an 8-byte store; L2 merges it with the chunk's flush),
//           and the flush then starts the digit's next chunk at the first unclaimed position.
//
//   joinery_exp_chunked_swwc [rows_log2 = 28] [bits = 8]
// prints the copy, then for each way the histogram + scan + pass time, GB/s (16 bytes a tuple)
// and % of copy, after checking the output in full on the host.
// BENCHMARKS.md's probe table came from successive versions of this file; this one runs every
// variant, each with the bulk-copy stage's 64 KiB of shared memory reserved (which costs the
// register-load kernels some L1: 1.57 ms instead of 1.38 for "rel 1024x8").
#include "exp_timing.cuh"

#include <cub/device/device_scan.cuh>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int threads = 1024;
constexpr int vt = 8;                        // tuples a thread a tile (two 16-byte loads an array)
constexpr int tile = threads * vt;
constexpr int ring_bytes = 128 * 1024;       // every digit's ring together

__global__ void fill(std::uint32_t* keys, std::uint32_t* vals, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    std::uint64_t x = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + 0x1234567ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    keys[i] = static_cast<std::uint32_t>(x);
    vals[i] = static_cast<std::uint32_t>(x >> 32) ^ 0x5bd1e995u;
  }
}

/// Block b counts the digits of its chunk [b * chunk, min(n, (b + 1) * chunk)) into
/// counts[d * blocks + b] (digit-major, so one exclusive scan gives every block's ranges).
__global__ void __launch_bounds__(threads)
    chunk_histogram(std::uint32_t const* __restrict__ keys, long long n, long long chunk, int bits,
                    std::uint32_t* __restrict__ counts) {
  extern __shared__ std::uint32_t hist[];
  int const fanout = 1 << bits;
  for (int d = threadIdx.x; d < fanout; d += threads) { hist[d] = 0; }
  __syncthreads();
  long long const begin = blockIdx.x * chunk;
  long long const end = min(n, begin + chunk);
  std::uint32_t const mask = fanout - 1;
  // Chunks are whole tiles, so [begin, end) is 16-byte aligned at begin; a short end is scalar.
  long long const vec_end = begin + ((end - begin) & ~3LL);
  for (long long i = begin + 4LL * threadIdx.x; i < vec_end; i += 4LL * threads) {
    uint4 const k = *reinterpret_cast<uint4 const*>(keys + i);
    atomicAdd(&hist[k.x & mask], 1u);
    atomicAdd(&hist[k.y & mask], 1u);
    atomicAdd(&hist[k.z & mask], 1u);
    atomicAdd(&hist[k.w & mask], 1u);
  }
  for (long long i = vec_end + threadIdx.x; i < end; i += threads) {
    atomicAdd(&hist[keys[i] & mask], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < fanout; d += threads) {
    counts[static_cast<long long>(d) * gridDim.x + blockIdx.x] = hist[d];
  }
}

struct ring_state {
  std::uint32_t* cnt;    // next virtual position of each digit
  std::uint32_t* lo;     // first virtual position not yet written out
  long long* base;       // row of virtual position 0 (a multiple of R)
  uint2* ring;           // digit d's slots at ring[d * R]
};

/// Writes ring positions [from, to) of digit d (all within one chunk of R) to their rows; the
/// calling warp together. A full aligned chunk of 64 goes out as one 16-byte store a lane.
template <int R>
__device__ __forceinline__ void flush_range(ring_state const& s, uint2* __restrict__ out, int d,
                                            std::uint32_t from, std::uint32_t to, int lane) {
  uint2 const* slots = s.ring + d * R;
  long long const row0 = s.base[d];
  if (R == 64 && (from & (R - 1)) == 0 && to - from == R) {
    uint4 const v = reinterpret_cast<uint4 const*>(slots)[lane];
    reinterpret_cast<uint4*>(out + row0 + from)[lane] = v;
    return;
  }
  for (std::uint32_t p = from + lane; p < to; p += 32) { out[row0 + p] = slots[p & (R - 1)]; }
}

/// Warp w looks at the digits w + nwarps * j and writes out each whose ring chunk is complete
/// (its claims reach the chunk's end); Direct: the next unwritten position is then the digit's
/// first unclaimed one, as the positions past the chunk went straight to their rows.
template <int R, bool Direct, int nwarps>
__device__ __forceinline__ void flush_complete(ring_state const& s, uint2* __restrict__ out,
                                               int fanout, int warp, int lane) {
  int const per_warp = fanout / nwarps;
  for (int j0 = 0; j0 < per_warp; j0 += 32) {
    int const j = j0 + lane;
    int const d = warp + nwarps * j;
    bool full = false;
    std::uint32_t c = 0, l = 0;
    if (j < per_warp) {
      c = s.cnt[d];
      l = s.lo[d];
      full = c >= (l & ~std::uint32_t(R - 1)) + R;
    }
    unsigned todo = __ballot_sync(0xffffffffu, full);
    while (todo != 0) {
      int const src = __ffs(todo) - 1;
      todo &= todo - 1;
      int const dd = __shfl_sync(0xffffffffu, d, src);
      std::uint32_t const ll = __shfl_sync(0xffffffffu, l, src);
      std::uint32_t const cc = __shfl_sync(0xffffffffu, c, src);
      std::uint32_t const end = (ll & ~std::uint32_t(R - 1)) + R;
      flush_range<R>(s, out, dd, ll, end, lane);
      __syncwarp();
      __threadfence_block();   // the slots are read before another warp may refill them
      if (lane == 0) { s.lo[dd] = Direct ? cc : end; }
    }
  }
}

/// Loads a tile's tuples of this thread: VT / 4 16-byte loads an array, rows
/// t + h * threads * 4 + 4 * thread + (0..3); past `end` (the chunk's last tile) one row at a time.
template <int Threads, int VT>
__device__ __forceinline__ void load_tile(std::uint32_t const* __restrict__ keys,
                                          std::uint32_t const* __restrict__ vals, long long t,
                                          long long end, std::uint32_t (&k)[VT],
                                          std::uint32_t (&v)[VT]) {
  bool const whole = t + Threads * VT <= end;
#pragma unroll
  for (int h = 0; h < VT / 4; ++h) {
    long long const i = t + h * (Threads * 4) + 4LL * threadIdx.x;
    if (whole) {
      uint4 const kk = __ldcs(reinterpret_cast<uint4 const*>(keys + i));
      uint4 const vv = __ldcs(reinterpret_cast<uint4 const*>(vals + i));
      k[4 * h] = kk.x; k[4 * h + 1] = kk.y; k[4 * h + 2] = kk.z; k[4 * h + 3] = kk.w;
      v[4 * h] = vv.x; v[4 * h + 1] = vv.y; v[4 * h + 2] = vv.z; v[4 * h + 3] = vv.w;
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        k[4 * h + j] = i + j < end ? keys[i + j] : 0;
        v[4 * h + j] = i + j < end ? vals[i + j] : 0;
      }
    }
  }
}

/// Direct (the first version): positions past the ring's chunk go straight to their rows.
/// Otherwise they wait for the flush: a round is a barrier that also tells whether any tuple
/// waits, the flush of every complete chunk, a barrier, and the waiting tuples' second try;
/// chunks that complete with nothing waiting are written out in a later tile's round.
/// Prefetch: the next tile's loads are issued before this tile's claims.
template <int R, int Threads, int VT, bool Direct, bool Prefetch>
__global__ void __launch_bounds__(Threads, 1)
    chunk_partition(std::uint32_t const* __restrict__ keys, std::uint32_t const* __restrict__ vals,
                    long long n, long long chunk, int bits,
                    std::uint32_t const* __restrict__ offsets, uint2* __restrict__ out,
                    int /*sink: the flushes always store*/) {
  constexpr int tile_rows = Threads * VT;
  constexpr int nwarps = Threads / 32;
  extern __shared__ __align__(16) unsigned char smem[];
  int const fanout = 1 << bits;
  ring_state s;
  s.ring = reinterpret_cast<uint2*>(smem);
  s.base = reinterpret_cast<long long*>(smem + ring_bytes);
  s.cnt = reinterpret_cast<std::uint32_t*>(s.base + fanout);
  s.lo = s.cnt + fanout;
  int const lane = threadIdx.x & 31;
  int const warp = threadIdx.x >> 5;
  std::uint32_t const mask = fanout - 1;
  for (int d = threadIdx.x; d < fanout; d += Threads) {
    long long const first = offsets[static_cast<long long>(d) * gridDim.x + blockIdx.x];
    std::uint32_t const p0 = static_cast<std::uint32_t>(first) & (R - 1);
    s.base[d] = first - p0;
    s.cnt[d] = p0;
    s.lo[d] = p0;
  }
  __syncthreads();
  long long const begin = blockIdx.x * chunk;
  long long const end = min(n, begin + chunk);
  std::uint32_t k[VT], v[VT], p[VT];
  if (Prefetch && begin < end) { load_tile<Threads, VT>(keys, vals, begin, end, k, v); }
  for (long long t = begin; t < end; t += tile_rows) {
    std::uint32_t nk[VT], nv[VT];
    if (Prefetch) {
      if (t + tile_rows < end) { load_tile<Threads, VT>(keys, vals, t + tile_rows, end, nk, nv); }
    } else {
      load_tile<Threads, VT>(keys, vals, t, end, k, v);
    }
    unsigned waiting = 0;   // bit j: tuple j holds a position past its ring's chunk
#pragma unroll
    for (int j = 0; j < VT; ++j) {
      long long const i = t + (j / 4) * (Threads * 4) + 4LL * threadIdx.x + (j % 4);
      if (i < end) {
        int const d = k[j] & mask;
        p[j] = atomicAdd(&s.cnt[d], 1u);
        std::uint32_t const chunk_end = (s.lo[d] & ~std::uint32_t(R - 1)) + R;
        if (p[j] < chunk_end) {
          s.ring[d * R + (p[j] & (R - 1))] = make_uint2(k[j], v[j]);
        } else if (Direct) {
          out[s.base[d] + p[j]] = make_uint2(k[j], v[j]);
        } else {
          waiting |= 1u << j;
        }
      }
    }
    if (Direct) {
      __syncthreads();
      flush_complete<R, true, nwarps>(s, out, fanout, warp, lane);
      __syncthreads();
    } else {
      while (__syncthreads_or(waiting != 0)) {
        flush_complete<R, false, nwarps>(s, out, fanout, warp, lane);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < VT; ++j) {
          if (waiting & (1u << j)) {
            int const d = k[j] & mask;
            std::uint32_t const chunk_end = (s.lo[d] & ~std::uint32_t(R - 1)) + R;
            if (p[j] < chunk_end) {
              s.ring[d * R + (p[j] & (R - 1))] = make_uint2(k[j], v[j]);
              waiting &= ~(1u << j);
            }
          }
        }
      }
    }
    if (Prefetch) {
#pragma unroll
      for (int j = 0; j < VT; ++j) { k[j] = nk[j]; v[j] = nv[j]; }
    }
  }
  // What is left in each ring: positions [lo, cnt) of one chunk.
  for (int d = warp; d < fanout; d += nwarps) {
    std::uint32_t const l = s.lo[d];
    std::uint32_t const c = s.cnt[d];
    if (c > l) { flush_range<R>(s, out, d, l, c, lane); }
  }
}

/// As chunk_partition (retry), with one shared word a digit in the hot loop: w = position -
/// limit, where limit (a multiple of R) ends the ring's chunk. A claim's old value is negative
/// when the position fits, and its slot is then old mod R; the limit is read only by tuples that
/// wait. All VT claims are issued before any store (a whole tile has no per-row tests).
/// Tma: a whole tile's keys and payloads come into a 64 KiB stage by two bulk copies that one
/// thread issues for the next tile once every thread has taken this tile's rows into registers
/// (one more barrier a tile), so the tile's loads overlap the claims and flushes before it.
/// Sink: the flushes read their slots but store nothing (what the pass costs without its writes).
template <int R, int Threads, int VT, bool Tma = false>
__global__ void __launch_bounds__(Threads, 1)
    chunk_partition_rel(std::uint32_t const* __restrict__ keys,
                        std::uint32_t const* __restrict__ vals, long long n, long long chunk,
                        int bits, std::uint32_t const* __restrict__ offsets,
                        uint2* __restrict__ out, int sink) {
  constexpr int tile_rows = Threads * VT;
  constexpr int nwarps = Threads / 32;
  extern __shared__ __align__(16) unsigned char smem[];
  int const fanout = 1 << bits;
  uint2* const ring = reinterpret_cast<uint2*>(smem);
  long long* const base = reinterpret_cast<long long*>(smem + ring_bytes);
  int* const w = reinterpret_cast<int*>(base + fanout);
  std::uint32_t* const limit = reinterpret_cast<std::uint32_t*>(w + fanout);
  std::uint32_t* const lo = limit + fanout;
  constexpr unsigned col_bytes = tile_rows * 4u;
  std::uint32_t* const stage = reinterpret_cast<std::uint32_t*>(lo + fanout);   // keys, payloads
  std::uint64_t* const bar = reinterpret_cast<std::uint64_t*>(stage + (Tma ? 2 * tile_rows : 0));
  int const lane = threadIdx.x & 31;
  int const warp = threadIdx.x >> 5;
  std::uint32_t const mask = fanout - 1;
  for (int d = threadIdx.x; d < fanout; d += Threads) {
    long long const first = offsets[static_cast<long long>(d) * gridDim.x + blockIdx.x];
    std::uint32_t const p0 = static_cast<std::uint32_t>(first) & (R - 1);
    base[d] = first - p0;
    lo[d] = p0;
    limit[d] = R;
    w[d] = static_cast<int>(p0) - R;
  }
  long long const begin = blockIdx.x * chunk;
  long long const end = min(n, begin + chunk);
  auto const issue = [&](long long row) {
    namespace ptx = cuda::ptx;
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar,
                                   2 * col_bytes);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage, keys + row, col_bytes, bar);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage + tile_rows, vals + row,
                       col_bytes, bar);
  };
  if (Tma && threadIdx.x == 0) {
    cuda::ptx::mbarrier_init(bar, 1);
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  __syncthreads();
  if (Tma && threadIdx.x == 0 && begin + tile_rows <= end) { issue(begin); }
  unsigned phase = 0;
  for (long long t = begin; t < end; t += tile_rows) {
    std::uint32_t k[VT], v[VT], p[VT];
    int old[VT];
    bool const whole = t + tile_rows <= end;
    if (Tma && whole) {
      while (!cuda::ptx::mbarrier_try_wait_parity(bar, phase)) {}
      phase ^= 1u;
#pragma unroll
      for (int h = 0; h < VT / 4; ++h) {
        uint4 const kk = reinterpret_cast<uint4 const*>(stage + h * Threads * 4)[threadIdx.x];
        uint4 const vv = reinterpret_cast<uint4 const*>(stage + tile_rows + h * Threads * 4)[threadIdx.x];
        k[4 * h] = kk.x; k[4 * h + 1] = kk.y; k[4 * h + 2] = kk.z; k[4 * h + 3] = kk.w;
        v[4 * h] = vv.x; v[4 * h + 1] = vv.y; v[4 * h + 2] = vv.z; v[4 * h + 3] = vv.w;
      }
      __syncthreads();   // the stage is free for the next tile's copies
      if (threadIdx.x == 0 && t + 2 * tile_rows <= end) { issue(t + tile_rows); }
    } else {
      load_tile<Threads, VT>(keys, vals, t, end, k, v);
    }
    unsigned waiting = 0;
    if (whole) {
#pragma unroll
      for (int j = 0; j < VT; ++j) { old[j] = atomicAdd(&w[k[j] & mask], 1); }
    } else {
#pragma unroll
      for (int j = 0; j < VT; ++j) {
        long long const i = t + (j / 4) * (Threads * 4) + 4LL * threadIdx.x + (j % 4);
        old[j] = i < end ? atomicAdd(&w[k[j] & mask], 1) : -1 - (1 << 30);
      }
    }
#pragma unroll
    for (int j = 0; j < VT; ++j) {
      int const d = k[j] & mask;
      if (old[j] < 0) {
        if (old[j] >= -R) { ring[d * R + (old[j] & (R - 1))] = make_uint2(k[j], v[j]); }
      } else {
        p[j] = limit[d] + static_cast<std::uint32_t>(old[j]);
        waiting |= 1u << j;
      }
    }
    while (__syncthreads_or(waiting != 0)) {
      int const per_warp = fanout / nwarps;
      for (int j0 = 0; j0 < per_warp; j0 += 32) {
        int const j = j0 + lane;
        int const d = warp + nwarps * j;
        bool const full = j < per_warp && w[d] >= 0;
        unsigned todo = __ballot_sync(0xffffffffu, full);
        while (todo != 0) {
          int const src = __ffs(todo) - 1;
          todo &= todo - 1;
          int const dd = __shfl_sync(0xffffffffu, d, src);
          std::uint32_t const lim = limit[dd];
          std::uint32_t const from = lo[dd];
          uint2 const* slots = ring + dd * R;
          long long const row0 = base[dd];
          if (R == 64 && lim - from == R) {
            uint4 const val = reinterpret_cast<uint4 const*>(slots)[lane];
            if (sink == 0 || val.x == 0xdeadbeefu) { reinterpret_cast<uint4*>(out + row0 + from)[lane] = val; }
          } else {
            for (std::uint32_t q = from + lane; q < lim; q += 32) { out[row0 + q] = slots[q & (R - 1)]; }
          }
          __syncwarp();
          if (lane == 0) {
            lo[dd] = lim;
            limit[dd] = lim + R;
            w[dd] -= R;
          }
        }
      }
      __syncthreads();
#pragma unroll
      for (int j = 0; j < VT; ++j) {
        if (waiting & (1u << j)) {
          int const d = k[j] & mask;
          std::uint32_t const lim = limit[d];
          if (p[j] < lim) {
            ring[d * R + (p[j] & (R - 1))] = make_uint2(k[j], v[j]);
            waiting &= ~(1u << j);
          }
        }
      }
    }
  }
  for (int d = warp; d < fanout; d += nwarps) {
    std::uint32_t const from = lo[d];
    std::uint32_t const to = limit[d] + w[d];
    uint2 const* slots = ring + d * R;
    for (std::uint32_t q = from + lane; q < to; q += 32) { out[base[d] + q] = slots[q & (R - 1)]; }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int const log2n = argc > 1 ? std::atoi(argv[1]) : 28;
  int const bits = argc > 2 ? std::atoi(argv[2]) : 8;
  if (log2n < 14 || log2n > 30 || bits < 6 || bits > 11) {
    std::fprintf(stderr, "usage: %s [rows_log2 in 14..30] [bits in 6..11]\n", argv[0]);
    return 2;
  }
  long long const n = 1LL << log2n;
  int const fanout = 1 << bits;
  int const ring = ring_bytes / 8 / fanout;   // R: 64 at 8 bits
  cudaDeviceProp prop{};
  EXP_CHECK(cudaGetDeviceProperties(&prop, 0));
  int const blocks = prop.multiProcessorCount;
  long long const tiles = (n + tile - 1) / tile;
  long long const chunk = (tiles + blocks - 1) / blocks * tile;

  std::uint32_t *keys = nullptr, *vals = nullptr, *counts = nullptr, *offsets = nullptr;
  uint2* out = nullptr;
  EXP_CHECK(cudaMalloc(&keys, sizeof(std::uint32_t) * n));
  EXP_CHECK(cudaMalloc(&vals, sizeof(std::uint32_t) * n));
  EXP_CHECK(cudaMalloc(&out, sizeof(uint2) * n));
  EXP_CHECK(cudaMalloc(&counts, sizeof(std::uint32_t) * fanout * blocks));
  EXP_CHECK(cudaMalloc(&offsets, sizeof(std::uint32_t) * fanout * blocks));
  fill<<<blocks * 8, 256>>>(keys, vals, n);
  EXP_CHECK(cudaGetLastError());
  std::size_t scan_bytes = 0;
  EXP_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, counts, offsets, fanout * blocks));
  void* scan_tmp = nullptr;
  EXP_CHECK(cudaMalloc(&scan_tmp, scan_bytes));
  EXP_CHECK(cudaDeviceSynchronize());

  std::uint32_t *keys_copy = nullptr, *vals_copy = nullptr;
  EXP_CHECK(cudaMalloc(&keys_copy, sizeof(std::uint32_t) * n));
  EXP_CHECK(cudaMalloc(&vals_copy, sizeof(std::uint32_t) * n));
  double const bytes = 16.0 * static_cast<double>(n);
  float const copy_ms = median_ms([&] {
    EXP_CHECK(cudaMemcpyAsync(keys_copy, keys, sizeof(std::uint32_t) * n, cudaMemcpyDeviceToDevice));
    EXP_CHECK(cudaMemcpyAsync(vals_copy, vals, sizeof(std::uint32_t) * n, cudaMemcpyDeviceToDevice));
  });
  EXP_CHECK(cudaFree(keys_copy));
  EXP_CHECK(cudaFree(vals_copy));
  double const copy_gbps = bytes / (copy_ms * 1e6);
  std::printf("%s, %d SMs, 2^%d tuples of 4+4 B, %d bits (rings of %d tuples); copy %.3f ms = %.1f GB/s\n",
              prop.name, prop.multiProcessorCount, log2n, bits, ring, copy_ms, copy_gbps);

  // Host copies for the check.
  std::vector<std::uint32_t> hk(n), hv(n);
  EXP_CHECK(cudaMemcpy(hk.data(), keys, sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));
  EXP_CHECK(cudaMemcpy(hv.data(), vals, sizeof(std::uint32_t) * n, cudaMemcpyDeviceToHost));

  int const hist_smem = fanout * 4;
  int const part_smem = ring_bytes + fanout * 20 + 2 * tile * 4 + 16;
  auto histogram = [&] {
    chunk_histogram<<<blocks, threads, hist_smem>>>(keys, n, chunk, bits, counts);
    EXP_CHECK(cub::DeviceScan::ExclusiveSum(scan_tmp, scan_bytes, counts, offsets, fanout * blocks));
  };
  auto run_way = [&](auto kernel, char const* name, int nthreads, int sink) {
    EXP_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, part_smem));
    auto pass = [&] { kernel<<<blocks, nthreads, part_smem>>>(keys, vals, n, chunk, bits, offsets, out, sink); };
    EXP_CHECK(cudaMemset(out, 0xff, sizeof(uint2) * n));
    histogram();
    pass();
    EXP_CHECK(cudaGetLastError());
    EXP_CHECK(cudaDeviceSynchronize());
    // Check: every block's range of every digit holds exactly the block's tuples of that digit
    // (count, digit, and an order-free sum of the pairs).
    std::vector<uint2> ho(n);
    std::vector<std::uint32_t> hoff(static_cast<std::size_t>(fanout) * blocks);
    EXP_CHECK(cudaMemcpy(ho.data(), out, sizeof(uint2) * n, cudaMemcpyDeviceToHost));
    EXP_CHECK(cudaMemcpy(hoff.data(), offsets, sizeof(std::uint32_t) * hoff.size(), cudaMemcpyDeviceToHost));
    long long bad = 0;
    for (int b = 0; b < blocks && bad == 0; ++b) {
      long long const lo = b * chunk, hi = std::min(n, lo + chunk);
      std::vector<std::uint64_t> want(fanout, 0), got(fanout, 0);
      std::vector<long long> cnt(fanout, 0);
      auto mix = [](std::uint32_t k, std::uint32_t v) {
        std::uint64_t x = (static_cast<std::uint64_t>(k) << 32) | v;
        x ^= x >> 31; x *= 0x94D049BB133111EBull; x ^= x >> 29;
        return x;
      };
      for (long long i = lo; i < hi; ++i) {
        want[hk[i] & (fanout - 1)] += mix(hk[i], hv[i]);
        ++cnt[hk[i] & (fanout - 1)];
      }
      for (int d = 0; d < fanout; ++d) {
        long long const first = hoff[static_cast<std::size_t>(d) * blocks + b];
        long long const last = first + cnt[d];
        for (long long r = first; r < last; ++r) {
          if ((ho[r].x & (fanout - 1)) != static_cast<std::uint32_t>(d)) { ++bad; break; }
          got[d] += mix(ho[r].x, ho[r].y);
        }
        if (got[d] != want[d]) { ++bad; }
      }
    }
    if (bad != 0 && sink == 0) {
      std::printf("%-24s WRONG OUTPUT (%lld bad ranges)\n", name, bad);
      return;
    }
    float const hist_ms = median_ms(histogram);
    float const pass_ms = median_ms(pass);
    float const all_ms = median_ms([&] { histogram(); pass(); });
    double const gbps = bytes / (all_ms * 1e6);
    std::printf("%-24s histogram + scan %.3f ms, pass %.3f ms (%.1f%% of copy), all %.3f ms = %.1f GB/s = %.1f%% of copy  [checked]\n",
                name, hist_ms, pass_ms, 100.0 * copy_ms / pass_ms, all_ms, gbps,
                100.0 * gbps / copy_gbps);
    if (sink != 0) { std::printf("%-24s (sink: the output is not written, so not checked)\n", name); }
  };
  switch (ring) {
    case 64:
      // The first variants (session 26's probe table): registers, prefetch, direct stores.
      run_way(chunk_partition<64, 1024, 8, false, false>, "retry 1024x8", 1024, 0);
      run_way(chunk_partition<64, 1024, 8, true, false>, "direct 1024x8", 1024, 0);
      run_way(chunk_partition<64, 1024, 8, false, true>, "retry 1024x8 prefetch", 1024, 0);
      run_way(chunk_partition<64, 512, 16, false, false>, "retry 512x16", 512, 0);
      run_way(chunk_partition<64, 512, 16, false, true>, "retry 512x16 prefetch", 512, 0);
      run_way(chunk_partition_rel<64, 1024, 8>, "rel 1024x8", 1024, 0);
      run_way(chunk_partition_rel<64, 1024, 8, true>, "rel 1024x8 tma", 1024, 0);
      run_way(chunk_partition_rel<64, 512, 16, true>, "rel 512x16 tma", 512, 0);
      run_way(chunk_partition_rel<64, 1024, 8>, "rel 1024x8 sink", 1024, 1);
      run_way(chunk_partition_rel<64, 1024, 8, true>, "rel 1024x8 tma sink", 1024, 1);
      run_way(chunk_partition_rel<64, 1024, 8>, "rel 1024x8 (again)", 1024, 0);
      break;
    case 32:
      run_way(chunk_partition_rel<32, 1024, 8>, "rel 1024x8", 1024, 0);
      run_way(chunk_partition_rel<32, 1024, 8, true>, "rel 1024x8 tma", 1024, 0);
      break;
    default:
      std::printf("rings of %d tuples: not instantiated\n", ring);
  }
  return 0;
}
