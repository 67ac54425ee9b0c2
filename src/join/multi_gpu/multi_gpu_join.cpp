// The multi-GPU joins (DESIGN.md, "Several GPUs"): every rank takes its rows of
// both sides onto its GPU, sends each row to the rank that owns its key (by
// hash, or by key range for the sort-merge join) and joins what it received
// with the single-GPU algorithm. Every rank runs the same steps (one host
// thread per rank in one process, or one process per rank); the exchange and
// the statistics go through the communicator's collectives (peer copies or
// NCCL). In one process the ranks' results are then gathered into one.
#include "join/multi_gpu/multi_gpu_join.hpp"

#include "core/communicator.hpp"
#include "core/rank_plan.hpp"
#include "primitives/rank_exchange.hpp"
#include "primitives/rank_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace joinery::detail::multi_gpu {

namespace {

/// The input columns a side carries to the ranks: its key first, then the
/// payloads the output form needs; payload_at[i] is where options' i-th payload
/// of the side is carried.
struct carried_columns {
  std::vector<size_type> inputs;
  std::vector<size_type> payload_at;
};

carried_columns carried_of(size_type key, std::vector<size_type> const& payloads,
                           bool with_payloads) {
  carried_columns c;
  c.inputs.push_back(key);
  if (!with_payloads) { return c; }
  for (auto p : payloads) {
    auto const it = std::find(c.inputs.begin(), c.inputs.end(), p);
    c.payload_at.push_back(static_cast<size_type>(it - c.inputs.begin()));
    if (it == c.inputs.end()) { c.inputs.push_back(p); }
  }
  return c;
}

}  // namespace

join_result join_on_rank(join_algorithm algo, communicator const& comm, int rank,
                         rank_rows const& build, size_type build_key, rank_rows const& probe,
                         size_type probe_key, join_options const& options) {
  auto const n = comm.size();
  bool const by_range = algo == join_algorithm::multi_gpu_sort_merge;
  bool const index_form = options.output == output_form::index;
  auto const build_cols = carried_of(build_key, options.build_payloads, !index_form);
  auto const probe_cols = carried_of(probe_key, options.probe_payloads, !index_form);
  auto const dev = comm.device_of(rank);
  auto const s = comm.stream_of(rank);

  std::vector<phase_time> phases;
  phase_timer timer(phases, comm, rank);
  auto phase = [&](char const* name) { timer.end(name); };

  // The rank's rows of both sides onto its GPU.
  rank_side bs;
  rank_side ps;
  take_share(bs, build.part, build_cols.inputs, build.rows, index_form, build.first_id, dev, s);
  take_share(ps, probe.part, probe_cols.inputs, probe.rows, index_form, probe.first_id, dev, s);
  s.synchronize();
  phase("share");

  if (n == 1) {  // one rank: nothing to exchange
    bs.rows = bs.share;
    ps.rows = ps.share;
  } else {
    rank_rule rule;
    rule.ranks = n;
    if (by_range) {
      rule = rule_by_key_range(rank, {bs.share.front(), ps.share.front()}, comm);
      phase("key ranges");
    }
    split_by_rank(bs, rule, s);
    split_by_rank(ps, rule, s);
    phase("partition");
    exchange_sides(rank, {&bs, &ps}, comm);
    phase("exchange");
  }

  // The local join.
  join_options local = options;
  local.algorithm = by_range ? join_algorithm::sort_merge : join_algorithm::radix_hash;
  local.backend = backend::gpu;
  local.devices.clear();
  local.device = dev;
  local.index_type = type_id::int64;
  local.build_payloads = build_cols.payload_at;
  local.probe_payloads = probe_cols.payload_at;
  auto part = join(table_view(bs.rows), 0, table_view(ps.rows), 0, local, s, device_resource());
  if (index_form) {
    // Row ids into what the rank received, mapped to the group's row ids
    // (carried last).
    bool const with_build =
      options.kind == join_kind::inner || options.kind == join_kind::left_outer;
    column probe_ids(options.index_type, part.probe_rows.size(), device_resource(), s);
    remap_row_ids(part.probe_rows.view(), ps.rows.back(), probe_ids.data(), options.index_type, s);
    if (with_build) {
      column build_ids(options.index_type, part.build_rows.size(), device_resource(), s);
      remap_row_ids(part.build_rows.view(), bs.rows.back(), build_ids.data(), options.index_type,
                    s);
      part.build_rows = std::move(build_ids);
    } else {
      part.build_rows = column(options.index_type, 0, device_resource(), s);
    }
    part.probe_rows = std::move(probe_ids);
  }
  bs = rank_side{};
  ps = rank_side{};
  s.synchronize();
  phase("local join");
  part.form = options.output;
  part.stats.phases = std::move(phases);
  part.stats.algorithm = algo;
  part.stats.backend = backend::gpu;
  return part;
}

