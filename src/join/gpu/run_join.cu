// The GPU join backend's host side: inputs onto the device, the per-row payload sums the checksum
// needs, the algorithm, and the output form (row ids, a gathered table, or the aggregate).
#include "join/gpu/gpu_join.hpp"
#include "join/gpu/join_common.cuh"

#include <joinery/primitives/gather.hpp>

#include <algorithm>
#include <type_traits>

namespace joinery::detail::gpu {

std::vector<join_algorithm> join_algorithms() {
  return {join_algorithm::nested_loop, join_algorithm::indexed_nested_loop,
          join_algorithm::sort_merge, join_algorithm::radix_hash,
          join_algorithm::no_partition_hash};
}

void exclusive_scan_with_total(size_type* data, size_type n, stream_ref stream,
                               memory_resource* mr) {
  auto const s = to_cuda(stream);
  std::size_t temp = 0;
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(nullptr, temp, data, data, n + 1, s));
  buffer scratch(scratch_bytes(temp), mr, stream);
  JOINERY_CUDA_TRY(cub::DeviceScan::ExclusiveSum(scratch.data(), temp, data, data, n + 1, s));
}

void allocate_matches(device_matches& out, size_type rows, bool with_build, std::size_t budget,
                      char const* algorithm, stream_ref stream, memory_resource* mr) {
  JOINERY_EXPECTS(rows >= 0, std::string(algorithm) + ": the match count overflowed");
  auto const bytes = static_cast<std::size_t>(rows) * sizeof(size_type) * (with_build ? 2 : 1);
  auto const need = "the " + std::string(algorithm) + " join result has " + std::to_string(rows) +
                    " rows and needs " + std::to_string(bytes) + " bytes of device memory";
  if (budget != 0 && bytes > budget) {
    throw out_of_memory(need + ", more than the device memory budget of " +
                        std::to_string(budget) + " bytes");
  }
  try {
    if (with_build) { out.build_rows = column(type_id::int64, rows, mr, stream); }
    out.probe_rows = column(type_id::int64, rows, mr, stream);
  } catch (out_of_memory const& e) {
    throw out_of_memory(need + ", which could not be allocated: " + e.what());
  }
}

void shrink_matches(device_matches& out, size_type rows, bool with_build, stream_ref stream,
                    memory_resource* mr) {
  auto shrink = [&](column& c) {
    column exact(type_id::int64, rows, mr, stream);
    if (rows > 0) {
      JOINERY_CUDA_TRY(cudaMemcpyAsync(exact.data(), c.data(),
                                       static_cast<std::size_t>(rows) * sizeof(size_type),
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

/// Device copies of the columns that are not on the device yet.
struct device_inputs {
  std::vector<column> owned;
  std::vector<column_view> cols;
};

device_inputs on_device(table_view const& t, stream_ref stream) {
  device_inputs d;
  for (auto const& c : t) {
    if (c.space() == memory_space::device) {
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

}  // namespace

join_result run_join(join_algorithm algo, table_view const& build, size_type build_key,
                     table_view const& probe, size_type probe_key, join_options const& options,
                     stream_ref stream, memory_resource* mr) {
  auto* const dev = device_resource();
  auto const b = on_device(build, stream);
  auto const p = on_device(probe, stream);
  auto const& bk = b.cols[static_cast<std::size_t>(build_key)];
  auto const& pk = p.cols[static_cast<std::size_t>(probe_key)];
  bool const probe_only =
      options.kind == join_kind::left_semi || options.kind == join_kind::left_anti;

  join_request rq;
  rq.build_keys = bk.data();
  rq.build_rows = bk.size();
  rq.probe_keys = pk.data();
  rq.probe_rows = pk.size();
  rq.key_type = bk.type();
  rq.kind = options.kind;
  rq.pred = options.pred;
  rq.aggregate_only = options.output == output_form::aggregate;
  rq.budget = options.device_memory_budget;
  auto const build_sums = probe_only ? buffer{}
                                     : row_sums_of(b.cols, options.build_payloads, rq.build_rows,
                                                   stream, dev);
  auto const probe_sums = row_sums_of(p.cols, options.probe_payloads, rq.probe_rows, stream, dev);
  rq.build_sums = static_cast<std::uint64_t const*>(build_sums.data());
  rq.probe_sums = static_cast<std::uint64_t const*>(probe_sums.data());

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
      if (!probe_only) { r.build_rows = to_space(std::move(m.build_rows), mr, stream); }
      r.probe_rows = to_space(std::move(m.probe_rows), mr, stream);
      break;
    case output_form::table: {
      // Gathered on the device, then moved where the caller wants the result.
      auto take = [&](column_view const& src, column_view const& rows) {
        return to_space(gather(src, rows, bounds_check::unchecked, stream, dev), mr, stream);
      };
      std::vector<column> cols;
      cols.push_back(take(pk, m.probe_rows));
      if (!probe_only) {
        for (auto c : options.build_payloads) {
          auto const& src = b.cols[static_cast<std::size_t>(c)];
          cols.push_back(options.kind == join_kind::left_outer
                             ? to_space(gather_nullable(src, m.build_rows, stream, dev), mr, stream)
                             : take(src, m.build_rows));
        }
      }
      for (auto c : options.probe_payloads) {
        cols.push_back(take(p.cols[static_cast<std::size_t>(c)], m.probe_rows));
      }
      r.columns = table(std::move(cols));
      break;
    }
    case output_form::aggregate: break;
  }
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  return r;
}

}  // namespace joinery::detail::gpu
