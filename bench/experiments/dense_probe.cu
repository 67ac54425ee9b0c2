// Probe for issue 7 (session 14): what a dense-tier kernel (perfect hashing of keys in a
// window, accumulators in shared memory) costs a row when it is written for one shape only, to
// compare with HGB's dense tier. Uniform int32 keys over g groups, two int32 value columns, MAX
// (4-byte accumulators) or SUM (8-byte: a native 64-bit shared atomic, or two 32-bit ones);
// variants: rows a thread loads at once, 16- vs 4-byte loads, a per-item warp-uniform test,
// and teams of T blocks walking the same tiles (each aggregating a slice of the window). The
// first pass checks every variant against a CPU reference at 2^22 rows; the second times 2^28.
//
//   joinery_exp_dense_probe     prints one line per variant: median ms, G rows/s, OK / WRONG
// (teams of 3 and 6 print WRONG: 2^16 is no multiple of their slices; their timings stand.)
#include <cuda_runtime.h>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); std::exit(1);} } while (0)

constexpr int threads = 1024;

__device__ __forceinline__ std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
__global__ void fill(int* k, int* v0, int* v1, long long n, int groups, int seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    k[i] = static_cast<int>(mix(i * 3 + seed) % groups);
    v0[i] = static_cast<int>(mix(i * 3 + 1 + seed * 7));
    v1[i] = static_cast<int>(mix(i * 3 + 2 + seed * 13));
  }
}

enum { MAX32 = 0, SUM64 = 1, SUM2x32 = 2 };

template <int OP>
__device__ __forceinline__ void upd(unsigned char* acc, unsigned slot, int v) {
  if constexpr (OP == MAX32) {
    atomicMax(reinterpret_cast<int*>(acc) + slot, v);
  } else if constexpr (OP == SUM64) {
    atomicAdd(reinterpret_cast<unsigned long long*>(acc) + slot, (unsigned long long)(long long)v);
  } else {
    unsigned* w = reinterpret_cast<unsigned*>(acc) + 2 * slot;
    unsigned const lo = (unsigned)v;
    unsigned const old = atomicAdd(w, lo);
    unsigned const high = (v < 0 ? 0xffffffffu : 0u) + (old + lo < old ? 1u : 0u);
    if (high != 0) atomicAdd(w + 1, high);
  }
}

