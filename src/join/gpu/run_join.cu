// The GPU join backend's host side: inputs onto the device, the per-row payload sums the checksum
// needs, the algorithm, and the output form (row ids, a gathered table, or the aggregate).
//
// Table form (DESIGN.md, "Table output: GFUR, GFTR and the model"): GFUR gathers every output
// column from the inputs through the row ids; GFTR (sort_merge, radix_hash) has the join write
// positions into its sorted sides, transforms each payload column with the same stable sort,
// then gathers it in clustered order.
// One payload column is transformed at a time, so GFTR's extra memory is one column.
#include "join/gpu/gpu_join.hpp"
#include "join/gpu/join_inputs.hpp"
#include "join/gpu/join_common.cuh"
#include "join/gpu/materialize.hpp"

#include <joinery/primitives/gather.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

namespace joinery::detail::gpu {

std::vector<join_algorithm> join_algorithms() {
  return {join_algorithm::nested_loop, join_algorithm::indexed_nested_loop,
          join_algorithm::sort_merge, join_algorithm::radix_hash,
          join_algorithm::no_partition_hash, join_algorithm::streamed, join_algorithm::triton,
          join_algorithm::multi_gpu_sort_merge, join_algorithm::multi_gpu_hash};
}

void exclusive_scan_with_total(size_type* data, size_type n, stream_ref stream,
                               memory_resource* mr) {
  auto const s = to_cuda(stream);
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp, data, data, n + 1, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scratch.data(), temp, data, data, n + 1, s));
}

void allocate_matches(device_matches& out, size_type rows, bool with_build,
                      join_request const& rq, char const* algorithm, stream_ref stream,
                      memory_resource* mr, type_id ids) {
  JOINERY_EXPECTS(rows >= 0, std::string(algorithm) + ": the match count overflowed");
  JOINERY_EXPECTS(ids == type_id::int64 || (ids == type_id::int32 && rq.row_ids32),
                  "join row ids are int64, or int32 for an int32 index");
  auto const per_row = size_of(ids) * (with_build ? 2 : 1) + rq.extra_bytes_per_row;
  auto const bytes = static_cast<std::size_t>(rows) * per_row;
  auto const need = "the " + std::string(algorithm) + " join result has " + std::to_string(rows) +
                    " rows and needs " + std::to_string(bytes) + " bytes of device memory" +
                    (rq.extra_bytes_per_row != 0 ? " (row ids and table columns)" : "");
  auto const budget = rq.budget;
  if (budget != 0 && bytes > budget) {
    throw out_of_memory(need + ", more than the device memory budget of " +
                        std::to_string(budget) + " bytes");
  }
  try {
    if (with_build) { out.build_rows = column(ids, rows, mr, stream); }
    out.probe_rows = column(ids, rows, mr, stream);
  } catch (out_of_memory const& e) {
    throw out_of_memory(need + ", which could not be allocated: " + e.what());
  }
}

void shrink_matches(device_matches& out, size_type rows, bool with_build, stream_ref stream,
                    memory_resource* mr) {
  auto shrink = [&](column& c) {
    column exact(c.type(), rows, mr, stream);
    if (rows > 0) {
      JOINERY_CUDA_TRY(cudaMemcpyAsync(exact.data(), c.data(),
                                       static_cast<std::size_t>(rows) * size_of(c.type()),
                                       cudaMemcpyDeviceToDevice, to_cuda(stream)));
    }
    c = std::move(exact);
  };
  if (with_build) { shrink(out.build_rows); }
  shrink(out.probe_rows);
}

namespace {

constexpr int threads = 256;

int blocks_for(size_type n) { return grid_stride_blocks(n, threads, current_sm_count(), 8); }

/// sums[i] += the checksum value of col[i].
template <class T>
__global__ void add_column_kernel(T const* __restrict__ col, size_type n,
                                  std::uint64_t* __restrict__ sums) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if constexpr (std::is_signed_v<T>) {
      sums[i] += static_cast<std::uint64_t>(static_cast<std::int64_t>(col[i]));
    } else {
      sums[i] += static_cast<std::uint64_t>(col[i]);
    }
  }
}

