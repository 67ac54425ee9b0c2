// Nested-loop and indexed nested-loop joins (He et al. 2008, section 4.1), for the equality and
// the band predicate build.key <= probe.key <= build.key + d.
//
// Both compare keys in order, so signed keys are re-encoded with the sign bit flipped (unsigned
// order = signed order, differences kept); a probe key k then matches build keys in
// [max(k - d, 0), k] of the encoded space (d = 0: equality).
//
// Nested loop: each block holds a tile of probe keys in registers and streams the build side
// through shared memory one tile at a time: every build key is read from device memory once per
// block. Indexed: a CSS-tree (cache-sensitive search tree) over the sorted build keys, its upper
// levels replicated into each block's shared memory; a probe descends the tree with a binary or
// a sequential search inside each node, then walks the sorted leaves while keys are in range.
#include "join/gpu/join_common.cuh"
#include "join/gpu/join_sort.hpp"

#include <algorithm>
#include <string>

namespace joinery::detail::gpu {

namespace {

/// [lo, hi] of build keys a probe key matches, in the encoded (ordered) space.
template <class U>
struct band_range {
  U lo;
  U hi;
};

template <class U>
__device__ __forceinline__ band_range<U> range_of(U k, std::uint64_t d) {
  U const lo = static_cast<std::uint64_t>(k) >= d ? static_cast<U>(k - static_cast<U>(d)) : U{0};
  return {lo, k};
}

// ---------------------------------------------------------------------------------------------
// Nested loop
// ---------------------------------------------------------------------------------------------

/// One tile of probe keys per block (quadratic work: as many blocks as tiles).
using nlj_policy = three_phase_policy<256, 4, 8, 1024>;

template <class U>
struct nested_loop_matcher {
  using policy = nlj_policy;
  static constexpr int build_tile = 2048;
  U const* build;
  size_type nb;
  U const* probe;
  std::uint64_t width;
  key_codec codec;

  std::size_t smem_bytes() const { return sizeof(U) * build_tile; }
  __device__ void init_block(unsigned char*) const {}

  template <int N, int Stride, class F>
  __device__ void match_items(unsigned char* smem, size_type first, size_type end, unsigned active,
                              F&& f) const {
    U* tile = reinterpret_cast<U*>(smem);
    band_range<U> r[N];
#pragma unroll
    for (int j = 0; j < N; ++j) {
      size_type const item = first + static_cast<size_type>(j) * Stride;
      bool const wanted = item < end && ((active >> j) & 1u) != 0;
      r[j] = wanted ? range_of(probe[item], width) : band_range<U>{U{1}, U{0}};  // empty range
    }
    for (size_type base = 0; base < nb; base += build_tile) {
      int const count = nb - base < build_tile ? static_cast<int>(nb - base) : build_tile;
      __syncthreads();  // the previous tile is no longer read
      for (int t = threadIdx.x; t < count; t += policy::threads) { tile[t] = build[base + t]; }
      __syncthreads();
      for (int t = 0; t < count; ++t) {
        U const b = tile[t];
#pragma unroll
        for (int j = 0; j < N; ++j) {
          if (b >= r[j].lo && b <= r[j].hi) { f(j, base + t); }
        }
      }
    }
  }
  __device__ size_type probe_row(size_type item) const { return item; }
  __device__ std::uint64_t probe_value(size_type item) const {
    return checksum_of(probe[item], codec);
  }
};

// ---------------------------------------------------------------------------------------------
// CSS-tree
// ---------------------------------------------------------------------------------------------

/// Keys per node: one 128-byte line of 4-byte keys.
constexpr int css_fanout = 32;
constexpr int css_max_levels = 8;
/// Upper-level entries replicated into shared memory.
constexpr size_type css_shared_entries = 4096;

using inlj_policy = three_phase_policy<256, 4>;

/// Directory level l + 1 holds the largest key of each node of level l; levels are stored top
/// first so that the top levels (the ones in shared memory) are a prefix of the buffer.
template <class U>
struct css_tree_ref {
  U const* leaves;
  size_type num_leaves;
  U const* upper;  // all directory levels, top first
  size_type level_offset[css_max_levels];
  size_type level_size[css_max_levels];
  int levels = 0;         // directory levels; index 0 is the top
  size_type cached = 0;   // leading entries of `upper` kept in shared memory
};

template <class U>
__global__ void css_level_kernel(U const* __restrict__ below, size_type below_size,
                                 U* __restrict__ level, size_type size) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < size;
       i += stride) {
    size_type const last = (i + 1) * css_fanout - 1;
    level[i] = below[last < below_size ? last : below_size - 1];
  }
}

