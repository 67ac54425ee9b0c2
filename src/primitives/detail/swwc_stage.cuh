#pragma once
// Internal (device, block/warp helpers): the second buffer level of the Hierarchical software
// write-combining partition (Lutz et al. 2022, section 4.3), kept in device memory.
//
// Why: the DRAM of an H200 writes 512-byte runs at ~91% of copy bandwidth but 128-byte runs
// at ~56% (BENCHMARKS.md, "primitives"), and the shared-memory buffers of the Shared
// variant hold 16-32 tuples a digit. Here the output is cut into chunks of C rows aligned to C
// (256 rows: 1-2 KB of keys). A chunk that lies inside one partition is first assembled in a staging
// slot (small enough to stay in L2) and written to its rows in one burst by the warp whose write
// completes it. Each digit owns a ring of R slots, chunk k in slot k mod R: the paper's
// double-buffering, with R buffers instead of two and one ring shared by all blocks, so that the
// ring stays L2-resident at every fanout.
//
// One 32-bit state word per chunk: bit 31 STAGED (the chunk owns its slot), bit 30 DIRECT (its
// rows go straight to the output), the low bits the rows written so far. The partial chunks at
// a partition's ends start DIRECT; the first R whole chunks of a digit start STAGED; the warp
// that writes out chunk k hands its slot to chunk k + R (or, where that one already went direct,
// to k + 2R, ...). A writer that finds its chunk undecided (its slot still busy) makes it DIRECT
// with one CAS. Nobody ever waits for another block, so no schedule can deadlock.
#include <joinery/types.hpp>

#include <cstdint>

namespace joinery::detail::gpu {

inline constexpr unsigned stage_staged = 1U << 31;
inline constexpr unsigned stage_direct = 1U << 30;
inline constexpr unsigned stage_count_mask = stage_direct - 1;

/// Release / acquire fence at device scope (cheaper than __threadfence's sequentially
/// consistent one): orders a thread's staging writes before the counts, a count before the
/// slot's reads, and those reads before the slot is handed on.
__device__ __forceinline__ void stage_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

template <class K, class V>
struct swwc_stage {
  unsigned* state;             // one word per output chunk
  K* keys;                     // fanout x R x C staged keys
  V* pay;                      // fanout x R x C staged payloads (has_payload only)
  std::int64_t const* offsets; // partition bounds, fanout + 1: where a digit's whole chunks end
  int log2_c;
  int log2_r;

  /// Whether rows of chunk k go through its staging slot: decided once, by the first writer if
  /// nobody did before.
  __device__ __forceinline__ bool staged(unsigned long long k) const {
    return (decide(k, load_state(k)) & stage_staged) != 0;
  }

  /// staged() of the chunks of a buffer's first and last rows (bits 0 and 1), both states loaded
  /// at once.
  __device__ __forceinline__ unsigned staged_pair(unsigned long long k0,
                                                  unsigned long long k1) const {
    unsigned const st0 = load_state(k0);
    unsigned const st1 = load_state(k1);
    unsigned const d0 = decide(k0, st0);
    unsigned const d1 = k1 == k0 ? d0 : decide(k1, st1);
    return ((d0 & stage_staged) != 0 ? 1U : 0U) | ((d1 & stage_staged) != 0 ? 2U : 0U);
  }

  /// Index of output row `row` (digit d) in the staging arrays.
  __device__ __forceinline__ std::size_t slot_index(unsigned d, unsigned long long row) const {
    auto const r = static_cast<std::size_t>((row >> log2_c) & ((1ULL << log2_r) - 1));
    return ((((static_cast<std::size_t>(d) << log2_r) + r) << log2_c)) +
           static_cast<std::size_t>(row & ((1ULL << log2_c) - 1));
  }

  /// Counts `rows` more rows of chunk k written (the caller fenced its block's writes before);
  /// true if this completed a staged chunk, which the caller must then write out.
  __device__ __forceinline__ bool add_rows(unsigned long long k, unsigned rows) const {
    unsigned const old = atomicAdd(state + k, rows);
    return (old & stage_staged) != 0 && (old & stage_count_mask) + rows == (1U << log2_c);
  }

  /// The warp writes chunk k of digit d from its slot to the output (16-byte moves, streaming
  /// stores: the lines are not read again), then lane `owner` hands the slot on. Every lane
  /// calls it with the same k, d.
  template <bool HasPayload, class PO>
  __device__ __forceinline__ void write_out(unsigned long long k, unsigned d, int owner, K* keys_out,
                                            PO* pay_out) const {
    int const lane = static_cast<int>(threadIdx.x & 31);
    std::int64_t end = 0;
    if (lane == owner) {
      end = offsets[d + 1];  // issued early: the hand-off below needs it
      stage_fence();         // acquire: the count this lane saw covers the slot's rows
    }
    __syncwarp();
    std::size_t const from = slot_index(d, k << log2_c);
    auto const first = static_cast<std::size_t>(k << log2_c);
    copy_chunk(keys + from, keys_out + first, lane);
    if constexpr (HasPayload) { copy_chunk(pay + from, pay_out + first, lane); }
    __syncwarp();
    if (lane == owner) {
      stage_fence();  // the slot's reads are done before the next chunk may write it
      auto const whole_end = static_cast<unsigned long long>(end) >> log2_c;  // d's whole chunks end
      for (unsigned long long j = k + (1ULL << log2_r); j < whole_end; j += 1ULL << log2_r) {
        // Taken, or still undecided: its writers will find it staged. Only a chunk that went
        // direct passes the slot further on.
        if ((atomicCAS(state + j, 0U, stage_staged) & stage_direct) == 0) { break; }
      }
    }
  }

 private:
  __device__ __forceinline__ unsigned load_state(unsigned long long k) const {
    return *reinterpret_cast<unsigned const volatile*>(state + k);
  }

  /// The state `st` seen for chunk k, decided: an undecided chunk (its slot not handed to it yet)
  /// goes DIRECT with one CAS, unless the hand-off made it STAGED first.
  __device__ __forceinline__ unsigned decide(unsigned long long k, unsigned st) const {
    if ((st & (stage_staged | stage_direct)) != 0) { return st; }
    unsigned const old = atomicCAS(state + k, 0U, stage_direct);
    return old == 0 ? stage_direct : old;
  }

  template <class T>
  __device__ __forceinline__ void copy_chunk(T const* src, T* dst, int lane) const {
    int const vectors = static_cast<int>((sizeof(T) << log2_c) / sizeof(uint4));
    auto const* s = reinterpret_cast<uint4 const*>(src);
    auto* o = reinterpret_cast<uint4*>(dst);
    for (int v = lane; v < vectors; v += 32) { __stcs(o + v, __ldcg(s + v)); }
  }
};

}  // namespace joinery::detail::gpu
