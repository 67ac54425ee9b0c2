// Public radix primitives: argument checks, NVTX range, then the GPU dispatch layer
// (partition.cu, partition_stable.cu). Built without CUDA, every entry point refuses.
#include <joinery/primitives/gather.hpp>
#include <joinery/primitives/partition.hpp>

#include "primitives/detail/partition_policy.hpp"

#if defined(JOINERY_HAS_CUDA)
#include "primitives/partition_dispatch.hpp"
#endif

#include <algorithm>
#include <cstdint>
#include "primitives/checks.hpp"

#include <string>

namespace joinery {

std::string_view to_string(partition_algorithm a) noexcept {
  switch (a) {
    case partition_algorithm::stable_cub: return "stable_cub";
    case partition_algorithm::shared_atomic: return "shared_atomic";
    case partition_algorithm::block_scatter: return "block_scatter";
    case partition_algorithm::swwc: return "swwc";
    case partition_algorithm::hierarchical: return "hierarchical";
  }
  return "unknown";
}

partition_algorithm partition_algorithm_from_string(std::string_view name) {
  for (auto a : {partition_algorithm::stable_cub, partition_algorithm::shared_atomic,
                 partition_algorithm::block_scatter, partition_algorithm::swwc,
                 partition_algorithm::hierarchical}) {
    if (to_string(a) == name) { return a; }
  }
  JOINERY_FAIL("unknown partition algorithm '" + std::string(name) +
               "'; known: stable_cub, shared_atomic, block_scatter, swwc, hierarchical");
}

namespace {

using detail::expect_cuda;
using detail::expect_device;
using detail::expect_keys;
using detail::expect_no_nulls;
using detail::result_resource;

void expect_digit(column_view const& keys, int bit_offset, int bits, char const* fn) {
  JOINERY_EXPECTS(bits >= 1 && bits <= max_radix_bits,
                  std::string(fn) + ": bits must lie in [1, " + std::to_string(max_radix_bits) +
                    "], got " + std::to_string(bits) +
                    " (partition by more bits in several passes)");
  int const width = static_cast<int>(8 * size_of(keys.type()));
  JOINERY_EXPECTS(bit_offset >= 0 && bit_offset <= width - bits,
                  std::string(fn) + ": the digit bits [" + std::to_string(bit_offset) + ", " +
                    std::to_string(static_cast<long long>(bit_offset) + bits) +
                    ") do not lie within the " + std::to_string(width) + " bits of the " +
                    std::string(to_string(keys.type())) + " keys");
}

}  // namespace

column prefix_scan(column_view const& counts, stream_ref stream, memory_resource_ref mr) {
  constexpr char const* fn = "prefix_scan";
  expect_cuda(fn);
  JOINERY_EXPECTS(counts.type() == type_id::int64,
                  std::string(fn) + ": counts must be int64, got " +
                    std::string(to_string(counts.type())));
  expect_no_nulls(counts, fn, "counts");
  expect_device(counts, fn, "counts");
  auto* res = result_resource(mr, fn);
  scoped_range range("joinery::prefix_scan");
  column out(type_id::int64, counts.size() + 1, res, stream);
#if defined(JOINERY_HAS_CUDA)
  detail::gpu::prefix_scan(static_cast<std::int64_t const*>(counts.data()), counts.size(),
                           out.data_as<std::int64_t>(), stream, res);
#endif
  return out;
}

column radix_histogram(column_view const& keys, int bit_offset, int bits, stream_ref stream,
                       memory_resource_ref mr) {
  constexpr char const* fn = "radix_histogram";
  expect_cuda(fn);
  expect_keys(keys, fn);
  expect_digit(keys, bit_offset, bits, fn);
  expect_device(keys, fn, "key");
  auto* res = result_resource(mr, fn);
  scoped_range range("joinery::radix_histogram");
  column counts(type_id::int64, size_type{1} << bits, res, stream);
#if defined(JOINERY_HAS_CUDA)
  auto* d_counts = counts.data_as<std::int64_t>();
  if (size_of(keys.type()) == 4) {
    detail::gpu::radix_histogram(static_cast<std::uint32_t const*>(keys.data()), keys.size(),
                                 bit_offset, bits, d_counts, stream, res);
  } else {
    detail::gpu::radix_histogram(static_cast<std::uint64_t const*>(keys.data()), keys.size(),
                                 bit_offset, bits, d_counts, stream, res);
  }
#endif
  return counts;
}

#if defined(JOINERY_HAS_CUDA)
namespace {

/// The single-payload algorithms (partition_dispatch.hpp); swwc and hierarchical take `tuning`.
template <class K, class P>
void run_one_payload(partition_algorithm algorithm, column_view const& keys,
                     column_view const* payload, partitioned_columns& out, int bit_offset,
                     int bits, detail::gpu::swwc_tuning const& tuning, stream_ref stream,
                     memory_resource* res) {
  P const* in = payload ? static_cast<P const*>(payload->data()) : nullptr;
  P* dst = payload ? static_cast<P*>(out.payloads.front().data()) : nullptr;
  auto const* k = static_cast<K const*>(keys.data());
  auto* k_out = static_cast<K*>(out.keys.data());
  auto* offsets = out.offsets.data_as<std::int64_t>();
  switch (algorithm) {
    case partition_algorithm::shared_atomic:
      detail::gpu::shared_atomic_partition<K, P>(k, in, keys.size(), bit_offset, bits, k_out, dst,
                                                 offsets, stream, res);
      return;
    case partition_algorithm::block_scatter:
      detail::gpu::block_scatter_partition<K, P>(k, in, keys.size(), bit_offset, bits, k_out, dst,
                                                 offsets, stream, res);
      return;
    case partition_algorithm::swwc:
      detail::gpu::swwc_partition<K, P>(k, in, keys.size(), bit_offset, bits, k_out, dst, offsets,
                                        stream, res, tuning);
      return;
    case partition_algorithm::hierarchical:
      detail::gpu::hierarchical_partition<K, P>(k, in, keys.size(), bit_offset, bits, k_out, dst,
                                                offsets, stream, res, tuning);
      return;
    case partition_algorithm::stable_cub: return;  // dispatch_partition's own path
  }
}

template <class K>
void dispatch_partition(column_view const& keys, std::vector<column_view> const& payloads,
                        partitioned_columns& out, partition_algorithm algorithm, int bit_offset,
                        int bits, detail::gpu::swwc_tuning const& tuning, stream_ref stream,
                        memory_resource* res) {
  using detail::gpu::no_payload;
  if (algorithm != partition_algorithm::stable_cub) {
    if (payloads.empty()) {
      run_one_payload<K, no_payload>(algorithm, keys, nullptr, out, bit_offset, bits, tuning,
                                     stream, res);
    } else if (size_of(payloads[0].type()) == 4) {
      run_one_payload<K, std::uint32_t>(algorithm, keys, &payloads[0], out, bit_offset, bits,
                                        tuning, stream, res);
    } else {
      run_one_payload<K, std::uint64_t>(algorithm, keys, &payloads[0], out, bit_offset, bits,
                                        tuning, stream, res);
    }
    return;
  }
  std::vector<detail::gpu::payload_io> io;
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    io.push_back({payloads[i].data(), out.payloads[i].data(), size_of(payloads[i].type())});
  }
  detail::gpu::stable_partition<K>(static_cast<K const*>(keys.data()), keys.size(), bit_offset,
                                   bits, static_cast<K*>(out.keys.data()), io,
                                   out.offsets.data_as<std::int64_t>(), stream, res);
}

}  // namespace
#endif