join_result multi_gpu_join(join_algorithm algo, table_view const& build, size_type build_key,
                           table_view const& probe, size_type probe_key,
                           join_options const& options, stream_ref stream, memory_resource* mr) {
  auto devices = options.devices;
  if (devices.empty()) {
    for (int d = 0; d < device_count(); ++d) { devices.push_back(d); }
  }
  communicator const comm(devices, options.tuning.exchange);
  auto const n = static_cast<std::size_t>(comm.size());
  bool const index_form = options.output == output_form::index;

  join_result result;
  result.form = options.output;
  std::vector<join_result> parts(n);
  comm.for_each_rank([&](int r) {
    auto const b = rank_share(build.num_rows(), comm.size(), r);
    auto const p = rank_share(probe.num_rows(), comm.size(), r);
    parts[static_cast<std::size_t>(r)] = join_on_rank(algo, comm, r, {build, b, b.first}, build_key,
                                                      {probe, p, p.first}, probe_key, options);
  });
  result.stats.phases = parts.front().stats.phases;
  auto const t1 = std::chrono::steady_clock::now();

  // One result from the ranks' pieces, in rank order.
  std::vector<size_type> at(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) {
    at[r + 1] = at[r] + static_cast<size_type>(parts[r].aggregate.count);
    result.aggregate.count += parts[r].aggregate.count;
    result.aggregate.checksum += parts[r].aggregate.checksum;
  }
  auto* out_mr = mr != nullptr ? mr : device_resource();
  if (out_mr->space() == memory_space::device && options.device_memory_budget != 0) {
    // The ranks' pieces meet on one GPU: the whole result must fit its budget there.
    std::size_t row_bytes = 0;
    if (index_form) {
      row_bytes = 2 * size_of(options.index_type);
    } else if (options.output == output_form::table) {
      for (auto const& c : parts.front().columns.columns()) { row_bytes += size_of(c.type()); }
    }
    auto const bytes = row_bytes * static_cast<std::size_t>(at[n]);
    if (bytes > options.device_memory_budget) {
      throw out_of_memory("the multi-GPU join's result of " + std::to_string(at[n]) +
                          " rows needs " + std::to_string(bytes) +
                          " bytes of device memory on one GPU, over the budget of " +
                          std::to_string(options.device_memory_budget) +
                          " bytes; ask for the result in host memory");
    }
  }
  auto gather_all = [&](auto&& piece_of) {
    std::vector<column const*> pieces(n);
    for (std::size_t r = 0; r < n; ++r) { pieces[r] = &piece_of(parts[r]); }
    return gather_pieces(pieces, at, comm, stream, out_mr);
  };
  if (index_form) {
    bool const with_build =
      options.kind == join_kind::inner || options.kind == join_kind::left_outer;
    result.probe_rows = gather_all([](join_result& p) -> column& { return p.probe_rows; });
    result.build_rows = with_build
                          ? gather_all([](join_result& p) -> column& { return p.build_rows; })
                          : column(options.index_type, 0, out_mr, stream);
  } else if (options.output == output_form::table) {
    std::vector<column> cols;
    auto const width = parts.front().columns.num_columns();
    for (size_type c = 0; c < width; ++c) {
      cols.push_back(gather_all([c](join_result& p) -> column& { return p.columns.column(c); }));
    }
    result.columns = table(std::move(cols));
  }
  result.stats.strategy = parts.front().stats.strategy;
  comm.for_each_rank([&](int r) {  // the pieces are freed on their own GPUs
    parts[static_cast<std::size_t>(r)] = join_result{};
    comm.stream_of(r).synchronize();
  });
  result.stats.phases.push_back(
    {"gather output", std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count()});
  return result;
}

}  // namespace joinery::detail::multi_gpu
