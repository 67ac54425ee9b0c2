#pragma once
// Internal: the tile agents of the merge sort (Rui & Tu 2017, section 3.3.1). agent_block_sort
// sorts one tile of (key, row id) pairs in registers and shared memory; agent_merge writes one
// tile of the merge of two sorted runs, its share of the pair found by the merge path split step.
// Both are stable under any strict weak order `Compare`. Included only by .cu files.
#include <joinery/primitives/merge_path.hpp>
#include <joinery/types.hpp>

#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_store.cuh>

#include <cstdint>

namespace joinery::detail::gpu {

/// Where the tile starting at output row `d` lies in its merge pass with runs of `run` rows: the
/// pair of runs A = [a_begin, a_begin + a_len) and B = [a_begin + a_len, + b_len) it merges,
/// and d's diagonal in that pair's merge. The last run may be short and B empty.
struct merge_pair {
  size_type a_begin = 0;
  size_type a_len = 0;
  size_type b_len = 0;
  size_type diagonal = 0;

  __host__ __device__ static merge_pair at(size_type d, size_type n, size_type run) {
    merge_pair p;
    p.a_begin = d - d % (2 * run);
    p.a_len = n - p.a_begin < run ? n - p.a_begin : run;
    size_type const rest = n - p.a_begin - p.a_len;
    p.b_len = rest < run ? rest : run;
    p.diagonal = d - p.a_begin;
    return p;
  }
  __host__ __device__ size_type b_begin() const { return a_begin + a_len; }
  __host__ __device__ size_type total() const { return a_len + b_len; }
};

/// One tile [tile_begin, tile_begin + tile) of keys_in sorted stably into keys_out, with the
/// input row of every key into ids_out. The block sort carries tile-local 32-bit positions (the
/// registers hold 4-byte values whatever the id width); they become row ids at the store.
template <class Policy, class K, class IdOut, class Compare>
struct agent_block_sort {
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int items = Policy::items_per_thread;
  static constexpr int tile = Policy::tile_items;

  using block_load = cub::BlockLoad<K, threads, items, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using block_sort = cub::BlockMergeSort<K, threads, items, std::uint32_t>;
  using block_store_keys = cub::BlockStore<K, threads, items, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  using block_store_ids = cub::BlockStore<IdOut, threads, items, cub::BLOCK_STORE_WARP_TRANSPOSE>;

  union temp_storage {
    typename block_load::TempStorage load;
    typename block_sort::TempStorage sort;
    typename block_store_keys::TempStorage store_keys;
    typename block_store_ids::TempStorage store_ids;
  };

  temp_storage& tmp;
  Compare comp;

  __device__ __forceinline__ void process(K const* __restrict__ keys_in, K* __restrict__ keys_out,
                                          IdOut* __restrict__ ids_out, size_type n,
                                          size_type tile_begin) {
    size_type const left = n - tile_begin;
    int const valid = left < tile ? static_cast<int>(left) : tile;
    K keys[items];
    std::uint32_t pos[items];
    if (valid == tile) {
      block_load(tmp.load).Load(keys_in + tile_begin, keys);
    } else {
      // Any in-range key fills the rows past the end: BlockMergeSort orders them by itself.
      block_load(tmp.load).Load(keys_in + tile_begin, keys, valid, keys_in[tile_begin]);
    }
    for (int i = 0; i < items; ++i) { pos[i] = static_cast<std::uint32_t>(threadIdx.x * items + i); }
    __syncthreads();
    if (valid == tile) {
      block_sort(tmp.sort).StableSort(keys, pos, comp);
    } else {
      // A partial tile: BlockMergeSort pads each thread's rows past `valid` with the largest of
      // its valid keys and oob_default, and merges only [0, valid). Passing the thread's own
      // first key makes the padding order after every valid key of the thread for any
      // comparator, so no "largest key" of the order is needed.
      block_sort(tmp.sort).StableSort(keys, pos, comp, valid, keys[0]);
    }
    __syncthreads();
    block_store_keys(tmp.store_keys).Store(keys_out + tile_begin, keys, valid);
    IdOut ids[items];
    for (int i = 0; i < items; ++i) { ids[i] = static_cast<IdOut>(tile_begin + pos[i]); }
    __syncthreads();
    block_store_ids(tmp.store_ids).Store(ids_out + tile_begin, ids, valid);
  }
};

/// One tile of output rows [d0, d0 + tile) of a merge pass: the block's pieces of the two runs
/// (bounded by the merge path splits of its first and next tile) go to shared memory, every
/// thread merges `items` consecutive outputs from its own diagonal (serial merge, ties from A),
/// and keys, then row ids, leave through shared memory in coalesced stores.
template <class Policy, class K, class IdIn, class IdOut, class Compare>
struct agent_merge {
  static constexpr int threads = Policy::threads_per_block;
  static constexpr int items = Policy::items_per_thread;
  static constexpr int tile = Policy::tile_items;

