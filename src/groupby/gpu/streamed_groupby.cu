// The streamed group-by: host-resident rows cross the link in chunks (chunk_uploader: the next
// chunk's copy overlaps this one's aggregation), only the key and the aggregated columns. Each
// chunk is aggregated on the GPU into partial groups (partial_plan: counts, sums, minima, maxima,
// exact 32-bit halves for the averages of 8-byte integers); the partial groups stay on the
// device, merged there when they outgrow a share of the budget, and a last merge gives the
// groups. Few groups cost one small merge at the end; many groups one large one (and more when
// they do not fit the budget's share).
#include "core/cancel.hpp"
#include "core/upload_worker.hpp"
#include "core/wall_clock.hpp"
#include "groupby/gpu/gpu_groupby.hpp"
#include "groupby/partial_plan.hpp"
#include "primitives/rank_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace joinery::detail::gpu {

namespace {

/// How the streamed group-by sizes its chunks.
struct streamed_groupby_policy {
  /// Chunks stay at or below this many rows (the link sets the pace beyond it).
  size_type max_chunk_rows = size_type{1} << 24;
  /// A budget leaving room for fewer rows than this per chunk is refused.
  size_type min_chunk_rows = size_type{1} << 12;
  /// Share of the free device memory used when no budget is given.
  double free_memory_share = 0.9;
  /// The partial groups may take this share of the budget (a merge needs about five times their
  /// bytes at once); more is refused.
  double groups_share = 1.0 / 6;
  /// Partial groups past this share of the budget are merged (concatenated and grouped again,
  /// about five times their bytes at once); below it they wait for the last merge, which saves
  /// a merge per chunk when every chunk holds millions of groups.
  double merge_share = 0.08;
};

using detail::clock_type;
using detail::seconds_since;

/// Column c of every partial result one after another, on the device (partial results hold no
/// NULLs).
column concatenated(std::vector<std::vector<column>> const& parts, std::size_t c,
                    memory_resource* dev, stream_ref stream) {
  size_type rows = 0;
  for (auto const& p : parts) { rows += p[c].size(); }
  auto const type = parts.front()[c].type();
  column out(type, rows, dev, stream);
  auto const w = size_of(type);
  size_type at = 0;
  for (auto const& p : parts) {
    auto const v = p[c].view();
    if (v.size() > 0) {
      copy_bytes(static_cast<unsigned char*>(out.data()) + static_cast<std::size_t>(at) * w,
                 memory_space::device, v.data(), memory_space::device,
                 static_cast<std::size_t>(v.size()) * w, stream);
    }
    at += v.size();
  }
  return out;
}

}  // namespace

