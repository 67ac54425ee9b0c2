#pragma once
// Internal (device, tile agent): radix partitioning with software write-combining in shared
// memory (Lutz et al. 2022, section 4, the "Shared" variant), writing to device memory.
//
// Each block keeps, per digit, a buffer of B tuples in shared memory and a fill count. A tile's
// tuples claim buffer slots with one shared atomic each; a full buffer is written out by one warp
// as B consecutive tuples at a slot range taken with one global atomic on the digit's write
// cursor (initialised to the digit's first output row; with aligned flushes a position within the
// digit's range, see set_aligned). Writes are therefore whole runs of B
// tuples however short a digit's run within one tile is (B x key width is at least a 32-byte
// sector up to 11 bits with 4-byte payloads; at 12 bits, or 11 with 4-byte keys and 8-byte
// payloads, the buffers shrink to 8-16 bytes of keys). Not stable: runs land in the order blocks
// flush them.
//
// A tile is processed in rounds separated by barriers, so no thread waits on another inside a
// warp: round 0 inserts every tuple (those that find their buffer full stay pending in
// registers); while any tuple is pending, the warps flush every full buffer. A digit with a
// short overflow (fewer than direct_factor x B claims, factor 2 or 4) gives B rows, and its
// pending tuples move down by B slots and are stored once their slot lies in the buffer again.
// A digit with a long one (skew: a tile mostly of one digit) takes all its claims rounded down
// to a multiple of B at once, and its pending tuples within that range write themselves straight
// to their rows: one round instead of tile / B (B-sized rounds made Zipf 1.5 keys 7-30x slower).
// Short overflows keep the buffered path: direct writes of a few tuples per digit cost more than
// the round.
//
// Staged = true is the Hierarchical variant (section 4.3): every output row goes through the
// chunk staging of swwc_stage.cuh (its slot, or straight to the output where its chunk is
// direct), and after each round, once the block's writes are done, the block counts the rows it
// wrote into each chunk; a warp whose count completes a staged chunk writes it out.

#include "primitives/detail/partition_policy.hpp"
#include "primitives/detail/radix_digit.cuh"
#include "primitives/detail/swwc_stage.cuh"
#include "primitives/partition_dispatch.hpp"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace joinery::detail::gpu {

template <class Policy, class K, class P, bool Staged = false, bool Aligned = false>
struct agent_swwc_partition {
  static_assert(!(Staged && Aligned),
                "aligned flushes keep Hierarchical's contiguous buffers out (its chunks)");
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int vt = Policy::items_per_thread;
  static constexpr int warps = threads / 32;
  static_assert(Policy::max_buffer_tuples >= 1 &&
                  Policy::max_buffer_tuples <= Policy::max_forced_buffer_tuples &&
                  Policy::max_forced_buffer_tuples <= 128,
                "buffers hold at most 128 tuples");
  static constexpr bool has_payload = !std::is_same_v<P, no_payload>;
  using pay_t = std::conditional_t<has_payload, P, K>;  // buffer element type (unused if none)
  /// A digit's flush takes all its claims (rounded down to whole buffers) from this many buffers'
  /// worth on; below, one buffer per round. Measured on the H200 (2^28 tuples, 8..11 bits): 2
  /// for 4+4-byte tuples (Zipf 1.5 keys 1.7-2x faster than with 4, uniform within 2%), 4 for
  /// 8+8 (with 2, uniform 10 bits lost 28%).
  static constexpr unsigned direct_factor =
    sizeof(K) + (has_payload ? sizeof(P) : 0) <= 8 ? 2 : 4;
  /// A flushed digit's range, as its pending tuples read it: the first output row (aligned
  /// flushes: position) in the high 48 bits and the rows taken (low 16; at most b - 1 + tile <
  /// 2^16).
  static constexpr int taken_bits = 16;
  static_assert(Policy::tile_items + Policy::max_forced_buffer_tuples < (1 << taken_bits),
                "a digit's rows taken in one flush must fit 16 bits");

  /// Dynamic shared memory: each flushed digit's range (64-bit), key buffers, payload buffers
  /// (fanout x b is even, so the arrays stay 8-byte aligned), fill counts, the flush list and
  /// its count.
  __host__ __device__ static constexpr std::size_t smem_bytes(int fanout, int b) {
    return swwc_smem_bytes<Policy>(fanout, b, sizeof(K), has_payload ? sizeof(P) : 0);
  }

