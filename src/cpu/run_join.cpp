// CPU backend dispatch: picks the algorithm instance, runs it into the right sinks, shapes output.
#include "cpu/cpu_join.hpp"

#include <cstring>
#include <memory>

namespace joinery::detail::cpu {

namespace {

/// Per row: the wrapping sum of the given columns' values (what the row adds to a checksum).
/// Written by the threads that later read it (first touch), never zero-filled by one thread.
std::unique_ptr<std::uint64_t[]> row_sums(table_view const& t, std::vector<size_type> const& cols,
                                          size_type rows) {
  std::unique_ptr<std::uint64_t[]> s(new std::uint64_t[static_cast<std::size_t>(std::max<size_type>(rows, 1))]);
  if (cols.empty()) {
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < rows; ++i) { s[i] = 0; }
    return s;
  }
  bool first = true;
  for (auto c : cols) {
    auto const col = t.column(c);
    dispatch_type(col.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_floating_point_v<T>) {
        auto const* v = static_cast<T const*>(col.data());
        if (first) {
#pragma omp parallel for schedule(static)
          for (size_type i = 0; i < rows; ++i) { s[i] = checksum_value(v[i]); }
        } else {
#pragma omp parallel for schedule(static)
          for (size_type i = 0; i < rows; ++i) { s[i] += checksum_value(v[i]); }
        }
      }
    });
    first = false;
  }
  return s;
}


template <class Key, class Sink>
void dispatch(join_algorithm algo, join_input<Key> const& in, std::vector<Sink>& sinks) {
  switch (algo) {
    case join_algorithm::nested_loop: nested_loop_join(in, sinks); return;
    case join_algorithm::no_partition_hash: no_partition_hash_join(in, sinks); return;
    case join_algorithm::radix_hash: radix_hash_join(in, sinks); return;
    case join_algorithm::sort_merge: sort_merge_join(in, sinks); return;
    case join_algorithm::indexed_nested_loop: indexed_nested_loop_join(in, sinks); return;
    default: break;
  }
  JOINERY_FAIL("join algorithm '" + std::string(to_string(algo)) +
               "' is not implemented on the cpu backend");
}

}  // namespace

std::vector<join_algorithm> algorithms() {
  // An algorithm is listed once it is implemented: the conformance suite and `automatic` follow.
  return {join_algorithm::nested_loop, join_algorithm::no_partition_hash,
          join_algorithm::sort_merge, join_algorithm::indexed_nested_loop,
          join_algorithm::radix_hash};
}

join_result run_join(join_algorithm algo, table_view const& build, size_type build_key,
                     table_view const& probe, size_type probe_key, join_options const& options) {
  join_result result;
  std::vector<phase_time> phases;
  auto const nthreads = static_cast<std::size_t>(omp_get_max_threads());
  dispatch_key_type(build.column(build_key).type(), [&](auto tag) {
    using Key = typename decltype(tag)::type;
    join_input<Key> in;
    in.build = build.column(build_key).template data_as<Key>();
    in.build_rows = build.num_rows();
    in.probe = probe.column(probe_key).template data_as<Key>();
    in.probe_rows = probe.num_rows();
    in.kind = options.kind;
    in.pred = options.pred;
    in.load_factor = options.hash_load_factor;
    in.phases = &phases;
    if (options.output == output_form::aggregate) {
      // Nothing is materialized: each match adds its rows' precomputed value sums.
      bool const probe_only =
        options.kind == join_kind::left_semi || options.kind == join_kind::left_anti;
      std::vector<size_type> probe_cols{probe_key};
      probe_cols.insert(probe_cols.end(), options.probe_payloads.begin(),
                        options.probe_payloads.end());
      auto const bs = row_sums(build, probe_only ? std::vector<size_type>{} : options.build_payloads,
                               build.num_rows());
      auto const ps = row_sums(probe, probe_cols, probe.num_rows());
      std::vector<checksum_sink> sinks(nthreads);
      for (auto& s : sinks) {
        s.build_sum = bs.get();
        s.probe_sum = ps.get();
      }
      dispatch(algo, in, sinks);
      result.form = output_form::aggregate;
      for (auto const& s : sinks) {
        result.aggregate.count += s.count;
        result.aggregate.checksum += s.sum;
      }
    } else {
      std::vector<list_sink> sinks(nthreads);
      // Room for one match per probe row, spread over the threads: PK-FK joins then never
      // reallocate (and copy) their lists while probing.
      bool const with_build =
        options.kind == join_kind::inner || options.kind == join_kind::left_outer;
      auto const share = static_cast<std::size_t>(in.probe_rows) / nthreads + 1;
#pragma omp parallel for schedule(static, 1)
      for (std::size_t i = 0; i < sinks.size(); ++i) {
        if (with_build) { sinks[i].m.build.reserve(share); }
        sinks[i].m.probe.reserve(share);
      }
      dispatch(algo, in, sinks);
      phase_timer t(&phases, "materialize");
      std::vector<match_list> parts;
      parts.reserve(sinks.size());
      for (auto& s : sinks) { parts.push_back(std::move(s.m)); }
      result = assemble_host_result(concatenate(parts), build, probe, probe_key, options);
    }
  });
  result.stats.phases = std::move(phases);
  return result;
}

}  // namespace joinery::detail::cpu
