#pragma once
// Internal: the device side of the accumulators of plan.hpp. One code path serves every value
// type and aggregate: the operation of an accumulator is a run-time value that is the same for
// every thread of a launch (no divergence), which keeps the number of kernel instantiations at
// one per key type instead of key x value x aggregate.
//
// Layers: load (value -> accumulator representation), combine (in registers), warp_reduce
// (shuffles), atomic_update (shared or global memory, by the pointer's address space).
#include "groupby/gpu/plan.hpp"

#include <cuda/std/cstdint>
#include <cuda/std/type_traits>
#include <cuda/std/utility>

namespace joinery::detail::gpu::gb {

inline constexpr unsigned full_warp = 0xffffffffU;

/// A value in accumulator form: 64 bits, plus the high word of 128-bit sums.
struct acc_value {
  unsigned long long lo;
  unsigned long long hi;
};

/// Order-preserving map of a value's bits to an unsigned word of its width.
__device__ __forceinline__ unsigned long long to_ordered(value_kind k, unsigned long long bits) {
  switch (k) {
    case value_kind::i32: return (bits ^ 0x80000000ULL) & 0xffffffffULL;
    case value_kind::u32: return bits & 0xffffffffULL;
    case value_kind::f32: {
      auto const b = static_cast<unsigned>(bits);
      return (b & 0x80000000U) ? static_cast<unsigned>(~b) : (b | 0x80000000U);
    }
    case value_kind::i64: return bits ^ 0x8000000000000000ULL;
    case value_kind::u64: return bits;
    case value_kind::f64:
      return (bits & 0x8000000000000000ULL) ? ~bits : (bits | 0x8000000000000000ULL);
  }
  return bits;
}

/// Inverse of to_ordered: the value's bits (zero-extended to 64 for 4-byte types).
__device__ __forceinline__ unsigned long long from_ordered(value_kind k, unsigned long long u) {
  switch (k) {
    case value_kind::i32: return (u ^ 0x80000000ULL) & 0xffffffffULL;
    case value_kind::u32: return u & 0xffffffffULL;
    case value_kind::f32: {
      auto const b = static_cast<unsigned>(u);
      return (b & 0x80000000U) ? (b ^ 0x80000000U) : static_cast<unsigned>(~b);
    }
    case value_kind::i64: return u ^ 0x8000000000000000ULL;
    case value_kind::u64: return u;
    case value_kind::f64: return (u & 0x8000000000000000ULL) ? (u ^ 0x8000000000000000ULL) : ~u;
  }
  return u;
}

__device__ __forceinline__ acc_value identity(acc_op op, value_kind in) {
  if (op == acc_op::min) {
    return {value_bytes(in) == 4 ? 0xffffffffULL : ~0ULL, 0};
  }
  return {0, 0};
}

/// Raw bits of row `row` of a source (4- or 8-byte load through the read-only path).
__device__ __forceinline__ unsigned long long load_bits(acc_source const& s, value_kind in,
                                                        size_type row) {
  auto const* p = static_cast<unsigned char const*>(s.base) +
                  static_cast<std::uint64_t>(row) * s.stride + s.offset;
  if (value_bytes(in) == 4) { return __ldg(reinterpret_cast<unsigned const*>(p)); }
  return __ldg(reinterpret_cast<unsigned long long const*>(p));
}

/// A loaded value in accumulator form.
__device__ __forceinline__ acc_value to_acc(acc_op op, value_kind in, unsigned long long bits) {
  switch (op) {
    case acc_op::count: return {1, 0};
    case acc_op::sum_int:
    case acc_op::sum_lo32:
    case acc_op::sum_int128: {
      unsigned long long v = bits;
      if (in == value_kind::i32) {
        v = static_cast<unsigned long long>(
            static_cast<long long>(static_cast<int>(static_cast<unsigned>(bits))));
      }
      bool const negative = value_signed(in) && static_cast<long long>(v) < 0;
      return {v, op == acc_op::sum_int128 && negative ? ~0ULL : 0ULL};
    }
    case acc_op::sum_float: {
      double const d = in == value_kind::f32
                         ? static_cast<double>(__uint_as_float(static_cast<unsigned>(bits)))
                         : __longlong_as_double(static_cast<long long>(bits));
      return {static_cast<unsigned long long>(__double_as_longlong(d)), 0};
    }
    case acc_op::min:
    case acc_op::max: return {to_ordered(in, bits), 0};
  }
  return {0, 0};
}

__device__ __forceinline__ acc_value combine(acc_op op, acc_value a, acc_value b) {
  switch (op) {
    case acc_op::count:
    case acc_op::sum_int:
    case acc_op::sum_lo32: return {a.lo + b.lo, 0};
    case acc_op::sum_int128: {
      unsigned long long const lo = a.lo + b.lo;
      return {lo, a.hi + b.hi + (lo < a.lo ? 1ULL : 0ULL)};
    }
    case acc_op::sum_float:
      return {static_cast<unsigned long long>(__double_as_longlong(
                  __longlong_as_double(static_cast<long long>(a.lo)) +
                  __longlong_as_double(static_cast<long long>(b.lo)))),
              0};
    case acc_op::min: return {a.lo < b.lo ? a.lo : b.lo, 0};
    case acc_op::max: return {a.lo > b.lo ? a.lo : b.lo, 0};
  }
  return a;
}

__device__ __forceinline__ bool is_identity(acc_op op, value_kind in, acc_value v) {
  auto const id = identity(op, in);
  return v.lo == id.lo && v.hi == id.hi;
}

__device__ __forceinline__ acc_value shfl_up(acc_value v, unsigned d) {
  return {__shfl_up_sync(full_warp, v.lo, d), __shfl_up_sync(full_warp, v.hi, d)};
}

/// Every lane gets the combination of all 32 lanes' values (the whole warp must call it).
__device__ __forceinline__ acc_value warp_reduce(acc_op op, acc_value v) {
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) {
    acc_value const other{__shfl_xor_sync(full_warp, v.lo, m), __shfl_xor_sync(full_warp, v.hi, m)};
    v = combine(op, v, other);
  }
  return v;
}

