// The multi-GPU group-by (DESIGN.md, "Several GPUs"): local pre-aggregation of
// each rank's rows, an exchange of the partial groups by key, and the final
// aggregation on each rank. Every rank runs the same steps (a thread per rank
// in one process, or a process per rank).
#include "groupby/multi_gpu/multi_gpu_groupby.hpp"

#include "groupby/partial_plan.hpp"

#include "core/communicator.hpp"
#include "core/rank_plan.hpp"
#include "primitives/rank_exchange.hpp"
#include "primitives/rank_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace joinery::detail::multi_gpu {

groupby_result groupby_on_rank(communicator const& comm, int rank, table_view const& part,
                               row_range rows, size_type key_column,
                               std::vector<aggregation> const& aggregations,
                               groupby_options const& options) {
  auto const n = comm.size();
  auto const plan = plan_partial_aggregates(part, key_column, aggregations);
  auto const s = comm.stream_of(rank);

  groupby_result result;
  phase_timer timer(result.stats.phases, comm, rank);
  auto phase = [&](char const* name) { timer.end(name); };

  groupby_options local;
  local.backend = backend::gpu;
  local.device_memory_budget = options.device_memory_budget;
  local.device = comm.device_of(rank);

  // The rank's rows, and its partial groups.
  rank_side side;
  {
    rank_side share;
    take_share(share, part, plan.carried, rows, false, 0, comm.device_of(rank), s);
    for (auto at : plan.halves_of) {
      auto const v = share.share[static_cast<std::size_t>(at)];
      auto const hi_type = v.type() == type_id::int64 ? type_id::int64 : type_id::uint64;
      share.owned.emplace_back(hi_type, v.size(), device_resource(), s);
      share.owned.emplace_back(type_id::uint64, v.size(), device_resource(), s);
      split_halves(v, share.owned[share.owned.size() - 2], share.owned.back(), s);
      share.share.push_back(share.owned[share.owned.size() - 2].view());
      share.share.push_back(share.owned.back().view());
    }
    auto partial = groupby(table_view(share.share), 0, plan.partial, local, s, device_resource());
    side.owned = partial.columns.release();
    for (auto const& c : side.owned) { side.share.push_back(c.view()); }
    s.synchronize();
  }
  phase("partial aggregation");

  if (n == 1) {
    side.rows = side.share;
  } else {
    rank_rule rule;
    rule.ranks = n;
    if (options.sort_by_key) { rule = rule_by_key_range(rank, {side.share.front()}, comm); }
    split_by_rank(side, rule, s);
    phase("partition");
    exchange_sides(rank, {&side}, comm);
    phase("exchange");
  }

  // The final aggregation and the requested columns.
  auto lo = local;
  lo.sort_by_key = options.sort_by_key;
  auto merged = groupby(table_view(side.rows), 0, plan.final_aggs, lo, s, device_resource());
  side = rank_side{};
  auto cols = merged.columns.release();
  auto const groups = cols.front().size();
  std::vector<column> out;
  out.push_back(std::move(cols.front()));
  for (auto const& o : plan.outputs) {
    auto const& value = cols[static_cast<std::size_t>(o.value + 1)];
    if (o.kind != aggregation_kind::avg) {
      out.push_back(column::copy_of(value.view(), device_resource(), s));
      continue;
    }
    column avg(type_id::float64, groups, device_resource(), s);
    auto const& count = cols[static_cast<std::size_t>(o.count + 1)];
    if (o.high < 0) {
      average_of(value.view(), count.view(), avg, s);
    } else {
      average_of_halves(cols[static_cast<std::size_t>(o.high + 1)].view(), value.view(),
                        count.view(), o.is_signed, avg, s);
    }
    out.push_back(std::move(avg));
  }
  cols.clear();
  s.synchronize();
  phase("final aggregation");
  result.columns = table(std::move(out));
  result.stats.algorithm = groupby_algorithm::multi_gpu;
  result.stats.backend = backend::gpu;
  return result;
}

groupby_result multi_gpu_groupby(table_view const& input, size_type key_column,
                                 std::vector<aggregation> const& aggregations,
                                 groupby_options const& options, stream_ref stream,
                                 memory_resource* mr) {
  auto devices = options.devices;
  if (devices.empty()) {
    for (int d = 0; d < device_count(); ++d) { devices.push_back(d); }
  }
  communicator const comm(devices, options.exchange);
  auto const n = static_cast<std::size_t>(comm.size());
  std::vector<groupby_result> parts(n);
  comm.for_each_rank([&](int r) {
    parts[static_cast<std::size_t>(r)] =
      groupby_on_rank(comm, r, input, rank_share(input.num_rows(), comm.size(), r), key_column,
                      aggregations, options);
  });
  auto const t1 = std::chrono::steady_clock::now();

  groupby_result result;
  result.stats.phases = parts.front().stats.phases;
  if (mr == nullptr && host_accessible(input.column(key_column).space())) { mr = host_resource(); }
  auto* out_mr = mr != nullptr ? mr : device_resource();
  std::vector<size_type> at(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) { at[r + 1] = at[r] + parts[r].num_groups(); }
  std::vector<column> cols;
  for (size_type c = 0; c < parts.front().columns.num_columns(); ++c) {
    std::vector<column const*> pieces(n);
    for (std::size_t r = 0; r < n; ++r) { pieces[r] = &parts[r].columns.column(c); }
    cols.push_back(gather_pieces(pieces, at, comm, stream, out_mr));
  }
  result.columns = table(std::move(cols));
  comm.for_each_rank([&](int r) {
    parts[static_cast<std::size_t>(r)] = groupby_result{};
    comm.stream_of(r).synchronize();
  });
  result.stats.phases.push_back(
    {"gather output", std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count()});
  result.stats.algorithm = groupby_algorithm::multi_gpu;
  result.stats.backend = backend::gpu;
  return result;
}

}  // namespace joinery::detail::multi_gpu
