#pragma once
// Internal (device, tile agent): chunked write-combining of (key, payload) pairs into one array of
// interleaved tuples (radix_partition_tuples). The block owns a contiguous range of whole tiles
// and, in every partition, the sub-range its histogram cell was given (partition_tuples.cu).
//
// A digit's shared-memory buffer is a ring of R slots (R a power of two) over the digit's virtual
// positions: position p holds ring slot p mod R and lands at row base + p, where base is chosen
// so that positions that are multiples of R fall on output addresses that are multiples of R
// tuples (runs of R x tuple bytes, 512 at 8 bits, aligned). Per digit the hot loop keeps one
// shared word, w = claimed positions - limit, limit the end of the ring's current chunk of R
// positions: a claim (one shared atomic) that returns w < 0 owns ring slot w mod R; one that
// returns w >= 0 lies past the chunk and waits. After a tile with waiting tuples the block
// writes out each complete chunk (a warp a chunk, 16-byte stores) and moves the digit's ring to
// the chunk its claims end in; the waiting tuples then go into the ring, or, when their chunk
// lies wholly between the two (a digit that took more than a chunk's worth of the tile), straight
// to their rows, whole chunks written within one round.
//
// Tma: whole tiles of 16-byte aligned columns arrive in a shared stage by two bulk copies
// (cp.async.bulk, completion on an mbarrier) that one thread issues for the next tile once every
// thread has taken this tile's rows into registers, so that a tile's loads overlap the previous
// tile's claims and flushes. Without it (columns off 16-byte boundaries, and the last partial
// tile) rows are loaded one at a time.
#include "primitives/detail/radix_digit.cuh"

#include <cuda/ptx>

#include <climits>

#include <cstddef>
#include <cstdint>

namespace joinery::detail::gpu {

/// A (key, payload) pair as stored: 8 or 16 bytes.
template <class K>
struct tuple_storage;
template <>
struct tuple_storage<std::uint32_t> {
  using type = uint2;
  __device__ static type make(std::uint32_t k, std::uint32_t v) { return make_uint2(k, v); }
};
template <>
struct tuple_storage<std::uint64_t> {
  using type = ulonglong2;
  __device__ static type make(std::uint64_t k, std::uint64_t v) {
    return make_ulonglong2(k, v);
  }
};

/// FixedBits > 0: the fanout 2^FixedBits and the largest ring (Policy::max_ring_bytes) are
/// compile-time constants, so that the shared arrays' addresses and the ring's masks are too (at
/// 8 bits this keeps the 4-byte kernel within its 64 registers; with them at run time it spilled
/// 48 bytes and ran 2.29 ms against 1.41 on the H200, 2^28 tuples).
template <class Policy, class K, int FixedBits = 0>
struct agent_tuple_partition {
  using tuple_t = typename tuple_storage<K>::type;
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int warps = threads / 32;
  static constexpr int vec = 16 / static_cast<int>(sizeof(K));  // rows a 16-byte load
  static constexpr int vt = Policy::template items_per_thread<K>;
  static constexpr int tile = threads * vt;
  static constexpr unsigned column_bytes = tile * static_cast<unsigned>(sizeof(K));
  static_assert(vt == 2 * vec, "a thread takes two 16-byte loads a column a tile");
  static_assert(2 * column_bytes == Policy::stage_bytes, "the stage holds one tile");

  /// Shared memory: ring, stage, mbarrier, then per digit a 64-bit base and three 32-bit words.
  __host__ __device__ static constexpr std::size_t smem_bytes(int fanout, std::size_t ring_bytes) {
    return ring_bytes + Policy::stage_bytes + 16 + static_cast<std::size_t>(fanout) * 20;
  }

  tuple_t* ring;
  K* stage;
  std::uint64_t* bar;
  long long* base;
  int* w;
  std::uint32_t* limit;
  std::uint32_t* lo;
  int fanout;
  std::uint32_t r;  // ring slots a digit
  radix_digit<K> digit;
  K const* keys;
  K const* vals;
  tuple_t* out;

  static constexpr std::size_t fixed_ring_bytes = Policy::max_ring_bytes;
  static constexpr std::uint32_t fixed_slots =
    FixedBits > 0 ? Policy::max_ring_bytes / (sizeof(tuple_t) << FixedBits) : 0;

