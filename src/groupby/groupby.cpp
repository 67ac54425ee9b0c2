// The public group-by: checks the request, resolves backend and algorithm, runs.
#include <joinery/groupby.hpp>

#include "core/backend_check.hpp"
#include "core/cancel.hpp"
#include "groupby/composed_aggregates.hpp"
#include "cpu/cpu_groupby.hpp"
#include "groupby/general_groupby.hpp"
#if defined(JOINERY_HAS_CUDA)
#include "groupby/gpu/gpu_groupby.hpp"
#include "groupby/multi_gpu/multi_gpu_groupby.hpp"
#endif
#include "logical/logical_types.hpp"
#include "strings/string_keys.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>

namespace joinery {

namespace {
using clock_type = std::chrono::steady_clock;

/// Reorders every column of `t` by ascending key (column 0).
table sort_groups(table&& t) {
  auto const n = t.num_rows();
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  dispatch_key_type(t.column(0).type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    auto const* k = t.column(0).view().template data_as<K>();
    std::sort(order.begin(), order.end(), [k](auto a, auto b) { return k[a] < k[b]; });
  });
  std::vector<column> cols;
  for (auto const& c : t.columns()) {
    column out(c.type(), n);
    dispatch_type(c.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto const* s = static_cast<T const*>(c.view().data());
      auto* d = static_cast<T*>(out.data());
      for (size_type i = 0; i < n; ++i) { d[i] = s[order[static_cast<std::size_t>(i)]]; }
    });
    cols.push_back(std::move(out));
  }
  return table(std::move(cols));
}

/// Bytes of the input columns (what every algorithm must read at least once).
std::uint64_t input_bytes(table_view const& input) {
  std::uint64_t bytes = 0;
  for (auto const& c : input) { bytes += static_cast<std::uint64_t>(c.size()) * size_of(c.type()); }
  return bytes;
}

/// The columns a group-by reads: the key and the aggregated ones.
std::vector<size_type> used_columns(size_type key_column, std::vector<aggregation> const& aggs) {
  std::vector<size_type> used{key_column};
  for (auto const& a : aggs) {
    if (a.kind != aggregation_kind::count &&
        std::find(used.begin(), used.end(), a.column) == used.end()) {
      used.push_back(a.column);
    }
  }
  return used;
}

/// Whether automatic streams a host-resident input through the GPU: when the columns it reads,
/// copied whole with the in-GPU group-by's working memory (about twice more), would not fit the
/// device memory budget.
bool prefer_streamed(table_view const& input, size_type key_column,
                     std::vector<aggregation> const& aggs, groupby_options const& options) {
  if (!host_accessible(input.column(key_column).space())) { return false; }
  std::size_t bytes = 0;
  for (auto c : used_columns(key_column, aggs)) {
    bytes += static_cast<std::size_t>(input.num_rows()) * size_of(input.column(c).type());
  }
  auto const budget = options.device_memory_budget != 0
                        ? options.device_memory_budget
                        : get_device_info(options.device).free_memory / 10 * 9;
  return 3 * bytes > budget;
}

/// The GPU backend: inputs in host memory are copied to the device first; results come from `mr`
/// (a device resource), or are copied into a host `mr` at the end. Without `mr` they land where
/// the key column lives (host input, host result, as the join does).
groupby_result run_on_gpu(table_view const& input, size_type key_column,
                          std::vector<aggregation> const& aggregations,
                          groupby_options const& options, groupby_algorithm algo,
                          stream_ref stream, memory_resource_ref mr, clock_type::time_point t0) {
  groupby_result r;
#if defined(JOINERY_HAS_CUDA)
  if (mr == nullptr && host_accessible(input.column(key_column).space())) { mr = host_resource(); }
  auto* dev_mr = (mr != nullptr && mr->space() == memory_space::device) ? mr : device_resource();
  std::vector<column> owned;
  std::vector<column_view> views;
  for (auto const& c : input) {
    if (c.space() == memory_space::device) {
      views.push_back(c);
    } else {
      owned.push_back(column::copy_of(c, dev_mr, stream));
      views.push_back(owned.back().view());
    }
  }
  table_view const device_input(std::move(views));
  std::vector<phase_time> phases;
  if (!owned.empty()) {
    stream.synchronize();
    phases.push_back({"copy to device", std::chrono::duration<double>(clock_type::now() - t0).count()});
  }
  detail::throw_if_cancelled();  // between the copy and the run (joinery/cancel.hpp)
  r.columns = detail::gpu::run_groupby(algo, device_input, key_column, aggregations,
                                       options.sort_by_key, {}, &phases, &algo, stream, dev_mr);
  if (mr != nullptr && mr != dev_mr) {
    std::vector<column> cols;
    for (auto const& c : r.columns.columns()) { cols.push_back(column::copy_of(c.view(), mr, stream)); }
    r.columns = table(std::move(cols));
  }
  stream.synchronize();
  r.stats.phases = std::move(phases);
#else
  (void)input, (void)key_column, (void)aggregations, (void)options, (void)stream, (void)mr;
  JOINERY_FAIL("the GPU backend was requested but joinery was built without CUDA");
#endif
  r.stats.algorithm = algo;
  r.stats.backend = backend::gpu;
  r.stats.bytes_moved = input_bytes(input);
  r.stats.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  return r;
}
}  // namespace

