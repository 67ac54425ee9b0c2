// The dense tier's wrapped sums (DESIGN.md, "The dense tier"): SUM of two int32 columns over
// dense keys with fire-and-forget shared atomics. Teams of blocks walk the same tiles as the
// dense tier's teams; each member owns an equal share of the sampled keys (the first and last
// also the margins beside them; wsum_kernel) and updates each of its rows with four shared
// atomics nobody waits for (dense_wsum_policy says what they hold and why the sums decode
// exactly), but for one row a thread on one tile of four, whose count comes back to stop a run
// that meets a hot group early. The kernel lays the teams out from the dense tier's sample in
// device memory (the host does not wait for the sample). At the end each block
// decodes its slots and adds them to the window's int64 sums in device memory, its counts to a
// total, and marks the met slots; these are then counted and, once the host has read the run's
// state, numbered into the groups. A count that wrapped (a group met more rows in one block than
// it holds) or a key outside the window (no member's) leaves the total short of the rows, and
// the run is abandoned (the dense tier's other forms follow).
//
// Layers: host dispatch (dense_wsum_groupby) -> wsum_kernel -> wsum_tile (a tile's rows) ->
// wsum_update (a row's four atomics).
#include "groupby/gpu/detail/dense_wsum.cuh"
#include "primitives/detail/hash.cuh"
#include "primitives/detail/launch.cuh"

#include <cuda/atomic>
#include <cuda/std/type_traits>
#include <cuda_runtime_api.h>

#include <algorithm>

