// Indexed nested-loop join over a CSS-tree (He et al. 2008, 4.1; Rao & Ross): the build side is
// sorted into (key, row id) pairs, split into a key array (the tree's leaf level) and a row array,
// and indexed by a CSS-tree directory. Each probe key, in input order, descends the tree to the
// start of its key range and then finds the range's end; equality and the band predicate
// (build.key <= probe.key <= build.key + d, i.e. build keys in [probe - d, probe]).
#include "cpu/cpu_join.hpp"
#include "cpu/css_tree.hpp"
#include "cpu/sort_pairs.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>

namespace joinery::detail::cpu {

namespace {

struct inlj_policy {
  // Probe rows per dynamically scheduled chunk: big enough to amortize the scheduling, small
  // enough to balance skewed outputs (a band or hot key can make some probe rows expensive).
  static constexpr size_type probe_chunk = 2048;
  // Keys scanned linearly for the end of a range before a second tree descent finds it: most
  // runs are short (a PK-FK probe matches one key in the same cache line).
  static constexpr size_type run_scan_keys = 16;
  // Probe keys whose tree descents are interleaved level by level, so that their cache misses
  // overlap (measured: 32 halves the time per probe against one descent at a time).
  static constexpr size_type search_batch = 32;
};

/// Smallest build key a probe key p can match under the band: max(p - d, lowest key), without
/// overflow for every key type and width (d may be 0 or ~0).
template <class Key>
constexpr Key band_low(Key p, std::uint64_t d) noexcept {
  using U = std::make_unsigned_t<Key>;
  auto const lowest = std::numeric_limits<Key>::lowest();
  auto const room = static_cast<U>(static_cast<U>(p) - static_cast<U>(lowest));  // p - lowest
  if (d >= room) { return lowest; }
  return static_cast<Key>(static_cast<U>(static_cast<U>(p) - static_cast<U>(d)));
}

template <class Key, class Row, class Sink>
void run(join_input<Key> const& in, std::vector<Sink>& sinks) {
  auto const nb = in.build_rows;
  aligned_array<Key> keys(nb);  // the tree's leaves: cache-line aligned
  aligned_array<Row> rows(nb);
  {
    phase_timer t(in.phases, "sort");
    pair_sorter<Key, Row> sorter(in.build, nb);
    sorter.sort_chunks();
    sorter.merge();
    auto const* pairs = sorter.data();
    auto* const k = keys.get();
    auto* const r = rows.get();
#pragma omp parallel for schedule(static) if (nb > inlj_policy::probe_chunk)
    for (size_type i = 0; i < nb; ++i) {
      k[i] = pairs[i].key;
      r[i] = pairs[i].row;
    }
  }
  css_tree<Key> tree;
  {
    phase_timer t(in.phases, "build_index");
    tree = css_tree<Key>(keys.get(), nb);
  }

  phase_timer t(in.phases, "probe");
  bool const band = in.pred.kind == predicate::kind_type::band;
  auto const width = in.pred.band_width;
  auto const* const k = keys.get();
  auto const* const r = rows.get();
  auto const np = in.probe_rows;
  constexpr size_type batch = inlj_policy::search_batch;
#pragma omp parallel if (np > inlj_policy::probe_chunk)
  {
    auto& out = sinks[static_cast<std::size_t>(omp_get_thread_num())];
    Key low[batch];
    size_type begin[batch];
#pragma omp for schedule(dynamic, inlj_policy::probe_chunk / batch)
    for (size_type i0 = 0; i0 < np; i0 += batch) {
      auto const count = std::min(batch, np - i0);
      for (size_type g = 0; g < count; ++g) {
        low[g] = band ? band_low(in.probe[i0 + g], width) : in.probe[i0 + g];
      }
      tree.lower_bound_batch(low, count, begin);
      for (size_type g = 0; g < count; ++g) {
        auto const i = i0 + g;
        auto const p = in.probe[i];
        auto const b = begin[g];
        // End of the range (keys <= p): a short linear scan first, the tree for long runs.
        auto end = b;
        auto const scan_end = std::min(nb, b + inlj_policy::run_scan_keys);
        while (end < scan_end && k[end] <= p) { ++end; }
        if (end == scan_end && end < nb && k[end] <= p) { end = tree.upper_bound(p); }
        emit_matches(
          in.kind, i, end - b,
          [&](auto&& f) {
            for (auto j = b; j < end; ++j) { f(static_cast<std::int64_t>(r[j])); }
          },
          out);
      }
    }
  }
}

}  // namespace

template <class Key, class Sink>
void indexed_nested_loop_join(join_input<Key> const& in, std::vector<Sink>& sinks) {
  // Row ids live in their own array here, so 32-bit ones pay off for every key width.
  if (in.build_rows <= static_cast<size_type>(std::numeric_limits<std::uint32_t>::max())) {
    run<Key, std::uint32_t>(in, sinks);
  } else {
    run<Key, std::int64_t>(in, sinks);
  }
}

JOINERY_CPU_JOIN_INSTANTIATE(indexed_nested_loop_join)

}  // namespace joinery::detail::cpu
