#include "cpu/cpu_join.hpp"

#include <omp.h>

#include <algorithm>

namespace joinery::detail::cpu {

namespace {

/// build.key <= probe.key <= build.key + width, without overflow for any key type.
template <class Key>
inline bool band_match(Key b, Key p, std::uint64_t width) noexcept {
  if (p < b) { return false; }
  auto const diff = static_cast<std::uint64_t>(p) - static_cast<std::uint64_t>(b);
  return diff <= width;
}

// Build rows per block: a block of build keys stays in L1/L2 while a run of probe rows streams by.
constexpr std::int64_t build_block_rows = 4096;

template <class Key, class Sink, class Match>
void run(join_input<Key> const& in, std::vector<Sink>& sinks, Match match) {
  auto const nb = in.build_rows;
  auto const np = in.probe_rows;
  phase_timer timer(in.phases, "join");
  // One long phase: its row runs stop once the call is cancelled, and the call then throws.
  auto const* cancel = cancel_flag();
#pragma omp parallel
  {
    auto& out = sinks[static_cast<std::size_t>(omp_get_thread_num())];
    // Probe rows are split across threads; each thread walks the build side block by block for
    // a short run of its probe rows, so a build block is reused from cache by the whole run.
    constexpr std::int64_t probe_run = 64;
    std::vector<std::vector<std::int64_t>> run_hits(probe_run);
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t p0 = 0; p0 < np; p0 += probe_run) {
      if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) { continue; }
      auto const p1 = std::min(np, p0 + probe_run);
      for (auto& h : run_hits) { h.clear(); }
      for (std::int64_t b0 = 0; b0 < nb; b0 += build_block_rows) {
        auto const b1 = std::min(nb, b0 + build_block_rows);
        for (std::int64_t p = p0; p < p1; ++p) {
          auto const pk = in.probe[p];
          auto& h = run_hits[static_cast<std::size_t>(p - p0)];
          for (std::int64_t b = b0; b < b1; ++b) {
            if (match(in.build[b], pk)) { h.push_back(b); }
          }
        }
      }
      for (std::int64_t p = p0; p < p1; ++p) {
        auto const& h = run_hits[static_cast<std::size_t>(p - p0)];
        emit_matches(
          in.kind, p, static_cast<std::int64_t>(h.size()),
          [&](auto&& f) {
            for (auto b : h) { f(b); }
          },
          out);
      }
    }
  }
  throw_if_cancelled();
}

}  // namespace

template <class Key, class Sink>
void nested_loop_join(join_input<Key> const& in, std::vector<Sink>& sinks) {
  if (in.pred.kind == predicate::kind_type::band) {
    auto const w = in.pred.band_width;
    run(in, sinks, [w](Key x, Key y) { return band_match(x, y, w); });
  } else {
    run(in, sinks, [](Key x, Key y) { return x == y; });
  }
}

JOINERY_CPU_JOIN_INSTANTIATE(nested_loop_join)

}  // namespace joinery::detail::cpu