namespace joinery::detail::gpu::gb {

namespace {

using policy = dense_wsum_policy;
constexpr unsigned all_lanes = 0xffffffffU;

template <class K>
using wbits = cuda::std::conditional_t<sizeof(K) == 4, std::uint32_t, std::uint64_t>;

/// Written by the pass (the counts' words zero to start, one memset), read back by the host.
template <class K>
struct wsum_state {
  unsigned long long stop;    ///< early stops: a key outside the window, a group near its limit
  /// The blocks' counts summed: n less 256 for each count that wrapped, less the rows whose key
  /// lay outside the window (no member's). Equal to n: every sum decodes exactly.
  unsigned long long taken;
  unsigned long long groups;  ///< window slots met (the groups; wsum_count_kernel)
  unsigned long long placed;  ///< groups numbered so far (wsum_number_kernel)
  unsigned long long team;    ///< blocks of a team; 0: the kernel declined the sample
  unsigned long long base;    ///< the window's first key (bits)
  unsigned long long width;   ///< the window's keys
  dense_sample_bits<K> sample;  ///< the sample the kernel read (for the dense tier's other forms)
};

/// The run's layout, from the sample (wsum_layout): team 0 declines it.
template <class K>
struct wsum_layout_t {
  int team = 0;
  size_type teams = 0;   ///< teams of the grid (the rest of its blocks idle)
  unsigned share = 0;    ///< sampled keys a member owns
  unsigned margin = 0;   ///< keys below the sampled ones (the first member's)
  wbits<K> base = 0;     ///< the window's first key (bits)
  wbits<K> width = 0;    ///< the window's keys
};

/// Each member `share` of the sampled keys, the first and last the margins beside them (half
/// the array's room each; one block: the window centred on the sampled keys, as the dense
/// tier's), so keys a little beyond the sample still fit (mod 2^bits). Declined: a window wider
/// than policy::max_team blocks hold, or more rows a group than a block's counts allow (a
/// uniform group's count must stay well below 255). Teams: whole ones, all resident at once
/// (`max_blocks`; the dense tier's rule: a member's tiles come from L2).
template <class K>
__device__ wsum_layout_t<K> wsum_layout(dense_sample_bits<K> const& sample, size_type n,
                                        unsigned slots, int max_blocks) {
  wsum_layout_t<K> l;
  auto const span = static_cast<std::uint64_t>(sample.span());
  if (span / slots >= static_cast<std::uint64_t>(policy::max_team)) { return l; }
  int const team = static_cast<int>(span / slots) + 1;
  size_type const tiles = ceil_div(n, static_cast<size_type>(policy::tile_rows));
  auto const fit = static_cast<size_type>(max_blocks / team);
  size_type const teams = tiles < fit ? tiles : fit > 0 ? fit : 1;
  if (n / (teams * static_cast<size_type>(span + 1)) > policy::max_mean_rows) { return l; }
  l.team = team;
  l.teams = teams;
  l.share = static_cast<unsigned>(team == 1 ? slots : (span + team) / team);
  l.margin = static_cast<unsigned>(team == 1 ? (slots - 1 - span) / 2 : (slots - l.share) / 2);
  l.width = static_cast<wbits<K>>(
      (team == 1 ? 0 : l.margin + static_cast<std::uint64_t>(team - 1) * l.share) + slots);
  l.base = static_cast<wbits<K>>(static_cast<wbits<K>>(sample.low()) -
                                 static_cast<wbits<K>>(l.margin));
  return l;
}

/// A block's shared words, `slots` each but the counts (four a word), as 32-bit shared-window
/// addresses: with generic pointers ptxas rebuilt the window's base for every row (the dense
/// tier's Lo32Only kernel met the same).
struct wsum_slots {
  unsigned s0;      ///< first column's sums mod 2^32
  unsigned s1;      ///< second column's sums mod 2^32
  unsigned top;     ///< both columns' sums of v >> 24, signed 16-bit halves
  unsigned counts;  ///< rows met, a byte a slot
};

/// `*address += v` in shared memory, nothing returned.
__device__ __forceinline__ void shared_red_add(unsigned address, unsigned v) {
  asm volatile("red.shared.add.u32 [%0], %1;" : : "r"(address), "r"(v) : "memory");
}
/// `*address += v` in shared memory, returning the old value.
__device__ __forceinline__ unsigned shared_fetch_add(unsigned address, unsigned v) {
  unsigned old = 0;
  asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(address), "r"(v) : "memory");
  return old;
}

/// This member's slice of the window: keys first .. first + slots (mod 2^bits).
template <class K>
struct wsum_slice {
  wbits<K> first;
  unsigned slots;
};

/// A row's four updates. Probe: the count's word comes back (one row a thread and tile, tested
/// after the tile's updates: a hot or sorted group stops the run early).
template <bool Probe>
__device__ __forceinline__ unsigned wsum_update(wsum_slots const& s, unsigned local, int x0,
                                                int x1) {
  shared_red_add(s.s0 + 4 * local, static_cast<unsigned>(x0));
  shared_red_add(s.s1 + 4 * local, static_cast<unsigned>(x1));
  shared_red_add(s.top + 4 * local,
                 static_cast<unsigned>(x0 >> 24) + (static_cast<unsigned>(x1 >> 24) << 16));
  unsigned const word = s.counts + (local & ~3U);
  unsigned const one = 1U << ((local & 3U) * 8U);
  if constexpr (Probe) {
    return shared_fetch_add(word, one);
  } else {
    shared_red_add(word, one);
    return 0;
  }
}

/// Four consecutive keys from `p` (16-byte aligned) as bits.
template <class K>
__device__ __forceinline__ void load4(K const* p, wbits<K> (&k)[4]) {
  if constexpr (sizeof(K) == 4) {
    uint4 const a = __ldg(reinterpret_cast<uint4 const*>(p));
    k[0] = a.x; k[1] = a.y; k[2] = a.z; k[3] = a.w;
  } else {
    ulonglong2 const a = __ldg(reinterpret_cast<ulonglong2 const*>(p));
    ulonglong2 const b = __ldg(reinterpret_cast<ulonglong2 const*>(p) + 1);
    k[0] = a.x; k[1] = a.y; k[2] = b.x; k[3] = b.y;
  }
}

__device__ __forceinline__ void load4(std::int32_t const* p, int (&x)[4]) {
  int4 const a = __ldg(reinterpret_cast<int4 const*>(p));
  x[0] = a.x; x[1] = a.y; x[2] = a.z; x[3] = a.w;
}

/// A thread's rows of the tile at `first`: two runs of 4 consecutive rows, loaded before the
/// first update. Full: the tile lies inside the input (16-byte loads); else rows past `n` are
/// skipped (scalar loads). Returns whether the run should stop: a key outside the window `base`
/// .. `base + width` (no member's: wsum_state::taken would tell at the end) or a group near its
/// count's limit. (On the H200 this early test of the window ran faster than none, 2.35 against
/// 2.44 ms at g = 2^16, and 2.59 against 2.87 with int64 keys.) Probe: the first row's count
/// comes back and is tested (one tile of policy::count_probe_tiles).
template <bool Full, bool Probe, class K>
__device__ __forceinline__ bool wsum_tile(K const* __restrict__ keys,
                                          std::int32_t const* __restrict__ v0,
                                          std::int32_t const* __restrict__ v1, size_type n,
                                          size_type first, wsum_slice<K> const& w,
                                          wsum_slots const& s, wbits<K> base, wbits<K> width) {
  constexpr int runs = policy::items_per_thread / 4;
  wbits<K> k[runs][4];
  int x0[runs][4];
  int x1[runs][4];
  bool valid[runs][4];
#pragma unroll
  for (int r = 0; r < runs; ++r) {
    size_type const row = first + (static_cast<size_type>(r) * policy::threads + threadIdx.x) * 4;
    if constexpr (Full) {
      load4(keys + row, k[r]);
      load4(v0 + row, x0[r]);
      load4(v1 + row, x1[r]);
#pragma unroll
      for (int i = 0; i < 4; ++i) { valid[r][i] = true; }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        valid[r][i] = row + i < n;
        k[r][i] = valid[r][i] ? static_cast<wbits<K>>(key_bits(keys[row + i])) : wbits<K>{0};
        x0[r][i] = valid[r][i] ? v0[row + i] : 0;
        x1[r][i] = valid[r][i] ? v1[row + i] : 0;
      }
    }
  }
  unsigned probed = 0;  // the first row's count word, and where its byte sits
  unsigned shift = 0;
  bool outside = false;
#pragma unroll
  for (int r = 0; r < runs; ++r) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      outside |= valid[r][i] && static_cast<wbits<K>>(k[r][i] - base) >= width;
      auto const local = static_cast<wbits<K>>(k[r][i] - w.first);
      if (valid[r][i] && local < static_cast<wbits<K>>(w.slots)) {
        if (Probe && r == 0 && i == 0) {
          probed = wsum_update<true>(s, static_cast<unsigned>(local), x0[r][i], x1[r][i]);
          shift = (static_cast<unsigned>(local) & 3U) * 8U;
        } else {
          wsum_update<false>(s, static_cast<unsigned>(local), x0[r][i], x1[r][i]);
        }
      }
    }
  }
  return outside || ((probed >> shift) & 0xffU) >= policy::early_stop_count;
}