/// First position in node [start, end) of `a` whose key is >= x (end when none).
template <class U>
__device__ __forceinline__ size_type node_search(U const* a, size_type start, size_type end, U x,
                                                 bool binary) {
  if (binary) {
    while (start < end) {
      size_type const mid = start + (end - start) / 2;
      if (a[mid] < x) {
        start = mid + 1;
      } else {
        end = mid;
      }
    }
    return start;
  }
  for (; start < end; ++start) {
    if (!(a[start] < x)) { return start; }
  }
  return end;
}

template <class U>
struct css_matcher {
  using policy = inlj_policy;
  css_tree_ref<U> tree;
  std::uint32_t const* build_rows;  // row id of each leaf
  U const* probe;
  std::uint64_t width;
  key_codec codec;
  bool binary;

  std::size_t smem_bytes() const { return sizeof(U) * static_cast<std::size_t>(tree.cached); }
  __device__ void init_block(unsigned char* smem) const {
    U* s = reinterpret_cast<U*>(smem);
    for (size_type i = threadIdx.x; i < tree.cached; i += policy::threads) { s[i] = tree.upper[i]; }
    __syncthreads();
  }

  /// std::lower_bound over the leaves, descending the directory.
  __device__ size_type lower_bound(U const* cached_upper, U x) const {
    size_type node = 0;
    for (int l = 0; l < tree.levels; ++l) {
      size_type const off = tree.level_offset[l];
      U const* a = off < tree.cached ? cached_upper + off : tree.upper + off;
      size_type const start = node * css_fanout;
      size_type const end = start + css_fanout < tree.level_size[l] ? start + css_fanout
                                                                    : tree.level_size[l];
      size_type const i = node_search(a, start, end, x, binary);
      if (i == end) { return tree.num_leaves; }  // only possible at the top: x above every key
      node = i;
    }
    size_type const start = node * css_fanout;
    size_type const end =
        start + css_fanout < tree.num_leaves ? start + css_fanout : tree.num_leaves;
    return node_search(tree.leaves, start, end, x, binary);
  }

  template <int N, int Stride, class F>
  __device__ void match_items(unsigned char* smem, size_type base, size_type end, unsigned active,
                              F&& f) const {
    auto const* cached_upper = reinterpret_cast<U const*>(smem);
#pragma unroll
    for (int j = 0; j < N; ++j) {
      size_type const item = base + static_cast<size_type>(j) * Stride;
      if (item < end && ((active >> j) & 1u) != 0) {
        auto const r = range_of(probe[item], width);
        for (size_type p = lower_bound(cached_upper, r.lo);
             p < tree.num_leaves && tree.leaves[p] <= r.hi; ++p) {
          f(j, static_cast<size_type>(build_rows[p]));
        }
      }
    }
  }
  __device__ size_type probe_row(size_type item) const { return item; }
  __device__ std::uint64_t probe_value(size_type item) const {
    return checksum_of(probe[item], codec);
  }
};

/// Keys in the ordered encoding: the input itself for unsigned keys, a sign-flipped copy else.
template <class U>
U const* ordered_keys(void const* keys, size_type n, bool is_signed, buffer& storage,
                      stream_ref stream, memory_resource* mr) {
  if (!is_signed || n == 0) { return static_cast<U const*>(keys); }
  storage = buffer(sizeof(U) * static_cast<std::size_t>(n), mr, stream);
  flip_sign_bits(static_cast<U const*>(keys), as<U>(storage), n, stream);
  return as<U>(storage);
}

std::uint64_t band_width(join_request const& rq) {
  return rq.pred.kind == predicate::kind_type::band ? rq.pred.band_width : 0;
}

template <class U>
device_matches run_nested(join_request const& rq, stream_ref stream, memory_resource* mr) {
  phase_clock clock(stream);
  clock.mark("encode");
  auto const codec = codec_of(rq.key_type, true);
  buffer b_enc;
  buffer p_enc;
  auto const* build = ordered_keys<U>(rq.build_keys, rq.build_rows, codec.is_signed, b_enc, stream, mr);
  auto const* probe = ordered_keys<U>(rq.probe_keys, rq.probe_rows, codec.is_signed, p_enc, stream, mr);
  nested_loop_matcher<U> m{build, rq.build_rows, probe, band_width(rq), codec};
  auto out = run_three_phase(m, rq.probe_rows, rq, codec, "nested_loop", clock, stream, mr);
  out.phases = clock.finish();
  return out;
}

