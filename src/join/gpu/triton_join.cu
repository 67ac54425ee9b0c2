// The Triton join (Lutz et al. 2022) for sides larger than the device memory budget.
//
// Pass one streams each side through the GPU in chunks (uploads on a second thread and stream,
// as the streamed join's) and hash-partitions every chunk there: the top bits of the key's hash
// name its partition, a stable split groups the chunk's keys and carried values by partition in
// device memory, and the grouped chunk goes back to pinned host memory in one copy per column
// (the device-side chunk is the write-combining buffer: the link sees copies of megabytes, not
// the 128-byte writes of the paper's NVLink 2.0 kernels). The first partitions of every chunk,
// a configurable share, stay in a device-memory arena instead (the paper's partition cache).
// Pass two copies the partition pairs back group by group on a copy stream, the next group's
// copy overlapping the in-GPU radix join of the current one (its own second partitioning pass
// and join). A group whose probe side exceeds its share of the budget (skew, a hot probe key) is
// joined in slices against the same build side; a build partition past the group limit (many
// equal build keys) is refused.
//
// Each side carries the input row id of every key (index and table forms: results name input
// rows, a table is gathered from them where the inputs are) or its per-row payload sum
// (aggregate form: the checksum needs nothing else).
#include "core/cancel.hpp"
#include "core/hash.hpp"
#include "core/pinned_cache.hpp"
#include "core/wall_clock.hpp"
#include "join/gpu/gpu_join.hpp"
#include "join/gpu/join_common.cuh"
#include "join/gpu/join_inputs.hpp"
#include "core/upload_worker.hpp"
#include "primitives/row_ops.hpp"

#include <joinery/primitives/checksum.hpp>
#include <joinery/primitives/partition.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <future>
#include <memory>
#include <string>
#include <utility>

namespace joinery::detail::gpu {

namespace {

/// How the Triton join sizes its chunks, partitions and groups.
struct triton_policy {
  /// Pass one's chunks stay at or below this many rows (the link, not per-chunk launches, sets
  /// the pace: 2^24 rows of 8 bytes take about 2.4 ms on PCIe 5).
  size_type max_chunk_rows = size_type{1} << 24;
  /// A budget leaving room for fewer rows than this per chunk is refused.
  size_type min_chunk_rows = size_type{1} << 10;
  int min_partition_bits = 4;
  /// An average partition pair takes at most this share of a group, so that groups balance.
  int partitions_per_group = 8;
  /// Share of the free device memory used when no budget is given.
  double free_memory_share = 0.9;
  /// One group's inputs take this share of the budget left beside the cache: two slots of them
  /// and the radix join's working memory (its partitioned copies and sort scratch, about twice
  /// its inputs) fill the rest when only an aggregate comes back...
  double group_share_aggregate = 0.25;
  /// ... and with row ids or a table coming back, the group's output takes the rest.
  double group_share = 0.125;
  /// Data that does not fit half the budget is cached in this share of it (the rest holds
  /// groups: fewer, larger groups cost fewer joins).
  double cache_share_of_budget = 1.0 / 3;
  /// The radix join numbers a group's rows in 32 bits.
  size_type max_group_rows = size_type{1} << 30;
  /// Bytes of a chunk row in pass one beyond its uploaded columns: the carried value (8), the
  /// partition id (4), the split's output and its sort's scratch (two copies of key + carried).
  std::size_t pass_one_row_overhead = 8 + 4 + 2 * 16;
};

using detail::clock_type;
using detail::seconds_since;

/// A CUDA event for ordering work between streams (no timing).
class stream_event {
 public:
  stream_event() { JOINERY_CUDA_TRY(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~stream_event() { (void)cudaEventDestroy(event_); }
  stream_event(stream_event const&) = delete;
  stream_event& operator=(stream_event const&) = delete;
  void record(stream_ref s) { JOINERY_CUDA_TRY(cudaEventRecord(event_, to_cuda(s))); }
  void wait_on(stream_ref s) const {
    JOINERY_CUDA_TRY(cudaStreamWaitEvent(to_cuda(s), event_, 0));
  }
  void synchronize() const { JOINERY_CUDA_TRY(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_{};
};

template <class U>
__global__ void partition_ids_kernel(U const* __restrict__ keys, size_type n, unsigned shift,
                                     std::uint32_t* __restrict__ ids) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    ids[i] = static_cast<std::uint32_t>(fmix64(static_cast<std::uint64_t>(keys[i])) >> shift);
  }
}

template <class Id>
__global__ void row_ids_kernel(Id* __restrict__ out, size_type n, size_type first) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = static_cast<Id>(first + i);
  }
}

/// ids[i] = the carried input row id of local row ids[i] (-1 stays -1).
template <class Id>
__global__ void to_input_rows_kernel(std::int64_t* __restrict__ ids, size_type n,
                                     Id const* __restrict__ carried) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    auto const r = ids[i];
    ids[i] = r < 0 ? -1 : static_cast<std::int64_t>(carried[r]);
  }
}