/// acc[gid] op= v, atomically. `acc` points at the accumulator array (shared or global memory:
/// the compiler picks the instruction from the pointer's address space once inlined). sum_lo32
/// here is the merge of a 32-bit partial into its global sum_int array.
__device__ __forceinline__ void atomic_update(acc_op op, value_kind in, void* acc, size_type gid,
                                              acc_value v) {
  switch (op) {
    case acc_op::count:
    case acc_op::sum_int:
    case acc_op::sum_lo32:
      atomicAdd(static_cast<unsigned long long*>(acc) + gid, v.lo);
      return;
    case acc_op::sum_int128: {
      auto* p = static_cast<unsigned long long*>(acc) + 2 * gid;
      // Each add sees the exact old low word, so the carries it reports sum to the true carry.
      unsigned long long const old = atomicAdd(p, v.lo);
      unsigned long long const hi = v.hi + (old + v.lo < old ? 1ULL : 0ULL);
      if (hi != 0) { atomicAdd(p + 1, hi); }
      return;
    }
    case acc_op::sum_float:
      atomicAdd(static_cast<double*>(acc) + gid, __longlong_as_double(static_cast<long long>(v.lo)));
      return;
    case acc_op::min:
      if (value_bytes(in) == 4) {
        atomicMin(static_cast<unsigned*>(acc) + gid, static_cast<unsigned>(v.lo));
      } else {
        atomicMin(static_cast<unsigned long long*>(acc) + gid, v.lo);
      }
      return;
    case acc_op::max:
      if (value_bytes(in) == 4) {
        atomicMax(static_cast<unsigned*>(acc) + gid, static_cast<unsigned>(v.lo));
      } else {
        atomicMax(static_cast<unsigned long long*>(acc) + gid, v.lo);
      }
      return;
  }
}