/// sum = 2^24 * H + ((S - 2^24 * H) mod 2^32), exact for a slot of at most 255 rows.
__device__ __forceinline__ long long wsum_decode(unsigned s, int h) {
  return static_cast<long long>(h) * (1LL << 24) +
         static_cast<long long>(s - (static_cast<unsigned>(h) << 24));
}

/// One block a member of a team (consecutive blocks): the layout from the sample (blocks past
/// the teams idle), its slice's slots in shared memory, the team's tiles (the dense tier's
/// order), then its slots decoded into `sum0` / `sum1` (int64 a window slot) and marked in
/// `met`. Block 0 writes the sample and the layout to `state` for the host.
template <class K>
__global__ void __launch_bounds__(policy::threads, 1)
    wsum_kernel(K const* __restrict__ keys, std::int32_t const* __restrict__ v0,
                std::int32_t const* __restrict__ v1, size_type n,
                dense_sample_bits<K> const* __restrict__ partials, unsigned slots,
                int max_blocks, unsigned long long* __restrict__ sum0,
                unsigned long long* __restrict__ sum1, unsigned* __restrict__ met,
                wsum_state<K>* state) {
  extern __shared__ __align__(16) unsigned char smem[];
  // The block's decoded counts, added to the run's once a block.
  __shared__ unsigned long long block_taken;
  __shared__ dense_sample_bits<K> block_sample;
  if (threadIdx.x < 32) {
    // The sampling blocks' partials (dense_sample_blocks <= 64) merged by one warp.
    static_assert(dense_sample_blocks <= 64);
    dense_sample_bits<K> m;
    for (int b = static_cast<int>(threadIdx.x); b < dense_sample_blocks; b += 32) {
      m.merge(partials[b]);
    }
    for (int d = 16; d > 0; d /= 2) {
      m.merge(dense_sample_bits<K>{__shfl_xor_sync(all_lanes, m.lo, d),
                                   __shfl_xor_sync(all_lanes, m.hi_not, d)});
    }
    if (threadIdx.x == 0) { block_sample = m; }
  }
  __syncthreads();
  auto const sample = block_sample;
  auto const l = wsum_layout<K>(sample, n, slots, max_blocks);
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    state->sample = sample;
    state->team = static_cast<unsigned long long>(l.team);
    state->base = static_cast<unsigned long long>(l.base);
    state->width = static_cast<unsigned long long>(l.width);
  }
  auto const team = static_cast<unsigned>(l.team);
  if (team == 0 || static_cast<size_type>(blockIdx.x) >= l.teams * team) { return; }
  auto* const words = reinterpret_cast<unsigned*>(smem);
  unsigned* const counts = words + 3 * static_cast<std::size_t>(slots);
  unsigned const at = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  wsum_slots s{at, at + 4 * slots, at + 8 * slots, at + 12 * slots};
  // Opaque, so that ptxas keeps the addresses in registers.
  asm volatile("" : "+r"(s.s0), "+r"(s.s1), "+r"(s.top), "+r"(s.counts));
  for (unsigned i = threadIdx.x; i < 3 * slots + slots / 4; i += policy::threads) { words[i] = 0; }
  if (threadIdx.x == 0) { block_taken = 0; }
  // Member m owns `share` keys of the sampled range from margin + m * share on; the first also
  // takes the margin below it, the last its whole array (the margin above): the members take
  // about equal shares of the rows (the slowest sets the team's pace).
  auto const member = static_cast<unsigned>(blockIdx.x) % team;
  auto const start = [&](unsigned m) { return m == 0 ? 0U : l.margin + m * l.share; };
  unsigned const offset = start(member);
  unsigned const size = member + 1 == team ? slots : start(member + 1) - offset;
  wbits<K> const base = l.base;
  wbits<K> const width = l.width;
  wsum_slice<K> const w{static_cast<wbits<K>>(base + offset), size};
  __syncthreads();
  size_type const tiles = ceil_div(n, static_cast<size_type>(policy::tile_rows));
  size_type const stride = l.teams;
  // Each warp reads the run's stop flag on one of policy::stop_poll_tiles of its tiles and a
  // count back on one of policy::count_probe_tiles, the block's warps in turn; a thread that
  // meets a hot group raises the flag and leaves on its own. No warp-wide step in the loop: a
  // read of the flag by every warp and tile, tested with a shuffle and a vote after it, cost 12%
  // of the kernel at g = 2^16 (H200), and a count read back on every tile 5%.
  unsigned phase = threadIdx.x / 32U;
  for (size_type tile = blockIdx.x / team; tile < tiles; tile += stride, ++phase) {
    // Read as the tile starts and tested after it, so the flag's round trip does not stand
    // before the loads.
    unsigned long long flag = 0;
    if (phase % policy::stop_poll_tiles == 0) {
      flag = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(state->stop).load(
          cuda::memory_order_relaxed);
    }
    size_type const first = tile * policy::tile_rows;
    bool hot = false;
    if (first + policy::tile_rows > n) {
      hot = wsum_tile<false, true>(keys, v0, v1, n, first, w, s, base, width);
    } else if (phase % policy::count_probe_tiles == 0) {
      hot = wsum_tile<true, true>(keys, v0, v1, n, first, w, s, base, width);
    } else {
      hot = wsum_tile<true, false>(keys, v0, v1, n, first, w, s, base, width);
    }
    if (hot) {
      atomicExch(&state->stop, 1ULL);
      break;
    }
    if (flag != 0) { break; }
  }
  bool const stopped = __syncthreads_or(
      threadIdx.x == 0 && cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(
                              state->stop).load(cuda::memory_order_relaxed) != 0);
  if (stopped) { return; }
  unsigned long long taken = 0;
  // Plain stores mark the met slots (every writer writes 1; wsum_count_kernel counts them): an
  // exchange returned to count them here held each thread a round trip per slot.
  for (unsigned i = threadIdx.x; i < size; i += policy::threads) {
    unsigned const count = (counts[i >> 2] >> ((i & 3U) * 8U)) & 0xffU;
    if (count == 0) { continue; }
    taken += count;
    // The halves are signed: the low one is read first, then taken out of the word.
    unsigned const top = words[2 * static_cast<std::size_t>(slots) + i];
    int const h0 = static_cast<short>(top & 0xffffU);
    int const h1 = static_cast<int>(top - static_cast<unsigned>(h0)) >> 16;
    auto const slot = static_cast<std::size_t>(offset) + i;
    atomicAdd(sum0 + slot, static_cast<unsigned long long>(wsum_decode(words[i], h0)));
    atomicAdd(sum1 + slot, static_cast<unsigned long long>(
                               wsum_decode(words[static_cast<std::size_t>(slots) + i], h1)));
    met[slot] = 1U;
  }
  // One device-memory atomic a block, not one a thread.
  taken = __reduce_add_sync(all_lanes, static_cast<unsigned>(taken));
  if ((threadIdx.x & 31U) == 0) { atomicAdd(&block_taken, taken); }
  __syncthreads();
  if (threadIdx.x == 0) { atomicAdd(&state->taken, block_taken); }
}

