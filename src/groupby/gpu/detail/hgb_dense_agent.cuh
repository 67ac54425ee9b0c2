#pragma once
// Internal: the device code of HGB's dense tier (hash_groupby.cu): two tiles a step loaded ahead
// of their updates, each row's slot its key's offset in the block's slice of the window, and
// hgb_dense_kernel; the fix-up of spilled 32-bit sums. Included only by the units that compile
// the kernels (hgb_kernels/dense_*.cu).
#include "groupby/gpu/detail/hgb_shared_agent.cuh"

#include <cuda/std/type_traits>

#include <cstdint>

namespace joinery::detail::gpu::gb::hgb {

/// The dense tier's rows of two of hgb_shared_kernel's tiles, at `first` and `second` (a block
/// owns the tiles of that kernel, whose one-group variant takes the one-group blocks), loaded
/// together: 2 x items_per_thread rows a thread in flight. Full: every row of both exists.
/// Narrow (dense_narrow_batch): the keys and every loaded value column are 16-byte aligned and
/// the values 4 bytes wide; a thread takes runs of `Run` consecutive rows, whose keys are
/// Run * sizeof(K) / 16 loads of 16 bytes and whose values one load of 4 * Run bytes a column,
/// into 32-bit registers (dense_run). The general form loads row by row, a tile's rows threads
/// apart, into 64-bit registers for any value width: at g = 2^16 (teams of 3, int32 keys, MAX)
/// the tier took 1.92 ms with it and 1.58 with the narrow form (H200, 2^28 rows).
/// A row's loaded value bits in load_dense_tiles: 32 bits in the narrow form (4-byte values
/// only), so that no high word is zeroed and moved for every row.
template <bool Narrow>
using dense_raw = cuda::std::conditional_t<Narrow, unsigned, unsigned long long>;

template <bool Full, bool Narrow, int Run, int NA, class K>
__device__ __forceinline__ void load_dense_tiles(
    K const* __restrict__ keys, size_type end, size_type first, size_type second,
    acc_batch const& batch, K (&k)[policy::dense_items_per_thread],
    bool (&valid)[policy::dense_items_per_thread],
    dense_raw<Narrow> (&raw)[NA][policy::dense_items_per_thread]) {
  constexpr int half = policy::items_per_thread;
  constexpr int threads = policy::shared_threads;
  constexpr int run = Narrow ? Run : 1;
  static_assert(half % run == 0 && (!Narrow || run * sizeof(K) >= 16),
                "a tile's rows of a thread are whole runs of whole 16-byte key loads");
  // Row i of a thread's half of a tile: run i / run of the tile's runs, threads * run rows
  // apart, at run * thread (the general form: runs of one row).
  auto const row_of = [&](int j) {
    int const i = j % half;
    return (j < half ? first : second) +
           static_cast<size_type>(i / run) * (threads * run) +
           static_cast<size_type>(threadIdx.x) * run + i % run;
  };
#pragma unroll
  for (int j = 0; j < 2 * half; ++j) { valid[j] = Full || row_of(j) < end; }
  if constexpr (Narrow && Full) {
#pragma unroll
    for (int j = 0; j < 2 * half; j += run) {
      if constexpr (sizeof(K) == 4) {
        uint4 const v = __ldg(reinterpret_cast<uint4 const*>(keys + row_of(j)));
        k[j] = static_cast<K>(v.x);
        k[j + 1] = static_cast<K>(v.y);
        k[j + 2] = static_cast<K>(v.z);
        k[j + 3] = static_cast<K>(v.w);
      } else {
#pragma unroll
        for (int q = 0; q < run; q += 2) {
          ulonglong2 const v = __ldg(reinterpret_cast<ulonglong2 const*>(keys + row_of(j) + q));
          k[j + q] = static_cast<K>(v.x);
          k[j + q + 1] = static_cast<K>(v.y);
        }
      }
    }
  } else {
#pragma unroll
    for (int j = 0; j < 2 * half; ++j) {
      if (valid[j]) { k[j] = __ldg(keys + row_of(j)); }
    }
  }
  for_each_acc<NA>([&](auto a_constant) {
    constexpr int a = decltype(a_constant)::value;
    bool const load = a < batch.count && batch.op[a] != acc_op::count;
    auto const* col = static_cast<unsigned char const*>(batch.src[a].base) + batch.src[a].offset;
    if constexpr (Narrow) {
      auto const* p = reinterpret_cast<unsigned const*>(col);
      if (!load) {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) { raw[a][j] = 0; }
      } else if constexpr (Full) {
#pragma unroll
        for (int j = 0; j < 2 * half; j += run) {
          if constexpr (run == 4) {
            uint4 const v = __ldg(reinterpret_cast<uint4 const*>(p + row_of(j)));
            raw[a][j] = v.x;
            raw[a][j + 1] = v.y;
            raw[a][j + 2] = v.z;
            raw[a][j + 3] = v.w;
          } else {
            uint2 const v = __ldg(reinterpret_cast<uint2 const*>(p + row_of(j)));
            raw[a][j] = v.x;
            raw[a][j + 1] = v.y;
          }
        }
      } else {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) { raw[a][j] = valid[j] ? __ldg(p + row_of(j)) : 0U; }
      }
    } else {  // the general form: any width, 64-bit registers
      auto const stride = static_cast<std::uint64_t>(batch.src[a].stride);
      unsigned char const* p[2] = {col + static_cast<std::uint64_t>(row_of(0)) * stride,
                                   col + static_cast<std::uint64_t>(row_of(half)) * stride};
      auto const step = stride * threads;
      if (load && value_bytes(batch.in[a]) == 4) {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) {
          raw[a][j] = Full || valid[j]
                        ? __ldg(reinterpret_cast<unsigned const*>(p[j / half] + (j % half) * step))
                        : 0;
        }
      } else if (load) {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) {
          raw[a][j] = Full || valid[j] ? __ldg(reinterpret_cast<unsigned long long const*>(
                                             p[j / half] + (j % half) * step))
                                       : 0;
        }
      } else {
#pragma unroll
        for (int j = 0; j < 2 * half; ++j) { raw[a][j] = 0; }
      }
    }
  });
}