partitioned_columns radix_partition(column_view const& keys,
                                    std::vector<column_view> const& payloads, int bit_offset,
                                    int bits, partition_algorithm algorithm, stream_ref stream,
                                    memory_resource_ref mr) {
  return detail::radix_partition(keys, payloads, bit_offset, bits, algorithm, {}, stream, mr);
}

namespace detail {

namespace gpu {

std::string swwc_tuning_problem(swwc_tuning const& t) {
  auto outside = [](char const* name, std::optional<int> v, int lo, int hi) -> std::string {
    if (!v || (*v >= lo && *v <= hi)) { return {}; }
    return std::string(name) + " is " + std::to_string(*v) + ", outside [" + std::to_string(lo) +
           ", " + std::to_string(hi) + "]";
  };
  if (t.variant && (static_cast<int>(*t.variant) < 0 || static_cast<int>(*t.variant) > 3)) {
    return "variant is " + std::to_string(static_cast<int>(*t.variant)) +
           ", not one of base, wide, long_tile, wide_long";
  }
  for (auto const& problem :
       {outside("log2_buffer", t.log2_buffer, 0, swwc_tuning::max_log2_buffer),
        outside("buffer_tuples", t.buffer_tuples, swwc_tuning::min_buffer_tuples,
                swwc_tuning::max_buffer_tuples),
        outside("log2_chunk", t.log2_chunk, swwc_tuning::min_log2_chunk,
                swwc_tuning::max_log2_chunk),
        outside("log2_ring", t.log2_ring, 0, swwc_tuning::max_log2_ring)}) {
    if (!problem.empty()) { return problem; }
  }
  if (t.buffer_tuples && *t.buffer_tuples % 16 != 0) {
    return "buffer_tuples is " + std::to_string(*t.buffer_tuples) + ", not a multiple of 16";
  }
  return {};
}

}  // namespace gpu

partitioned_columns radix_partition(column_view const& keys,
                                    std::vector<column_view> const& payloads, int bit_offset,
                                    int bits, partition_algorithm algorithm,
                                    gpu::swwc_tuning const& tuning, stream_ref stream,
                                    memory_resource_ref mr) {
  constexpr char const* fn = "radix_partition";
  expect_cuda(fn);
  auto const problem = gpu::swwc_tuning_problem(tuning);
  JOINERY_EXPECTS(problem.empty(), std::string(fn) + ": swwc tuning: " + problem);
  JOINERY_EXPECTS(algorithm == partition_algorithm::stable_cub ||
                    algorithm == partition_algorithm::shared_atomic ||
                    algorithm == partition_algorithm::block_scatter ||
                    algorithm == partition_algorithm::swwc ||
                    algorithm == partition_algorithm::hierarchical,
                  std::string(fn) + ": unknown partition algorithm");
  expect_keys(keys, fn);
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    auto const& p = payloads[i];
    std::string const what = "payload " + std::to_string(i);
    JOINERY_EXPECTS(size_of(p.type()) == 4 || size_of(p.type()) == 8,
                    std::string(fn) + ": the " + what + " column is " +
                      std::string(to_string(p.type())) + "; payloads must be 4- or 8-byte types");
    JOINERY_EXPECTS(p.size() == keys.size(),
                    std::string(fn) + ": the " + what + " column has " + std::to_string(p.size()) +
                      " rows but the keys have " + std::to_string(keys.size()));
    expect_no_nulls(p, fn, what);
  }
  expect_digit(keys, bit_offset, bits, fn);
  JOINERY_EXPECTS(algorithm == partition_algorithm::stable_cub || payloads.size() <= 1,
                  std::string(fn) + ": " + std::string(to_string(algorithm)) +
                    " moves the key and at most one payload column, got " +
                    std::to_string(payloads.size()) +
                    " (stable_cub partitions any number, and its columns line up across calls)");
  expect_device(keys, fn, "key");
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    expect_device(payloads[i], fn, "payload " + std::to_string(i));
  }
  auto* res = result_resource(mr, fn);
  scoped_range range(algorithm == partition_algorithm::stable_cub
                       ? "joinery::radix_partition(stable_cub)"
                     : algorithm == partition_algorithm::shared_atomic
                       ? "joinery::radix_partition(shared_atomic)"
                     : algorithm == partition_algorithm::block_scatter
                       ? "joinery::radix_partition(block_scatter)"
                     : algorithm == partition_algorithm::swwc
                       ? "joinery::radix_partition(swwc)"
                       : "joinery::radix_partition(hierarchical)");
  partitioned_columns out;
  out.bit_offset = bit_offset;
  out.bits = bits;
  out.keys = column(keys.type(), keys.size(), res, stream);
  for (auto const& p : payloads) { out.payloads.emplace_back(p.type(), p.size(), res, stream); }
  out.offsets = column(type_id::int64, out.fanout() + 1, res, stream);
