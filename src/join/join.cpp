// The public join: checks the request, resolves backend and algorithm, runs, shapes the result.
#include <joinery/join.hpp>

#include "core/backend_check.hpp"
#include "core/cancel.hpp"
#include "core/wall_clock.hpp"
#include "cpu/cpu_join.hpp"
#include "join/choose.hpp"
#include "join/general/general_join.hpp"
#include "primitives/row_ops.hpp"
#include "logical/logical_types.hpp"
#include "strings/string_keys.hpp"
#include "cpu/match_list.hpp"
#ifdef JOINERY_HAS_CUDA
#include "join/gpu/gpu_join.hpp"
#include "join/multi_gpu/multi_gpu_join.hpp"
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>
#include <string>

namespace joinery {

namespace {

using detail::clock_type;
using detail::seconds_since;

std::string list_names(std::vector<join_algorithm> const& v) {
  std::string s;
  for (auto a : v) { s += (s.empty() ? "" : ", ") + std::string(to_string(a)); }
  return s.empty() ? "none" : s;
}

bool is_multi_gpu(join_algorithm a) {
  return a == join_algorithm::multi_gpu_sort_merge || a == join_algorithm::multi_gpu_hash;
}

bool is_nested_loop_family(join_algorithm a) {
  return a == join_algorithm::nested_loop || a == join_algorithm::indexed_nested_loop;
}

void check_columns(table_view const& t, char const* side, size_type key,
                   std::vector<size_type> const& payloads) {
  JOINERY_EXPECTS(key >= 0 && key < t.num_columns(),
                  std::string(side) + " key column " + std::to_string(key) +
                    " does not exist (the " + side + " table has " +
                    std::to_string(t.num_columns()) + " columns)");
  JOINERY_EXPECTS(is_key_type(t.column(key).type()),
                  std::string(side) + " key column must be int32, int64, uint32 or uint64, not " +
                    std::string(to_string(t.column(key).type())));
  for (auto c : payloads) {
    JOINERY_EXPECTS(c >= 0 && c < t.num_columns(),
                    std::string(side) + " payload column " + std::to_string(c) +
                      " does not exist (the " + side + " table has " +
                      std::to_string(t.num_columns()) + " columns)");
    JOINERY_EXPECTS(!is_floating(t.column(c).type()),
                    std::string(side) + " payload column " + std::to_string(c) +
                      " is floating point; join payloads are 1/2/4/8-byte integers");
  }
}

/// A host column of int64 row ids as int32 (check_index_type made sure they fit).
column narrow_host_row_ids(column const& ids) {
  if (ids.type() == type_id::int32) { return column::copy_of(ids.view()); }
  column out(type_id::int32, ids.size());
  auto const* in = ids.view().data_as<std::int64_t>();
  auto* o = out.data_as<std::int32_t>();
  for (size_type i = 0; i < ids.size(); ++i) { o[i] = static_cast<std::int32_t>(in[i]); }
  return out;
}

/// Host copies of the columns a CPU algorithm reads, when they live on the device.
struct host_inputs {
  std::vector<column> owned;
  table_view view;
};

host_inputs to_host(table_view const& t) {
  host_inputs h;
  bool all_host = std::all_of(t.begin(), t.end(), [](auto const& c) {
    return host_accessible(c.space());
  });
  if (all_host) {
    h.view = t;
    return h;
  }
  std::vector<column_view> views;
  for (auto const& c : t) {
    if (host_accessible(c.space())) {
      views.push_back(c);
    } else {
      h.owned.push_back(column::copy_of(c));
      views.push_back(h.owned.back().view());
    }
  }
  h.view = table_view(std::move(views));
  return h;
}

}  // namespace

std::vector<join_algorithm> join_algorithms_on(backend b) {
  switch (b) {
    case backend::cpu: return detail::cpu::algorithms();
    case backend::gpu:
#ifdef JOINERY_HAS_CUDA
      return detail::gpu::join_algorithms();
#else
      return {};
#endif
    case backend::automatic: break;
  }
  auto v = join_algorithms_on(backend::cpu);
  auto g = join_algorithms_on(backend::gpu);
  v.insert(v.end(), g.begin(), g.end());
  return v;
}

bool join_supported(backend b, join_algorithm a, join_kind, predicate::kind_type p) {
  auto const algos = join_algorithms_on(b);
  if (std::find(algos.begin(), algos.end(), a) == algos.end()) { return false; }
  return p == predicate::kind_type::equal || is_nested_loop_family(a);
}

void check_index_type(type_id index_type, size_type build_rows, size_type probe_rows) {
  JOINERY_EXPECTS(index_type == type_id::int64 || index_type == type_id::int32,
                  "join index_type must be int64 or int32, not " +
                    std::string(to_string(index_type)));
  if (index_type != type_id::int32) { return; }
  constexpr size_type most = std::numeric_limits<std::int32_t>::max();
  for (auto [side, rows] : {std::pair{"build", build_rows}, std::pair{"probe", probe_rows}}) {
    JOINERY_EXPECTS(rows <= most, std::string("an int32 join index numbers at most ") +
                                    std::to_string(most) + " rows per side, but the " + side +
                                    " side has " + std::to_string(rows) +
                                    "; use index_type int64");
  }
}

namespace detail {

std::optional<std::string> size_refusal(backend be, join_algorithm algo, size_type build_rows,
                                        size_type probe_rows) {
  bool const row_ids32 = algo == join_algorithm::radix_hash ||
                         algo == join_algorithm::sort_merge ||
                         algo == join_algorithm::indexed_nested_loop;
  auto const most = std::max(build_rows, probe_rows);
  if (be != backend::gpu || !row_ids32 || most <= gpu_row_id32_max_rows) { return std::nullopt; }
  return "the GPU's " + std::string(to_string(algo)) + " join numbers rows in 32 bits: at most " +
         std::to_string(gpu_row_id32_max_rows) + " rows per side, but a side has " +
         std::to_string(most) + "; no_partition_hash on the GPU, or the cpu backend, runs it";
}

std::size_t in_gpu_join_bytes(std::size_t build_input_bytes, std::size_t probe_input_bytes,
                              size_type probe_rows, std::size_t output_row_bytes) {
  return 3 * (build_input_bytes + probe_input_bytes) +
         static_cast<std::size_t>(probe_rows) * output_row_bytes;
}

bool prefer_streamed(bool band, memory_space probe_space, std::size_t in_gpu_bytes,
                     std::size_t budget, bool aggregate_output, size_type probe_rows) {
  if (band || !host_accessible(probe_space)) { return false; }
  return in_gpu_bytes > budget ||
         (probe_space == memory_space::pinned_host && aggregate_output &&
          probe_rows >= streamed_aggregate_min_rows);
}

bool prefer_triton(std::size_t build_input_bytes, std::size_t build_table_bytes,
                   std::size_t budget) {
  return build_input_bytes + build_table_bytes > budget / 2;
}

join_algorithm automatic_join_algorithm(backend be, std::vector<join_algorithm> const& available,
                                        bool band, size_type build_rows, size_type probe_rows) {
  auto const usable = [&](join_algorithm a) {
    return std::find(available.begin(), available.end(), a) != available.end() &&
           !size_refusal(be, a, build_rows, probe_rows);
  };
  // In order of speed on large inputs; the planner's cost models will refine this.
  auto const order = band ? std::vector{join_algorithm::indexed_nested_loop,
                                        join_algorithm::nested_loop}
                          : std::vector{join_algorithm::radix_hash,
                                        join_algorithm::no_partition_hash,
                                        join_algorithm::sort_merge};
  for (auto a : order) {
    if (usable(a)) { return a; }
  }
  JOINERY_FAIL("no join algorithm of the " + std::string(to_string(be)) +
               " backend can run this join (" + std::to_string(build_rows) + " x " +
               std::to_string(probe_rows) + " rows" + (band ? ", band predicate" : "") +
               "); available there: " + list_names(available));
}

}  // namespace detail

namespace {

/// Bytes of the columns a join reads on one side: the key and the payloads its form needs.
std::size_t input_bytes(table_view const& t, size_type key, std::vector<size_type> const& payloads,
                        join_options const& options) {
  std::size_t bytes = size_of(t.column(key).type());
  if (options.output != output_form::index) {
    for (auto c : payloads) {
      if (c != key) { bytes += size_of(t.column(c).type()); }
    }
  }
  return bytes * static_cast<std::size_t>(t.num_rows());
}

join_result run(table_view const& build, size_type build_key, table_view const& probe,
                size_type probe_key, join_options const& options, join_batch_sink const* sink,
                stream_ref stream, memory_resource_ref mr) {
  scoped_range range("joinery::join");
  auto const t0 = clock_type::now();
  (void)sink;  // only the GPU's streamed and triton joins deliver batch by batch

  check_columns(build, "build", build_key, options.build_payloads);
  check_columns(probe, "probe", probe_key, options.probe_payloads);
  auto const bk_type = build.column(build_key).type();
  auto const pk_type = probe.column(probe_key).type();
  JOINERY_EXPECTS(bk_type == pk_type, "mismatched key types: build key is " +
                                        std::string(to_string(bk_type)) + ", probe key is " +
                                        std::string(to_string(pk_type)) +
                                        "; both keys must have the same type");
  if (options.output == output_form::index) {
    check_index_type(options.index_type, build.num_rows(), probe.num_rows());
  }
  JOINERY_EXPECTS(options.tuning.streamed_chunk_rows >= 0,
                  "join_options::tuning.streamed_chunk_rows must not be negative (0: chosen from "
                  "the device memory budget), got " +
                    std::to_string(options.tuning.streamed_chunk_rows));
  if (!(options.hash_load_factor > 0.0 && options.hash_load_factor < 1.0)) {
    std::ostringstream got;
    got << options.hash_load_factor;
    JOINERY_FAIL("join hash_load_factor must be in (0, 1), got " + got.str());
  }
  auto const id_bytes = options.output == output_form::aggregate ? std::size_t{0}
                        : options.output == output_form::index   ? size_of(options.index_type)
                                                                 : sizeof(std::int64_t);
  bool const band = options.pred.kind == predicate::kind_type::band;
  JOINERY_EXPECTS(!band || options.algorithm == join_algorithm::automatic ||
                    is_nested_loop_family(options.algorithm),
                  "the band predicate needs a nested-loop algorithm (nested_loop or "
                  "indexed_nested_loop), not " + std::string(to_string(options.algorithm)));

  // Backend: the GPU when asked for or when automatic finds a GPU algorithm that fits.
  backend be = options.backend;
  if (be == backend::automatic) {
    bool const gpu_ok = device_count() > 0 &&
                        (options.algorithm == join_algorithm::automatic
                           ? !join_algorithms_on(backend::gpu).empty()
                           : join_supported(backend::gpu, options.algorithm, options.kind,
                                            options.pred.kind));
    be = gpu_ok ? backend::gpu : backend::cpu;
  }
  if (be == backend::gpu) {
    detail::expect_gpu_backend_available();
  }

  join_algorithm algo = options.algorithm;
  if (algo == join_algorithm::automatic) {
    algo = detail::automatic_join_algorithm(be, join_algorithms_on(be), band, build.num_rows(),
                                            probe.num_rows());
    // Only host data is streamed: device-resident inputs never pay for the device query.
    if (be == backend::gpu && host_accessible(probe.column(probe_key).space()) &&
        join_supported(be, join_algorithm::streamed, options.kind, options.pred.kind)) {
      auto const budget = options.device_memory_budget != 0
                            ? options.device_memory_budget
                            : get_device_info(options.device).free_memory / 10 * 9;
      auto const out_row = id_bytes * 2 + (options.output == output_form::table
                                             ? size_of(bk_type) * 3 : std::size_t{0});
      auto const need = detail::in_gpu_join_bytes(
        input_bytes(build, build_key, options.build_payloads, options),
        input_bytes(probe, probe_key, options.probe_payloads, options), probe.num_rows(), out_row);
      if (detail::prefer_streamed(band, probe.column(probe_key).space(), need, budget,
                                  options.output == output_form::aggregate, probe.num_rows())) {
        algo = join_algorithm::streamed;
        // The streamed join's build side and table: two slots of 8-byte keys a row at its load
        // factor, beside the build columns it reads.
        auto const build_in = input_bytes(build, build_key, options.build_payloads, options);
        auto const table = static_cast<std::size_t>(
          static_cast<double>(build.num_rows()) * 8.0 / options.hash_load_factor);
        if (join_supported(be, join_algorithm::triton, options.kind, options.pred.kind) &&
            detail::prefer_triton(build_in, table, budget)) {
          algo = join_algorithm::triton;
        }
      }
    }
  }
  if (!join_supported(be, algo, options.kind, options.pred.kind)) {
    JOINERY_FAIL("join algorithm '" + std::string(to_string(algo)) + "' is not available on the " +
                 std::string(to_string(be)) + " backend in this build; available there: " +
                 list_names(join_algorithms_on(be)));
  }

  if (auto const why = detail::size_refusal(be, algo, build.num_rows(), probe.num_rows())) {
    JOINERY_FAIL(*why);
  }

  if (be == backend::gpu) {
#ifdef JOINERY_HAS_CUDA
    // Host-resident inputs without a resource get host results, whichever backend ran.
    auto* out_mr = mr;
    if (out_mr == nullptr && host_accessible(build.column(build_key).space()) &&
        host_accessible(probe.column(probe_key).space())) {
      out_mr = host_resource();
    }
    auto result =
      algo == join_algorithm::streamed
        ? detail::gpu::streamed_join(build, build_key, probe, probe_key, options, sink, stream,
                                     out_mr)
      : algo == join_algorithm::triton
        ? detail::gpu::triton_join(build, build_key, probe, probe_key, options, sink, stream,
                                   out_mr)
      : is_multi_gpu(algo)
        ? detail::multi_gpu::multi_gpu_join(algo, build, build_key, probe, probe_key, options,
                                            stream, out_mr)
        : detail::gpu::run_join(algo, build, build_key, probe, probe_key, options, stream, out_mr);
    result.stats.algorithm = algo;
    result.stats.backend = be;
    result.stats.bytes_moved =
      static_cast<std::uint64_t>(build.num_rows() + probe.num_rows()) * size_of(bk_type) +
      result.aggregate.count * 2 * id_bytes;
    result.stats.seconds = seconds_since(t0);
    return result;
#endif
  }
  auto const hb = to_host(build);
  auto const hp = to_host(probe);
  auto result = detail::cpu::run_join(algo, hb.view, build_key, hp.view, probe_key, options);
  if (options.output == output_form::index && options.index_type == type_id::int32) {
    result.build_rows = narrow_host_row_ids(result.build_rows);
    result.probe_rows = narrow_host_row_ids(result.probe_rows);
  }
  auto const match_bytes = static_cast<std::uint64_t>(result.aggregate.count) * 2 * id_bytes;
  if (mr != nullptr && mr->space() != memory_space::host) {
    result.build_rows = detail::keys::moved_to(std::move(result.build_rows), mr, stream);
    result.probe_rows = detail::keys::moved_to(std::move(result.probe_rows), mr, stream);
    std::vector<column> cols;
    for (auto& c : result.columns.columns()) {
      cols.push_back(detail::keys::moved_to(std::move(c), mr, stream));
    }
    result.columns = table(std::move(cols));
  }
  result.stats.algorithm = algo;
  result.stats.backend = be;
  auto const key_bytes = size_of(bk_type);
  result.stats.bytes_moved = static_cast<std::uint64_t>(build.num_rows() + probe.num_rows()) *
                               key_bytes + match_bytes;
  result.stats.seconds = seconds_since(t0);
  return result;
}

}  // namespace

join_result join(table_view const& build, size_type build_key, table_view const& probe,
                 size_type probe_key, join_options const& options, stream_ref stream,
                 memory_resource_ref mr) {
  return join(build, std::vector{build_key}, probe, std::vector{probe_key}, options, stream, mr);
}

join_result join(table_view const& build, std::vector<size_type> const& build_keys,
                 table_view const& probe, std::vector<size_type> const& probe_keys,
                 join_options const& options, stream_ref stream, memory_resource_ref mr) {
  detail::throw_if_cancelled();
  if (detail::logical::join_has_logical(build, build_keys, probe, probe_keys, options)) {
    return detail::logical::logical_join(build, build_keys, probe, probe_keys, options, nullptr,
                                         stream, mr);
  }
  if (detail::strings::join_has_strings(build, build_keys, probe, probe_keys, options)) {
    return detail::strings::string_join(build, build_keys, probe, probe_keys, options, nullptr,
                                        stream, mr);
  }
  if (detail::needs_general_path(build, build_keys, probe, probe_keys, options)) {
    return detail::general_join(build, build_keys, probe, probe_keys, options, stream, mr);
  }
  return run(build, build_keys[0], probe, probe_keys[0], options, nullptr, stream, mr);
}

join_result join_batches(table_view const& build, size_type build_key, table_view const& probe,
                         size_type probe_key, join_options const& options,
                         join_batch_sink const& sink, stream_ref stream, memory_resource_ref mr) {
  return join_batches(build, std::vector{build_key}, probe, std::vector{probe_key}, options, sink,
                      stream, mr);
}

join_result join_batches(table_view const& build, std::vector<size_type> const& build_keys,
                         table_view const& probe, std::vector<size_type> const& probe_keys,
                         join_options const& options, join_batch_sink const& sink,
                         stream_ref stream, memory_resource_ref mr) {
  JOINERY_EXPECTS(static_cast<bool>(sink), "join_batches needs a sink");
  detail::throw_if_cancelled();
  if (detail::logical::join_has_logical(build, build_keys, probe, probe_keys, options)) {
    return detail::logical::logical_join(build, build_keys, probe, probe_keys, options, &sink,
                                         stream, mr);
  }
  if (detail::strings::join_has_strings(build, build_keys, probe, probe_keys, options)) {
    return detail::strings::string_join(build, build_keys, probe, probe_keys, options, &sink,
                                        stream, mr);
  }
  bool const general =
    detail::needs_general_path(build, build_keys, probe, probe_keys, options);
  auto result = general ? detail::general_join(build, build_keys, probe, probe_keys, options,
                                               stream, mr)
                        : run(build, build_keys[0], probe, probe_keys[0], options, &sink, stream,
                              mr);
  if (result.form == output_form::aggregate ||
      (!general && (result.stats.algorithm == join_algorithm::streamed ||
                    result.stats.algorithm == join_algorithm::triton))) {
    return result;  // streamed and triton delivered their batches themselves
  }
  join_result totals;
  totals.form = result.form;
  totals.aggregate = result.aggregate;
  totals.stats = result.stats;
  sink(std::move(result));
  return totals;
}

}  // namespace joinery