__global__ void narrow_ids_kernel(size_type const* __restrict__ in, size_type n,
                                  std::int32_t* __restrict__ out) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = static_cast<std::int32_t>(in[i]);
  }
}

/// Device int64 row ids as int32 (the sides were checked to hold at most 2^31 - 1 rows); int32
/// ones, written so by the algorithm, are kept.
column narrow_row_ids(column ids, stream_ref stream, memory_resource* mr) {
  if (ids.type() == type_id::int32) { return ids; }
  column out(type_id::int32, ids.size(), mr, stream);
  if (ids.size() > 0) {
    narrow_ids_kernel<<<blocks_for(ids.size()), threads, 0, to_cuda(stream)>>>(
      ids.data_as<size_type>(), ids.size(), out.data_as<std::int32_t>());
    JOINERY_CHECK_LAUNCH();
  }
  return out;
}

/// out[i] = rows[i] < 0 ? null : src[rows[i]], eight rows (one mask byte) per thread.
template <class T>
__global__ void gather_nullable_kernel(T const* __restrict__ src, size_type const* __restrict__ rows,
                                       size_type n, T* __restrict__ out,
                                       std::uint8_t* __restrict__ mask,
                                       unsigned long long* nulls) {
  size_type const bytes = ceil_div(n, 8);
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (size_type b = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; b < bytes;
       b += stride) {
    std::uint8_t bits = 0;
    for (int k = 0; k < 8; ++k) {
      size_type const i = b * 8 + k;
      if (i >= n) { break; }
      size_type const r = rows[i];
      if (r >= 0) {
        out[i] = src[r];
        bits |= static_cast<std::uint8_t>(1u << k);
      } else {
        out[i] = T{};
        ++mine;
      }
    }
    mask[b] = bits;
  }
  if (mine != 0) { atomicAdd(nulls, mine); }
}

/// *sum += the wrapping sum of col's values, sign-extended (nulls hold 0 and add nothing).
template <class T>
__global__ void __launch_bounds__(threads)
    column_sum_kernel(T const* __restrict__ col, size_type n, unsigned long long* sum) {
  using reduce = cub::BlockReduce<unsigned long long, threads>;
  __shared__ typename reduce::TempStorage storage;
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    if constexpr (std::is_signed_v<T>) {
      mine += static_cast<unsigned long long>(static_cast<std::int64_t>(col[i]));
    } else {
      mine += static_cast<unsigned long long>(col[i]);
    }
  }
  auto const total = reduce(storage).Sum(mine);
  if (threadIdx.x == 0 && total != 0) { atomicAdd(sum, total); }
}

bool sorts_both_sides(join_algorithm a) {
  return a == join_algorithm::sort_merge || a == join_algorithm::radix_hash;
}

/// One input side as the table form reads it.
struct table_side {
  std::vector<column_view> const& cols;
  size_type key;
  sorted_side const& sorted;  // GFTR only
};

/// The side's column c in the order the join's output ids index: the input itself (GFUR, or a
/// side kept in input order), the join's sorted keys (the key column under GFTR), or a transform
/// of the column kept alive in `hold`.
column_view column_for_output(table_side const& side, size_type c, bool positions,
                              std::optional<device_bandwidths> const& bw, column& hold,
                              stream_ref stream, memory_resource* mr) {
  auto const& src = side.cols[static_cast<std::size_t>(c)];
  if (!positions || side.sorted.sort_bits == 0 || src.empty()) { return src; }
  if (c == side.key) {
    return column_view(src.type(), side.sorted.keys.data(), src.size(), memory_space::device);
  }
  auto const& key = side.cols[static_cast<std::size_t>(side.key)];
  auto const width = size_of(src.type());
  auto const key_width = size_of(key.type());
  hold = column(src.type(), src.size(), mr, stream);
  // Without measured bandwidths, the sort: its passes are sequential. A side that carried
  // values has no row ids to permute by.
  bool const sort = !bw || side.sorted.carried_bytes != 0 ||
                    sort_transform_cheaper(src.size(), static_cast<int>(key_width),
                                           static_cast<int>(width), side.sorted.sort_bits, *bw);
  if (sort) {
    sort_values_by_keys(key.data(), key_width, src.data(), width, src.size(),
                        side.sorted.sort_bits, hold.data(), stream, mr);
  } else {
    permute_values(src.data(), static_cast<std::uint32_t const*>(side.sorted.order.data()),
                   src.size(), width, hold.data(), stream);
  }
  return hold.view();
}