type_id aggregation_result_type(aggregation_kind k, type_id input) {
  if (k == aggregation_kind::count_distinct) { return type_id::int64; }  // of any column
  if (is_logical(input)) { return detail::logical::logical_result_type(k, input); }
  JOINERY_EXPECTS(!is_string(input) || k == aggregation_kind::count ||
                    k == aggregation_kind::count_valid || k == aggregation_kind::min ||
                    k == aggregation_kind::max,
                  std::string(to_string(k)) + " of a string column; strings take count, "
                                               "count_valid, min and max");
  switch (k) {
    case aggregation_kind::count:
    case aggregation_kind::count_valid:
    case aggregation_kind::count_distinct: return type_id::int64;
    case aggregation_kind::sum:
      if (is_floating(input)) { return type_id::float64; }
      return is_signed(input) ? type_id::int64 : type_id::uint64;
    case aggregation_kind::min:
    case aggregation_kind::max: return input;
    case aggregation_kind::avg: return type_id::float64;
  }
  JOINERY_FAIL("unknown aggregation");
}

std::vector<groupby_algorithm> groupby_algorithms_on(backend b) {
  switch (b) {
    case backend::cpu: return {groupby_algorithm::hash, groupby_algorithm::sort};
    case backend::gpu:
#if defined(JOINERY_HAS_CUDA)
    {
      auto v = detail::gpu::groupby_algorithms();
      v.push_back(groupby_algorithm::multi_gpu);
      v.push_back(groupby_algorithm::streamed);
      return v;
    }
#else
      return {};  // built without CUDA
#endif
    case backend::automatic: break;
  }
  return groupby_algorithms_on(backend::cpu);
}

groupby_result groupby(table_view const& input, std::vector<size_type> const& key_columns,
                       std::vector<aggregation> const& aggregations,
                       groupby_options const& options, stream_ref stream,
                       memory_resource_ref mr) {
  detail::throw_if_cancelled();
  if (detail::needs_composed_groupby(input, aggregations, options)) {
    return detail::composed_groupby(input, key_columns, aggregations, options, stream, mr);
  }
  if (detail::logical::groupby_has_logical(input, key_columns, aggregations)) {
    return detail::logical::logical_groupby(input, key_columns, aggregations, options, stream,
                                            mr);
  }
  if (detail::strings::groupby_has_strings(input, key_columns, aggregations)) {
    return detail::strings::string_groupby(input, key_columns, aggregations, options, stream, mr);
  }
  if (detail::needs_general_groupby(input, key_columns, aggregations)) {
    return detail::general_groupby(input, key_columns, aggregations, options, stream, mr);
  }
  return groupby(input, key_columns.front(), aggregations, options, stream, mr);
}

