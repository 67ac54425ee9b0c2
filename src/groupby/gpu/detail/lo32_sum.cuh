#pragma once
// Internal (device): the dense tier's 32-bit partial sums of int32 values (acc_op::sum_lo32), an
// add that wraps and counts what it lost in units of 2^32, in device memory (`spill`) or first in
// 16-bit counters in shared memory (counted sums). Used by the dense tier's kernels
// (hash_groupby.cu) and tested on its own (tests/gpu/test_lo32_sum.cu).
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/detail/group_table.cuh"

#include <joinery/types.hpp>

namespace joinery::detail::gpu::gb {

/// A counted sum_lo32's `c` overflows (units of 2^32) into gid's 16-bit counter in shared
/// memory (`counts`, two a 32-bit word, biased by lo32_count_bias). The add whose result crosses
/// +-lo32_count_flush moves that many to spill[gid]; one whose result reaches +-lo32_count_limit
/// (a later add could carry into the neighbour) raises the overflow flag, and the run starts
/// over with the hashed tiers. Every atomic on the word checks the value it made (`after`,
/// from the value it read, unwrapped), the flushes' included: lanes of a warp on one slot
/// adding +1 and -1 in turn near the flush level can queue several flushes the same way, and
/// the last of them is caught. Large (c of any size): a c beyond +-lo32_count_direct (a
/// one-group block's carry of many rows) goes to spill[gid] at once; else |c| <= 1.
template <bool Large>
__device__ __forceinline__ void lo32_count(unsigned char* counts, size_type gid, int c,
                                           unsigned* spill, insert_counters* flag) {
  using policy = hash_groupby_policy;
  if (Large && (c > policy::lo32_count_direct || c < -policy::lo32_count_direct)) {
    atomicAdd(spill + gid, static_cast<unsigned>(c));
    return;
  }
  auto* word = reinterpret_cast<unsigned*>(counts + 2 * (gid & ~size_type{1}));
  int const shift = 16 * static_cast<int>(gid & 1);
  // Two's complement: adding d << shift moves this half by d and leaves the other alone, as
  // long as no half leaves [0, 2^16) (the limit sees to that).
  auto const add = [&](int d) {  // the half's value after this atomic, less the bias
    unsigned const was = atomicAdd(word, static_cast<unsigned>(d) << shift);
    return static_cast<int>((was >> shift) & 0xffffU) -
           static_cast<int>(policy::lo32_count_bias) + d;
  };
  auto const within = [&](int after) {
    if (after < policy::lo32_count_limit && after > -policy::lo32_count_limit) { return true; }
    if (!overflow_raised(flag)) { atomicExch(&flag->overflow, 1ULL); }
    return false;
  };
  constexpr int flush = policy::lo32_count_flush;
  int const after = add(c);
  if (!within(after)) { return; }
  if (after - c < flush && after >= flush) {
    atomicAdd(spill + gid, static_cast<unsigned>(flush));
    within(add(-flush));
  } else if (after - c > -flush && after <= -flush) {
    atomicAdd(spill + gid, static_cast<unsigned>(-flush));
    within(add(flush));
  }
}

/// acc[gid] += v for a sum_lo32 partial (an int32 in shared memory): the add wraps, and what it
/// lost (a multiple of 2^32: for one int32 value +-2^32 on a signed overflow, seen in the old
/// value the atomic returns) is counted in spill[gid] in device memory, in units of 2^32, or in
/// `counts` first when the sum is counted (lo32_count). A 64-bit v (a warp's reduced rows) may
/// lose more than once; the count is exact all the same.
__device__ __forceinline__ void lo32_add(void* acc, size_type gid, acc_value v, unsigned* spill,
                                         unsigned char* counts, insert_counters* flag) {
  auto const add = static_cast<unsigned>(v.lo);
  unsigned const old = atomicAdd(static_cast<unsigned*>(acc) + gid, add);
  long long const lost = static_cast<long long>(static_cast<int>(old)) +
                         static_cast<long long>(v.lo) -
                         static_cast<long long>(static_cast<int>(old + add));
  if (lost == 0) { return; }
  if (counts != nullptr) {
    lo32_count<true>(counts, gid, static_cast<int>(lost >> 32), spill, flag);
  } else {
    atomicAdd(spill + gid, static_cast<unsigned>(lost >> 32));
  }
}

}  // namespace joinery::detail::gpu::gb
