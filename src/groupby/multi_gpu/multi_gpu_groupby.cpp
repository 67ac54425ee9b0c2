// The multi-GPU group-by (DESIGN.md, "Several GPUs"): local pre-aggregation of
// each rank's share, an exchange of the partial groups by key, and the final
// aggregation on each rank.
#include "groupby/multi_gpu/multi_gpu_groupby.hpp"

#include "groupby/partial_plan.hpp"

#include "core/communicator.hpp"
#include "core/rank_plan.hpp"
#include "primitives/rank_exchange.hpp"
#include "primitives/rank_kernels.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace joinery::detail::multi_gpu {

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
  auto const plan = plan_partial_aggregates(input, key_column, aggregations);

  groupby_result result;
  phase_timer timer(result.stats.phases);
  auto phase = [&](char const* name) { timer.end(name); };

  groupby_options local;
  local.backend = backend::gpu;
  local.device_memory_budget = options.device_memory_budget;

  // Shares, and each rank's partial groups.
  std::vector<rank_side> side(n);
  comm.for_each_rank([&](int r) {
    auto& rs = side[static_cast<std::size_t>(r)];
    auto const s = comm.stream_of(r);
    rank_side share;
    take_share(share, input, plan.carried, rank_share(input.num_rows(), comm.size(), r), false,
               comm.device_of(r), s);
    for (auto at : plan.halves_of) {
      auto const v = share.share[static_cast<std::size_t>(at)];
      auto const hi_type = v.type() == type_id::int64 ? type_id::int64 : type_id::uint64;
      share.owned.emplace_back(hi_type, v.size(), device_resource(), s);
      share.owned.emplace_back(type_id::uint64, v.size(), device_resource(), s);
      split_halves(v, share.owned[share.owned.size() - 2], share.owned.back(), s);
      share.share.push_back(share.owned[share.owned.size() - 2].view());
      share.share.push_back(share.owned.back().view());
    }
    auto lo = local;
    lo.device = comm.device_of(r);
    auto partial = groupby(table_view(share.share), 0, plan.partial, lo, s, device_resource());
    rs.owned = partial.columns.release();
    for (auto const& c : rs.owned) { rs.share.push_back(c.view()); }
    s.synchronize();
  });
  phase("partial aggregation");

  if (n == 1) {
    side[0].rows = side[0].share;
  } else {
    rank_rule rule;
    rule.ranks = comm.size();
    if (options.sort_by_key) {
      std::vector<std::vector<column_view>> keys(n);
      for (std::size_t r = 0; r < n; ++r) { keys[r] = {side[r].share.front()}; }
      rule = rule_by_key_range(keys, comm);
    }
    comm.for_each_rank(
      [&](int r) { split_by_rank(side[static_cast<std::size_t>(r)], rule, comm.stream_of(r)); });
    phase("partition");
    exchange_sides({&side}, comm);
    phase("exchange");
  }

  // The final aggregation and the requested columns, per rank.
  std::vector<std::vector<column>> pieces(n);
  comm.for_each_rank([&](int r) {
    auto const i = static_cast<std::size_t>(r);
    auto const s = comm.stream_of(r);
    auto lo = local;
    lo.device = comm.device_of(r);
    lo.sort_by_key = options.sort_by_key;
    auto merged = groupby(table_view(side[i].rows), 0, plan.final_aggs, lo, s, device_resource());
    side[i] = rank_side{};
    auto cols = merged.columns.release();
    auto const groups = cols.front().size();
    auto& out = pieces[i];
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
  });
  phase("final aggregation");

  if (mr == nullptr && host_accessible(input.column(key_column).space())) { mr = host_resource(); }
  auto* out_mr = mr != nullptr ? mr : device_resource();
  std::vector<size_type> at(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) { at[r + 1] = at[r] + pieces[r].front().size(); }
  std::vector<column> cols;
  for (std::size_t c = 0; c < pieces.front().size(); ++c) {
    std::vector<column const*> parts(n);
    for (std::size_t r = 0; r < n; ++r) { parts[r] = &pieces[r][c]; }
    cols.push_back(gather_pieces(parts, at, comm, stream, out_mr));
  }
  result.columns = table(std::move(cols));
  comm.for_each_rank([&](int r) {
    pieces[static_cast<std::size_t>(r)].clear();
    comm.stream_of(r).synchronize();
  });
  phase("gather output");
  result.stats.algorithm = groupby_algorithm::multi_gpu;
  result.stats.backend = backend::gpu;
  return result;
}

}  // namespace joinery::detail::multi_gpu