#if defined(JOINERY_HAS_CUDA)
  if (size_of(keys.type()) == 4) {
    dispatch_partition<std::uint32_t>(keys, payloads, out, algorithm, bit_offset, bits, tuning,
                                      stream, res);
  } else {
    dispatch_partition<std::uint64_t>(keys, payloads, out, algorithm, bit_offset, bits, tuning,
                                      stream, res);
  }
#endif
  return out;
}

}  // namespace detail

partitioned_tuples radix_partition_tuples(column_view const& keys, column_view const& payload,
                                          int bit_offset, int bits, stream_ref stream,
                                          memory_resource_ref mr) {
  constexpr char const* fn = "radix_partition_tuples";
  expect_cuda(fn);
  expect_keys(keys, fn);
  JOINERY_EXPECTS(size_of(payload.type()) == size_of(keys.type()),
                  std::string(fn) + ": the payload is " + std::string(to_string(payload.type())) +
                    " and the keys " + std::string(to_string(keys.type())) +
                    "; both must be 4 or both 8 bytes wide (8- or 16-byte tuples)");
  JOINERY_EXPECTS(payload.size() == keys.size(),
                  std::string(fn) + ": the payload column has " + std::to_string(payload.size()) +
                    " rows but the keys have " + std::to_string(keys.size()));
  expect_no_nulls(payload, fn, "payload");
  expect_digit(keys, bit_offset, bits, fn);
  expect_device(keys, fn, "key");
  expect_device(payload, fn, "payload");
  auto* res = result_resource(mr, fn);
  scoped_range range("joinery::radix_partition_tuples");
  partitioned_tuples out;
  out.key_type = keys.type();
  out.payload_type = payload.type();
  out.rows = keys.size();
  out.bit_offset = bit_offset;
  out.bits = bits;
  out.tuples = buffer(static_cast<std::size_t>(keys.size()) * out.tuple_bytes(), res, stream);
  out.offsets = column(type_id::int64, out.fanout() + 1, res, stream);
#if defined(JOINERY_HAS_CUDA)
  if (size_of(keys.type()) == 4) {
    detail::gpu::tuple_partition(static_cast<std::uint32_t const*>(keys.data()),
                                 static_cast<std::uint32_t const*>(payload.data()), keys.size(),
                                 bit_offset, bits, out.tuples.data(),
                                 out.offsets.data_as<std::int64_t>(), stream, res);
  } else {
    detail::gpu::tuple_partition(static_cast<std::uint64_t const*>(keys.data()),
                                 static_cast<std::uint64_t const*>(payload.data()), keys.size(),
                                 bit_offset, bits, out.tuples.data(),
                                 out.offsets.data_as<std::int64_t>(), stream, res);
  }
#endif
  return out;
}

