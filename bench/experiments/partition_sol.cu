// Probe for issue 4's 70%-of-copy partitioning target: the DRAM ceiling of a radix partition's
// write pattern with the ranking taken away.
//
// 2^n tuples (4-byte key array + 4-byte payload array) are read linearly and written to F
// regions of each output array, as a perfectly balanced partition with per-block cursors would
// write them: each block reads a contiguous slice and sends consecutive runs of c tuples
// round-robin to the F regions, run q of the block to region q mod F at the block's own slice of
// that region (no atomics, no shared memory, no ranking). Runs are c x 4 bytes per array: 32 B
// (one sector) to 512 B. "aligned": every run starts on a multiple of its size; "shifted": each
// region starts 4 bytes past such a boundary, as runs at arbitrary rows do (swwc's global cursors).
// If the aligned rows stay far below the copy at the run sizes swwc can buffer (32 tuples of 8
// bytes at 8 bits, 128 B per array), a dense partitioning pass cannot reach 85% of copy on this
// GPU whatever its ranking costs.
//
// Third table ("interleaved blocks", session 25): the first table's runs, but a region's
// consecutive runs come from different blocks at about the same time (all blocks resident), as
// swwc's global cursors place them, without the cursor atomics that make the second table
// latency-bound below 512-byte runs.
//
// Second table ("global cursors"): the runs of all blocks to one region abut, as swwc's global
// write cursors place them: a warp takes each run's rows with one atomic on the region's cursor.
// Regions start aligned, or 4 bytes past (shifted), so either every run is aligned or none is;
// the gap between the two is what aligned flushes could gain.
//
//   joinery_exp_partition_sol [rows_log2 = 28]   one line per (F, run, alignment): median ms,
//                                                GB/s (16 bytes a tuple), % of the copy
#include "exp_timing.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int threads = 512;
constexpr int warps = threads / 32;

/// Block b reads tuples [b * per_block, (b + 1) * per_block) and writes run q (c tuples) of its
/// slice to region q % F, at region_start(q % F) + b * (per_block / F) + (q / F) * c. A warp
/// moves 32 / c runs a step when c <= 32 (every lane busy), else one run in c / 32 steps.
/// Interleaved (third table, session 25): run q lands at region_start(q % F) + ((q / F) * B + b)
/// * c instead (B blocks, all resident), so that a region's consecutive runs come from different
/// blocks at about the same time, as swwc's global cursors place them, without the atomics.
template <bool Interleaved = false>
__global__ void __launch_bounds__(threads)
    scatter_runs(std::uint32_t const* __restrict__ keys, std::uint32_t const* __restrict__ vals,
                 long long per_block, int fanout, int run, long long region_rows, int shift,
                 std::uint32_t* __restrict__ keys_out, std::uint32_t* __restrict__ vals_out) {
  int const lane = static_cast<int>(threadIdx.x) & 31;
  int const warp = static_cast<int>(threadIdx.x) >> 5;
  long long const first = static_cast<long long>(blockIdx.x) * per_block;
  long long const runs = per_block / run;
  long long const block_slice = static_cast<long long>(blockIdx.x) * (per_block / fanout);
  int const per_step = run <= 32 ? 32 / run : 1;
  int const sub = run <= 32 ? lane / run : 0;   // this lane's run within the step
  int const start = run <= 32 ? lane % run : lane;
  for (long long q0 = static_cast<long long>(warp) * per_step; q0 < runs;
       q0 += static_cast<long long>(warps) * per_step) {
    long long const q = q0 + sub;
    if (q >= runs) { continue; }
    int const region = static_cast<int>(q % fanout);
    long long const at =
        static_cast<long long>(region) * region_rows + shift +
        (Interleaved ? ((q / fanout) * gridDim.x + blockIdx.x) * run
                     : block_slice + (q / fanout) * run);
    long long const from = first + q * run;
    for (int i = start; i < run; i += 32) {
      keys_out[at + i] = keys[from + i];
      vals_out[at + i] = vals[from + i];
    }
  }
}