/// The Lo32Only dense kernel's row updates in PTX on 32-bit shared-window addresses: with
/// generic pointers ptxas rebuilt the window's base (S2R + MOV + LEA) for every row, and a
/// predicated atomic became a branch of its own (BSSY / BSYNC) anyway.
__device__ __forceinline__ unsigned shared_address(void const* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
/// `*address += v` in shared memory, returning the old value.
__device__ __forceinline__ int shared_atomic_add(unsigned address, int v) {
  int old = 0;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(address), "r"(v) : "memory");
  return old;
}
/// One byte 1 at `address` in shared memory.
__device__ __forceinline__ void shared_mark(unsigned address) {
  asm volatile("st.shared.u8 [%0], %1;" : : "r"(address), "h"(static_cast<unsigned short>(1))
               : "memory");
}
/// `*p += v` in device memory, no value returned.
__device__ __forceinline__ void global_reduce_add(unsigned* p, unsigned v) {
  asm volatile("red.global.add.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
}

/// The narrow form's rows a run: 4 (16-byte key and value loads) but for 8-byte keys without a
/// team, 2 (one 16-byte key load, 8-byte value loads). With 8-byte keys on the H200, runs of 4
/// cost one block a window 5% at g <= 2^12, and runs of 2 cost teams of 3 7% at g = 2^16 (MAX,
/// against the general form; runs of 4 gained it 3%).
template <class K, bool Team>
inline constexpr int dense_run = sizeof(K) == 8 && !Team ? 2 : 4;

/// The dense tier's update of two tiles (load_dense_tiles): each row's slot is its key's offset
/// in the block's slice, and each accumulator is updated with one shared atomic per row. A key
/// outside the window raises the overflow flag (the run goes on with the hashed tiers); one of
/// another member's slice is skipped.
///
/// The loop is written for the instructions a row costs, because the tier is bound by issue,
/// not by DRAM: a team member pays for the rows it skips, and a row of one block cost about
/// 300 instructions a thread's 8 rows in the first version against 180 for a stand-alone probe
/// of one shape (a probe program, since removed). So:
/// - a warp tests its rows one by one for a warp-uniform slot (then reduced with shuffles before
///   one atomic) only when its first rows all hold one key (a window dominated by one key);
/// - when every accumulator of the batch has the same operation and input (MAX of two columns,
///   SUM of two), one branch per row marks the slot and updates them all, as the probe does;
///   otherwise each accumulator's operation is resolved once per call and its rows follow.
template <bool Full, bool Narrow, int NA, bool Lo32Only, bool Team, class K>
__device__ __forceinline__ void dense_tiles(K const* __restrict__ keys, size_type end,
                                            size_type first, size_type second,
                                            acc_batch const& batch,
                                            dense_group_table<K, Team> const& t,
                                            unsigned char* smem, insert_counters* counters) {
  constexpr int ipt = policy::dense_items_per_thread;
  K k[ipt];
  bool valid[ipt];
  dense_raw<Narrow> raw[NA][ipt];
  load_dense_tiles<Full, Narrow, dense_run<K, Team>, NA>(keys, end, first, second, batch, k,
                                                         valid, raw);
  int slot[ipt];
  if constexpr (sizeof(K) == 8) {
    // 8-byte keys: a row's slot is its offset less the slice's first, and a row past the window
    // (the largest offset at or beyond window_slots) raises the overflow flag once for all
    // rows, in place of slot_of's two 64-bit range tests and two selects a row. On the H200 it
    // took g = 2^16 (teams of 3) MAX from 101.8 to 107.4 G rows/s and SUM from 54.3 to 59.6;
    // with 4-byte keys it cost MAX at 2^16 4% (158 against 165), so they keep slot_of.
    using bits_type = typename dense_group_table<K, Team>::bits_type;
    bits_type far = 0;
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      bits_type const d = Full || valid[j] ? t.offset_of(k[j]) : bits_type{0};
      far = d > far ? d : far;
      bits_type const local = Team ? static_cast<bits_type>(d - t.first) : d;
      slot[j] = (Full || valid[j]) && local < static_cast<bits_type>(t.slots)
                  ? static_cast<int>(local)
                  : dense_other_member;
    }
    if (far >= t.window_slots) { atomicExch(&counters->overflow, 1ULL); }
  } else {
    bool outside = false;
#pragma unroll
    for (int j = 0; j < ipt; ++j) {
      slot[j] = Full || valid[j] ? t.slot_of(k[j]) : dense_other_member;
      outside = outside || slot[j] == -1;
    }
    if (outside) { atomicExch(&counters->overflow, 1ULL); }
  }
  int const leader = __shfl_sync(full_warp, slot[0], 0);
  bool const hot = __all_sync(full_warp, slot[0] >= 0 && slot[0] == leader);
  bool same = Lo32Only || batch.count == NA;
#pragma unroll
  for (int a = 1; a < NA && !Lo32Only; ++a) {
    same = same && batch.op[a] == batch.op[0] && batch.in[a] == batch.in[0];
  }
  // Lo32Only: every accumulator is a sum_lo32 of int32 values (the host checked), so the
  // operation is a compile-time constant and no other operation's code shares the kernel.
  auto const with_acc = [&](acc_op op, value_kind in, auto&& f) {
    if constexpr (Lo32Only) {
      f(static_op<acc_op::sum_lo32>{}, static_kind<value_kind::i32>{});
    } else {
      with_static_acc<true>(op, in, f);
    }
  };
  dense_accs<typename dense_group_table<K, Team>::bits_type> const accs{batch, smem, t.first,
                                                                        counters};
  if (!hot && same) {
    with_acc(batch.op[0], batch.in[0], [&](auto op, auto in) {
      if constexpr (Lo32Only && decltype(op)::value == acc_op::sum_lo32) {
        if (batch.count_offset[0] == 0) {
          // Spilled partials: one branch a row, both adds issued before their tests, each lost
          // 2^32 one device-memory add at a 32-bit index. The empty asm makes the addresses
          // opaque, so that ptxas keeps them in registers instead of rebuilding them every row.
          unsigned seen = shared_address(t.seen);
          unsigned base[NA];
          unsigned* spill[NA];
#pragma unroll
          for (int a = 0; a < NA; ++a) {
            base[a] = shared_address(smem + batch.smem_offset[a]);
            spill[a] = accs.spill(a);
            asm volatile("" : "+r"(base[a]), "+l"(spill[a]));
          }
          asm volatile("" : "+r"(seen));
#pragma unroll
          for (int j = 0; j < ipt; ++j) {
            if (slot[j] < 0) { continue; }
            auto const s = static_cast<unsigned>(slot[j]);
            shared_mark(seen + s);
            int old[NA];
#pragma unroll
            for (int a = 0; a < NA; ++a) {
              old[a] = shared_atomic_add(base[a] + 4 * s, static_cast<int>(raw[a][j]));
            }
#pragma unroll
            for (int a = 0; a < NA; ++a) {
              int const v = static_cast<int>(raw[a][j]);
              int const now =
                static_cast<int>(static_cast<unsigned>(old[a]) + static_cast<unsigned>(v));
              if (((old[a] ^ now) & (v ^ now)) < 0) {
                global_reduce_add(spill[a] + s, static_cast<unsigned>((v >> 31) | 1));
              }
            }
          }
          return;
        }
      }
      if constexpr (decltype(op)::value == acc_op::sum_lo32) {
        // The overflow test in 32 bits (the sign of the partial changed against both the old
        // partial's and the value's), counted in 32 bits: on the H200 (g = 2^16, two sums,
        // teams of 3) lo32_add's 64-bit difference took 2.62 ms a pass and the tier ran 93 G
        // rows/s, this 102; 64-bit spills of +-2^32 cost 2-3%. Issuing every row's adds before
        // the tests spilled registers (61 G rows/s).
        // Each row's adds to the partials; `overflow(a, slot, v, lost)` takes each add's
        // overflow test.
        auto const add_rows = [&](auto&& overflow) {
#pragma unroll
          for (int j = 0; j < ipt; ++j) {
            if (slot[j] < 0) { continue; }
            t.mark(slot[j]);
            for_each_acc<NA>([&](auto a_constant) {
              constexpr int a = decltype(a_constant)::value;
              int const v = static_cast<int>(raw[a][j]);
              int const old =
                atomicAdd(reinterpret_cast<int*>(smem + batch.smem_offset[a]) + slot[j], v);
              int const now =
                static_cast<int>(static_cast<unsigned>(old) + static_cast<unsigned>(v));
              overflow(a, slot[j], v, ((old ^ now) & (v ^ now)) < 0);
            });
          }
        };
        if (batch.count_offset[0] != 0) {
          // Counted: the counter's add is made for every row, 0 without an overflow, so that
          // no branch stands around it (a probe's team of 2 at g = 2^15: 1.30 ms a pass against
          // 1.59 with the branch, H200).
          add_rows([&](int a, int s, int v, bool lost) {
            lo32_count<false>(smem + batch.count_offset[a], s, lost ? (v < 0 ? -1 : 1) : 0,
                              accs.spill(a), counters);
          });
        } else {
          add_rows([&](int a, int s, int v, bool lost) {
            if (lost) { atomicAdd(accs.spill(a) + s, v < 0 ? ~0U : 1U); }
          });
        }
      } else {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          if (slot[j] >= 0) {
            t.mark(slot[j]);
            for_each_acc<NA>([&](auto a_constant) {
              constexpr int a = decltype(a_constant)::value;
              shared_update(op, in, accs, a, slot[j], to_acc(op, in, raw[a][j]));
            });
          }
        }
      }
    });
    return;
  }