__global__ void narrow_ids_kernel(std::int64_t const* __restrict__ in, size_type n,
                                  std::int32_t* __restrict__ out) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = static_cast<std::int32_t>(in[i]);
  }
}

int blocks_for(size_type n) { return grid_stride_blocks(n, 256, current_sm_count(), 8); }

/// One side as pass one reads it.
struct side_input {
  table_view const* table = nullptr;
  char const* name = "";
  size_type key = 0;
  std::vector<size_type> sum_columns;  // aggregate form: the payloads its checksum adds
  std::vector<size_type> read;         // the key, then sum_columns
  type_id key_type = type_id::int32;
  /// What travels beside the key: row ids (uint32 or uint64), row sums (uint64), or nothing.
  enum class carry_type : std::uint8_t { none, row_ids, row_sums } carry = carry_type::row_ids;
  type_id carried_type = type_id::uint32;
  [[nodiscard]] size_type rows() const { return table->num_rows(); }
  [[nodiscard]] std::size_t key_bytes() const { return size_of(key_type); }
  [[nodiscard]] std::size_t carried_bytes() const {
    return carry == carry_type::none ? 0 : size_of(carried_type);
  }
  [[nodiscard]] std::size_t tuple_bytes() const { return key_bytes() + carried_bytes(); }
  [[nodiscard]] std::size_t upload_row_bytes() const {
    std::size_t b = 0;
    for (auto c : read) {
      if (table->column(c).space() != memory_space::device) { b += size_of(table->column(c).type()); }
    }
    return b;
  }
};

/// A side after pass one: chunk-major partitioned copies of the keys and carried values in
/// pinned host memory, the cached partitions of each chunk in a device arena where it had room.
struct partitioned_side {
  side_input const* in = nullptr;
  size_type fanout = 1;
  size_type cached_parts = 0;
  pinned_cache::lease keys, carried;   // pinned host, rows() entries each
  buffer cached_keys, cached_carried;  // device arena
  size_type arena_rows = 0;
  struct chunk {
    size_type begin = 0;              // first row of the chunk in the host copies
    std::vector<size_type> offsets;   // fanout + 1 partition offsets within the chunk
    size_type cached_at = -1;         // its cached partitions' first row in the arena, or -1
  };
  std::vector<chunk> chunks;

  [[nodiscard]] size_type rows_of(size_type p0, size_type p1) const {
    size_type n = 0;
    for (auto const& c : chunks) {
      n += c.offsets[static_cast<std::size_t>(p1)] - c.offsets[static_cast<std::size_t>(p0)];
    }
    return n;
  }
};

/// Rows of one side that one copy moves: keys and carried values from the same place.
struct segment {
  void const* keys = nullptr;
  void const* carried = nullptr;
  size_type rows = 0;
};

/// Where partitions [p0, p1) of a side lie: one or two segments per chunk.
std::vector<segment> segments_of(partitioned_side const& s, size_type p0, size_type p1) {
  std::vector<segment> out;
  auto const kb = s.in->key_bytes();
  auto const cb = s.in->carried_bytes();
  auto add = [&](void const* kbase, void const* cbase, size_type at, size_type rows) {
    if (rows == 0) { return; }
    auto const* k = static_cast<unsigned char const*>(kbase) + static_cast<std::size_t>(at) * kb;
    auto const* c = cb == 0 ? nullptr
                            : static_cast<unsigned char const*>(cbase) +
                                static_cast<std::size_t>(at) * cb;
    out.push_back({k, c, rows});
  };
  for (auto const& c : s.chunks) {
    auto const off = [&](size_type p) { return c.offsets[static_cast<std::size_t>(p)]; };
    // [p0, p1) split at the cached prefix [0, cached_parts).
    auto const cached_end = std::min(p1, s.cached_parts);
    if (p0 < cached_end) {
      if (c.cached_at >= 0) {
        add(s.cached_keys.data(), s.cached_carried.data(), c.cached_at + off(p0),
            off(cached_end) - off(p0));
      } else {
        add(s.keys.data(), s.carried.data(), c.begin + off(p0), off(cached_end) - off(p0));
      }
    }
    auto const host_begin = std::max(p0, s.cached_parts);
    if (host_begin < p1) {
      add(s.keys.data(), s.carried.data(), c.begin + off(host_begin), off(p1) - off(host_begin));
    }
  }
  return out;
}

