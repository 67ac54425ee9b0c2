#pragma once
// Internal: the CPU backend's join algorithms (OpenMP). Each algorithm is a template over the key
// type and a sink, defined in its own .cpp and instantiated there for the closed lists below.
#include "core/cancel.hpp"
#include "cpu/match_list.hpp"

#include <omp.h>

#include <chrono>
#include <cstdint>
#include <vector>

namespace joinery::detail::cpu {

/// Collects row-id pairs (the index and table output forms).
struct list_sink {
  match_list m;
  void add(std::int64_t b, std::int64_t p) {
    m.build.push_back(b);
    m.probe.push_back(p);
  }
  void add_probe(std::int64_t p) { m.probe.push_back(p); }
};

/// Counts and checksums matches without writing them (the aggregate form). `build_sum[b]` and
/// `probe_sum[p]` are what row b / p adds to the checksum of an output row it appears in.
struct checksum_sink {
  std::uint64_t const* build_sum = nullptr;
  std::uint64_t const* probe_sum = nullptr;
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  void add(std::int64_t b, std::int64_t p) {
    ++count;
    sum += probe_sum[p] + (b >= 0 ? build_sum[b] : 0);
  }
  void add_probe(std::int64_t p) {
    ++count;
    sum += probe_sum[p];
  }
};

/// What a CPU join algorithm reads. Algorithms write to sinks[omp_get_thread_num()]; the vector
/// holds omp_get_max_threads() sinks. Row ids are positions in the build/probe arrays.
template <class Key>
struct join_input {
  Key const* build = nullptr;
  size_type build_rows = 0;
  Key const* probe = nullptr;
  size_type probe_rows = 0;
  join_kind kind = join_kind::inner;
  predicate pred{};
  double load_factor = 0.5;  ///< no_partition_hash: the table's most filled fraction
  std::vector<phase_time>* phases = nullptr;  ///< algorithms append their phase times
};

/// Emits what `kind` asks for, given one probe row's matching build rows: `visit(f)` calls f(b)
/// for each of its `match_count` matches.
template <class Sink, class Visit>
inline void emit_matches(join_kind kind, std::int64_t probe_row, std::int64_t match_count,
                         Visit&& visit, Sink& out) {
  switch (kind) {
    case join_kind::inner:
      visit([&](std::int64_t b) { out.add(b, probe_row); });
      break;
    case join_kind::left_outer:
      if (match_count == 0) {
        out.add(-1, probe_row);
      } else {
        visit([&](std::int64_t b) { out.add(b, probe_row); });
      }
      break;
    case join_kind::left_semi:
      if (match_count > 0) { out.add_probe(probe_row); }
      break;
    case join_kind::left_anti:
      if (match_count == 0) { out.add_probe(probe_row); }
      break;
    default: break;  // the right and full kinds run through the general key path
  }
}

/// Every probe row as unmatched (the build side is empty): anti and outer joins emit them all.
template <class Key, class Sink>
void emit_all_unmatched(join_input<Key> const& in, std::vector<Sink>& sinks) {
#pragma omp parallel
  {
    auto& out = sinks[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (size_type i = 0; i < in.probe_rows; ++i) {
      emit_matches(in.kind, i, 0, [](auto&&) {}, out);
    }
  }
}

/// Measures a phase and appends it to `phases` (when not null).
class phase_timer {
 public:
  /// A phase starts only when the call was not cancelled (joinery/cancel.hpp).
  phase_timer(std::vector<phase_time>* phases, char const* name)
      : phases_(phases), name_(name), t0_(std::chrono::steady_clock::now()) {
    throw_if_cancelled();
  }
  ~phase_timer() {
    if (phases_ != nullptr) {
      phases_->push_back(
        {name_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count()});
    }
  }
  phase_timer(phase_timer const&) = delete;
  phase_timer& operator=(phase_timer const&) = delete;

 private:
  std::vector<phase_time>* phases_;
  char const* name_;
  std::chrono::steady_clock::time_point t0_;
};

// The algorithms (one .cpp each).
template <class Key, class Sink>
void nested_loop_join(join_input<Key> const& in, std::vector<Sink>& sinks);
template <class Key, class Sink>
void no_partition_hash_join(join_input<Key> const& in, std::vector<Sink>& sinks);
template <class Key, class Sink>
void radix_hash_join(join_input<Key> const& in, std::vector<Sink>& sinks);
template <class Key, class Sink>
void sort_merge_join(join_input<Key> const& in, std::vector<Sink>& sinks);
template <class Key, class Sink>
void indexed_nested_loop_join(join_input<Key> const& in, std::vector<Sink>& sinks);

/// Explicit instantiation of one algorithm over the key types and both sinks.
#define JOINERY_CPU_JOIN_INSTANTIATE_KEY(name, key)                                       \
  template void name(join_input<key> const&, std::vector<list_sink>&);                    \
  template void name(join_input<key> const&, std::vector<checksum_sink>&);
#define JOINERY_CPU_JOIN_INSTANTIATE(name)                      \
  JOINERY_CPU_JOIN_INSTANTIATE_KEY(name, std::int32_t)          \
  JOINERY_CPU_JOIN_INSTANTIATE_KEY(name, std::int64_t)          \
  JOINERY_CPU_JOIN_INSTANTIATE_KEY(name, std::uint32_t)         \
  JOINERY_CPU_JOIN_INSTANTIATE_KEY(name, std::uint64_t)

/// Runs `algo` on host-accessible tables and shapes the result (host memory).
join_result run_join(join_algorithm algo, table_view const& build, size_type build_key,
                     table_view const& probe, size_type probe_key, join_options const& options);

/// Algorithms this backend implements.
std::vector<join_algorithm> algorithms();

}  // namespace joinery::detail::cpu