/// The met slots of `met` (`width` words, zeros past the window) counted into state->groups:
/// one atomic a block.
template <class K>
__global__ void __launch_bounds__(hash_groupby_policy::threads_per_block)
    wsum_count_kernel(unsigned const* __restrict__ met, size_type width, wsum_state<K>* state) {
  __shared__ unsigned block_groups;
  if (threadIdx.x == 0) { block_groups = 0; }
  __syncthreads();
  unsigned groups = 0;
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < width;
       i += stride) {
    groups += met[i] != 0 ? 1U : 0U;
  }
  groups = __reduce_add_sync(all_lanes, groups);
  if ((threadIdx.x & 31U) == 0) { atomicAdd(&block_groups, groups); }
  __syncthreads();
  if (threadIdx.x == 0 && block_groups != 0) {
    atomicAdd(&state->groups, static_cast<unsigned long long>(block_groups));
  }
}

/// The met slots numbered 0..g-1 (one atomic a warp): each group's key and its slot.
template <class K>
__global__ void __launch_bounds__(hash_groupby_policy::threads_per_block)
    wsum_number_kernel(unsigned const* __restrict__ met, size_type width, wbits<K> base,
                       K* __restrict__ keys_out, size_type* __restrict__ index,
                       wsum_state<K>* state) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  unsigned const lane = threadIdx.x & 31U;
  for (size_type i0 = static_cast<size_type>(blockIdx.x) * blockDim.x; i0 < width; i0 += stride) {
    size_type const i = i0 + threadIdx.x;
    bool const occupied = i < width && met[i] != 0;
    unsigned const mask = __ballot_sync(all_lanes, occupied);
    unsigned long long at = 0;
    if (lane == 0 && mask != 0) {
      at = atomicAdd(&state->placed, static_cast<unsigned long long>(__popc(mask)));
    }
    at = __shfl_sync(all_lanes, at, 0);
    if (occupied) {
      auto const gid = static_cast<size_type>(at + __popc(mask & ((1U << lane) - 1U)));
      keys_out[gid] = static_cast<K>(static_cast<wbits<K>>(base + static_cast<wbits<K>>(i)));
      index[gid] = i;
    }
  }
}

