#pragma once
// Internal: a CSS-tree (cache-sensitive search tree, Rao & Ross 1999) over a sorted key array.
// The sorted keys themselves are the leaf level, cut into nodes of one cache line; above them a
// directory of one-line nodes of m keys and m + 1 children, levels stored contiguously from the
// root down with no child pointers: child c of node i sits at index i * (m + 1) + c of the level
// below. Separator c of a node is the largest key under child c, so the child to descend into is
// the number of separators below the search key (a branch-free count within one line).
#include <joinery/types.hpp>

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace joinery::detail::cpu {

struct css_policy {
  static constexpr int node_bytes = 64;  // one cache line per node
};

template <class Key>
class css_tree {
 public:
  static constexpr int node_keys = css_policy::node_bytes / static_cast<int>(sizeof(Key));
  static constexpr size_type fanout = node_keys + 1;

  css_tree() = default;

  /// Builds the directory over `sorted[0, n)` (ascending); the keys must outlive the tree.
  css_tree(Key const* sorted, size_type n) : keys_(sorted), n_(n) {
    leaves_ = (n + node_keys - 1) / node_keys;
    // Level sizes from just above the leaves up to the single root.
    std::vector<size_type> sizes;
    for (auto s = leaves_; s > 1;) {
      s = (s + fanout - 1) / fanout;
      sizes.push_back(s);
    }
    std::reverse(sizes.begin(), sizes.end());
    size_type total = 0;
    for (auto s : sizes) {
      level_begin_.push_back(total);
      level_size_.push_back(s);
      total += s;
    }
    nodes_.resize(static_cast<std::size_t>(total));
    // Keys under one child of a node on level l: a leaf's keys times fanout^(levels - 1 - l).
    auto const levels = static_cast<int>(sizes.size());
    for (int l = 0; l < levels; ++l) {
      size_type span = node_keys;
      for (int up = l + 1; up < levels; ++up) { span *= fanout; }
      auto* const level = nodes_.data() + level_begin_[static_cast<std::size_t>(l)];
      auto const count = level_size_[static_cast<std::size_t>(l)];
#pragma omp parallel for schedule(static) if (count > 4096)
      for (size_type i = 0; i < count; ++i) {
        for (size_type c = 0; c < node_keys; ++c) {
          auto const child = i * fanout + c;
          // A child past the end (only on the rightmost path) gets the largest key; search()
          // never descends into it unless the key is above every key in the tree.
          level[i].keys[c] = child * span < n
                               ? sorted[std::min((child + 1) * span, n) - 1]
                               : std::numeric_limits<Key>::max();
        }
      }
    }
  }

  /// First position whose key is >= x (n when none).
  [[nodiscard]] size_type lower_bound(Key x) const noexcept { return search<false>(x); }
  /// First position whose key is > x (n when none).
  [[nodiscard]] size_type upper_bound(Key x) const noexcept { return search<true>(x); }

  /// lower_bound of each of `xs[0, count)` into `out`, the descents of the batch interleaved
  /// level by level: their cache misses overlap instead of forming one dependent chain each.
  void lower_bound_batch(Key const* xs, size_type count, size_type* out) const noexcept {
    auto const levels = level_size_.size();
    for (size_type g = 0; g < count; ++g) { out[g] = 0; }
    for (std::size_t l = 0; l < levels; ++l) {
      auto const* const level = nodes_.data() + level_begin_[l];
      auto const below = l + 1 < levels ? level_size_[l + 1] : leaves_;
      for (size_type g = 0; g < count; ++g) {
        if (out[g] < 0) { continue; }
        auto const idx = out[g] * fanout + count_below_node<false>(level[out[g]].keys, xs[g]);
        out[g] = idx >= below ? -1 : idx;  // -1: above every key
      }
    }
    for (size_type g = 0; g < count; ++g) {
      if (out[g] < 0 || leaves_ == 0) {
        out[g] = leaves_ == 0 ? 0 : n_;
        continue;
      }
      auto const base = out[g] * node_keys;
      auto const len = std::min<size_type>(node_keys, n_ - base);
      out[g] = base + (len == node_keys ? count_below_node<false>(keys_ + base, xs[g])
                                        : count_below<false>(keys_ + base, len, xs[g]));
    }
  }

  [[nodiscard]] size_type size() const noexcept { return n_; }
  [[nodiscard]] int levels() const noexcept { return static_cast<int>(level_size_.size()); }
  [[nodiscard]] Key const* keys() const noexcept { return keys_; }

 private:
  struct alignas(css_policy::node_bytes) node {
    Key keys[node_keys];
  };

  /// Keys of `k[0, len)` below x (Upper: not above x). A narrow counter lets it vectorize.
  template <bool Upper>
  static size_type count_below(Key const* k, size_type len, Key x) noexcept {
    unsigned c = 0;
    for (size_type j = 0; j < len; ++j) { c += Upper ? (k[j] <= x) : (k[j] < x); }
    return c;
  }
  template <bool Upper>
  static size_type count_below_node(Key const* k, Key x) noexcept {
    unsigned c = 0;
    for (int j = 0; j < node_keys; ++j) { c += Upper ? (k[j] <= x) : (k[j] < x); }
    return c;
  }

  template <bool Upper>
  [[nodiscard]] size_type search(Key x) const noexcept {
    size_type idx = 0;  // node index within the current level (then the leaf index)
    auto const levels = level_size_.size();
    for (std::size_t l = 0; l < levels; ++l) {
      auto const& nd = nodes_[static_cast<std::size_t>(level_begin_[l] + idx)];
      idx = idx * fanout + count_below_node<Upper>(nd.keys, x);
      auto const below = l + 1 < levels ? level_size_[l + 1] : leaves_;
      if (idx >= below) { return n_; }  // x is above every key
    }
    if (leaves_ == 0) { return 0; }
    auto const base = idx * node_keys;
    auto const len = std::min<size_type>(node_keys, n_ - base);
    auto const c = len == node_keys ? count_below_node<Upper>(keys_ + base, x)
                                    : count_below<Upper>(keys_ + base, len, x);
    return base + c;
  }

  Key const* keys_ = nullptr;
  size_type n_ = 0;
  size_type leaves_ = 0;
  std::vector<node> nodes_;  // every level, root first
  std::vector<size_type> level_begin_;
  std::vector<size_type> level_size_;
};

}  // namespace joinery::detail::cpu