std::vector<int> widths_of(std::vector<column_view> const& cols,
                           std::vector<size_type> const& which) {
  std::vector<int> v;
  for (auto c : which) {
    v.push_back(static_cast<int>(size_of(cols[static_cast<std::size_t>(c)].type())));
  }
  return v;
}

}  // namespace

void add_column_sum(column_view const& col, unsigned long long* sum, stream_ref stream) {
  if (col.empty()) { return; }
  dispatch_type(col.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      JOINERY_FAIL("floating-point join payloads are not supported");
    } else {
      column_sum_kernel<T><<<blocks_for(col.size()), threads, 0, to_cuda(stream)>>>(
          static_cast<T const*>(col.data()), col.size(), sum);
      JOINERY_CHECK_LAUNCH();
    }
  });
}

device_inputs on_device(table_view const& t, size_type key, std::vector<size_type> const& payloads,
                        stream_ref stream) {
  device_inputs d;
  d.owned.reserve(payloads.size() + 1);  // views point into it
  for (size_type i = 0; i < t.num_columns(); ++i) {
    auto const& c = t.column(i);
    bool const read =
      i == key || std::find(payloads.begin(), payloads.end(), i) != payloads.end();
    if (c.space() == memory_space::device || !read) {
      d.cols.push_back(c);
    } else {
      d.owned.push_back(column::copy_of(c, device_resource(), stream));
      d.cols.push_back(d.owned.back().view());
    }
  }
  return d;
}

/// Per-row sums of `columns` (nullptr when there are none).
buffer row_sums_of(std::vector<column_view> const& cols, std::vector<size_type> const& which,
                   size_type n, stream_ref stream, memory_resource* mr) {
  if (which.empty() || n == 0) { return {}; }
  buffer sums(sizeof(std::uint64_t) * static_cast<std::size_t>(n), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(sums.data(), 0, sums.size(), to_cuda(stream)));
  for (auto c : which) {
    auto const& col = cols[static_cast<std::size_t>(c)];
    dispatch_type(col.type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T>) {
        JOINERY_FAIL("floating-point join payloads are not supported");
      } else {
        add_column_kernel<T><<<blocks_for(n), threads, 0, to_cuda(stream)>>>(
            static_cast<T const*>(col.data()), n, as<std::uint64_t>(sums));
        JOINERY_CHECK_LAUNCH();
      }
    });
  }
  return sums;
}

column gather_nullable(column_view const& src, column_view const& rows, stream_ref stream,
                       memory_resource* mr) {
  auto const n = rows.size();
  column out(src.type(), n, mr, stream);
  if (n == 0) { return out; }
  auto* mask = out.make_nullable();
  buffer nulls(sizeof(unsigned long long), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(nulls.data(), 0, nulls.size(), to_cuda(stream)));
  dispatch_type(src.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gather_nullable_kernel<T><<<blocks_for(ceil_div(n, 8)), threads, 0, to_cuda(stream)>>>(
        static_cast<T const*>(src.data()), static_cast<size_type const*>(rows.data()), n,
        static_cast<T*>(out.data()), mask, as<unsigned long long>(nulls));
    JOINERY_CHECK_LAUNCH();
  });
  out.set_null_count(static_cast<size_type>(read_scalar(as<unsigned long long>(nulls), stream)));
  return out;
}

column to_space(column&& c, memory_resource* mr, stream_ref stream) {
  if (mr == nullptr || mr->space() == c.space()) { return std::move(c); }
  return column::copy_of(c.view(), mr, stream);
}