/// An accumulator's operation and value kind as compile-time constants.
template <acc_op Op>
using static_op = cuda::std::integral_constant<acc_op, Op>;
template <value_kind V>
using static_kind = cuda::std::integral_constant<value_kind, V>;

template <acc_op Op, value_kind... Kinds, class F>
__device__ __forceinline__ void with_static_kind(value_kind in, F& f) {
  (void)((in == Kinds ? (f(static_op<Op>{}, static_kind<Kinds>{}), true) : false) || ...);
}

/// Calls f(op, in) with the pair as compile-time constants (the pairs a plan can hold), so that
/// a loop over a tile's items inside f has no switch per item: the functions above fold to the
/// one case once inlined. The pair is the same for every thread of a launch, so this branches
/// once per call, not per lane. Lo32: the dense tier's kernels, whose batches may hold sum_lo32
/// (the others never do, and do not instantiate it).
template <bool Lo32 = false, class F>
__device__ __forceinline__ void with_static_acc(acc_op op, value_kind in, F&& f) {
  using V = value_kind;
  switch (op) {
    case acc_op::sum_lo32:
      if constexpr (Lo32) {
        f(static_op<acc_op::sum_lo32>{}, static_kind<V::i32>{});
      } else {
        __trap();  // a batch laid out for the dense tier reached another kernel: fail loudly
      }
      return;
    case acc_op::count: f(static_op<acc_op::count>{}, static_kind<V::i64>{}); return;
    case acc_op::sum_int: with_static_kind<acc_op::sum_int, V::i32, V::u32, V::i64, V::u64>(in, f); return;
    case acc_op::sum_int128:  // 4-byte values too, from 2^32 rows on (make_plan)
      with_static_kind<acc_op::sum_int128, V::i32, V::u32, V::i64, V::u64>(in, f);
      return;
    case acc_op::sum_float: with_static_kind<acc_op::sum_float, V::f32, V::f64>(in, f); return;
    case acc_op::min:
      with_static_kind<acc_op::min, V::i32, V::u32, V::i64, V::u64, V::f32, V::f64>(in, f);
      return;
    case acc_op::max:
      with_static_kind<acc_op::max, V::i32, V::u32, V::i64, V::u64, V::f32, V::f64>(in, f);
      return;
  }
}

/// warp_reduce of an accumulator known at compile time: only the words it uses travel (32 bits
/// for a 4-byte min/max, the high word only for a 128-bit sum).
template <acc_op Op, value_kind In>
__device__ __forceinline__ acc_value warp_reduce(static_op<Op>, static_kind<In>, acc_value v) {
  constexpr bool narrow = (Op == acc_op::min || Op == acc_op::max) && value_bytes(In) == 4;
#pragma unroll
  for (int m = 16; m >= 1; m >>= 1) {
    acc_value other{};
    if constexpr (narrow) {
      other.lo = __shfl_xor_sync(full_warp, static_cast<unsigned>(v.lo), m);
    } else {
      other.lo = __shfl_xor_sync(full_warp, v.lo, m);
    }
    if constexpr (Op == acc_op::sum_int128) { other.hi = __shfl_xor_sync(full_warp, v.hi, m); }
    v = combine(Op, v, other);
  }
  return v;
}

/// Calls f(std::integral_constant<int, a>) for a = 0 .. N-1: accumulator indices as constants,
/// so that arrays indexed by them stay in registers inside f.
template <int N, class F>
__device__ __forceinline__ void for_each_acc(F&& f) {
  [&]<int... A>(cuda::std::integer_sequence<int, A...>) {
    (f(cuda::std::integral_constant<int, A>{}), ...);
  }(cuda::std::make_integer_sequence<int, N>{});
}