groupby_result streamed_groupby(table_view const& input, size_type key_column,
                                std::vector<aggregation> const& aggregations,
                                groupby_options const& options, stream_ref stream,
                                memory_resource* mr) {
  streamed_groupby_policy const policy;
  auto* const dev = device_resource();
  auto const plan = plan_partial_aggregates(input, key_column, aggregations);
  JOINERY_EXPECTS(options.streamed_chunk_rows >= 0,
                  "groupby_options::streamed_chunk_rows must not be negative (0: chosen from the "
                  "device memory budget), got " + std::to_string(options.streamed_chunk_rows));

  // Bytes a chunk row takes on the device: two upload slots of the carried columns, the halves
  // an average of 8-byte integers needs, the group-by's working memory (about three times its
  // input), and the partial groups it may leave (at most a row each, merged past a chunk's worth).
  std::size_t carried_bytes = 0;
  std::size_t upload_bytes = 0;
  for (auto c : plan.carried) {
    carried_bytes += size_of(input.column(c).type());
    if (input.column(c).space() != memory_space::device) { upload_bytes += size_of(input.column(c).type()); }
  }
  std::size_t partial_row_bytes = size_of(input.column(key_column).type());
  partial_row_bytes += 8 * plan.partial.size();  // counts, sums, extremes: 8 bytes at most
  auto const per_row = 2 * upload_bytes + 16 * plan.halves_of.size() + 3 * carried_bytes +
                       2 * partial_row_bytes;
  auto const budget = options.device_memory_budget != 0
                        ? options.device_memory_budget
                        : static_cast<std::size_t>(
                            static_cast<double>(get_device_info(options.device).free_memory) *
                            policy.free_memory_share);
  auto const rows = input.num_rows();
  auto const chunk_fit = static_cast<size_type>(budget / per_row);
  if (chunk_fit < std::min(policy.min_chunk_rows, std::max<size_type>(rows, 1))) {
    throw out_of_memory("the streamed group-by aggregates chunks of at least " +
                        std::to_string(std::min(policy.min_chunk_rows, std::max<size_type>(rows, 1))) + " rows (" +
                        std::to_string(per_row) + " bytes of device memory a row), more than the "
                        "device memory budget of " + std::to_string(budget) + " bytes allows");
  }
  auto const chunk_rows = std::max<size_type>(
    1, std::min(options.streamed_chunk_rows > 0 ? options.streamed_chunk_rows
                                                : std::min(chunk_fit, policy.max_chunk_rows),
                std::max<size_type>(rows, 1)));
  auto const groups_limit = static_cast<size_type>(
    static_cast<double>(budget) * policy.groups_share / static_cast<double>(partial_row_bytes));
  auto const merge_rows = std::max<size_type>(
    chunk_rows, static_cast<size_type>(static_cast<double>(budget) * policy.merge_share /
                                       static_cast<double>(partial_row_bytes)));

  groupby_result result;
  auto& phases = result.stats.phases;
  groupby_options local;
  local.backend = backend::gpu;
  local.device = options.device;
  local.device_memory_budget = options.device_memory_budget;

  std::vector<std::vector<column>> partials;
  size_type partial_rows = 0;
  size_type merged_rows = 0;
  double aggregate_seconds = 0, merge_seconds = 0;
  auto merge = [&](bool sort_by_key) {
    std::vector<column> cols;
    std::vector<column_view> views;
    for (std::size_t c = 0; c < partials.front().size(); ++c) {
      cols.push_back(concatenated(partials, c, dev, stream));
      views.push_back(cols.back().view());
    }
    partials.clear();
    auto lo = local;
    lo.sort_by_key = sort_by_key;
    auto merged = groupby(table_view(std::move(views)), 0, plan.final_aggs, lo, stream, dev);
    partial_rows = merged.columns.num_rows();
    partials.push_back(merged.columns.release());
  };

  auto const t0 = clock_type::now();
  {
    chunk_uploader uploads(input, plan.carried, chunk_rows, dev, stream);
    auto const chunks = uploads.chunks();
    if (chunks > 0) { uploads.start(0); }
    for (size_type i = 0; i < chunks; ++i) {
      throw_if_cancelled();  // between chunks (joinery/cancel.hpp)
      auto const cols = uploads.take();
      if (i + 1 < chunks) { uploads.start(i + 1); }
      auto const t_chunk = clock_type::now();
      auto const n = uploads.rows_of(i);
      std::vector<column_view> share;
      for (auto c : plan.carried) { share.push_back(cols[static_cast<std::size_t>(c)]); }
      std::vector<column> halves;
      halves.reserve(2 * plan.halves_of.size());
      for (auto at : plan.halves_of) {
        auto const v = share[static_cast<std::size_t>(at)];
        halves.emplace_back(v.type() == type_id::int64 ? type_id::int64 : type_id::uint64, n, dev,
                            stream);
        halves.emplace_back(type_id::uint64, n, dev, stream);
        multi_gpu::split_halves(v, halves[halves.size() - 2], halves.back(), stream);
        share.push_back(halves[halves.size() - 2].view());
        share.push_back(halves.back().view());
      }
      auto partial = groupby(table_view(std::move(share)), 0, plan.partial, local, stream, dev);
      // Nothing of this chunk's slot may still be read when the next upload into it starts.
      stream.synchronize();
      partial_rows += partial.columns.num_rows();
      partials.push_back(partial.columns.release());
      aggregate_seconds += seconds_since(t_chunk);
      // Past the merge size, and past twice what the last merge left (so that many groups do
      // not cost a merge of all of them per chunk); past the groups' limit a merge comes first,
      // and only the groups it leaves are held against the limit.
      if (partials.size() > 1 && (partial_rows > std::max(merge_rows, 2 * merged_rows) ||
                                  partial_rows > groups_limit)) {
        auto const t_merge = clock_type::now();
        merge(false);
        merged_rows = partial_rows;
        stream.synchronize();
        merge_seconds += seconds_since(t_merge);
      }
      if (partial_rows > groups_limit) {
        throw out_of_memory(
          "the streamed group-by keeps its groups on the device: " + std::to_string(partial_rows) +
          " groups so far take " + std::to_string(static_cast<std::size_t>(partial_rows) * partial_row_bytes) +
          " bytes, more than a sixth of the device memory budget of " + std::to_string(budget) +
          " bytes; a larger --device-budget, or the in-GPU or cpu group-by, runs it");
      }
    }
  }
  phases.push_back({"chunks", seconds_since(t0)});
  phases.push_back({"chunks: aggregate", aggregate_seconds});
  phases.push_back({"chunks: merge", merge_seconds});

  auto const t_final = clock_type::now();
  if (partials.empty()) {
    // No rows: the in-GPU group-by of the empty input gives the empty result's columns.
    auto lo = local;
    lo.sort_by_key = options.sort_by_key;
    auto r = groupby(input, key_column, aggregations, lo, stream, mr);
    r.stats.algorithm = groupby_algorithm::streamed;
    return r;
  }
  if (partials.size() > 1 || options.sort_by_key) { merge(options.sort_by_key); }
  auto cols = std::move(partials.front());
  auto const groups = cols.front().size();
  if (mr == nullptr && host_accessible(input.column(key_column).space())) { mr = host_resource(); }
  auto* const out_mr = mr != nullptr ? mr : dev;
  std::vector<column> out;
  out.push_back(column::copy_of(cols.front().view(), out_mr, stream));
  for (auto const& o : plan.outputs) {
    auto const& value = cols[static_cast<std::size_t>(o.value + 1)];
    if (o.kind != aggregation_kind::avg) {
      out.push_back(column::copy_of(value.view(), out_mr, stream));
      continue;
    }
    column avg(type_id::float64, groups, dev, stream);
    auto const& count = cols[static_cast<std::size_t>(o.count + 1)];
    if (o.high < 0) {
      multi_gpu::average_of(value.view(), count.view(), avg, stream);
    } else {
      multi_gpu::average_of_halves(cols[static_cast<std::size_t>(o.high + 1)].view(), value.view(),
                        count.view(), o.is_signed, avg, stream);
    }
    out.push_back(out_mr == dev ? std::move(avg) : column::copy_of(avg.view(), out_mr, stream));
  }
  stream.synchronize();
  phases.push_back({"final aggregation", seconds_since(t_final)});
  result.columns = table(std::move(out));
  result.stats.algorithm = groupby_algorithm::streamed;
  result.stats.backend = backend::gpu;
  return result;
}

}  // namespace joinery::detail::gpu