/// Rows [skip, skip + rows) of a segment list.
std::vector<segment> slice_of(std::vector<segment> const& segs, size_type skip, size_type rows,
                              std::size_t kb, std::size_t cb) {
  std::vector<segment> out;
  for (auto const& s : segs) {
    if (rows == 0) { break; }
    if (skip >= s.rows) {
      skip -= s.rows;
      continue;
    }
    auto const take = std::min(rows, s.rows - skip);
    out.push_back({static_cast<unsigned char const*>(s.keys) + static_cast<std::size_t>(skip) * kb,
                   cb == 0 ? nullptr
                           : static_cast<unsigned char const*>(s.carried) +
                               static_cast<std::size_t>(skip) * cb,
                   take});
    rows -= take;
    skip = 0;
  }
  return out;
}

/// Pass one over one side (see the file comment).
partitioned_side partition_side(side_input const& in, int bits, size_type cached_parts,
                                size_type arena_rows, size_type chunk_rows, stream_ref stream,
                                memory_resource* dev) {
  partitioned_side out;
  out.in = &in;
  out.fanout = size_type{1} << bits;
  out.cached_parts = cached_parts;
  auto const rows = in.rows();
  auto const kb = in.key_bytes();
  auto const cb = in.carried_bytes();
  // Host copies unless every partition stays in an arena that holds them all.
  if (cached_parts < out.fanout || arena_rows < rows) {
    out.keys = pinned_cache::instance().take(static_cast<std::size_t>(rows) * kb, stream);
    out.carried = pinned_cache::instance().take(static_cast<std::size_t>(rows) * cb, stream);
  }
  if (arena_rows > 0) {
    out.cached_keys = buffer(static_cast<std::size_t>(arena_rows) * kb, dev, stream);
    if (cb != 0) { out.cached_carried = buffer(static_cast<std::size_t>(arena_rows) * cb, dev, stream); }
  }
  size_type arena_used = 0;
  chunk_uploader uploads(*in.table, in.read, chunk_rows, dev, stream);
  cuda_stream out_stream;
  // Grouped chunks whose copies out are in flight, kept alive until they complete.
  struct in_flight {
    split_columns grouped;
    buffer carried;
    std::unique_ptr<stream_event> copied;
  };
  std::deque<in_flight> flying;
  struct settle {  // an early exit waits for the copies that still read grouped chunks
    stream_ref out;
    ~settle() { (void)cudaStreamSynchronize(to_cuda(out)); }
  } const settle_all{out_stream.ref()};
  auto const chunks = uploads.chunks();
  if (chunks > 0) { uploads.start(0); }
  auto const shift = static_cast<unsigned>(64 - bits);
  for (size_type i = 0; i < chunks; ++i) {
    throw_if_cancelled();
    auto const cols = uploads.take();
    if (i + 1 < chunks) { uploads.start(i + 1); }
    auto const begin = uploads.begin_of(i);
    auto const n = uploads.rows_of(i);
    auto const& key = cols[static_cast<std::size_t>(in.key)];
    in_flight f;
    column_view carried;
    if (in.carry == side_input::carry_type::row_sums) {
      f.carried = row_sums_of(cols, in.sum_columns, n, stream, dev);
      carried = column_view(type_id::uint64, f.carried.data(), n, memory_space::device);
    } else if (in.carry == side_input::carry_type::row_ids) {
      f.carried = buffer(static_cast<std::size_t>(n) * cb, dev, stream);
      if (in.carried_type == type_id::uint32) {
        row_ids_kernel<<<blocks_for(n), 256, 0, to_cuda(stream)>>>(as<std::uint32_t>(f.carried), n, begin);
      } else {
        row_ids_kernel<<<blocks_for(n), 256, 0, to_cuda(stream)>>>(as<std::uint64_t>(f.carried), n, begin);
      }
      JOINERY_CHECK_LAUNCH();
      carried = column_view(in.carried_type, f.carried.data(), n, memory_space::device);
    }
    column ids(type_id::uint32, n, dev, stream);
    dispatch_key_width(in.key_type, [&](auto u) {
      using U = decltype(u);
      partition_ids_kernel<<<blocks_for(n), 256, 0, to_cuda(stream)>>>(
        static_cast<U const*>(key.data()), n, shift, ids.data_as<std::uint32_t>());
    });
    JOINERY_CHECK_LAUNCH();
    std::vector<column_view> moved{key};
    if (cb != 0) { moved.push_back(carried); }
    f.grouped = split(ids.view(), static_cast<int>(out.fanout), moved, stream, dev);
    partitioned_side::chunk ch;
    ch.begin = begin;
    ch.offsets.resize(static_cast<std::size_t>(out.fanout + 1));
    // Synchronizes `stream`: the slot this chunk was read from is free once this returns.
    copy_bytes(ch.offsets.data(), memory_space::host, f.grouped.offsets.data(),
               memory_space::device, ch.offsets.size() * sizeof(size_type), stream);
    // Out on the other stream: the cached prefix to the arena where it fits, the rest to the host.
    auto const cached_rows = ch.offsets[static_cast<std::size_t>(cached_parts)];
    size_type host_from = 0;
    if (cached_rows > 0 && arena_used + cached_rows <= arena_rows) {
      ch.cached_at = arena_used;
      host_from = cached_rows;
      arena_used += cached_rows;
    }
    auto copy_out = [&](column const& src, std::size_t w, pinned_cache::lease& host, buffer& arena) {
      auto const* s = static_cast<unsigned char const*>(src.view().data());
      if (ch.cached_at >= 0) {
        JOINERY_CUDA_TRY(cudaMemcpyAsync(static_cast<unsigned char*>(arena.data()) + static_cast<std::size_t>(ch.cached_at) * w,
                                         s, static_cast<std::size_t>(cached_rows) * w,
                                         cudaMemcpyDeviceToDevice, to_cuda(out_stream.ref())));
      }
      if (host_from < n) {
        JOINERY_CUDA_TRY(cudaMemcpyAsync(static_cast<unsigned char*>(host.data()) + static_cast<std::size_t>(begin + host_from) * w,
                                         s + static_cast<std::size_t>(host_from) * w,
                                         static_cast<std::size_t>(n - host_from) * w,
                                         cudaMemcpyDeviceToHost, to_cuda(out_stream.ref())));
      }
    };
    // Kept alive before its copies start: an exception from here on leaves it to the settle.
    flying.push_back(std::move(f));
    auto& fl = flying.back();
    copy_out(fl.grouped.columns[0], kb, out.keys, out.cached_keys);
    if (cb != 0) { copy_out(fl.grouped.columns[1], cb, out.carried, out.cached_carried); }
    fl.copied = std::make_unique<stream_event>();
    fl.copied->record(out_stream.ref());
    out.chunks.push_back(std::move(ch));
    while (flying.size() > 2) {
      flying.front().copied->synchronize();
      flying.pop_front();
    }
  }
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(out_stream.ref())));
  out.arena_rows = arena_used;
  return out;
}