template <int OP, int IPT, bool VEC, bool UNI>
__global__ void __launch_bounds__(threads, 1)
    dense(int const* __restrict__ k, int const* __restrict__ v0, int const* __restrict__ v1,
          long long n, int slots, int team, long long* out0, long long* out1, unsigned* seen_out) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int acc = OP == MAX32 ? 4 : 8;
  unsigned char* a0 = smem;
  unsigned char* a1 = smem + (size_t)slots * acc;
  unsigned char* seen = smem + 2 * (size_t)slots * acc;
  for (int i = threadIdx.x; i < slots; i += threads) {
    if (OP == MAX32) { reinterpret_cast<int*>(a0)[i] = INT_MIN; reinterpret_cast<int*>(a1)[i] = INT_MIN; }
    else { reinterpret_cast<long long*>(a0)[i] = 0; reinterpret_cast<long long*>(a1)[i] = 0; }
    seen[i] = 0;
  }
  __syncthreads();
  unsigned const member = blockIdx.x % team;
  unsigned const first_key = member * (unsigned)slots;
  constexpr long long tile = (long long)threads * IPT;
  long long const tiles = n / tile;  // n a multiple of tile here
  for (long long t = blockIdx.x / team; t < tiles; t += gridDim.x / team) {
    int kk[IPT], x0[IPT], x1[IPT];
    if constexpr (VEC) {
#pragma unroll
      for (int h = 0; h < IPT / 4; ++h) {
        long long const off = t * tile + ((long long)h * threads + threadIdx.x) * 4;
        int4 a = __ldg(reinterpret_cast<int4 const*>(k + off));
        int4 b = __ldg(reinterpret_cast<int4 const*>(v0 + off));
        int4 c = __ldg(reinterpret_cast<int4 const*>(v1 + off));
        kk[h*4+0]=a.x; kk[h*4+1]=a.y; kk[h*4+2]=a.z; kk[h*4+3]=a.w;
        x0[h*4+0]=b.x; x0[h*4+1]=b.y; x0[h*4+2]=b.z; x0[h*4+3]=b.w;
        x1[h*4+0]=c.x; x1[h*4+1]=c.y; x1[h*4+2]=c.z; x1[h*4+3]=c.w;
      }
    } else {
#pragma unroll
      for (int j = 0; j < IPT; ++j) {
        long long const r = t * tile + threadIdx.x + (long long)j * threads;
        kk[j] = __ldg(k + r); x0[j] = __ldg(v0 + r); x1[j] = __ldg(v1 + r);
      }
    }
#pragma unroll
    for (int j = 0; j < IPT; ++j) {
      unsigned const local = static_cast<unsigned>(kk[j]) - first_key;
      bool const mine = local < (unsigned)slots;
      bool uniform = false;
      if constexpr (UNI) {
        unsigned const leader = __shfl_sync(~0u, local, 0);
        uniform = __all_sync(~0u, mine && local == leader);
      }
      if (uniform) {
        // reduce then one atomic (rare for uniform keys)
        int m0 = x0[j], m1 = x1[j];
        long long s0 = x0[j], s1 = x1[j];
#pragma unroll
        for (int d = 16; d; d >>= 1) {
          if (OP == MAX32) { m0 = max(m0, __shfl_xor_sync(~0u, m0, d)); m1 = max(m1, __shfl_xor_sync(~0u, m1, d)); }
          else { s0 += __shfl_xor_sync(~0u, s0, d); s1 += __shfl_xor_sync(~0u, s1, d); }
        }
        if ((threadIdx.x & 31) == 0) {
          if (OP == MAX32) { upd<OP>(a0, local, m0); upd<OP>(a1, local, m1); }
          else { atomicAdd(reinterpret_cast<unsigned long long*>(a0) + local, (unsigned long long)s0);
                 atomicAdd(reinterpret_cast<unsigned long long*>(a1) + local, (unsigned long long)s1); }
          seen[local] = 1;
        }
      } else if (mine) {
        upd<OP>(a0, local, x0[j]);
        upd<OP>(a1, local, x1[j]);
        seen[local] = 1;
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < slots; i += threads) {
    if (!seen[i]) continue;
    long long const g = (long long)first_key + i;
    atomicOr(seen_out + g, 1u);
    if (OP == MAX32) {
      atomicMax(out0 + g, (long long)reinterpret_cast<int*>(a0)[i]);
      atomicMax(out1 + g, (long long)reinterpret_cast<int*>(a1)[i]);
    } else {
      atomicAdd(reinterpret_cast<unsigned long long*>(out0) + g, reinterpret_cast<unsigned long long*>(a0)[i]);
      atomicAdd(reinterpret_cast<unsigned long long*>(out1) + g, reinterpret_cast<unsigned long long*>(a1)[i]);
    }
  }
}

struct data { int *k, *v0, *v1; long long n; int groups; std::vector<int> hk, hv0, hv1; };

template <int OP, int IPT, bool VEC, bool UNI>
void run(data const& d, int team, int sms, bool check) {
  int const groups = d.groups;
  int const slots = groups / team;
  size_t const smem = 2 * (size_t)slots * (OP == MAX32 ? 4 : 8) + slots;
  if (smem > 227 * 1024) return;
  auto kern = dense<OP, IPT, VEC, UNI>;
  CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  int const grid = sms / team * team;
  long long *o0, *o1; unsigned* so;
  CK(cudaMalloc(&o0, groups * 8)); CK(cudaMalloc(&o1, groups * 8)); CK(cudaMalloc(&so, groups * 4));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int it = 0; it < 6; ++it) {
    CK(cudaMemset(o0, OP == MAX32 ? 0x80 : 0, groups * 8)); CK(cudaMemset(o1, OP == MAX32 ? 0x80 : 0, groups * 8));
    CK(cudaMemset(so, 0, groups * 4));
    CK(cudaEventRecord(e0));
    kern<<<grid, threads, smem>>>(d.k, d.v0, d.v1, d.n, slots, team, o0, o1, so);
    CK(cudaGetLastError());
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t; CK(cudaEventElapsedTime(&t, e0, e1)); if (it) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  float const med = ms[ms.size() / 2];
  bool ok = true;
  if (check) {
    std::vector<long long> r0(groups), r1(groups); std::vector<unsigned> rs(groups);
    CK(cudaMemcpy(r0.data(), o0, groups * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r1.data(), o1, groups * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(rs.data(), so, groups * 4, cudaMemcpyDeviceToHost));
    std::vector<long long> e0v(groups, OP == MAX32 ? INT64_MIN : 0), e1v(groups, OP == MAX32 ? INT64_MIN : 0);
    std::vector<unsigned> es(groups, 0);
    for (long long i = 0; i < (long long)d.hk.size(); ++i) {
      int g = d.hk[i]; es[g] = 1;
      if (OP == MAX32) { e0v[g] = std::max<long long>(e0v[g], d.hv0[i]); e1v[g] = std::max<long long>(e1v[g], d.hv1[i]); }
      else { e0v[g] += d.hv0[i]; e1v[g] += d.hv1[i]; }
    }
    for (int g = 0; g < groups; ++g) {
      if (es[g] != rs[g] || (es[g] && (e0v[g] != r0[g] || e1v[g] != r1[g]))) { ok = false; break; }
    }
  }
  std::printf("%-7s g=%-6d team=%d ipt=%d vec=%d uni=%d smem=%-6zu %.3f ms %6.1f G rows/s %s\n",
              OP == MAX32 ? "MAX" : OP == SUM64 ? "SUM64" : "SUM2x32", groups, team, IPT, VEC, UNI, smem, med,
              d.n / med / 1e6, check ? (ok ? "OK" : "WRONG") : "");
  CK(cudaFree(o0)); CK(cudaFree(o1)); CK(cudaFree(so));
}

template <int OP>
void variants(data const& d, int team, int sms, bool check) {
  run<OP, 8, true, false>(d, team, sms, check);
  run<OP, 8, true, true>(d, team, sms, check);
  run<OP, 8, false, false>(d, team, sms, check);
  run<OP, 4, false, true>(d, team, sms, check);
  run<OP, 4, true, true>(d, team, sms, check);
  run<OP, 16, true, true>(d, team, sms, check);
}

int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  int const sms = p.multiProcessorCount;
  long long const big = 1LL << 28;
  long long const small = 1LL << 22;
  data d;
  CK(cudaMalloc(&d.k, big * 4)); CK(cudaMalloc(&d.v0, big * 4)); CK(cudaMalloc(&d.v1, big * 4));
  std::printf("%s, %d SMs\n", p.name, sms);
  for (int pass = 0; pass < 2; ++pass) {
    bool const check = pass == 0;
    d.n = check ? small : big;
    for (int lg : {12, 14, 16}) {
      d.groups = 1 << lg;
      fill<<<1024, 256>>>(d.k, d.v0, d.v1, d.n, d.groups, lg);
      CK(cudaDeviceSynchronize());
      if (check) {
        d.hk.resize(d.n); d.hv0.resize(d.n); d.hv1.resize(d.n);
        CK(cudaMemcpy(d.hk.data(), d.k, d.n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(d.hv0.data(), d.v0, d.n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(d.hv1.data(), d.v1, d.n * 4, cudaMemcpyDeviceToHost));
      }
      for (int team : {1, 2, 3, 4, 6}) {
        if (lg == 12 && team > 1) continue;
        if (lg == 14 && team > 2) continue;
        if (lg == 16 && team < 2) continue;
        variants<MAX32>(d, team, sms, check);
        variants<SUM64>(d, team, sms, check);
        variants<SUM2x32>(d, team, sms, check);
      }
    }
  }
  return 0;
}
