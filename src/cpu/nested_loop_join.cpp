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

template <class Key, class Match>
match_list run(Key const* build, std::int64_t nb, Key const* probe, std::int64_t np,
               join_kind kind, Match match) {
  std::vector<match_list> parts(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel
  {
    auto& out = parts[static_cast<std::size_t>(omp_get_thread_num())];
    // Probe rows are split across threads; each thread walks the build side block by block for
    // a small run of its probe rows, so output stays in probe order within the thread.
    constexpr std::int64_t probe_run = 64;
#pragma omp for schedule(static)
    for (std::int64_t p0 = 0; p0 < np; p0 += probe_run) {
      auto const p1 = std::min(np, p0 + probe_run);
      std::vector<std::vector<std::int64_t>> run_hits(static_cast<std::size_t>(p1 - p0));
      for (std::int64_t b0 = 0; b0 < nb; b0 += build_block_rows) {
        auto const b1 = std::min(nb, b0 + build_block_rows);
        for (std::int64_t p = p0; p < p1; ++p) {
          auto const pk = probe[p];
          auto& h = run_hits[static_cast<std::size_t>(p - p0)];
          for (std::int64_t b = b0; b < b1; ++b) {
            if (match(build[b], pk)) { h.push_back(b); }
          }
        }
      }
      for (std::int64_t p = p0; p < p1; ++p) {
        auto const& h = run_hits[static_cast<std::size_t>(p - p0)];
        emit_matches(
          kind, p, static_cast<std::int64_t>(h.size()),
          [&](auto&& f) {
            for (auto b : h) { f(b); }
          },
          out);
      }
    }
  }
  return concatenate(std::move(parts));
}

}  // namespace

match_list nested_loop_join(column_view const& build_key, column_view const& probe_key,
                            join_kind kind, predicate pred) {
  return dispatch_key_type(build_key.type(), [&](auto tag) {
    using key = typename decltype(tag)::type;
    auto const* b = build_key.data_as<key>();
    auto const* p = probe_key.data_as<key>();
    if (pred.kind == predicate::kind_type::band) {
      auto const w = pred.band_width;
      return run(b, build_key.size(), p, probe_key.size(), kind,
                 [w](key x, key y) { return band_match(x, y, w); });
    }
    return run(b, build_key.size(), p, probe_key.size(), kind,
               [](key x, key y) { return x == y; });
  });
}

}  // namespace joinery::detail::cpu