/// The run's first launch: blocks 0 .. dense_sample_blocks - 1 sample the keys into `partials`
/// (dense_sample_block), then every block zeros `words0`, `words1` and `words2` 16-byte words
/// from the three pointers (the sums, the state and its marks). One launch where a memset, the
/// sample and three memsets cost the host about 4 us each before the pass could start
/// (H200).
template <class K>
__global__ void __launch_bounds__(dense_sample_threads)
    wsum_prepare_kernel(K const* __restrict__ keys, size_type n, size_type samples,
                        dense_sample_bits<K>* __restrict__ partials, uint4* __restrict__ p0,
                        size_type words0, uint4* __restrict__ p1, size_type words1,
                        uint4* __restrict__ p2, size_type words2) {
  if (blockIdx.x < dense_sample_blocks) { dense_sample_block<K>(keys, n, samples, partials); }
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  uint4 const zero{0, 0, 0, 0};
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < words0 + words1 + words2; i += stride) {
    if (i < words0) {
      p0[i] = zero;
    } else if (i < words0 + words1) {
      p1[i - words0] = zero;
    } else {
      p2[i - words0 - words1] = zero;
    }
  }
}

bool aligned16(void const* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

template <class K>
std::optional<group_parts> dense_wsum_groupby(K const* keys, size_type n, std::int32_t const* v0,
                                              std::int32_t const* v1,
                                              dense_sample_bits<K>& host_sample, bool& sampled,
                                              std::size_t smem_limit, int sms, int& team,
                                              stream_ref stream, memory_resource* mr) {
  sampled = false;
  if (n <= 0 || !aligned16(keys) || !aligned16(v0) || !aligned16(v1)) { return std::nullopt; }
  // smem_limit is already net of the kernels' static shared variables (16 bytes here).
  auto const slots =
      static_cast<std::uint64_t>(smem_limit / policy::slot_bytes) & ~std::uint64_t{3};
  if (slots == 0) { return std::nullopt; }
  std::size_t const bytes = static_cast<std::size_t>(slots) * policy::slot_bytes;
  auto const kernel = wsum_kernel<K>;
  allow_dynamic_smem(kernel, bytes);
  int const max_blocks = sms * resident_blocks_per_sm(kernel, policy::threads, bytes);
  // Sized for the widest window the kernel accepts (policy::max_team blocks' slots): the host
  // does not wait for the sample.
  auto const max_width = static_cast<size_type>(slots) * policy::max_team;
  auto const s = to_cuda(stream);
  std::vector<buffer> sums;
  for (int a = 0; a < 2; ++a) {
    sums.emplace_back(static_cast<std::size_t>(max_width) * sizeof(unsigned long long), mr, stream);
  }
  // The state and the met marks in one allocation, in whole 16-byte words like the sums (the
  // slots are a multiple of 4), then the sample's partials (written, not zeroed).
  std::size_t const state_bytes =
      (sizeof(wsum_state<K>) + static_cast<std::size_t>(max_width) * sizeof(unsigned) + 15) / 16 *
      16;
  buffer d_state(state_bytes + dense_sample_blocks * sizeof(dense_sample_bits<K>), mr, stream);
  auto* const state = static_cast<wsum_state<K>*>(d_state.data());
  auto* const met = reinterpret_cast<unsigned*>(state + 1);
  auto* const partials = reinterpret_cast<dense_sample_bits<K>*>(
      static_cast<unsigned char*>(d_state.data()) + state_bytes);
  auto const words = [](std::size_t bytes) { return static_cast<size_type>(bytes / 16); };
  int const prepare_threads = dense_sample_threads;
  size_type const zero_words = words(sums[0].size()) * 2 + words(state_bytes);
  int const prepare_blocks =
      std::max(dense_sample_blocks, grid_stride_blocks(zero_words, prepare_threads, sms));
  wsum_prepare_kernel<K><<<prepare_blocks, prepare_threads, 0, s>>>(
      keys, n, std::min(n, dense_samples), partials, static_cast<uint4*>(sums[0].data()),
      words(sums[0].size()), static_cast<uint4*>(sums[1].data()), words(sums[1].size()),
      static_cast<uint4*>(d_state.data()), words(state_bytes));
  JOINERY_CHECK_LAUNCH();
  size_type const tiles = ceil_div(n, static_cast<size_type>(policy::tile_rows));
  // Never more blocks than teams of the widest team can use.
  auto const grid = static_cast<int>(
      std::min<size_type>(max_blocks, tiles * static_cast<size_type>(policy::max_team)));
  kernel<<<grid, policy::threads, bytes, s>>>(
      keys, v0, v1, n, partials, static_cast<unsigned>(slots), max_blocks,
      static_cast<unsigned long long*>(sums[0].data()),
      static_cast<unsigned long long*>(sums[1].data()), met, state);
  JOINERY_CHECK_LAUNCH();
  int const count_threads = hash_groupby_policy::threads_per_block;
  wsum_count_kernel<K><<<grid_stride_blocks(max_width, count_threads, sms), count_threads, 0, s>>>(
      met, max_width, state);
  JOINERY_CHECK_LAUNCH();
  wsum_state<K> h{};
  JOINERY_CUDA_TRY(cudaMemcpyAsync(&h, state, sizeof(h), cudaMemcpyDeviceToHost, s));
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
  host_sample = h.sample;
  sampled = true;
  // Declined by the kernel, a count that wrapped (the block's sums are not exact), or a key
  // outside the window.
  if (h.team == 0 || h.stop != 0 || h.taken != static_cast<unsigned long long>(n)) {
    return std::nullopt;
  }
  team = static_cast<int>(h.team);
  auto const width = static_cast<size_type>(h.width);
  group_parts parts;
  parts.groups = static_cast<size_type>(h.groups);
  parts.keys = column(type_to_id_v<K>, parts.groups, mr, stream);
  parts.index = buffer(static_cast<std::size_t>(parts.groups) * sizeof(size_type), mr, stream);
  wsum_number_kernel<K><<<grid_stride_blocks(width, hash_groupby_policy::threads_per_block, sms),
                          hash_groupby_policy::threads_per_block, 0, s>>>(
      met, width, static_cast<wbits<K>>(h.base), static_cast<K*>(parts.keys.data()),
      static_cast<size_type*>(parts.index.data()), state);
  JOINERY_CHECK_LAUNCH();
  parts.accs = std::move(sums);
  return parts;
}

#define JOINERY_INSTANTIATE_DENSE_WSUM(K)                                                      \
  template std::optional<group_parts> dense_wsum_groupby<K>(                                   \
      K const*, size_type, std::int32_t const*, std::int32_t const*, dense_sample_bits<K>&,    \
      bool&, std::size_t, int, int&, stream_ref, memory_resource*);
JOINERY_INSTANTIATE_DENSE_WSUM(std::int32_t)
JOINERY_INSTANTIATE_DENSE_WSUM(std::int64_t)
JOINERY_INSTANTIATE_DENSE_WSUM(std::uint32_t)
JOINERY_INSTANTIATE_DENSE_WSUM(std::uint64_t)
#undef JOINERY_INSTANTIATE_DENSE_WSUM

}  // namespace joinery::detail::gpu::gb