template <class U>
device_matches run_indexed(join_request const& rq, bool binary, stream_ref stream,
                           memory_resource* mr) {
  phase_clock clock(stream);
  clock.mark("sort build");
  auto const codec = codec_of(rq.key_type, true);
  auto const nb = rq.build_rows;
  buffer b_enc;
  buffer p_enc;
  auto const* build = ordered_keys<U>(rq.build_keys, nb, codec.is_signed, b_enc, stream, mr);
  buffer leaves(sizeof(U) * static_cast<std::size_t>(std::max<size_type>(nb, 1)), mr, stream);
  buffer rows(sizeof(std::uint32_t) * static_cast<std::size_t>(std::max<size_type>(nb, 1)), mr, stream);
  sort_with_row_ids(build, as<U>(leaves), as<std::uint32_t>(rows), nb, 0,
                    8 * static_cast<int>(sizeof(U)), stream, mr);

  clock.mark("build tree");
  // Directory sizes bottom-up, then laid out top first.
  std::vector<size_type> sizes;
  for (size_type n = nb; n > css_fanout;) {
    n = ceil_div(n, css_fanout);
    sizes.push_back(n);
  }
  JOINERY_EXPECTS(static_cast<int>(sizes.size()) <= css_max_levels, "CSS-tree too deep");
  css_tree_ref<U> tree{};
  tree.leaves = as<U>(leaves);
  tree.num_leaves = nb;
  tree.levels = static_cast<int>(sizes.size());
  size_type total = 0;
  for (int l = 0; l < tree.levels; ++l) {
    tree.level_size[l] = sizes[sizes.size() - 1 - static_cast<std::size_t>(l)];
    tree.level_offset[l] = total;
    total += tree.level_size[l];
  }
  buffer upper(sizeof(U) * static_cast<std::size_t>(std::max<size_type>(total, 1)), mr, stream);
  tree.upper = as<U>(upper);
  auto const s = to_cuda(stream);
  for (int l = tree.levels - 1; l >= 0; --l) {  // bottom-up: each level reads the one below
    U const* below = l == tree.levels - 1 ? tree.leaves : tree.upper + tree.level_offset[l + 1];
    size_type const below_size = l == tree.levels - 1 ? nb : tree.level_size[l + 1];
    int const blocks = grid_stride_blocks(tree.level_size[l], 256, current_sm_count(), 8);
    css_level_kernel<<<blocks, 256, 0, s>>>(below, below_size, as<U>(upper) + tree.level_offset[l],
                                            tree.level_size[l]);
    JOINERY_CHECK_LAUNCH();
  }
  for (int l = 0; l < tree.levels; ++l) {
    if (tree.level_offset[l] + tree.level_size[l] > css_shared_entries) { break; }
    tree.cached = tree.level_offset[l] + tree.level_size[l];
  }
  auto const* probe = ordered_keys<U>(rq.probe_keys, rq.probe_rows, codec.is_signed, p_enc, stream, mr);
  css_matcher<U> m{tree, as<std::uint32_t>(rows), probe, band_width(rq), codec, binary};
  auto out = run_three_phase(m, rq.probe_rows, rq, codec, "indexed_nested_loop", clock, stream, mr);
  out.phases = clock.finish();
  return out;
}

}  // namespace

device_matches nested_loop_join(join_request const& rq, stream_ref stream, memory_resource* mr) {
  return dispatch_key_width(rq.key_type,
                            [&](auto u) { return run_nested<decltype(u)>(rq, stream, mr); });
}

device_matches indexed_nested_loop_join(join_request const& rq, stream_ref stream,
                                        memory_resource* mr) {
  // Binary node search by default; join_options::tuning.css_search selects the other variant
  // (the benchmark's --css-search measures both).
  bool const binary = rq.tuning.css_search != css_node_search::sequential;
  return dispatch_key_width(rq.key_type, [&](auto u) {
    return run_indexed<decltype(u)>(rq, binary, stream, mr);
  });
}

}  // namespace joinery::detail::gpu
