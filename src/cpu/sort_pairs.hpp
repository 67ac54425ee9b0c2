#pragma once
// Internal: parallel sort of (key, row id) pairs for the sort-based CPU joins (sort-merge and the
// CSS-tree index). Each thread LSD-radix-sorts one chunk of the input, then libstdc++ parallel
// mode's multiway merge (exact splitting, one output slab per thread) merges the sorted chunks,
// as Maltenberger et al. do on the CPU side.
#include "cpu/aligned_array.hpp"
#include "cpu/cpu_join.hpp"

#include <omp.h>
#include <parallel/algorithm>

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <new>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace joinery::detail::cpu {

/// Tuning numbers of the pair sort.
struct sort_policy {
  // 8-bit digits: 256 scatter targets stay within L1 and TLB reach (11 bits, one pass fewer for a
  // 22-bit range, measured 10-20% slower); fewer bits when the key range needs fewer (the digit
  // width is spread evenly over the passes the range needs).
  static constexpr int max_digit_bits = 8;
  // Below this many rows per chunk, splitting costs more (merge, thread start) than it saves.
  static constexpr size_type min_chunk_rows = 1 << 14;
};

template <class Key, class Row>
struct key_row {
  Key key;
  Row row;
};

/// 32-bit row ids halve a 4-byte key's pair (8 bytes instead of 16) when every row id fits.
template <class Key>
constexpr bool narrow_rows_fit(size_type rows) noexcept {
  return sizeof(Key) == 4 && rows <= static_cast<size_type>(std::numeric_limits<std::uint32_t>::max());
}

/// Order-preserving map of a key to its unsigned type (signed keys: flip the sign bit).
template <class Key>
constexpr std::make_unsigned_t<Key> ordered_bits(Key k) noexcept {
  using U = std::make_unsigned_t<Key>;
  if constexpr (std::is_signed_v<Key>) {
    return static_cast<U>(static_cast<U>(k) ^ (U{1} << (sizeof(Key) * 8 - 1)));
  } else {
    return k;
  }
}

/// (key, row) pairs of one side, sorted by key, produced in two timed steps: sort_chunks(), then
/// merge(). Row ids are positions in the input array.
template <class Key, class Row>
class pair_sorter {
 public:
  using pair_type = key_row<Key, Row>;
  using ukey = std::make_unsigned_t<Key>;

  pair_sorter(Key const* keys, size_type n) : keys_(keys), n_(n) {}

  /// Sorts each chunk (one per thread) into its rows of `a_`.
  void sort_chunks() {
    if (n_ == 0) { return; }
    auto const threads = static_cast<size_type>(omp_get_max_threads());
    auto const chunks = std::clamp<size_type>(n_ / sort_policy::min_chunk_rows, 1, threads);
    bounds_.resize(static_cast<std::size_t>(chunks + 1));
    for (size_type c = 0; c <= chunks; ++c) {
      bounds_[static_cast<std::size_t>(c)] = static_cast<size_type>(
        static_cast<unsigned __int128>(n_) * static_cast<unsigned __int128>(c) /
        static_cast<unsigned __int128>(chunks));
    }
    // The key range decides the passes: only the bits in which (key - min) can differ are sorted.
    ukey lo = std::numeric_limits<ukey>::max();
    ukey hi = 0;
    auto const* keys = keys_;
    auto const n = n_;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi) if (chunks > 1)
    for (size_type i = 0; i < n; ++i) {
      auto const v = ordered_bits(keys[i]);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    lo_ = lo;
    int const bits = std::bit_width(static_cast<ukey>(hi - lo));
    passes_ = (bits + sort_policy::max_digit_bits - 1) / sort_policy::max_digit_bits;
    digit_bits_ = passes_ == 0 ? 0 : (bits + passes_ - 1) / passes_;

    a_ = aligned_array<pair_type>(static_cast<std::size_t>(n_));
    if (passes_ > 1) { b_ = aligned_array<pair_type>(static_cast<std::size_t>(n_)); }
#pragma omp parallel for schedule(static, 1) if (chunks > 1)
    for (size_type c = 0; c < chunks; ++c) {
      sort_chunk(bounds_[static_cast<std::size_t>(c)], bounds_[static_cast<std::size_t>(c + 1)]);
    }
    sorted_ = a_.get();
  }

  /// The sorted chunks merged into one run (parallel multiway merge).
  void merge() {
    if (bounds_.size() <= 2) {
      b_.reset();
      return;
    }
    if (!b_) { b_ = aligned_array<pair_type>(static_cast<std::size_t>(n_)); }
    std::vector<std::pair<pair_type*, pair_type*>> seqs;
    for (std::size_t c = 0; c + 1 < bounds_.size(); ++c) {
      seqs.emplace_back(a_.get() + bounds_[c], a_.get() + bounds_[c + 1]);
    }
    __gnu_parallel::multiway_merge(seqs.begin(), seqs.end(), b_.get(), n_,
                                   [](pair_type const& x, pair_type const& y) {
                                     return x.key < y.key;
                                   });
    swap(a_, b_);
    b_.reset();
    sorted_ = a_.get();
  }

  [[nodiscard]] pair_type const* data() const noexcept { return sorted_; }
  [[nodiscard]] size_type size() const noexcept { return n_; }

 private:
  /// LSD radix sort of rows [c0, c1); the first pass reads the input keys directly (so the
  /// pairs are never written unsorted), the last pass writes into a_.
  void sort_chunk(size_type c0, size_type c1) {
    auto* a = a_.get();
    auto* b = b_.get();
    auto const lo = lo_;
    if (passes_ == 0) {  // all keys equal
      for (size_type i = c0; i < c1; ++i) { a[i] = {keys_[i], static_cast<Row>(i)}; }
      return;
    }
    auto const digit_bits = digit_bits_;
    auto const mask = static_cast<ukey>((ukey{1} << digit_bits) - 1);
    auto const radix = std::size_t{1} << digit_bits;
    // One read of the keys fills the histograms of every pass.
    std::vector<size_type> hist(static_cast<std::size_t>(passes_) * radix, 0);
    for (size_type i = c0; i < c1; ++i) {
      auto const v = static_cast<ukey>(ordered_bits(keys_[i]) - lo);
      for (int p = 0; p < passes_; ++p) {
        ++hist[static_cast<std::size_t>(p) * radix + ((v >> (p * digit_bits)) & mask)];
      }
    }
    for (int p = 0; p < passes_; ++p) {
      auto* const h = hist.data() + static_cast<std::size_t>(p) * radix;
      size_type running = c0;
      for (std::size_t d = 0; d < radix; ++d) {
        auto const cnt = h[d];
        h[d] = running;
        running += cnt;
      }
      // Alternate buffers so that the last pass lands in a.
      auto* const dst = ((passes_ - 1 - p) % 2 == 0) ? a : b;
      auto const shift = p * digit_bits;
      if (p == 0) {
        scatter(c0, c1, h, dst, [&](size_type i) {
          auto const k = keys_[i];
          return std::pair{pair_type{k, static_cast<Row>(i)},
                           static_cast<std::size_t>(
                             (static_cast<ukey>(ordered_bits(k) - lo) >> shift) & mask)};
        });
      } else {
        auto const* const src = ((passes_ - p) % 2 == 0) ? a : b;
        scatter(c0, c1, h, dst, [&](size_type i) {
          auto const e = src[i];
          return std::pair{e, static_cast<std::size_t>(
                                (static_cast<ukey>(ordered_bits(e.key) - lo) >> shift) & mask)};
        });
      }
    }
  }

  /// Writes element i (from `get(i)`: the pair and its digit) to dst[offset[digit]++]. A plain
  /// scatter: software write-combining buffers measured slower on the hosts we have (large L2s,
  /// huge pages below), so they are left out.
  template <class Get>
  static void scatter(size_type c0, size_type c1, size_type* offset, pair_type* dst, Get&& get) {
    for (size_type i = c0; i < c1; ++i) {
      auto const [e, d] = get(i);
      dst[offset[d]++] = e;
    }
  }

  Key const* keys_;
  size_type n_;
  std::vector<size_type> bounds_;  // chunk c is [bounds_[c], bounds_[c+1])
  ukey lo_ = 0;
  int passes_ = 0;
  int digit_bits_ = 0;
  aligned_array<pair_type> a_;
  aligned_array<pair_type> b_;
  pair_type const* sorted_ = nullptr;
};

}  // namespace joinery::detail::cpu
