// The streamed join (Rui & Tu 2017, section 3.4): the build side's hash table is made on the
// device once; the probe side crosses the link in chunks, chunk i + 1 copied in by a second
// host thread on its own stream while chunk i is joined on the caller's stream and its result
// copied out. Every join kind and output form of the no-partitioning hash join, whose probe
// this is; each chunk's result is delivered as it is made, or gathered into one result.
#include "core/cancel.hpp"
#include "core/upload_worker.hpp"
#include "core/wall_clock.hpp"
#include "join/gpu/gpu_join.hpp"
#include "join/gpu/join_common.cuh"
#include "join/gpu/join_inputs.hpp"

#include <joinery/primitives/gather.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <utility>

namespace joinery::detail::gpu {

namespace {

/// How the streamed join sizes its chunks.
struct streamed_policy {
  /// Chunks stay at or below this many probe rows (large enough that the link, not the per-chunk
  /// launches, sets the pace: 2^24 rows of 8 bytes take about 2.4 ms on PCIe 5).
  size_type max_chunk_rows = size_type{1} << 24;
  /// A budget leaving room for fewer rows than this per chunk is refused.
  size_type min_chunk_rows = size_type{1} << 12;
  /// Share of the free device memory used when no budget is given.
  double free_memory_share = 0.9;
};

using detail::clock_type;
using detail::seconds_since;

template <class Id>
__global__ void offset_ids_kernel(Id* __restrict__ ids, size_type n, size_type offset) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    ids[i] = static_cast<Id>(ids[i] + offset);
  }
}

/// Probe row ids of a chunk counted from the probe side's first row.
void offset_ids(column& ids, size_type offset, stream_ref stream) {
  if (ids.size() == 0 || offset == 0) { return; }
  constexpr int threads = 256;
  auto const blocks = grid_stride_blocks(ids.size(), threads, current_sm_count(), 8);
  if (ids.type() == type_id::int32) {
    offset_ids_kernel<<<blocks, threads, 0, to_cuda(stream)>>>(ids.data_as<std::int32_t>(),
                                                               ids.size(), offset);
  } else {
    offset_ids_kernel<<<blocks, threads, 0, to_cuda(stream)>>>(ids.data_as<std::int64_t>(),
                                                               ids.size(), offset);
  }
  JOINERY_CHECK_LAUNCH();
}


}  // namespace

column concatenate(std::vector<column> const& pieces, type_id type, memory_resource* mr,
                   stream_ref stream) {
  size_type rows = 0;
  bool nullable = false;
  for (auto const& p : pieces) {
    rows += p.size();
    nullable = nullable || p.view().nullable();
  }
  column out(type, rows, mr, stream);
  auto const width = size_of(type);
  size_type at = 0;
  for (auto const& p : pieces) {
    auto const v = p.view();
    if (v.size() > 0) {
      copy_bytes(static_cast<unsigned char*>(out.data()) + static_cast<std::size_t>(at) * width,
                 out.space(), v.data(), v.space(), static_cast<std::size_t>(v.size()) * width,
                 stream);
    }
    at += v.size();
  }
  if (!nullable) { return out; }
  // Masks are small (a bit a row): assembled on the host at any bit offset.
  std::vector<std::uint8_t> mask(null_mask_bytes(rows), 0);
  size_type nulls = 0;
  at = 0;
  for (auto const& p : pieces) {
    auto const v = p.view();
    std::vector<std::uint8_t> bits(null_mask_bytes(v.size()), 0xff);
    if (v.nullable() && !bits.empty()) {
      copy_bytes(bits.data(), memory_space::host, v.null_mask(), v.space(), bits.size(), stream);
    }
    for (size_type i = 0; i < v.size(); ++i) {
      if ((bits[static_cast<std::size_t>(i >> 3)] >> (i & 7)) & 1u) {
        mask[static_cast<std::size_t>((at + i) >> 3)] |= static_cast<std::uint8_t>(1u << ((at + i) & 7));
      } else {
        ++nulls;
      }
    }
    at += v.size();
  }
  auto* dst = out.make_nullable();
  if (!mask.empty()) { copy_bytes(dst, out.space(), mask.data(), memory_space::host, mask.size(), stream); }
  out.set_null_count(nulls);
  return out;
}