#pragma unroll
  for (int j = 0; j < ipt; ++j) {
    if (slot[j] >= 0) { t.mark(slot[j]); }
  }
  // Forced inline: called out of line (as the compiler chose once the kernel stood in a smaller
  // translation unit), the arrays it captures went to local memory (544 bytes a thread) and the
  // kernel ran at half speed.
  auto const update = [&](auto hot_constant) __attribute__((always_inline)) {
    constexpr bool Hot = decltype(hot_constant)::value;
    bool uniform[ipt] = {};
    if constexpr (Hot) {
#pragma unroll
      for (int j = 0; j < ipt; ++j) {
        int const l = __shfl_sync(full_warp, slot[j], 0);  // every lane, before the test
        uniform[j] = __all_sync(full_warp, slot[j] >= 0 && slot[j] == l);
      }
    }
    for_each_acc<NA>([&](auto a_constant) {
      constexpr int a = decltype(a_constant)::value;
      if (a >= batch.count) { return; }
      with_acc(batch.op[a], batch.in[a], [&](auto op, auto in) {
#pragma unroll
        for (int j = 0; j < ipt; ++j) {
          acc_value const v = to_acc(op, in, raw[a][j]);
          if (Hot && uniform[j]) {  // the same on every lane
            acc_value const r = warp_reduce(op, in, v);
            if ((threadIdx.x & 31) == 0) { shared_update(op, in, accs, a, slot[j], r); }
          } else if (slot[j] >= 0) {
            shared_update(op, in, accs, a, slot[j], v);
          }
        }
      });
    });
  };
  if (hot) {
    update(cuda::std::true_type{});
  } else {
    update(cuda::std::false_type{});
  }
}