/// One join of pass two: build partitions [p0, p1) and a slice of their probe rows.
struct pair_task {
  std::vector<segment> build, probe;
  size_type build_rows = 0, probe_rows = 0;
};

/// Device buffers one task's sides are copied into.
struct pair_slot {
  buffer build_keys, build_carried, probe_keys, probe_carried;
  stream_event loaded, free;
};

void load_segments(std::vector<segment> const& segs, void* keys, void* carried, std::size_t kb,
                   std::size_t cb, stream_ref s) {
  std::size_t at = 0;
  for (auto const& g : segs) {
    JOINERY_CUDA_TRY(cudaMemcpyAsync(static_cast<unsigned char*>(keys) + at * kb, g.keys,
                                     static_cast<std::size_t>(g.rows) * kb, cudaMemcpyDefault,
                                     to_cuda(s)));
    if (cb != 0) {
      JOINERY_CUDA_TRY(cudaMemcpyAsync(static_cast<unsigned char*>(carried) + at * cb, g.carried,
                                       static_cast<std::size_t>(g.rows) * cb, cudaMemcpyDefault,
                                       to_cuda(s)));
    }
    at += static_cast<std::size_t>(g.rows);
  }
}

/// Local row ids of a join (int64, in place) made input row ids through the carried ones.
void to_input_rows(column& ids, buffer const& carried, type_id carried_type, stream_ref stream) {
  auto const n = ids.size();
  if (n == 0) { return; }
  if (carried_type == type_id::uint32) {
    to_input_rows_kernel<<<blocks_for(n), 256, 0, to_cuda(stream)>>>(
      ids.data_as<std::int64_t>(), n, static_cast<std::uint32_t const*>(carried.data()));
  } else {
    to_input_rows_kernel<<<blocks_for(n), 256, 0, to_cuda(stream)>>>(
      ids.data_as<std::int64_t>(), n, static_cast<std::uint64_t const*>(carried.data()));
  }
  JOINERY_CHECK_LAUNCH();
}