void concatenate_batches(std::vector<join_result>& batches, join_options const& options,
                         bool probe_only, std::vector<type_id> const& table_types,
                         join_result& total, memory_resource* mr, stream_ref stream) {
  auto pieces_of = [&](auto&& pick) {
    std::vector<column> pieces;
    for (auto& b : batches) { pieces.push_back(std::move(pick(b))); }
    return pieces;
  };
  if (options.output == output_form::index) {
    auto const ids = options.index_type;
    if (!probe_only) {
      total.build_rows =
        concatenate(pieces_of([](join_result& r) -> column& { return r.build_rows; }), ids, mr, stream);
    }
    total.probe_rows =
      concatenate(pieces_of([](join_result& r) -> column& { return r.probe_rows; }), ids, mr, stream);
    return;
  }
  std::vector<column> cols;
  for (std::size_t k = 0; k < table_types.size(); ++k) {
    std::vector<column> pieces;
    for (auto& b : batches) {
      if (b.columns.num_columns() > 0) { pieces.push_back(std::move(b.columns.columns()[k])); }
    }
    cols.push_back(concatenate(pieces, table_types[k], mr, stream));
  }
  total.columns = joinery::table(std::move(cols));
}

join_result streamed_join(table_view const& build, size_type build_key, table_view const& probe,
                          size_type probe_key, join_options const& options,
                          std::function<void(join_result&&)> const* deliver, stream_ref stream,
                          memory_resource* mr) {
  streamed_policy const policy;
  auto* const dev = device_resource();
  bool const probe_only =
    options.kind == join_kind::left_semi || options.kind == join_kind::left_anti;
  bool const index_form = options.output == output_form::index;
  bool const table_form = options.output == output_form::table;
  bool const aggregate_form = options.output == output_form::aggregate;
  auto const build_payloads =
    probe_only || index_form ? std::vector<size_type>{} : options.build_payloads;
  auto const probe_payloads = index_form ? std::vector<size_type>{} : options.probe_payloads;
  std::vector<size_type> probe_read{probe_key};
  for (auto c : probe_payloads) {
    if (std::find(probe_read.begin(), probe_read.end(), c) == probe_read.end()) {
      probe_read.push_back(c);
    }
  }

  // The device memory plan: the build side (its columns, per-row sums, table), then two chunk
  // slots of the probe columns that must cross, and each chunk's output.
  auto const width_of = [](table_view const& t, size_type c) {
    return static_cast<std::size_t>(size_of(t.column(c).type()));
  };
  auto const key_type = build.column(build_key).type();
  auto const build_rows = build.num_rows();
  auto const probe_rows = probe.num_rows();
  std::size_t build_bytes =
    build_table_bytes(build_rows, key_type, options.hash_load_factor);
  std::vector<size_type> build_read{build_key};
  for (auto c : build_payloads) {
    if (std::find(build_read.begin(), build_read.end(), c) == build_read.end()) {
      build_read.push_back(c);
    }
  }
  for (auto c : build_read) {
    if (build.column(c).space() != memory_space::device) {
      build_bytes += width_of(build, c) * static_cast<std::size_t>(build_rows);
    }
  }
  if (aggregate_form && !build_payloads.empty()) {
    build_bytes += sizeof(std::uint64_t) * static_cast<std::size_t>(build_rows);
  }
  std::size_t slot_row_bytes = 0;
  for (auto c : probe_read) {
    if (probe.column(c).space() != memory_space::device) { slot_row_bytes += width_of(probe, c); }
  }
  std::size_t out_row_bytes = sizeof(std::uint64_t);  // three-phase counts and first matches
  if (aggregate_form && !probe_payloads.empty()) { out_row_bytes += sizeof(std::uint64_t); }
  if (!aggregate_form) {
    auto const id = index_form ? size_of(options.index_type) : sizeof(std::int64_t);
    out_row_bytes += id * (probe_only ? 1 : 2);
  }
  std::size_t table_row_bytes = 0;
  if (table_form) {
    table_row_bytes += size_of(key_type);
    for (auto c : build_payloads) { table_row_bytes += width_of(build, c); }
    for (auto c : probe_payloads) { table_row_bytes += width_of(probe, c); }
  }
  out_row_bytes += table_row_bytes;
  // Bytes a row of the result takes (the whole result's check against the budget).
  std::size_t result_row_bytes =
    index_form ? size_of(options.index_type) * (probe_only ? 1 : 2) : 0;
  if (table_form) { result_row_bytes = table_row_bytes; }
  auto const budget = options.device_memory_budget != 0
                        ? options.device_memory_budget
                        : static_cast<std::size_t>(
                            static_cast<double>(get_device_info(options.device).free_memory) *
                            policy.free_memory_share);
  auto const per_chunk_row = 2 * slot_row_bytes + out_row_bytes;
  auto const fits_rows = build_bytes < budget ? (budget - build_bytes) / per_chunk_row : 0;
  auto const wanted = options.tuning.streamed_chunk_rows;
  if (fits_rows < static_cast<std::size_t>(std::min(wanted > 0 ? wanted : policy.min_chunk_rows,
                                                    std::max<size_type>(probe_rows, 1)))) {
    throw out_of_memory(
      "the streamed join keeps its build side (" + std::to_string(build_rows) + " rows, " +
      std::to_string(build_bytes) + " bytes with its hash table) on the device and needs room "
      "for chunks of the probe side beside it, more than the device memory budget of " +
      std::to_string(budget) + " bytes; a larger --device-budget, or the cpu backend, runs it");
  }
  size_type chunk_rows = wanted > 0 ? wanted
                                    : static_cast<size_type>(std::min<std::size_t>(
                                        fits_rows, static_cast<std::size_t>(policy.max_chunk_rows)));
  chunk_rows = std::max<size_type>(1, std::min(chunk_rows, std::max<size_type>(probe_rows, 1)));

  std::vector<phase_time> phases;
  auto phase = [&](char const* name, clock_type::time_point t0) {
    phases.push_back({name, seconds_since(t0)});
  };

  // Two slots: the upload thread fills one while this thread joins the other.
  chunk_uploader uploads(probe, probe_read, chunk_rows, dev, stream);
  auto const chunks = uploads.chunks();
  join_result total;
  total.form = options.output;
  std::vector<join_result> batches;
  double join_seconds = 0;
  double out_seconds = 0;
  // The first chunk crosses while the build side is copied in and its table made.
  if (chunks > 0) { uploads.start(0); }
  // Build side: onto the device, per-row payload sums (aggregate form), the table.
  auto t_build = clock_type::now();
  auto const b = on_device(build, build_key, build_payloads, stream);
  auto const& bk = b.cols[static_cast<std::size_t>(build_key)];
  join_request rq;
  rq.build_keys = bk.data();
  rq.build_rows = bk.size();
  rq.key_type = key_type;
  rq.kind = options.kind;
  rq.pred = options.pred;
  rq.aggregate_only = aggregate_form;
  rq.row_ids32 = index_form && options.index_type == type_id::int32;
  rq.three_phase = options.writer == output_writer::three_phase;
  rq.load_factor = options.hash_load_factor;
  rq.tuning = options.tuning;
  rq.extra_bytes_per_row = table_row_bytes;  // a chunk's table beside its row ids
  if (options.device_memory_budget != 0) {
    rq.budget = budget - build_bytes - 2 * slot_row_bytes * static_cast<std::size_t>(chunk_rows);
  }
  auto const build_sums =
    aggregate_form ? row_sums_of(b.cols, build_payloads, rq.build_rows, stream, dev) : buffer{};
  rq.build_sums = static_cast<std::uint64_t const*>(build_sums.data());
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  phase("build side in", t_build);
  t_build = clock_type::now();
  auto const table = make_build_table(rq, stream, dev);
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  phase("build table", t_build);

  auto t0 = clock_type::now();
  {
    for (size_type i = 0; i < chunks; ++i) {
      throw_if_cancelled();  // between chunks (joinery/cancel.hpp)
      auto const cols = uploads.take();
      // Chunk i - 1 is complete (this thread synchronized on it): its slot takes chunk i + 1.
      if (i + 1 < chunks) { uploads.start(i + 1); }
      auto const begin = uploads.begin_of(i);
      auto const t_join = clock_type::now();
      auto const& pk = cols[static_cast<std::size_t>(probe_key)];
      join_request crq = rq;
      crq.probe_keys = pk.data();
      crq.probe_rows = pk.size();
      auto const probe_sums =
        aggregate_form ? row_sums_of(cols, probe_payloads, crq.probe_rows, stream, dev) : buffer{};
      crq.probe_sums = static_cast<std::uint64_t const*>(probe_sums.data());
      phase_clock clock(stream);
      auto m = table->probe(crq, clock, stream, dev);
      join_result batch;
      batch.form = options.output;
      batch.aggregate = {m.count, index_form ? 0 : m.checksum};
      if (index_form) {
        offset_ids(m.probe_rows, begin, stream);
        JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
        join_seconds += seconds_since(t_join);
        auto const t_out = clock_type::now();
        if (!probe_only) { batch.build_rows = to_space(std::move(m.build_rows), mr, stream); }
        batch.probe_rows = to_space(std::move(m.probe_rows), mr, stream);
        out_seconds += seconds_since(t_out);
      } else if (table_form) {
        buffer payload_sum(sizeof(unsigned long long), dev, stream);
        JOINERY_CUDA_TRY(cudaMemsetAsync(payload_sum.data(), 0, payload_sum.size(), to_cuda(stream)));
        std::vector<column> out;
        out.push_back(gather(pk, m.probe_rows, bounds_check::unchecked, stream, dev));
        for (auto c : build_payloads) {
          auto const& src = b.cols[static_cast<std::size_t>(c)];
          out.push_back(options.kind == join_kind::left_outer
                          ? gather_nullable(src, m.build_rows, stream, dev)
                          : gather(src, m.build_rows, bounds_check::unchecked, stream, dev));
          add_column_sum(out.back().view(), as<unsigned long long>(payload_sum), stream);
        }
        for (auto c : probe_payloads) {
          out.push_back(gather(cols[static_cast<std::size_t>(c)], m.probe_rows,
                               bounds_check::unchecked, stream, dev));
          add_column_sum(out.back().view(), as<unsigned long long>(payload_sum), stream);
        }
        batch.aggregate.checksum += read_scalar(as<unsigned long long>(payload_sum), stream);
        join_seconds += seconds_since(t_join);
        auto const t_out = clock_type::now();
        for (auto& c : out) { c = to_space(std::move(c), mr, stream); }
        batch.columns = joinery::table(std::move(out));
        out_seconds += seconds_since(t_out);
      } else {
        join_seconds += seconds_since(t_join);
      }
      // Nothing of this chunk's slot may still be read when the next upload into it starts.
      JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
      total.aggregate.count += batch.aggregate.count;
      total.aggregate.checksum += batch.aggregate.checksum;
      if (aggregate_form) { continue; }
      if (deliver != nullptr) {
        auto const t_out = clock_type::now();
        (*deliver)(std::move(batch));
        out_seconds += seconds_since(t_out);
      } else {
        // A whole result on the device counts against the budget (join_batches does not hold it).
        bool const on_device = mr == nullptr || mr->space() == memory_space::device;
        if (on_device && options.device_memory_budget != 0) {
          auto const bytes = total.aggregate.count * result_row_bytes;
          if (build_bytes + bytes > options.device_memory_budget) {
            throw out_of_memory(
              "the streamed join result has at least " + std::to_string(total.aggregate.count) +
              " rows and needs " + std::to_string(bytes) + " bytes of device memory beside its " +
              std::to_string(build_bytes) + " bytes of build side, more than the device memory "
              "budget of " + std::to_string(options.device_memory_budget) +
              " bytes; join_batches delivers it batch by batch, or ask for it in host memory");
          }
        }
        batches.push_back(std::move(batch));
      }
    }
  }
  phase("probe chunks", t0);
  phases.push_back({"probe chunks: join", join_seconds});
  phases.push_back({"probe chunks: result out", out_seconds});

  // One result: the batches' columns concatenated in the result's space.
  if (deliver == nullptr && !aggregate_form) {
    t0 = clock_type::now();
    std::vector<type_id> types{key_type};
    for (auto c : build_payloads) { types.push_back(build.column(c).type()); }
    for (auto c : probe_payloads) { types.push_back(probe.column(c).type()); }
    concatenate_batches(batches, options, probe_only, types, total, mr != nullptr ? mr : dev,
                        stream);
    JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
    phase("result assembly", t0);
  }
  total.stats.phases = std::move(phases);
  total.stats.strategy = table_form ? materialization::gfur : materialization::automatic;
  return total;
}

}  // namespace joinery::detail::gpu