/// The dense tier's general blocks (those of hgb_shared_kernel's one-group variant return at
/// once): hgb_shared_kernel<K, NA, false, Dense> with a lean tile loop. That kernel's per-row
/// carry and 64-bit group ids cost it about 3 warp instructions a row and half the read-once
/// roofline at g <= 2^14; this loop costs a few per row. Team: the blocks
/// form teams over the window (dense_window). Narrow: the batch loads as load_dense_tiles'
/// narrow form (dense_narrow_batch).
template <class K, int NA, bool Team, bool Narrow, bool Lo32Only = false>
__global__ void __launch_bounds__(policy::shared_threads, 1)
    hgb_dense_kernel(K const* __restrict__ keys, size_type n, acc_batch batch, int slots,
                     std::uint32_t seen_offset, group_table_ref<K> table,
                     insert_counters* counters, int one_group, dense_window<K> window) {
  constexpr int tile_rows = policy::shared_threads * policy::items_per_thread;
  static_assert(policy::dense_items_per_thread == 2 * policy::items_per_thread);
  int const team = Team ? window.team : 1;
  // hgb_shared_kernel's test: the one-group blocks are that kernel's.
  size_type const probe = std::min<size_type>(
      static_cast<size_type>(blockIdx.x / team) * tile_rows + threadIdx.x, n - 1);
  bool const one = __syncthreads_and(one_group >= 0 ? one_group != 0
                                                    : key_bits(__ldg(keys + probe)) ==
                                                        key_bits(__ldg(keys)));
  if (one) { return; }  // the one-group variant's block
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int has_marker;  // merge_shared_groups' argument; the dense table has no marker
  using bits_type = typename dense_group_table<K, Team>::bits_type;
  dense_group_table<K, Team> const t{
      window.base, static_cast<bits_type>(static_cast<bits_type>(blockIdx.x % team) * slots),
      static_cast<bits_type>(static_cast<bits_type>(team) * slots), slots, smem + seen_offset};
  int groups = 0;
  reset_shared_groups(t, batch, smem, groups, has_marker);
  __syncthreads();
  // The block's tiles of hgb_shared_kernel, two at a time.
  size_type const tiles = ceil_div(n, static_cast<size_type>(tile_rows));
  size_type const stride = gridDim.x / team;
  // The overflow flag is read as a tile starts and tested after it: tested at once, its L2
  // round trip stood before every tile's loads. A warp stops a tile later, which only costs time
  // (the run starts over with the hashed tiers).
  bool stop = false;
  for (size_type tile = blockIdx.x / team; tile < tiles && !stop; tile += 2 * stride) {
    bool const flag = (threadIdx.x & 31) == 0 && overflow_raised(counters);
    size_type const first = tile * tile_rows;
    size_type const second = (tile + stride) * tile_rows;
    if (second + tile_rows <= n) {
      dense_tiles<true, Narrow, NA, Lo32Only>(keys, n, first, second, batch, t, smem, counters);
    } else {
      dense_tiles<false, Narrow, NA, Lo32Only>(keys, n, first, second, batch, t, smem, counters);
    }
    stop = __shfl_sync(full_warp, flag ? 1 : 0, 0) != 0;
  }
  if (__syncthreads_or(threadIdx.x == 0 && overflow_raised(counters))) { return; }
  merge_shared_groups(t, batch, smem, 0, table, ~0ULL, counters);
}