/// As scatter_runs, but run q's rows come from an atomic on its region's global cursor.
__global__ void __launch_bounds__(threads)
    scatter_cursor_runs(std::uint32_t const* __restrict__ keys,
                        std::uint32_t const* __restrict__ vals, long long per_block, int fanout,
                        int run, unsigned long long* __restrict__ cursors,
                        std::uint32_t* __restrict__ keys_out, std::uint32_t* __restrict__ vals_out) {
  int const lane = static_cast<int>(threadIdx.x) & 31;
  int const warp = static_cast<int>(threadIdx.x) >> 5;
  long long const first = static_cast<long long>(blockIdx.x) * per_block;
  long long const runs = per_block / run;
  int const per_step = run <= 32 ? 32 / run : 1;
  int const sub = run <= 32 ? lane / run : 0;
  int const start = run <= 32 ? lane % run : lane;
  for (long long q0 = static_cast<long long>(warp) * per_step; q0 < runs;
       q0 += static_cast<long long>(warps) * per_step) {
    long long const q = q0 + sub;
    // Region of run q: spread by block so that blocks do not march in step.
    int const region = static_cast<int>((q + blockIdx.x * 37) % fanout);
    unsigned long long at = 0;
    if (q < runs && (run <= 32 ? start == 0 : lane == 0)) {
      at = atomicAdd(cursors + region, static_cast<unsigned long long>(run));
    }
    at = __shfl_sync(0xffffffffU, at, run <= 32 ? sub * run : 0);
    if (q >= runs) { continue; }
    long long const from = first + q * run;
    for (int i = start; i < run; i += 32) {
      keys_out[at + i] = keys[from + i];
      vals_out[at + i] = vals[from + i];
    }
  }
}

__global__ void set_cursors(unsigned long long* cursors, int fanout, long long region_rows,
                            int shift) {
  int const r = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (r < fanout) { cursors[r] = static_cast<unsigned long long>(r * region_rows + shift); }
}