  __device__ agent_tuple_partition(unsigned char* smem, std::size_t ring_bytes_, int fanout_,
                                   std::uint32_t ring_slots, radix_digit<K> digit_,
                                   K const* keys_, K const* vals_, tuple_t* out_)
      : agent_tuple_partition(smem, FixedBits > 0 ? fixed_ring_bytes : ring_bytes_,
                              FixedBits > 0 ? 1 << FixedBits : fanout_,
                              FixedBits > 0 ? fixed_slots : ring_slots, digit_, keys_, vals_,
                              out_, 0) {}

 private:
  __device__ agent_tuple_partition(unsigned char* smem, std::size_t ring_bytes, int fanout_,
                                   std::uint32_t ring_slots, radix_digit<K> digit_,
                                   K const* keys_, K const* vals_, tuple_t* out_, int)
      : ring(reinterpret_cast<tuple_t*>(smem)),
        stage(reinterpret_cast<K*>(smem + ring_bytes)),
        bar(reinterpret_cast<std::uint64_t*>(smem + ring_bytes + Policy::stage_bytes)),
        base(reinterpret_cast<long long*>(smem + ring_bytes + Policy::stage_bytes + 16)),
        w(reinterpret_cast<int*>(base + fanout_)),
        limit(reinterpret_cast<std::uint32_t*>(w + fanout_)),
        lo(limit + fanout_),
        fanout(fanout_),
        r(ring_slots),
        digit(digit_),
        keys(keys_),
        vals(vals_),
        out(out_) {}

 public:
  /// Block `block`'s first row of digit d is scanned[d * blocks + block]; `phase` = (the output's
  /// address / tuple bytes) mod R, so that chunk boundaries fall on multiples of R tuples.
  __device__ void load_starts(std::int64_t const* __restrict__ scanned, long long blocks,
                              long long block, std::uint32_t phase) {
    for (int d = threadIdx.x; d < fanout; d += threads) {
      long long const first = scanned[static_cast<long long>(d) * blocks + block];
      std::uint32_t const p0 = (static_cast<std::uint32_t>(first) + phase) & (r - 1);
      base[d] = first - p0;
      lo[d] = p0;
      limit[d] = r;
      w[d] = static_cast<int>(p0) - static_cast<int>(r);
    }
  }

  /// Writes ring positions [from, to) of digit d, all within one chunk, to their rows (the
  /// calling warp). A whole chunk goes out in 16-byte words.
  __device__ __forceinline__ void flush(int d, std::uint32_t from, std::uint32_t to, int lane) {
    tuple_t const* slots = ring + static_cast<std::uint32_t>(d) * r;
    long long const row0 = base[d];  // row of position 0; may lie before the output's first
    constexpr std::uint32_t per_word = 16 / sizeof(tuple_t);  // 2 (8-byte tuples) or 1
    if (to - from == r && r % per_word == 0) {
      auto const* src = reinterpret_cast<uint4 const*>(slots);
      auto* to_words = reinterpret_cast<uint4*>(out + (row0 + from));
      for (std::uint32_t i = lane; i < r / per_word; i += 32) { to_words[i] = src[i]; }
      return;
    }
    for (std::uint32_t p = from + lane; p < to; p += 32) { out[row0 + p] = slots[p & (r - 1)]; }
  }

  /// Every complete chunk out (warp q takes the digits q + warps * j), its ring freed.
  __device__ __forceinline__ void flush_complete(int warp, int lane) {
    for (int d0 = warp; d0 < fanout; d0 += 32 * warps) {
      int const d = d0 + warps * lane;
      bool const full = d < fanout && w[d] >= 0;
      unsigned todo = __ballot_sync(0xffffffffu, full);
      while (todo != 0) {
        int const src = __ffs(todo) - 1;
        todo &= todo - 1;
        int const dd = __shfl_sync(0xffffffffu, d, src);
        std::uint32_t const end = limit[dd];
        flush(dd, lo[dd], end, lane);
        __syncwarp();
        if (lane == 0) {
          // Whole chunks claimed past this one are written straight to their rows by the
          // tuples that wait on them (a skewed digit: one round a tile, not one a chunk); the
          // ring takes the chunk the digit's claims end in.
          std::uint32_t const claimed = end + static_cast<std::uint32_t>(w[dd]);
          std::uint32_t const next = claimed & ~(r - 1);
          lo[dd] = next;
          limit[dd] = next + r;
          w[dd] = static_cast<int>(claimed - next - r);
        }
      }
    }
  }