/// The dense tier's sum_lo32 fix-up, after a batch's kernels: the +-2^32s each slot of the
/// window spilled go into its group's sum in the global table, one thread a slot (plain adds).
/// A key that spilled was marked by its block, which merged it; one not found (none should be)
/// raises the overflow flag, and the run goes on with the hashed tiers rather than lose the sum.
template <class K>
__global__ void __launch_bounds__(policy::threads_per_block)
    lo32_fixup_kernel(acc_batch batch, dense_window<K> window, size_type window_slots,
                      group_table_ref<K> table, insert_counters* counters) {
  using bits_type = typename dense_window<K>::bits_type;
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type o = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
       o < window_slots; o += stride) {
    size_type slot = -2;  // not looked up yet
    for (int a = 0; a < batch.count; ++a) {
      if (batch.op[a] != acc_op::sum_lo32) { continue; }
      auto const lost = static_cast<unsigned long long>(batch.spill[a][o]) << 32;
      if (lost == 0) { continue; }
      if (slot == -2) {
        slot = table.find_slot(
            static_cast<K>(static_cast<bits_type>(window.base + static_cast<bits_type>(o))));
      }
      if (slot < 0) {
        atomicExch(&counters->overflow, 1ULL);
        return;
      }
      static_cast<unsigned long long*>(batch.data[a])[slot] += lost;
    }
  }
}

template <class B, bool Team>
dense_kernel_set<B> dense_kernels() {
  constexpr int na = policy::fused_accs;
  dense_kernel_set<B> set{};
  set.one_group = hgb_shared_kernel<B, na, true, Team ? 2 : 1>;
  set.general = hgb_dense_kernel<B, na, Team, false>;
  set.narrow = hgb_dense_kernel<B, na, Team, true>;
  // Sums of int32 only: a kernel of its own, whose lean update loop no other operation's
  // registers constrain. Not for teams over 4-byte keys: there it ran 6% slower than the narrow
  // kernel on the H200 (g = 2^16, two machine starts), while teams over 8-byte keys gained 6-15%
  // and one block a window 7-10% (H200; BENCHMARKS.md, gpu-groupby).
  if constexpr (sizeof(B) == 4 && Team) {
    set.narrow_lo32 = set.narrow;
  } else {
    set.narrow_lo32 = hgb_dense_kernel<B, na, Team, true, true>;
  }
  set.lo32_fixup = lo32_fixup_kernel<B>;
  return set;
}

}  // namespace joinery::detail::gpu::gb::hgb