  // Phases one after another: keys in, keys out, ids in, ids out.
  union temp_storage {
    K keys[tile];
    IdIn ids_in[tile];
    IdOut ids_out[tile];
  };

  temp_storage& tmp;
  Compare comp;

  /// `splits[t]`: the A-side merge path split of tile t's first row in its pair's merge.
  __device__ __forceinline__ void process(K const* __restrict__ keys_in,
                                          IdIn const* __restrict__ ids_in, K* __restrict__ keys_out,
                                          IdOut* __restrict__ ids_out, size_type n, size_type run,
                                          size_type const* __restrict__ splits, size_type t) {
    size_type const d0 = t * tile;
    size_type const d1 = n - d0 < tile ? n : d0 + tile;
    merge_pair const pair = merge_pair::at(d0, n, run);
    size_type const diag_end = pair.diagonal + (d1 - d0);
    // The next tile's split belongs to this pair unless this tile ends the pair.
    size_type const a0 = splits[t];
    size_type const a1 = diag_end == pair.total() ? pair.a_len : splits[t + 1];
    int const na = static_cast<int>(a1 - a0);
    int const nb = static_cast<int>((diag_end - a1) - (pair.diagonal - a0));
    int const count = na + nb;
    K const* const a_src = keys_in + pair.a_begin + a0;
    K const* const b_src = keys_in + pair.b_begin() + (pair.diagonal - a0);

    // Keys in: A's piece at [0, na), B's at [na, count).
    for (int j = threadIdx.x; j < na; j += threads) { tmp.keys[j] = a_src[j]; }
    for (int j = threadIdx.x; j < nb; j += threads) { tmp.keys[na + j] = b_src[j]; }
    __syncthreads();

    K keys[items];
    int src[items];  // position in shared memory of each merged key, for its row id
    int const diag = min(static_cast<int>(threadIdx.x) * items, count);
    serial_merge(na, count, diag, keys, src);
    __syncthreads();

    // Keys out: blocked in shared memory, then striped (coalesced) to global memory.
    for (int i = 0; i < items; ++i) {
      if (diag + i < count) { tmp.keys[diag + i] = keys[i]; }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < count; j += threads) { keys_out[d0 + j] = tmp.keys[j]; }
    __syncthreads();

    // Row ids in, in the keys' layout, then picked by `src`.
    IdIn const* const a_ids = ids_in + (a_src - keys_in);
    IdIn const* const b_ids = ids_in + (b_src - keys_in);
    for (int j = threadIdx.x; j < na; j += threads) { tmp.ids_in[j] = a_ids[j]; }
    for (int j = threadIdx.x; j < nb; j += threads) { tmp.ids_in[na + j] = b_ids[j]; }
    __syncthreads();
    IdOut ids[items];
    for (int i = 0; i < items; ++i) {
      if (diag + i < count) { ids[i] = static_cast<IdOut>(tmp.ids_in[src[i]]); }
    }
    __syncthreads();
    for (int i = 0; i < items; ++i) {
      if (diag + i < count) { tmp.ids_out[diag + i] = ids[i]; }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < count; j += threads) { ids_out[d0 + j] = tmp.ids_out[j]; }
  }

 private:
  /// Outputs [diag, diag + items) of the merge of tmp.keys[0, na) and tmp.keys[na, count),
  /// ties from A (stable). Outputs past `count` are left unspecified.
  __device__ __forceinline__ void serial_merge(int na, int count, int diag, K (&keys)[items],
                                               int (&src)[items]) {
    auto const split = static_cast<int>(
      merge_path_search(tmp.keys, na, tmp.keys + na, count - na, diag, comp));
    int ai = split;
    int bi = na + (diag - split);
    K ka = ai < na ? tmp.keys[ai] : K{};
    K kb = bi < count ? tmp.keys[bi] : K{};
    for (int i = 0; i < items; ++i) {
      bool const take_a = bi >= count || (ai < na && !comp(kb, ka));
      keys[i] = take_a ? ka : kb;
      src[i] = take_a ? ai : bi;
      if (take_a) {
        if (++ai < na) { ka = tmp.keys[ai]; }
      } else {
        if (++bi < count) { kb = tmp.keys[bi]; }
      }
    }
  }
};

}  // namespace joinery::detail::gpu