  unsigned long long* flushed;  // shared, fanout: (first row or position << taken_bits) | taken
  K* buf_keys;        // shared, fanout x b
  pay_t* buf_pay;     // shared, fanout x b (has_payload only)
  unsigned* fill;     // shared, fanout: slots claimed in the digit's buffer
  int* flush_list;          // shared, fanout: the digits whose buffers a flush writes
  unsigned* flush_count;    // shared: entries of flush_list
  int fanout;
  unsigned b;       // buffer tuples: a power of two up to 128; the A/B knob also 48..112 by 16
  int log2_lanes;   // log2 of the lanes that write one buffer: log2(b) up to 32 tuples, else 5
  radix_digit<K> digit;
  K const* __restrict__ keys;
  P const* __restrict__ payload;  // nullptr with a 32-bit payload: row ids generated (row i: i)
  K* __restrict__ keys_out;
  P* __restrict__ payload_out;
  /// Global: next free output row per digit (fanout); aligned flushes: next position upward,
  /// then taken downward by the drains (2 x fanout).
  unsigned long long* __restrict__ cursors;
  /// Aligned flushes (set_aligned): the digits' first output rows (fanout + 1), else nullptr.
  std::int64_t const* __restrict__ spans = nullptr;
  unsigned align_mask = 0;  // aligned flushes: rows a full flush starts on a multiple of, - 1
  swwc_stage<K, pay_t> stage{};  // Staged only: the second buffer level
  int listed = 0;                // buffers listed by the last flush (Staged: the commit's list)

  __device__ __forceinline__ agent_swwc_partition(unsigned char* smem, int fanout_, unsigned b_,
                                                  radix_digit<K> digit_, K const* keys_,
                                                  P const* payload_, K* keys_out_,
                                                  P* payload_out_,
                                                  unsigned long long* cursors_)
      : fanout(fanout_), b(b_), log2_lanes(lanes_log2(b_)),
        digit(digit_), keys(keys_), payload(payload_),
        keys_out(keys_out_), payload_out(payload_out_), cursors(cursors_) {
    auto const slots = static_cast<std::size_t>(fanout) * b;
    flushed = reinterpret_cast<unsigned long long*>(smem);
    smem += sizeof(unsigned long long) * static_cast<std::size_t>(fanout);
    buf_keys = reinterpret_cast<K*>(smem);
    unsigned char* next = smem + slots * sizeof(K);
    buf_pay = reinterpret_cast<pay_t*>(next);
    if constexpr (has_payload) { next += slots * sizeof(P); }
    fill = reinterpret_cast<unsigned*>(next);
    flush_list = reinterpret_cast<int*>(next + sizeof(unsigned) * fanout);
    flush_count = reinterpret_cast<unsigned*>(next + (sizeof(unsigned) + sizeof(int)) * fanout);
  }

  /// log2 of the lanes that write one buffer of b tuples: log2(b), at most 5.
  __device__ __forceinline__ static int lanes_log2(unsigned b) {
    int l = 0;
    while (l < 5 && (2U << l) <= b) { ++l; }
    return l;
  }

  __device__ __forceinline__ void set_stage(swwc_stage<K, pay_t> const& s) { stage = s; }

  /// Aligned flushes: every full buffer lands on a row that is a multiple of its size, so its runs
  /// cover whole sectors and lines. (For the A/B knob's sizes that are not powers of two, h
  /// aligns to the largest power of two up to b and runs then start on multiples of
  /// gcd(b, that power) only.) The cursors
  /// (2 x fanout, zeroed) then count positions within each digit's range: full flushes take
  /// positions upward from 0, drains downward from its end, and position x is row
  /// spans[d] + (h + x) mod n (n the digit's rows, h the rows up to the first aligned one), so
  /// only the drains and the one run that wraps land off the alignment. Not with Staged (its
  /// chunk bookkeeping needs each buffer's rows contiguous).
  __device__ __forceinline__ void set_aligned(std::int64_t const* digit_spans) {
    static_assert(Aligned, "aligned flushes are the Aligned variant's");
    spans = digit_spans;
    unsigned a = 1;
    while (2 * a <= b) { a *= 2; }
    align_mask = a - 1;
  }

  /// Digit d's first row s, rows n and rotation h (aligned flushes).
  __device__ __forceinline__ void digit_span(unsigned d, unsigned long long& s,
                                             unsigned long long& n,
                                             unsigned long long& h) const {
    s = static_cast<unsigned long long>(spans[d]);
    n = static_cast<unsigned long long>(spans[d + 1]) - s;
    h = (0ULL - s) & align_mask;
    if (h >= n) { h = 0; }
  }