split_columns split(column_view const& partition_ids, int fanout,
                    std::vector<column_view> const& columns, stream_ref stream,
                    memory_resource_ref mr) {
  constexpr char const* fn = "split";
  expect_cuda(fn);
  JOINERY_EXPECTS(partition_ids.type() == type_id::int32 || partition_ids.type() == type_id::uint32,
                  std::string(fn) + ": partition ids must be int32 or uint32, got " +
                    std::string(to_string(partition_ids.type())));
  expect_no_nulls(partition_ids, fn, "partition id");
  JOINERY_EXPECTS(fanout >= 1 && fanout <= (1 << max_radix_bits),
                  std::string(fn) + ": fanout must lie in [1, " +
                    std::to_string(1 << max_radix_bits) + "], got " + std::to_string(fanout));
  for (std::size_t i = 0; i < columns.size(); ++i) {
    auto const& c = columns[i];
    std::string const what = "column " + std::to_string(i);
    auto const w = size_of(c.type());
    JOINERY_EXPECTS(w == 1 || w == 2 || w == 4 || w == 8,
                    std::string(fn) + ": the " + what + " is " + std::string(to_string(c.type())) +
                      "; columns must be 1-, 2-, 4- or 8-byte types");
    JOINERY_EXPECTS(c.size() == partition_ids.size(),
                    std::string(fn) + ": the " + what + " has " + std::to_string(c.size()) +
                      " rows but the partition ids have " + std::to_string(partition_ids.size()));
    expect_no_nulls(c, fn, what);
  }
  expect_device(partition_ids, fn, "partition id");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    expect_device(columns[i], fn, "column " + std::to_string(i));
  }
  auto* res = result_resource(mr, fn);
  scoped_range range("joinery::split");
  split_columns out;
  out.offsets = column(type_id::int64, static_cast<size_type>(fanout) + 1, res, stream);
#if defined(JOINERY_HAS_CUDA)
  size_type const n = partition_ids.size();
  bool const wide = std::all_of(columns.begin(), columns.end(), [](column_view const& c) {
    return size_of(c.type()) == 4 || size_of(c.type()) == 8;
  });
  if (wide) {  // the columns move with the ids in a CUB sort: no gathers
    std::vector<detail::gpu::payload_io> io;
    for (auto const& c : columns) {
      out.columns.emplace_back(c.type(), n, res, stream);
      io.push_back({c.data(), out.columns.back().data(), size_of(c.type())});
    }
    auto const outside = detail::gpu::split_wide_columns(
      static_cast<std::uint32_t const*>(partition_ids.data()), n, fanout, io,
      out.offsets.data_as<std::int64_t>(), stream, res);
    JOINERY_EXPECTS(outside == 0, std::string(fn) + ": " + std::to_string(outside) + " of " +
                                    std::to_string(n) + " partition ids lie outside [0, " +
                                    std::to_string(fanout) + ")");
    return out;
  }
  column rows(type_id::int64, n, res, stream);
  auto const outside = detail::gpu::split_rows(
    static_cast<std::uint32_t const*>(partition_ids.data()), n, fanout,
    rows.data_as<std::int64_t>(), out.offsets.data_as<std::int64_t>(), stream, res);
  JOINERY_EXPECTS(outside == 0, std::string(fn) + ": " + std::to_string(outside) + " of " +
                                  std::to_string(n) + " partition ids lie outside [0, " +
                                  std::to_string(fanout) + ")");
  for (auto const& c : columns) {
    out.columns.push_back(gather(c, rows.view(), bounds_check::unchecked, stream, res));
  }
#endif
  return out;
}

}  // namespace joinery