groupby_result groupby(table_view const& input, size_type key_column,
                       std::vector<aggregation> const& aggregations,
                       groupby_options const& options, stream_ref stream,
                       memory_resource_ref mr) {
  scoped_range range("joinery::groupby");
  detail::throw_if_cancelled();
  if (detail::needs_composed_groupby(input, aggregations, options)) {
    return detail::composed_groupby(input, {key_column}, aggregations, options, stream, mr);
  }
  if (detail::logical::groupby_has_logical(input, {key_column}, aggregations)) {
    return detail::logical::logical_groupby(input, {key_column}, aggregations, options, stream,
                                            mr);
  }
  if (detail::strings::groupby_has_strings(input, {key_column}, aggregations)) {
    return detail::strings::string_groupby(input, {key_column}, aggregations, options, stream,
                                           mr);
  }
  if (detail::needs_general_groupby(input, {key_column}, aggregations)) {
    return detail::general_groupby(input, {key_column}, aggregations, options, stream, mr);
  }
  auto const t0 = clock_type::now();
  JOINERY_EXPECTS(key_column >= 0 && key_column < input.num_columns(),
                  "group-by key column " + std::to_string(key_column) +
                    " does not exist (the table has " + std::to_string(input.num_columns()) +
                    " columns)");
  JOINERY_EXPECTS(is_key_type(input.column(key_column).type()),
                  "group-by keys must be int32, int64, uint32 or uint64, not " +
                    std::string(to_string(input.column(key_column).type())));
  for (auto const& a : aggregations) {
    if (a.kind == aggregation_kind::count) { continue; }
    JOINERY_EXPECTS(a.column >= 0 && a.column < input.num_columns(),
                    std::string(to_string(a.kind)) + " over column " + std::to_string(a.column) +
                      ", which does not exist (the table has " +
                      std::to_string(input.num_columns()) + " columns)");
    auto const t = input.column(a.column).type();
    JOINERY_EXPECTS(size_of(t) >= 4, std::string(to_string(a.kind)) + " over a " +
                                       std::string(to_string(t)) +
                                       " column; aggregated values must be 4- or 8-byte");
  }

  backend be = options.backend;
  if (be == backend::automatic) {
    be = (device_count() > 0 && !groupby_algorithms_on(backend::gpu).empty()) ? backend::gpu
                                                                              : backend::cpu;
  }
  if (be == backend::gpu) {
    detail::expect_gpu_backend_available();
  }
  // automatic on the GPU: HGB while the groups fit its on-chip tables, else the sort group-by
  // (run_groupby decides while running); on the CPU: hash.
  auto algo = options.algorithm;
  if (algo == groupby_algorithm::automatic && be == backend::cpu) { algo = groupby_algorithm::hash; }
  auto const available = groupby_algorithms_on(be);
  if (algo != groupby_algorithm::automatic &&
      std::find(available.begin(), available.end(), algo) == available.end()) {
    std::string names;
    for (auto a : available) { names += (names.empty() ? "" : ", ") + std::string(to_string(a)); }
    JOINERY_FAIL("group-by algorithm '" + std::string(to_string(algo)) +
                 "' is not available on the " + std::string(to_string(be)) +
                 " backend in this build; available there: " + (names.empty() ? "none" : names));
  }

  // automatic on the GPU streams host-resident input whose copy would not fit the budget.
  if (be == backend::gpu && algo == groupby_algorithm::automatic &&
      prefer_streamed(input, key_column, aggregations, options)) {
    algo = groupby_algorithm::streamed;
  }
  if (be == backend::gpu && algo == groupby_algorithm::streamed) {
#if defined(JOINERY_HAS_CUDA)
    auto r = detail::gpu::streamed_groupby(input, key_column, aggregations, options, stream, mr);
    r.stats.bytes_moved = input_bytes(input);
    r.stats.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    return r;
#endif
  }
  if (be == backend::gpu && algo == groupby_algorithm::multi_gpu) {
#if defined(JOINERY_HAS_CUDA)
    auto r = detail::multi_gpu::multi_gpu_groupby(input, key_column, aggregations, options, stream, mr);
    r.stats.bytes_moved = input_bytes(input);
    r.stats.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
    return r;
#endif
  }
  if (be == backend::gpu) {
    return run_on_gpu(input, key_column, aggregations, options, algo, stream, mr, t0);
  }

  // The CPU backend: device-resident inputs are brought to the host.
  std::vector<column> owned;
  std::vector<column_view> views;
  for (auto const& c : input) {
    if (host_accessible(c.space())) {
      views.push_back(c);
    } else {
      owned.push_back(column::copy_of(c));
      views.push_back(owned.back().view());
    }
  }
  table_view const host_input(std::move(views));
  auto const t_run = clock_type::now();
  groupby_result r;
  std::vector<phase_time> phases;
  if (algo == groupby_algorithm::sort) {
    // Groups come out of the sort in key order already.
    r.columns = detail::cpu::sort_groupby(host_input, key_column, aggregations, {}, &phases);
  } else {
    r.columns = detail::cpu::hash_groupby(host_input, key_column, aggregations, {}, &phases);
    if (options.sort_by_key) {
      auto const t_sort = clock_type::now();
      r.columns = sort_groups(std::move(r.columns));
      phases.push_back(
        {"sort groups", std::chrono::duration<double>(clock_type::now() - t_sort).count()});
    }
  }
  auto const run_s = std::chrono::duration<double>(clock_type::now() - t_run).count();
  if (mr != nullptr && mr->space() != memory_space::host) {
    std::vector<column> cols;
    for (auto const& c : r.columns.columns()) { cols.push_back(column::copy_of(c.view(), mr, stream)); }
    r.columns = table(std::move(cols));
  }
  r.stats.algorithm = algo;
  r.stats.backend = be;
  r.stats.phases = phases.empty() ? std::vector<phase_time>{{"aggregate", run_s}} : std::move(phases);
  r.stats.bytes_moved = input_bytes(input);
  r.stats.seconds = std::chrono::duration<double>(clock_type::now() - t0).count();
  return r;
}

}  // namespace joinery