  /// The output row of position `pos` of digit d: pos itself unless flushes are aligned.
  __device__ __forceinline__ unsigned long long row_of(unsigned d, unsigned long long pos) const {
    if constexpr (!Aligned) { return pos; }
    unsigned long long s = 0;
    unsigned long long n = 0;
    unsigned long long h = 0;
    digit_span(d, s, n, h);
    unsigned long long r = h + pos;
    if (r >= n) { r -= n; }
    return s + r;
  }

  /// The write cursors of the digits (a segmented pass moves them between segments).
  __device__ __forceinline__ void set_cursors(unsigned long long* c) { cursors = c; }

  /// Zeroes the fill counts and the flush list; the caller synchronises before the first tile.
  __device__ __forceinline__ void init() {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += threads) { fill[p] = 0; }
    reset_list();
  }

  __device__ __forceinline__ void store(unsigned d, unsigned slot, K k, pay_t v) {
    auto const i = static_cast<std::size_t>(d) * b + slot;
    buf_keys[i] = k;
    if constexpr (has_payload) { buf_pay[i] = v; }
  }

  /// Writes one tuple of digit d at output row `row`: into its chunk's staging slot if `staged`,
  /// else to the output. Returns `staged`.
  __device__ __forceinline__ bool put(unsigned d, unsigned long long row, bool staged, K key,
                                      pay_t v) {
    if (Staged && staged) {
      auto const si = stage.slot_index(d, row);
      stage.keys[si] = key;
      if constexpr (has_payload) { stage.pay[si] = v; }
      return true;
    }
    keys_out[row] = key;
    if constexpr (has_payload) { payload_out[row] = v; }
    return false;
  }

  /// Writes out buffers: with Drain, every non-empty one (its fill count of tuples, at most b),
  /// else every full one: b rows taken, or with direct_factor x b claims or more all the claims
  /// rounded down to a multiple of b (the pending tuples of slots [b, taken) write themselves;
  /// `flushed` tells them where); fill drops by the rows taken. The block first lists the buffers to write;
  /// each warp then takes an equal share of the list, issues the write-cursor atomics of up to 32
  /// buffers at once (one lane each, so their latencies overlap) and copies 32 / b buffers per
  /// step (one a step, b / 32 tuples a lane, past 32 tuples). Needs a barrier before (the buffers' contents and fill counts) and after (fill counts,
  /// buffers reused); the caller then resets the list with reset_list().
  template <bool Drain>
  __device__ __forceinline__ void flush() {
    for (int p = static_cast<int>(threadIdx.x); p < fanout; p += threads) {
      unsigned const f = fill[p];
      if (Drain ? f > 0 : f >= b) { flush_list[atomicAdd(flush_count, 1U)] = p; }
    }
    __syncthreads();
    int const count = static_cast<int>(*flush_count);
    listed = count;
    int const lane = static_cast<int>(threadIdx.x) & 31;
    int const warp = static_cast<int>(threadIdx.x) >> 5;
    int const share = (count + warps - 1) / warps;
    int const begin = warp * share;
    int const end = begin + share < count ? begin + share : count;
    // Buffers of up to 32 tuples: 32 / b of them a step, one tuple a lane; longer ones one a
    // step, up to b / 32 tuples a lane.
    int const per_step = 32 >> log2_lanes;
    int const e0 = lane & ((1 << log2_lanes) - 1);  // first tuple of the buffer this lane moves
    for (int chunk = begin; chunk < end; chunk += 32) {
      int const mine = chunk + lane;
      int q = 0;
      unsigned size = 0;
      unsigned long long base = 0;  // first row, or with aligned flushes first position
      unsigned taken = 0;
      unsigned long long first_row = 0;
      unsigned cut = 0;              // tuples of the buffer before its rows wrap
      if (mine < end) {
        q = flush_list[mine];
        unsigned const f = fill[q];
        taken = Drain ? f : (f >= direct_factor * b ? f - f % b : b);
        size = Drain ? f : b;
        cut = size;
        unsigned long long span = 0;  // aligned flushes: the digit's rows
        if constexpr (!Aligned) {
          base = atomicAdd(cursors + q, static_cast<unsigned long long>(taken));
          first_row = base;
        } else {
          unsigned long long s = 0;
          unsigned long long h = 0;
          digit_span(static_cast<unsigned>(q), s, span, h);
          base = Drain ? span - atomicAdd(cursors + fanout + q, static_cast<unsigned long long>(f)) - f
                       : atomicAdd(cursors + q, static_cast<unsigned long long>(taken));
          unsigned long long rel = h + base;
          if (rel >= span) { rel -= span; }
          first_row = s + rel;
          if (span - rel < size) { cut = static_cast<unsigned>(span - rel); }
        }
        if constexpr (!Drain || Staged) { flushed[q] = (base << taken_bits) | taken; }
      }
      // Staged: whether the buffer's first and last rows (at most two chunks) go through the
      // staging slots, bits 0 and 1.
      unsigned modes = 0;
      if constexpr (Staged) {
        if (mine < end) {
          unsigned long long const k0 = base >> stage.log2_c;
          unsigned long long const k1 = (base + size - 1) >> stage.log2_c;
          modes = stage.staged_pair(k0, k1);
        }
      }
      bool wrote_staged = false;
      int const here = end - chunk < 32 ? end - chunk : 32;
      for (int first = 0; first < here; first += per_step) {
        int const src = first + (lane >> log2_lanes);  // the lane that took this buffer's range
        int const qq = __shfl_sync(0xffffffffU, q, src & 31);
        unsigned const n = __shfl_sync(0xffffffffU, size, src & 31);
        unsigned long long const at = __shfl_sync(0xffffffffU, first_row, src & 31);
        unsigned const ct = Aligned ? __shfl_sync(0xffffffffU, cut, src & 31) : 0U;
        unsigned const md = Staged ? __shfl_sync(0xffffffffU, modes, src & 31) : 0U;
        if (!Staged && src < here) {
          // Straight to the output: the buffer's and the run's first addresses once a step, so
          // that a tuple costs its loads and stores and no 64-bit row arithmetic (ncu, H200, 8
          // bits: the generic loop below spent 78 warp instructions on 64 tuples, 39% of the
          // pass's).
          auto const from = static_cast<std::size_t>(qq) * b;
          K const* const bk = buf_keys + from;
          pay_t const* const bp = buf_pay + from;
          K* const ok = keys_out + at;
          P* op = nullptr;
          if constexpr (has_payload) { op = payload_out + at; }
          unsigned const until = Aligned && ct < n ? ct : n;
          unsigned e = static_cast<unsigned>(e0);
          for (; e < until; e += 32) {
            ok[e] = bk[e];
            if constexpr (has_payload) { op[e] = bp[e]; }
          }
          // Past the wrap (rare): on from the digit's first row, read again rather than kept
          // in registers through the loop.
          for (; Aligned && e < n; e += 32) {
            auto const row = static_cast<unsigned long long>(spans[qq]) + (e - ct);
            put(static_cast<unsigned>(qq), row, false, bk[e], has_payload ? bp[e] : pay_t{});
          }
        } else if (src < here) {  // Staged (never Aligned): a row may go to a staging slot
          for (unsigned e = static_cast<unsigned>(e0); e < n; e += 32) {
            auto const i = static_cast<std::size_t>(qq) * b + e;
            auto const row = at + e;
            bool const staged =
              Staged && ((md >> ((row >> stage.log2_c) != (at >> stage.log2_c) ? 1 : 0)) & 1U);
            wrote_staged |= put(static_cast<unsigned>(qq), row, staged, buf_keys[i],
                                has_payload ? buf_pay[i] : pay_t{});
          }
        }
      }
      if (mine < end) { fill[q] -= taken; }
      // A staged row must reach L2 before the commit counts it (the counting lane's fence
      // covers only its own writes).
      if (Staged && wrote_staged) { stage_fence(); }
    }
  }

  /// Staged: counts the rows of the last flush's ranges (buffers and the pending tuples written
  /// into them) into their chunks, and writes out every staged chunk this completes. Each warp
  /// takes the share of the list it flushed. Needs a barrier before (every write of the round
  /// done) and after (the next flush rewrites the list and the ranges).
  __device__ __forceinline__ void commit() {
    static_assert(Staged, "only the Hierarchical variant stages chunks");
    int const count = listed;
    int const lane = static_cast<int>(threadIdx.x) & 31;
    int const warp = static_cast<int>(threadIdx.x) >> 5;
    int const share = (count + warps - 1) / warps;
    int const begin = warp * share;
    int const end = begin + share < count ? begin + share : count;
    int const lc = stage.log2_c;
    // Release: the rows this block wrote (each writer fenced, then the barrier) before the counts
    // that may let another warp read them.
    if (begin < end) { stage_fence(); }
    for (int chunk = begin; chunk < end; chunk += 32) {
      int const mine = chunk + lane;
      unsigned q = 0;
      unsigned long long lo = 0;
      unsigned long long hi = 0;
      if (mine < end) {
        q = static_cast<unsigned>(flush_list[mine]);
        unsigned long long const f = flushed[q];
        lo = f >> taken_bits;
        hi = lo + (f & ((1ULL << taken_bits) - 1));
      }
      // Chunk by chunk through each lane's range: a buffer spans at most two chunks, a skewed
      // digit's multiple-of-b range several.
      unsigned long long k = lo >> lc;
      while (true) {
        bool const has = lo < hi && (k << lc) < hi;
        if (!__any_sync(0xffffffffU, has)) { break; }
        bool done = false;
        if (has) {
          unsigned long long const from = lo > (k << lc) ? lo : (k << lc);
          unsigned long long const to = hi < ((k + 1) << lc) ? hi : ((k + 1) << lc);
          done = stage.add_rows(k, static_cast<unsigned>(to - from));
        }
        unsigned todo = __ballot_sync(0xffffffffU, done);
        while (todo != 0) {
          int const src = __ffs(static_cast<int>(todo)) - 1;
          todo &= todo - 1;
          unsigned long long const kk = __shfl_sync(0xffffffffU, k, src);
          unsigned const qq = __shfl_sync(0xffffffffU, q, src);
          stage.template write_out<has_payload>(kk, qq, src, keys_out, payload_out);
        }
        ++k;
      }
    }
  }

  /// Empties the flush list; between the barrier after a flush and the next flush.
  __device__ __forceinline__ void reset_list() {
    if (threadIdx.x == 0) { *flush_count = 0; }
  }

  template <bool Full>
  __device__ __forceinline__ void consume_tile(size_type base, int valid) {
    K k[vt];
    load_striped<threads, vt, Full>(keys, base, valid, k);
    pay_t v[vt] = {};
    if constexpr (has_payload) {
      if constexpr (std::is_same_v<P, std::uint32_t>) {
        if (payload == nullptr) {  // generated row ids (the input holds fewer than 2^32 rows)
#pragma unroll
          for (int j = 0; j < vt; ++j) {
            v[j] = static_cast<P>(base + j * threads + static_cast<int>(threadIdx.x));
          }
        } else {
          load_striped<threads, vt, Full>(payload, base, valid, v);
        }
      } else {
        load_striped<threads, vt, Full>(payload, base, valid, v);
      }
    }
    unsigned slot[vt];
    bool pending = false;
#pragma unroll
    for (int j = 0; j < vt; ++j) {
      slot[j] = 0;
      if (striped_valid<threads, Full>(j, valid)) {
        slot[j] = atomicAdd(fill + digit(k[j]), 1U);
        if (slot[j] < b) {
          store(digit(k[j]), slot[j], k[j], v[j]);
        } else {
          pending = true;
        }
      }
    }
    // A tuple past its buffer's end waits for the flush. Within the rows its digit took it
    // writes itself out; otherwise it moves down by the rows taken and is stored once its slot
    // lies in the buffer (its claim counted in `fill`, so the buffer is full until then).
    while (__syncthreads_or(pending)) {
      flush<false>();
      __syncthreads();
      reset_list();
      pending = false;
      bool wrote_staged = false;
#pragma unroll
      for (int j = 0; j < vt; ++j) {
        if (striped_valid<threads, Full>(j, valid) && slot[j] >= b) {
          unsigned const d = digit(k[j]);  // recomputed: fewer registers
          unsigned long long const f = flushed[d];
          auto const taken = static_cast<unsigned>(f & ((1ULL << taken_bits) - 1));
          if (slot[j] < taken) {
            auto const row = row_of(d, (f >> taken_bits) + slot[j]);
            wrote_staged |= put(d, row, Staged && stage.staged(row >> stage.log2_c), k[j], v[j]);
            // Written: not pending any more. (Else a later round would write it again at the
            // same row; harmless for the output, but Staged may have handed the slot on.)
            slot[j] = 0;
          } else {
            slot[j] -= taken;
            if (slot[j] < b) {
              store(d, slot[j], k[j], v[j]);
            } else {
              pending = true;
            }
          }
        }
      }
      if constexpr (Staged) {
        if (wrote_staged) { stage_fence(); }  // see flush()
        __syncthreads();
        commit();
      }
    }
  }
};

}  // namespace joinery::detail::gpu