join_result run_join(join_algorithm algo, table_view const& build, size_type build_key,
                     table_view const& probe, size_type probe_key, join_options const& options,
                     stream_ref stream, memory_resource* mr) {
  if (options.tuning.bandwidths) {
    auto const problem = bandwidths_problem(*options.tuning.bandwidths);
    JOINERY_EXPECTS(problem.empty(), "join_options::tuning.bandwidths: " + problem);
  }
  auto* const dev = device_resource();
  bool const probe_only =
      options.kind == join_kind::left_semi || options.kind == join_kind::left_anti;
  // Row ids depend on the keys alone: the index form neither copies nor reads payloads.
  bool const index_form = options.output == output_form::index;
  auto const build_payloads =
    probe_only || index_form ? std::vector<size_type>{} : options.build_payloads;
  auto const probe_payloads = index_form ? std::vector<size_type>{} : options.probe_payloads;
  auto const b = on_device(build, build_key, build_payloads, stream);
  auto const p = on_device(probe, probe_key, probe_payloads, stream);
  auto const& bk = b.cols[static_cast<std::size_t>(build_key)];
  auto const& pk = p.cols[static_cast<std::size_t>(probe_key)];

  join_request rq;
  rq.build_keys = bk.data();
  rq.build_rows = bk.size();
  rq.probe_keys = pk.data();
  rq.probe_rows = pk.size();
  rq.key_type = bk.type();
  rq.kind = options.kind;
  rq.pred = options.pred;
  rq.aggregate_only = options.output == output_form::aggregate;
  rq.row_ids32 = options.output == output_form::index && options.index_type == type_id::int32;
  rq.three_phase = options.writer == output_writer::three_phase;
  rq.load_factor = options.hash_load_factor;
  rq.tuning = options.tuning;
  rq.budget = options.device_memory_budget;
  // Per-row payload sums only for the aggregate form's checksum. The table form sums its
  // payloads from the output columns (sequential reads) instead of having the join read per-row
  // sums at random: the join's checksum covers the key only there. The index form has none.
  bool const table_form = options.output == output_form::table;
  auto const build_sums =
    rq.aggregate_only ? row_sums_of(b.cols, build_payloads, rq.build_rows, stream, dev) : buffer{};
  auto const probe_sums =
    rq.aggregate_only ? row_sums_of(p.cols, probe_payloads, rq.probe_rows, stream, dev) : buffer{};
  rq.build_sums = static_cast<std::uint64_t const*>(build_sums.data());
  rq.probe_sums = static_cast<std::uint64_t const*>(probe_sums.data());

  // Table form: the columns count against the budget with the ids; the sorting joins choose GFUR
  // or GFTR once their output size is known.
  auto const build_widths = widths_of(b.cols, build_payloads);
  auto const probe_widths = widths_of(p.cols, probe_payloads);
  std::optional<device_bandwidths> bw;
  std::optional<materialize_estimate> estimate;
  std::function<materialize_estimate(size_type)> carry_model;
  if (table_form) {
    rq.extra_bytes_per_row = size_of(rq.key_type);
    for (int w : build_widths) { rq.extra_bytes_per_row += static_cast<std::size_t>(w); }
    for (int w : probe_widths) { rq.extra_bytes_per_row += static_cast<std::size_t>(w); }
    if (sorts_both_sides(algo)) {
      if (options.tuning.bandwidths) {
        bw = options.tuning.bandwidths;
      } else {
        try {
          bw = measured_bandwidths(stream);
        } catch (out_of_memory const&) {
          // No room to measure: an explicit strategy still runs, automatic takes GFUR.
        }
      }
      auto model = [&](size_type rows, int build_bits, int probe_bits, bool carry) {
        materialize_workload w;
        w.build_rows = rq.build_rows;
        w.probe_rows = rq.probe_rows;
        w.output_rows = rows;
        w.key_bytes = static_cast<int>(size_of(rq.key_type));
        w.build_widths = build_widths;
        w.probe_widths = probe_widths;
        w.build_sort_bits = build_bits;
        w.probe_sort_bits = probe_bits;
        w.bundle_payloads = true;
        w.build_nullable = options.kind == join_kind::left_outer;
        w.carry_first_bundle = carry;
        return estimate_materialization(w, *bw);
      };
      rq.positions_for = [&, model](size_type rows, int build_bits, int probe_bits) {
        if (bw) { estimate = model(rows, build_bits, probe_bits, false); }
        auto const chosen = options.strategy != materialization::automatic ? options.strategy
                            : estimate ? estimate->choice
                                       : materialization::gfur;
        return chosen == materialization::gftr;
      };
      // The radix join's inner joins choose before partitioning: GFTR then carries each side's
      // first payload bundle through the partitioning in place of row ids (no transform of its
      // own) and both strategies take the direct output. automatic estimates the output rows
      // from a correlated sample; without an estimate (a hot key sampled) it chooses after the
      // join's count, as the other algorithms do.
      if (algo == join_algorithm::radix_hash && options.kind == join_kind::inner) {
        int const bits = radix_hash_join_bits(rq.build_rows, rq.key_type);
        std::optional<bool> carry;
        if (options.strategy != materialization::automatic) {
          carry = options.strategy == materialization::gftr;
        } else if (!bw) {
          carry = false;
        } else if (model(1, bits, bits, true).choice == materialization::gftr) {
          carry = true;  // nothing fixed to pay (one 4-byte payload a side, or none): no estimate
        } else if (auto const rows = estimate_inner_join_rows(rq, stream, dev)) {
          carry = model(*rows, bits, bits, true).choice == materialization::gftr;
        }
        if (carry) {
          rq.positions_for = nullptr;
          rq.positions_forced = *carry;
          if (bw) {
            carry_model = [model, bits](size_type rows) { return model(rows, bits, bits, true); };
          }
        }
      }
    }
  }
  // The carried bundles: the first of each side, packed unless it is one 4- or 8-byte column.
  buffer build_pack, probe_pack;
  if (rq.positions_forced) {
    auto carry_of = [&](std::vector<column_view> const& cols, std::vector<size_type> const& which,
                        std::vector<int> const& widths, buffer& pack, void const*& values,
                        int& bytes) {
      if (widths.empty()) { return; }
      auto const first = payload_bundles(widths).front();
      auto const n = cols[static_cast<std::size_t>(which.front())].size();
      bytes = first.value_bytes();
      if (first.count == 1 && first.bytes == bytes) {
        values = cols[static_cast<std::size_t>(which.front())].data();
        return;
      }
      std::vector<void const*> in;
      for (int i = 0; i < first.count; ++i) {
        in.push_back(cols[static_cast<std::size_t>(which[static_cast<std::size_t>(i)])].data());
      }
      auto const rows = static_cast<std::size_t>(std::max<size_type>(n, 1));
      pack = buffer(static_cast<std::size_t>(bytes) * rows, dev, stream);
      pack_columns(in, std::vector<int>(widths.begin(), widths.begin() + first.count), n, bytes,
                   pack.data(), stream);
      values = pack.data();
    };
    carry_of(b.cols, build_payloads, build_widths, build_pack, rq.build_carry,
             rq.build_carry_bytes);
    carry_of(p.cols, probe_payloads, probe_widths, probe_pack, rq.probe_carry,
             rq.probe_carry_bytes);
    // Every payload of each side in its carried bundle: the join writes the table itself.
    if (options.kind == join_kind::inner && payload_bundles(build_widths).size() <= 1 &&
        payload_bundles(probe_widths).size() <= 1) {
      rq.fused_output = true;
      for (auto c : build_payloads) {
        rq.build_fused_types.push_back(b.cols[static_cast<std::size_t>(c)].type());
      }
      for (auto c : probe_payloads) {
        rq.probe_fused_types.push_back(p.cols[static_cast<std::size_t>(c)].type());
      }
    }
  }

  device_matches m;
  switch (algo) {
    case join_algorithm::nested_loop: m = nested_loop_join(rq, stream, dev); break;
    case join_algorithm::indexed_nested_loop: m = indexed_nested_loop_join(rq, stream, dev); break;
    case join_algorithm::sort_merge: m = sort_merge_join(rq, stream, dev); break;
    case join_algorithm::radix_hash: m = radix_hash_join(rq, stream, dev); break;
    case join_algorithm::no_partition_hash: m = no_partition_hash_join(rq, stream, dev); break;
    default: JOINERY_FAIL("no GPU implementation of " + std::string(to_string(algo)));
  }

  join_result r;
  r.form = options.output;
  r.aggregate = {m.count, m.checksum};
  r.stats.phases = std::move(m.phases);
  switch (options.output) {
    case output_form::index:
      r.aggregate.checksum = 0;  // the count only: a checksum would read the payloads
      if (rq.row_ids32) {
        if (!probe_only) { m.build_rows = narrow_row_ids(std::move(m.build_rows), stream, dev); }
        m.probe_rows = narrow_row_ids(std::move(m.probe_rows), stream, dev);
      }
      if (!probe_only) { r.build_rows = to_space(std::move(m.build_rows), mr, stream); }
      r.probe_rows = to_space(std::move(m.probe_rows), mr, stream);
      break;
    case output_form::table: {
      // The model's prediction for the actual output size, beside the measurement.
      if (carry_model) { estimate = carry_model(static_cast<size_type>(m.count)); }
      if (estimate) {
        r.stats.predicted_gfur_seconds = estimate->gfur_seconds;
        r.stats.predicted_gftr_seconds = estimate->gftr_seconds;
      }
      if (m.fused) {  // written by the join, payloads already in its checksum
        std::vector<column> cols;
        for (auto& c : m.fused_columns) { cols.push_back(to_space(std::move(c), mr, stream)); }
        r.columns = table(std::move(cols));
        r.stats.strategy = materialization::gftr;
        break;
      }
      // Gathered on the device (GFTR: from each column's transform, one at a time), summed for
      // the checksum, then moved where the caller wants the result.
      phase_clock clock(stream);
      clock.mark(m.positions ? "materialize gftr" : "materialize gfur");
      buffer payload_sum(sizeof(unsigned long long), dev, stream);
      JOINERY_CUDA_TRY(cudaMemsetAsync(payload_sum.data(), 0, payload_sum.size(), to_cuda(stream)));
      table_side const bside{b.cols, build_key, m.build_side};
      table_side const pside{p.cols, probe_key, m.probe_side};
      auto take = [&](table_side const& side, size_type c, column_view const& ids, bool nullable,
                      bool is_payload) {
        column hold;
        auto const src = column_for_output(side, c, m.positions, bw, hold, stream, dev);
        auto out = nullable ? gather_nullable(src, ids, stream, dev)
                            : gather(src, ids, bounds_check::unchecked, stream, dev);
        if (is_payload) { add_column_sum(out.view(), as<unsigned long long>(payload_sum), stream); }
        return to_space(std::move(out), mr, stream);
      };
      std::vector<column> cols;
      // GFTR: a side's consecutive narrow payloads in bundles (materialize_model.hpp): packed,
      // transformed once, gathered in one pass. Nullable output (outer build side) per column.
      auto take_side = [&](table_side const& side, std::vector<size_type> const& payloads,
                           column_view const& ids, bool nullable) {
        auto const widths = widths_of(side.cols, payloads);
        auto const& key = side.cols[static_cast<std::size_t>(side.key)];
        bool const bundled = m.positions && side.sorted.sort_bits > 0 && !nullable && !key.empty();
        bool first = true;
        for (auto const& b : payload_bundles(widths)) {
          if (std::exchange(first, false) && side.sorted.carried_bytes != 0) {
            // Carried through the join's partitioning: already in the positions' order.
            JOINERY_EXPECTS(side.sorted.carried_bytes == b.value_bytes() && !nullable,
                            "the carried bundle does not match the side's first payloads");
            std::vector<int> const bundle_widths(widths.begin() + b.first,
                                                 widths.begin() + b.first + b.count);
            std::vector<column> outs;
            std::vector<void*> out_ptrs;
            for (int i = b.first; i < b.first + b.count; ++i) {
              auto const& col = side.cols[static_cast<std::size_t>(payloads[static_cast<std::size_t>(i)])];
              outs.emplace_back(col.type(), ids.size(), dev, stream);
              out_ptrs.push_back(outs.back().data());
            }
            gather_bundle(side.sorted.order.data(), b.value_bytes(),
                          static_cast<size_type const*>(ids.data()), ids.size(), out_ptrs,
                          bundle_widths, stream);
            for (auto& out : outs) {
              add_column_sum(out.view(), as<unsigned long long>(payload_sum), stream);
              cols.push_back(to_space(std::move(out), mr, stream));
            }
            continue;
          }
          if (!bundled || b.count == 1) {
            for (int i = b.first; i < b.first + b.count; ++i) {
              cols.push_back(take(side, payloads[static_cast<std::size_t>(i)], ids, nullable, true));
            }
            continue;
          }
          auto const n = key.size();
          auto const vw = static_cast<std::size_t>(b.value_bytes());
          std::vector<void const*> in;
          std::vector<int> bw_widths;
          std::vector<column> outs;
          std::vector<void*> out_ptrs;
          for (int i = b.first; i < b.first + b.count; ++i) {
            auto const& col = side.cols[static_cast<std::size_t>(payloads[static_cast<std::size_t>(i)])];
            in.push_back(col.data());
            bw_widths.push_back(widths[static_cast<std::size_t>(i)]);
            outs.emplace_back(col.type(), ids.size(), dev, stream);
            out_ptrs.push_back(outs.back().data());
          }
          buffer packed(vw * static_cast<std::size_t>(n), dev, stream);
          buffer moved(vw * static_cast<std::size_t>(n), dev, stream);
          pack_columns(in, bw_widths, n, b.value_bytes(), packed.data(), stream);
          auto const key_width = size_of(key.type());
          // A side that carried values has no row ids to permute by.
          bool const sort = !bw || side.sorted.carried_bytes != 0 ||
                            sort_transform_cheaper(n, static_cast<int>(key_width),
                                                   b.value_bytes(), side.sorted.sort_bits, *bw);
          if (sort) {
            sort_values_by_keys(key.data(), key_width, packed.data(), vw, n,
                                side.sorted.sort_bits, moved.data(), stream, dev);
          } else {
            permute_values(packed.data(), static_cast<std::uint32_t const*>(side.sorted.order.data()),
                           n, vw, moved.data(), stream);
          }
          gather_bundle(moved.data(), b.value_bytes(), static_cast<size_type const*>(ids.data()),
                        ids.size(), out_ptrs, bw_widths, stream);
          for (auto& out : outs) {
            add_column_sum(out.view(), as<unsigned long long>(payload_sum), stream);
            cols.push_back(to_space(std::move(out), mr, stream));
          }
        }
      };
      cols.push_back(take(pside, probe_key, m.probe_rows, false, false));
      take_side(bside, build_payloads, m.build_rows, options.kind == join_kind::left_outer);
      take_side(pside, probe_payloads, m.probe_rows, false);
      r.columns = table(std::move(cols));
      r.aggregate.checksum += read_scalar(as<unsigned long long>(payload_sum), stream);
      for (auto& ph : clock.finish()) { r.stats.phases.push_back(std::move(ph)); }
      r.stats.strategy = m.positions ? materialization::gftr : materialization::gfur;
      // An empty side ends the join before it asks: nothing is materialized either way, and an
      // explicit strategy is reported as asked.
      if (!m.positions && options.strategy == materialization::gftr && m.count == 0) {
        r.stats.strategy = materialization::gftr;
      }
      break;
    }
    case output_form::aggregate: break;
  }
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return r;
}

}  // namespace joinery::detail::gpu