  __device__ __forceinline__ void issue_copies(long long row) {
    namespace ptx = cuda::ptx;
    // The stage was read through the generic proxy; the copies write it through the async one.
    std::uint32_t const bytes = column_bytes;  // the wrappers take references
    std::uint32_t const both = 2 * column_bytes;
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar, both);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage, keys + row, bytes, bar);
    ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, stage + tile, vals + row, bytes,
                       bar);
  }

  /// Rows of this thread in a tile: t + h * threads * vec + vec * thread + i, h < 2, i < vec.
  __device__ __forceinline__ static long long row_of(long long t, int j) {
    return t + static_cast<int>((j / vec) * (threads * vec) + vec * threadIdx.x + j % vec);
  }

  /// Partitions rows [begin, end) (whole tiles but perhaps the last); needs load_starts and a
  /// barrier first (and, for Tma, the mbarrier initialised).
  template <bool Tma>
  __device__ void consume_range(long long begin, long long end) {
    int const lane = threadIdx.x & 31;
    int const warp = threadIdx.x >> 5;
    if (Tma && threadIdx.x == 0 && begin + tile <= end) { issue_copies(begin); }
    std::uint32_t parity = 0;
    for (long long t = begin; t < end; t += tile) {
      K k[vt], v[vt];
      int old[vt];
      bool const whole = t + tile <= end;
      if (Tma && whole) {
        while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {}
        parity ^= 1u;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          uint4 const kk = reinterpret_cast<uint4 const*>(stage + h * threads * vec)[threadIdx.x];
          uint4 const vv = reinterpret_cast<uint4 const*>(stage + tile + h * threads * vec)[threadIdx.x];
          static_assert(sizeof(uint4) == vec * sizeof(K));
          auto const* kp = reinterpret_cast<K const*>(&kk);
          auto const* vp = reinterpret_cast<K const*>(&vv);
#pragma unroll
          for (int i = 0; i < vec; ++i) {
            k[h * vec + i] = kp[i];
            v[h * vec + i] = vp[i];
          }
        }
        __syncthreads();  // every thread has its rows: the stage takes the next tile
        if (threadIdx.x == 0 && t + 2 * tile <= end) { issue_copies(t + tile); }
      } else {
#pragma unroll
        for (int j = 0; j < vt; ++j) {
          long long const row = row_of(t, j);
          k[j] = row < end ? keys[row] : K{0};
          v[j] = row < end ? vals[row] : K{0};
        }
      }
      unsigned waiting = 0;  // bit j: tuple j's position lies past its ring's chunk
      // old[j]: the claim's w (negative: ring slot w mod R), then for a waiting tuple its position.
#pragma unroll
      for (int j = 0; j < vt; ++j) {
        old[j] = (whole || row_of(t, j) < end) ? atomicAdd(&w[digit(k[j])], 1) : INT_MIN;
      }
#pragma unroll
      for (int j = 0; j < vt; ++j) {
        if (old[j] == INT_MIN) { continue; }
        unsigned const d = digit(k[j]);
        if (old[j] < 0) {
          ring[d * r + (static_cast<std::uint32_t>(old[j]) & (r - 1))] =
            tuple_storage<K>::make(k[j], v[j]);
        } else {
          old[j] = static_cast<int>(limit[d] + static_cast<std::uint32_t>(old[j]));
          waiting |= 1u << j;
        }
      }
      // One round places every waiting tuple; the next tile's first barrier orders its writes
      // before that tile's flush.
      if (__syncthreads_or(waiting != 0)) {
        flush_complete(warp, lane);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < vt; ++j) {
          if (waiting & (1u << j)) {
            unsigned const d = digit(k[j]);
            auto const p = static_cast<std::uint32_t>(old[j]);
            if (p < lo[d]) {  // a whole chunk past the flushed one
              out[base[d] + p] = tuple_storage<K>::make(k[j], v[j]);
            } else {
              ring[d * r + (p & (r - 1))] = tuple_storage<K>::make(k[j], v[j]);
            }
            waiting &= ~(1u << j);
          }
        }
      }
    }
    __syncthreads();  // the last round's ring writes
    // What is left: positions [lo, limit + w) of one chunk a digit.
    for (int d = warp; d < fanout; d += warps) {
      std::uint32_t const from = lo[d];
      std::uint32_t const to = limit[d] + static_cast<std::uint32_t>(w[d]);
      if (to > from) { flush(d, from, to, lane); }
    }
  }
};

}  // namespace joinery::detail::gpu