column narrowed(column&& ids, stream_ref stream, memory_resource* dev) {
  column out(type_id::int32, ids.size(), dev, stream);
  if (ids.size() > 0) {
    narrow_ids_kernel<<<blocks_for(ids.size()), 256, 0, to_cuda(stream)>>>(
      ids.data_as<std::int64_t>(), ids.size(), out.data_as<std::int32_t>());
    JOINERY_CHECK_LAUNCH();
  }
  return out;
}

int bits_for(size_type fanout) {
  int b = 0;
  while ((size_type{1} << b) < fanout) { ++b; }
  return b;
}

}  // namespace

join_result triton_join(table_view const& build, size_type build_key, table_view const& probe,
                        size_type probe_key, join_options const& options,
                        std::function<void(join_result&&)> const* deliver, stream_ref stream,
                        memory_resource* mr) {
  triton_policy const policy;
  auto* const dev = device_resource();
  auto const kind = options.kind;
  bool const probe_only = kind == join_kind::left_semi || kind == join_kind::left_anti;
  bool const index_form = options.output == output_form::index;
  bool const aggregate_form = options.output == output_form::aggregate;
  auto const build_payloads =
    probe_only || index_form ? std::vector<size_type>{} : options.build_payloads;
  auto const probe_payloads = index_form ? std::vector<size_type>{} : options.probe_payloads;
  auto const& tuning = options.tuning;
  JOINERY_EXPECTS(tuning.triton_chunk_rows >= 0,
                  "join_options::tuning.triton_chunk_rows must not be negative, got " +
                    std::to_string(tuning.triton_chunk_rows));
  JOINERY_EXPECTS(tuning.triton_partition_bits >= 0 &&
                    tuning.triton_partition_bits <= max_radix_bits,
                  "join_options::tuning.triton_partition_bits must be in [0, " +
                    std::to_string(max_radix_bits) + "] (0: chosen), got " +
                    std::to_string(tuning.triton_partition_bits));
  JOINERY_EXPECTS(!tuning.triton_cached_share || (*tuning.triton_cached_share >= 0.0 &&
                                                  *tuning.triton_cached_share <= 1.0),
                  "join_options::tuning.triton_cached_share must be in [0, 1]");

  auto const key_type = build.column(build_key).type();
  auto describe = [&](table_view const& t, char const* name, size_type key,
                      std::vector<size_type> const& payloads, bool row_ids_used) {
    side_input s;
    s.table = &t;
    s.name = name;
    s.key = key;
    s.key_type = key_type;
    s.read = {key};
    if (aggregate_form) {
      s.sum_columns = payloads;
      for (auto c : payloads) {
        if (std::find(s.read.begin(), s.read.end(), c) == s.read.end()) { s.read.push_back(c); }
      }
      s.carry = payloads.empty() ? side_input::carry_type::none : side_input::carry_type::row_sums;
      s.carried_type = type_id::uint64;
    } else {
      s.carry = row_ids_used ? side_input::carry_type::row_ids : side_input::carry_type::none;
      s.carried_type = t.num_rows() <= size_type{1} << 32 ? type_id::uint32 : type_id::uint64;
    }
    return s;
  };
  // Semi and anti joins return probe rows only: the build side carries nothing but its keys.
  auto const bs = describe(build, "build", build_key, build_payloads, !probe_only);
  auto const ps = describe(probe, "probe", probe_key, probe_payloads, true);

  // The plan: chunk size, partition bits, the cache, the group limit (DESIGN.md 6g).
  auto const budget = options.device_memory_budget != 0
                        ? options.device_memory_budget
                        : static_cast<std::size_t>(
                            static_cast<double>(get_device_info(options.device).free_memory) *
                            policy.free_memory_share);
  auto const pass_one_row = 2 * std::max(bs.upload_row_bytes(), ps.upload_row_bytes()) +
                            policy.pass_one_row_overhead;
  auto const chunk_fit = static_cast<size_type>(budget / 4 / pass_one_row);
  auto const most_rows = std::max<size_type>(std::max(build.num_rows(), probe.num_rows()), 1);
  if (chunk_fit < std::min(policy.min_chunk_rows, most_rows)) {
    throw out_of_memory("the triton join partitions its inputs in chunks of at least " +
                        std::to_string(std::min(policy.min_chunk_rows, most_rows)) +
                        " rows, more than the device memory budget of " + std::to_string(budget) +
                        " bytes leaves room for; a larger --device-budget runs it");
  }
  auto const chunk_rows = std::min(tuning.triton_chunk_rows > 0
                                     ? tuning.triton_chunk_rows
                                     : std::min(chunk_fit, policy.max_chunk_rows),
                                   most_rows);
  auto const partitioned_bytes =
    static_cast<double>(build.num_rows()) * static_cast<double>(bs.tuple_bytes()) +
    static_cast<double>(probe.num_rows()) * static_cast<double>(ps.tuple_bytes());
  auto const fits_half = partitioned_bytes <= static_cast<double>(budget) / 2;
  double share = tuning.triton_cached_share.value_or(
    fits_half ? 1.0
              : static_cast<double>(budget) * policy.cache_share_of_budget / partitioned_bytes);
  auto const cache_bytes = static_cast<std::size_t>(std::ceil(share * partitioned_bytes));
  auto const left = budget > cache_bytes ? budget - cache_bytes : budget / 2;
  auto const group_bytes =
    std::max<std::size_t>(static_cast<std::size_t>(static_cast<double>(left) *
                                                   (aggregate_form ? policy.group_share_aggregate
                                                                   : policy.group_share)),
                          1);
  int bits = tuning.triton_partition_bits;
  if (bits == 0) {
    auto const want = partitioned_bytes * policy.partitions_per_group / static_cast<double>(group_bytes);
    bits = std::clamp(bits_for(static_cast<size_type>(std::ceil(want))), policy.min_partition_bits,
                      max_radix_bits);
  }
  auto const fanout = size_type{1} << bits;
  auto const cached_parts = static_cast<size_type>(std::floor(share * static_cast<double>(fanout)));
  // The arena holds each side's expected cached rows and a margin for the hash's variance.
  auto arena_rows_of = [&](side_input const& s) -> size_type {
    if (cached_parts == 0 || s.rows() == 0) { return 0; }
    auto const expect = static_cast<double>(s.rows()) * static_cast<double>(cached_parts) /
                        static_cast<double>(fanout);
    return static_cast<size_type>(expect * 1.05 + 4 * std::sqrt(expect) + 1024);
  };

  std::vector<phase_time> phases;
  auto t0 = clock_type::now();
  auto const bp = partition_side(bs, bits, cached_parts, arena_rows_of(bs), chunk_rows, stream, dev);
  phases.push_back({"partition build side", seconds_since(t0)});
  t0 = clock_type::now();
  auto const pp = partition_side(ps, bits, cached_parts, arena_rows_of(ps), chunk_rows, stream, dev);
  phases.push_back({"partition probe side", seconds_since(t0)});

  // Groups of consecutive partitions within the group limit; a group's probe side past what is
  // left beside its build side is cut into slices.
  t0 = clock_type::now();
  auto const bb = bs.tuple_bytes();
  auto const pb = std::max<std::size_t>(ps.tuple_bytes(), 1);
  auto const group_rows_limit = policy.max_group_rows;
  std::vector<pair_task> tasks;
  bool const build_needed = kind == join_kind::inner || kind == join_kind::left_semi;
  for (size_type p0 = 0; p0 < fanout;) {
    size_type p1 = p0;
    size_type r = 0, s = 0;
    while (p1 < fanout) {
      auto const nr = bp.rows_of(p1, p1 + 1);
      auto const ns = pp.rows_of(p1, p1 + 1);
      auto const bytes = static_cast<std::size_t>(r + nr) * bb + static_cast<std::size_t>(s + ns) * pb;
      if (p1 > p0 && (bytes > group_bytes || r + nr > group_rows_limit || s + ns > group_rows_limit)) {
        break;
      }
      r += nr;
      s += ns;
      ++p1;
    }
    if (s > 0 && !(build_needed && r == 0)) {
      auto const build_bytes = static_cast<std::size_t>(r) * bb;
      if (build_bytes > group_bytes || r > group_rows_limit) {
        throw out_of_memory(
          "the triton join's partition " + std::to_string(p0) + " holds " + std::to_string(r) +
          " build rows (" + std::to_string(build_bytes) + " bytes: many equal keys, or data too "
          "large for " + std::to_string(fanout) + " partitions under this budget), more than "
          "its group limit of " + std::to_string(group_bytes) + " bytes under the device memory "
          "budget of " + std::to_string(budget) + " bytes; a larger --device-budget, or the cpu "
          "backend, runs it");
      }
      auto const slice = std::min<size_type>(
        group_rows_limit,
        std::max<size_type>(static_cast<size_type>((group_bytes - build_bytes) / pb), 1024));
      auto const bsegs = segments_of(bp, p0, p1);
      auto const psegs = segments_of(pp, p0, p1);
      for (size_type at = 0; at < s; at += slice) {
        pair_task t;
        t.build = bsegs;
        t.build_rows = r;
        t.probe_rows = std::min(slice, s - at);
        t.probe = slice_of(psegs, at, t.probe_rows, ps.key_bytes(), ps.carried_bytes());
        tasks.push_back(std::move(t));
      }
    }
    p0 = p1;
  }

  // Two slots sized for the largest task; the next task's copy overlaps the current join.
  size_type most_build = 0, most_probe = 0;
  for (auto const& t : tasks) {
    most_build = std::max(most_build, t.build_rows);
    most_probe = std::max(most_probe, t.probe_rows);
  }
  std::vector<pair_slot> slots(tasks.empty() ? 0 : std::min<std::size_t>(2, tasks.size()));
  for (auto& sl : slots) {
    sl.build_keys = buffer(static_cast<std::size_t>(most_build) * bs.key_bytes(), dev, stream);
    sl.build_carried = buffer(static_cast<std::size_t>(most_build) * bs.carried_bytes(), dev, stream);
    sl.probe_keys = buffer(static_cast<std::size_t>(most_probe) * ps.key_bytes(), dev, stream);
    sl.probe_carried = buffer(static_cast<std::size_t>(most_probe) * ps.carried_bytes(), dev, stream);
  }
  JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
  cuda_stream copy_stream;
  struct settle {
    stream_ref copy;
    ~settle() { (void)cudaStreamSynchronize(to_cuda(copy)); }
  } const settle_copies{copy_stream.ref()};
  auto load = [&](std::size_t i) {
    auto& sl = slots[i % slots.size()];
    if (i >= slots.size()) { sl.free.wait_on(copy_stream.ref()); }  // task i - 2 is done with it
    load_segments(tasks[i].build, sl.build_keys.data(), sl.build_carried.data(), bs.key_bytes(),
                  bs.carried_bytes(), copy_stream.ref());
    load_segments(tasks[i].probe, sl.probe_keys.data(), sl.probe_carried.data(), ps.key_bytes(),
                  ps.carried_bytes(), copy_stream.ref());
    sl.loaded.record(copy_stream.ref());
  };

  // Table form: gathered where the inputs are (device row operations when both keys are on the
  // device, else the host's threads over host copies of what is not host-accessible).
  bool const table_form = options.output == output_form::table;
  bool const gather_on_device = build.column(build_key).space() == memory_space::device &&
                                probe.column(probe_key).space() == memory_space::device;
  std::unique_ptr<keys::row_ops> ops;
  keys::readable_columns readable_build, readable_probe;
  if (table_form) {
    ops = gather_on_device ? keys::make_device_row_ops(stream) : keys::make_host_row_ops();
    auto used_build = build_payloads;
    auto used_probe = probe_payloads;
    used_probe.push_back(probe_key);
    readable_build = keys::make_readable(build, used_build, ops->space(), stream);
    readable_probe = keys::make_readable(probe, used_probe, ops->space(), stream);
  }
  // A group's output is checked against the budget as every GPU join checks its output (the
  // row ids and, for a table, its columns; join_request::budget).
  std::size_t table_row_bytes = 0;
  if (table_form) {
    table_row_bytes = size_of(key_type);
    for (auto c : build_payloads) { table_row_bytes += size_of(build.column(c).type()); }
    for (auto c : probe_payloads) { table_row_bytes += size_of(probe.column(c).type()); }
  }

  join_result total;
  total.form = options.output;
  std::vector<join_result> batches;
  double join_seconds = 0, out_seconds = 0;
  if (!tasks.empty()) { load(0); }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    throw_if_cancelled();
    auto& sl = slots[i % slots.size()];
    auto const& task = tasks[i];
    if (i + 1 < tasks.size()) { load(i + 1); }
    auto const t_join = clock_type::now();
    sl.loaded.wait_on(stream);
    join_request rq;
    rq.build_keys = sl.build_keys.data();
    rq.build_rows = task.build_rows;
    rq.probe_keys = sl.probe_keys.data();
    rq.probe_rows = task.probe_rows;
    rq.key_type = key_type;
    rq.kind = kind;
    rq.pred = options.pred;
    rq.aggregate_only = aggregate_form;
    rq.three_phase = options.writer == output_writer::three_phase;
    rq.load_factor = options.hash_load_factor;
    rq.tuning = tuning;
    rq.budget = options.device_memory_budget;
    rq.extra_bytes_per_row = table_row_bytes;
    if (aggregate_form) {
      if (bs.carry == side_input::carry_type::row_sums) {
        rq.build_sums = static_cast<std::uint64_t const*>(sl.build_carried.data());
      }
      if (ps.carry == side_input::carry_type::row_sums) {
        rq.probe_sums = static_cast<std::uint64_t const*>(sl.probe_carried.data());
      }
    }
    device_matches m;
    try {
      m = radix_hash_join(rq, stream, dev);
    } catch (out_of_memory const& e) {
      throw out_of_memory("the triton join's partition group " + std::to_string(i + 1) + " of " +
                          std::to_string(tasks.size()) + " (" + std::to_string(task.build_rows) +
                          " build and " + std::to_string(task.probe_rows) + " probe rows): " +
                          e.what() + "; a larger --device-budget runs it");
    }
    join_result batch;
    batch.form = options.output;
    batch.aggregate = {m.count, index_form ? 0 : m.checksum};
    if (!aggregate_form) {
      if (!probe_only) { to_input_rows(m.build_rows, sl.build_carried, bs.carried_type, stream); }
      to_input_rows(m.probe_rows, sl.probe_carried, ps.carried_type, stream);
    }
    sl.free.record(stream);  // the slot's data has been read
    JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
    join_seconds += seconds_since(t_join);
    auto const t_out = clock_type::now();
    if (index_form) {
      if (options.index_type == type_id::int32) {
        if (!probe_only) { m.build_rows = narrowed(std::move(m.build_rows), stream, dev); }
        m.probe_rows = narrowed(std::move(m.probe_rows), stream, dev);
      }
      if (!probe_only) { batch.build_rows = to_space(std::move(m.build_rows), mr, stream); }
      batch.probe_rows = to_space(std::move(m.probe_rows), mr, stream);
    } else if (table_form) {
      auto const space_mr = ops->space() == memory_space::device ? dev : host_resource();
      auto const br = probe_only ? column{} : to_space(std::move(m.build_rows), space_mr, stream);
      auto const pr = to_space(std::move(m.probe_rows), space_mr, stream);
      column_view const none;
      std::vector<column> cols;
      batch.aggregate.checksum = 0;
      auto add = [&](column_view const& src, column_view const& ids) {
        cols.push_back(ops->gather(src, ids, none, none));
        // The gather stores 0 under every NULL: the values alone give the sum.
        auto const v = cols.back().view();
        batch.aggregate.checksum +=
          checksum(column_view(v.type(), v.data(), v.size(), v.space()), stream);
      };
      add(readable_probe.at(probe_key), pr.view());
      for (auto c : build_payloads) { add(readable_build.at(c), br.view()); }
      for (auto c : probe_payloads) { add(readable_probe.at(c), pr.view()); }
      ops->synchronize();
      for (auto& c : cols) { c = keys::moved_to(std::move(c), mr, stream); }
      batch.columns = joinery::table(std::move(cols));
    }
    JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
    out_seconds += seconds_since(t_out);
    total.aggregate.count += batch.aggregate.count;
    total.aggregate.checksum += batch.aggregate.checksum;
    if (aggregate_form) { continue; }
    if (deliver != nullptr) {
      auto const t_deliver = clock_type::now();
      (*deliver)(std::move(batch));
      out_seconds += seconds_since(t_deliver);
    } else {
      batches.push_back(std::move(batch));
    }
  }
  phases.push_back({"join partition pairs", seconds_since(t0)});
  phases.push_back({"join partition pairs: join", join_seconds});
  phases.push_back({"join partition pairs: result out", out_seconds});

  if (deliver == nullptr && !aggregate_form) {
    t0 = clock_type::now();
    std::vector<type_id> types{key_type};
    for (auto c : build_payloads) { types.push_back(build.column(c).type()); }
    for (auto c : probe_payloads) { types.push_back(probe.column(c).type()); }
    concatenate_batches(batches, options, probe_only, types, total, mr != nullptr ? mr : dev,
                        stream);
    JOINERY_CUDA_TRY(cudaStreamSynchronize(to_cuda(stream)));
    phases.push_back({"result assembly", seconds_since(t0)});
  }
  total.stats.phases = std::move(phases);
  total.stats.strategy = table_form ? materialization::gfur : materialization::automatic;
  auto const all_rows = build.num_rows() + probe.num_rows();
  total.stats.cached_share =
    all_rows == 0 ? 0.0
                  : static_cast<double>(bp.arena_rows + pp.arena_rows) / static_cast<double>(all_rows);
  return total;
}

}  // namespace joinery::detail::gpu