__global__ void fill(std::uint32_t* __restrict__ a, std::uint32_t* __restrict__ b, long long n) {
  long long const stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    a[i] = static_cast<std::uint32_t>(i * 2654435761ULL);
    b[i] = static_cast<std::uint32_t>(i ^ 0x5bd1e995U);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int const log2n = argc > 1 ? std::atoi(argv[1]) : 28;
  if (log2n < 22 || log2n > 30) {
    std::fprintf(stderr, "usage: %s [rows_log2 in 22..30]\n", argv[0]);
    return 2;
  }
  long long const n = 1LL << log2n;
  cudaDeviceProp prop{};
  EXP_CHECK(cudaGetDeviceProperties(&prop, 0));
  // 512 blocks of 512 threads: 2^19 tuples a block at 2^28, so every (F, run) below divides it.
  int const blocks = 512;
  long long const per_block = n / blocks;
  // Room for the shifted layout: a few tuples past each region's end.
  std::size_t const out_rows = static_cast<std::size_t>(n) + 64;
  std::uint32_t *keys = nullptr, *vals = nullptr, *keys_out = nullptr, *vals_out = nullptr;
  EXP_CHECK(cudaMalloc(&keys, sizeof(std::uint32_t) * n));
  EXP_CHECK(cudaMalloc(&vals, sizeof(std::uint32_t) * n));
  EXP_CHECK(cudaMalloc(&keys_out, sizeof(std::uint32_t) * out_rows * 2));  // shifted regions
  EXP_CHECK(cudaMalloc(&vals_out, sizeof(std::uint32_t) * out_rows * 2));
  fill<<<prop.multiProcessorCount * 8, 256>>>(keys, vals, n);
  EXP_CHECK(cudaGetLastError());
  EXP_CHECK(cudaDeviceSynchronize());

  double const bytes = 16.0 * static_cast<double>(n);
  float const copy_ms = median_ms([&] {
    EXP_CHECK(cudaMemcpyAsync(keys_out, keys, sizeof(std::uint32_t) * n, cudaMemcpyDeviceToDevice));
    EXP_CHECK(cudaMemcpyAsync(vals_out, vals, sizeof(std::uint32_t) * n, cudaMemcpyDeviceToDevice));
  });
  double const copy_gbps = bytes / (copy_ms * 1e6);
  std::printf("%s, %d SMs, 2^%d tuples of 4+4 B; copy %.3f ms = %.1f GB/s\n", prop.name,
              prop.multiProcessorCount, log2n, copy_ms, copy_gbps);
  for (int fanout : {256, 512, 1024, 2048}) {
    for (int run : {8, 16, 32, 64, 128}) {
      if (per_block % (static_cast<long long>(run) * fanout) != 0) { continue; }
      for (int shifted = 0; shifted <= 1; ++shifted) {
        // Shifted: region r starts r + 1 tuples late (4-byte steps), so no run is aligned.
        long long const region_rows = n / fanout + (shifted != 0 ? 1 : 0);
        int const shift = shifted != 0 ? 1 : 0;
        float const ms = median_ms([&] {
          scatter_runs<false><<<blocks, threads>>>(keys, vals, per_block, fanout, run, region_rows,
                                            shift, keys_out, vals_out);
        });
        double const gbps = bytes / (ms * 1e6);
        std::printf("F = %4d run = %3d tuples (%3d B)  %-7s  %7.3f ms  %7.1f GB/s  %5.1f%% of copy\n",
                    fanout, run, 4 * run, shifted != 0 ? "shifted" : "aligned", ms, gbps,
                    100.0 * gbps / copy_gbps);
      }
    }
  }
  // Consecutive runs of a region from different blocks (all 512 resident), no atomics.
  std::printf("interleaved blocks (a region's consecutive runs from different blocks)\n");
  for (int fanout : {256, 2048}) {
    for (int run : {16, 32, 64, 128}) {
      if (per_block % (static_cast<long long>(run) * fanout) != 0) { continue; }
      long long const region_rows = n / fanout;
      float const ms = median_ms([&] {
        scatter_runs<true><<<blocks, threads>>>(keys, vals, per_block, fanout, run, region_rows, 0,
                                                keys_out, vals_out);
      });
      double const gbps = bytes / (ms * 1e6);
      std::printf("F = %4d run = %3d tuples (%3d B)  %-7s  %7.3f ms  %7.1f GB/s  %5.1f%% of copy\n",
                  fanout, run, 4 * run, "aligned", ms, gbps, 100.0 * gbps / copy_gbps);
    }
  }
  unsigned long long* cursors = nullptr;
  EXP_CHECK(cudaMalloc(&cursors, sizeof(unsigned long long) * 2048));
  std::printf("global cursors (runs of all blocks to a region abut)\n");
  for (int fanout : {256, 512, 1024}) {
    for (int run : {16, 32, 64, 128}) {
      if (per_block % (static_cast<long long>(run) * fanout) != 0) { continue; }
      for (int shifted = 0; shifted <= 1; ++shifted) {
        long long const region_rows = n / fanout + (shifted != 0 ? 1 : 0);
        int const shift = shifted != 0 ? 1 : 0;
        float const ms = median_ms([&] {
          set_cursors<<<(fanout + 255) / 256, 256>>>(cursors, fanout, region_rows, shift);
          scatter_cursor_runs<<<blocks, threads>>>(keys, vals, per_block, fanout, run, cursors,
                                                   keys_out, vals_out);
        });
        double const gbps = bytes / (ms * 1e6);
        std::printf("F = %4d run = %3d tuples (%3d B)  %-7s  %7.3f ms  %7.1f GB/s  %5.1f%% of copy\n",
                    fanout, run, 4 * run, shifted != 0 ? "shifted" : "aligned", ms, gbps,
                    100.0 * gbps / copy_gbps);
      }
    }
  }
  EXP_CHECK(cudaFree(cursors));
  EXP_CHECK(cudaFree(keys));
  EXP_CHECK(cudaFree(vals));
  EXP_CHECK(cudaFree(keys_out));
  EXP_CHECK(cudaFree(vals_out));
  return 0;
}