/// acc[gid] in accumulator form (plain load: the caller orders it after the updates).
__device__ __forceinline__ acc_value load_acc(acc_op op, value_kind in, void const* acc,
                                              size_type gid) {
  if (op == acc_op::sum_int128) {
    auto const* p = static_cast<unsigned long long const*>(acc) + 2 * gid;
    return {p[0], p[1]};
  }
  if (op == acc_op::sum_lo32) {  // the partial, sign-extended
    return {static_cast<unsigned long long>(
                static_cast<long long>(static_cast<int const*>(acc)[gid])),
            0};
  }
  if (acc_bytes(op, in) == 4) { return {static_cast<unsigned const*>(acc)[gid], 0}; }
  return {static_cast<unsigned long long const*>(acc)[gid], 0};
}


/// acc[gid] op= v in shared memory: a 64-bit integer add is two native 32-bit atomics (the low
/// word, then the high word with the carry its own add reports, so the carries sum exactly),
/// where a 64-bit shared atomic add is a compare-and-swap loop that serialises when lanes of a
/// warp share a group.
__device__ __forceinline__ void shared_atomic_update(acc_op op, value_kind in, void* acc,
                                                     size_type gid, acc_value v) {
  if (op == acc_op::count || op == acc_op::sum_int) {
    auto* word = reinterpret_cast<unsigned*>(static_cast<unsigned long long*>(acc) + gid);
    auto const lo = static_cast<unsigned>(v.lo);
    auto const hi = static_cast<unsigned>(v.lo >> 32);
    unsigned const old = atomicAdd(word, lo);
    unsigned const high = hi + (old + lo < old ? 1U : 0U);
    if (high != 0) { atomicAdd(word + 1, high); }
    return;
  }
  atomic_update(op, in, acc, gid, v);
}

/// The combination of the values of `peers` (this lane's group of lanes; every lane of the warp
/// calls it with its own group) at the group's lowest lane: a tree over the group's ranks, each
/// lane taking the value of the peer d ranks above it (__fns) for d = 1, 2, 4, 8, 16.
__device__ __forceinline__ acc_value peer_reduce(acc_op op, acc_value v, unsigned peers) {
  unsigned const lane = threadIdx.x & 31;
  int const rank = __popc(peers & ((1U << lane) - 1U));
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    unsigned const src = __fns(peers, lane, d + 1);
    acc_value const other{__shfl_sync(full_warp, v.lo, src & 31U),
                          __shfl_sync(full_warp, v.hi, src & 31U)};
    if ((rank & (2 * d - 1)) == 0 && src != 0xffffffffU) { v = combine(op, v, other); }
  }
  return v;
}

/// Writes v into acc[gid] (plain store, the accumulator's width).
__device__ __forceinline__ void store_acc(acc_op op, value_kind in, void* acc, size_type gid,
                                          acc_value v) {
  if (op == acc_op::sum_int128) {
    auto* p = static_cast<unsigned long long*>(acc) + 2 * gid;
    p[0] = v.lo;
    p[1] = v.hi;
  } else if (acc_bytes(op, in) == 4) {
    static_cast<unsigned*>(acc)[gid] = static_cast<unsigned>(v.lo);
  } else {
    static_cast<unsigned long long*>(acc)[gid] = v.lo;
  }
}

/// Writes the identity into acc[gid] (plain store).
__device__ __forceinline__ void store_identity(acc_op op, value_kind in, void* acc, size_type gid) {
  store_acc(op, in, acc, gid, identity(op, in));
}

/// The value of accumulator a of `batch` at logical row i.
__device__ __forceinline__ acc_value load_row(acc_batch const& batch, int a, size_type i) {
  if (batch.op[a] == acc_op::count) { return {1, 0}; }
  size_type row = i;
  if (batch.row_ids32 != nullptr) {
    row = static_cast<size_type>(__ldg(batch.row_ids32 + i));
  } else if (batch.row_ids64 != nullptr) {
    row = static_cast<size_type>(__ldg(batch.row_ids64 + i));
  }
  return to_acc(batch.op[a], batch.in[a], load_bits(batch.src[a], batch.in[a], row));
}

}  // namespace joinery::detail::gpu::gb
