// Sort-merge join: both sides become (key, row id) pairs sorted by key (per-thread radix sort of
// a chunk, then a parallel multiway merge), then a parallel merge join over ranges of the sorted
// probe side. A range may start inside a run of equal probe keys: each range finds its first
// key's build run by binary search, so every probe row still sees all of its matches.
#include "cpu/cpu_join.hpp"
#include "cpu/sort_pairs.hpp"

#include <algorithm>

namespace joinery::detail::cpu {

namespace {

struct merge_join_policy {
  // Probe ranges per thread, handed out dynamically: a range rich in matches (a hot key with a
  // long build run) does not hold up the other threads.
  static constexpr size_type ranges_per_thread = 16;
  // Smallest probe range worth a binary search of the build side.
  static constexpr size_type min_range_rows = 1 << 12;
};

template <class Key, class Row, class Sink>
void merge_join(key_row<Key, Row> const* r, size_type nb, key_row<Key, Row> const* s,
                size_type np, join_kind kind, std::vector<Sink>& sinks) {
  auto const threads = static_cast<size_type>(omp_get_max_threads());
  auto const ranges = std::clamp<size_type>(np / merge_join_policy::min_range_rows, 1,
                                            threads * merge_join_policy::ranges_per_thread);
#pragma omp parallel if (ranges > 1)
  {
    auto& out = sinks[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(dynamic, 1)
    for (size_type q = 0; q < ranges; ++q) {
      auto const p0 = static_cast<size_type>(static_cast<unsigned __int128>(np) *
                                             static_cast<unsigned __int128>(q) /
                                             static_cast<unsigned __int128>(ranges));
      auto const p1 = static_cast<size_type>(static_cast<unsigned __int128>(np) *
                                             static_cast<unsigned __int128>(q + 1) /
                                             static_cast<unsigned __int128>(ranges));
      if (p0 == p1) { continue; }
      auto j = static_cast<size_type>(
        std::lower_bound(r, r + nb, s[p0].key,
                         [](key_row<Key, Row> const& e, Key k) { return e.key < k; }) -
        r);
      for (auto i = p0; i < p1;) {
        auto const k = s[i].key;
        while (j < nb && r[j].key < k) { ++j; }
        auto e = j;
        while (e < nb && r[e].key == k) { ++e; }
        auto const count = e - j;
        auto const b0 = j;
        // Every probe row of this key (within the range) shares the build run [b0, e).
        do {
          emit_matches(
            kind, static_cast<std::int64_t>(s[i].row), count,
            [&](auto&& f) {
              for (auto t = b0; t < e; ++t) { f(static_cast<std::int64_t>(r[t].row)); }
            },
            out);
          ++i;
        } while (i < p1 && s[i].key == k);
        j = e;
      }
    }
  }
}

template <class Key, class Row, class Sink>
void run(join_input<Key> const& in, std::vector<Sink>& sinks) {
  pair_sorter<Key, Row> build(in.build, in.build_rows);
  pair_sorter<Key, Row> probe(in.probe, in.probe_rows);
  {
    phase_timer t(in.phases, "sort");
    build.sort_chunks();
    probe.sort_chunks();
  }
  {
    phase_timer t(in.phases, "merge");
    build.merge();
    probe.merge();
  }
  phase_timer t(in.phases, "merge_join");
  merge_join(build.data(), build.size(), probe.data(), probe.size(), in.kind, sinks);
}

}  // namespace

template <class Key, class Sink>
void sort_merge_join(join_input<Key> const& in, std::vector<Sink>& sinks) {
  if (in.probe_rows == 0) { return; }
  if (in.build_rows == 0) {
    // Nothing to sort: every probe row has no match (what anti and outer joins emit).
    phase_timer t(in.phases, "merge_join");
    emit_all_unmatched(in, sinks);
    return;
  }
  if (narrow_rows_fit<Key>(std::max(in.build_rows, in.probe_rows))) {
    run<Key, std::uint32_t>(in, sinks);
  } else {
    run<Key, std::int64_t>(in, sinks);
  }
}

JOINERY_CPU_JOIN_INSTANTIATE(sort_merge_join)

}  // namespace joinery::detail::cpu
