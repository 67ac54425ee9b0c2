// Radix hash join (Rui & Tu 2017 section 3.2; the Sioulas / Lutz per-partition design).
//
// 1. Partition: both sides radix-partitioned on the low B bits of the key, B chosen so that a
//    build partition averages half a shared-memory chunk. The partitioning is CUB's onesweep radix
//    sort restricted to those bits (the fastest stable partitioning measured among our
//    primitives, see docs/BENCHMARKS.md), carrying 32-bit row ids; two 8-bit passes at 2^27 rows.
//    When no GFTR positions can be asked for (so the order within a partition is free), the low
//    8 bits (9 or 10 at 17 or 18) go first through swwc, which generates the row ids while it
//    reads the keys, and CUB sorts the rest: no row-id array is written and read back
//    (join_options::tuning.radix_partition = cub keeps CUB alone).
// 2. Work items: each co-partition is cut into items of at most one build chunk's worth of work.
//    A build partition that fits one chunk (C tuples) gets items of up to P_MAX probe tuples,
//    the table built once per item; a larger one (skew) is split into chunks, and its probe side
//    into one-tile items, each looping over every chunk. So oversized partitions spread over many
//    blocks in the same launch instead of serialising one block.
// 3. Join: one block per item builds a bucket-chaining hash table of the chunk in shared memory
//    (heads by atomic exchange, next links, keys) and probes it with its probe tuples, which stay
//    in registers across chunks.
// Output: each tile counts its matches in shared memory (cheap), scans them, then writes. First
// directly: the output is sized for one row per probe row and each tile claims its rows with one
// atomic; only when more rows turn up (many-to-many) is it three-phase (count per item, scan,
// write at the item's offset). One kernel serves the three modes; inner joins writing row ids
// without payload sums take a lean kernel for their direct pass instead (two barriers a tile).
//
// The device side (policy, kernels) is in radix_hash_join_kernels.cuh; this file holds the host
// orchestration.
#include "join/gpu/radix_hash_join_kernels.cuh"
#include "join/gpu/join_sort.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace joinery::detail::gpu {

namespace {

/// Radix bits so that an average build partition holds half a shared-memory chunk.
int radix_bits_for(size_type build_rows, int key_bits) {
  int bits = 0;
  while (bits < radix_join_policy::max_radix_bits && bits < key_bits &&
         (build_rows >> bits) > radix_join_policy::chunk / 2) {
    ++bits;
  }
  return bits;
}

template <class U>
device_matches run(join_request const& rq, stream_ref stream, memory_resource* mr) {
  using P = radix_join_policy;
  phase_clock clock(stream);
  auto const s = to_cuda(stream);
  auto const nb = rq.build_rows;
  auto const np = rq.probe_rows;
  int const bits = radix_bits_for(nb, 8 * static_cast<int>(sizeof(U)));
  size_type const fanout = size_type{1} << bits;

  JOINERY_EXPECTS(!rq.positions_forced || (rq.build_sums == nullptr && rq.probe_sums == nullptr),
                  "the radix join's carried values need a table-form request (no row sums)");
  // Each side sorts its keys with 32-bit row ids, or with its carried values (GFTR decided
  // before the join), which the join then never reads: it writes positions.
  // Whether the sides' order within a partition is free: no GFTR positions, now or later.
  bool const unordered = !rq.positions_forced && !rq.positions_for &&
                         rq.tuning.radix_partition != radix_join_partitioning::cub;
  auto partition = [&](void const* keys, size_type n, void const* carry, int carry_bytes,
                       buffer& k, buffer& r, buffer& offsets) {
    JOINERY_EXPECTS(carry_bytes == 0 || carry_bytes == 4 || carry_bytes == 8,
                    "carried values are 4 or 8 bytes wide");
    JOINERY_EXPECTS(n <= max_row_id_rows, "the radix join numbers rows in 32 bits: at most " +
                                            std::to_string(max_row_id_rows) +
                                            " rows per side, got " + std::to_string(n));
    auto const rows = static_cast<std::size_t>(std::max<size_type>(n, 1));
    k = buffer(sizeof(U) * rows, mr, stream);
    r = buffer((carry_bytes == 8 ? 8 : 4) * rows, mr, stream);
    offsets = buffer(sizeof(size_type) * static_cast<std::size_t>(fanout + 1), mr, stream);
    auto const* in = static_cast<U const*>(keys);
    if (carry_bytes == 4) {
      sort_pairs_by_bits(in, as<U>(k), static_cast<std::uint32_t const*>(carry),
                         as<std::uint32_t>(r), n, 0, bits, stream, mr);
    } else if (carry_bytes == 8) {
      sort_pairs_by_bits(in, as<U>(k), static_cast<std::uint64_t const*>(carry),
                         as<std::uint64_t>(r), n, 0, bits, stream, mr);
    } else if (unordered) {
      // Not the stable order GFTR's positions need, hence only for requests that cannot ask
      // for them; no row-id array written and read back (join_sort.hpp).
      partition_with_row_ids(in, as<U>(k), as<std::uint32_t>(r), n, bits, stream, mr);
    } else {
      sort_with_row_ids(in, as<U>(k), as<std::uint32_t>(r), n, 0, bits, stream, mr);
    }
    radix_partition_offsets(as<U>(k), n, bits, as<size_type>(offsets), stream);
  };
  bool const with_build = rq.kind == join_kind::inner || rq.kind == join_kind::left_outer;
  bool const fused = rq.fused_output;
  // An int32 index (never with positions: those are the table form's) is written as such.
  bool const ids32 = rq.row_ids32;
  JOINERY_EXPECTS(!ids32 || (!rq.positions_forced && !rq.positions_for),
                  "the radix join writes int32 row ids for the index form only");
  JOINERY_EXPECTS(!fused || (rq.positions_forced && rq.kind == join_kind::inner &&
                             !rq.aggregate_only),
                  "the radix join's fused table output is for inner GFTR joins");
  // The output: row ids / positions, or (fused) the table's columns, `rows` of them.
  auto allocate_output = [&](device_matches& o, size_type rows) {
    if (!fused) {
      allocate_matches(o, rows, with_build, rq, "radix_hash", stream, mr,
                       ids32 ? type_id::int32 : type_id::int64);
      return;
    }
    auto const bytes = static_cast<std::size_t>(rows) * rq.extra_bytes_per_row;
    auto const need = "the radix_hash join result has " + std::to_string(rows) +
                      " rows and needs " + std::to_string(bytes) +
                      " bytes of device memory (table columns)";
    if (rq.budget != 0 && bytes > rq.budget) {
      throw out_of_memory(need + ", more than the device memory budget of " +
                          std::to_string(rq.budget) + " bytes");
    }
    try {
      o.fused = true;
      o.fused_columns.emplace_back(rq.key_type, rows, mr, stream);
      for (auto t : rq.build_fused_types) { o.fused_columns.emplace_back(t, rows, mr, stream); }
      for (auto t : rq.probe_fused_types) { o.fused_columns.emplace_back(t, rows, mr, stream); }
    } catch (out_of_memory const& e) {
      throw out_of_memory(need + ", which could not be allocated: " + e.what());
    }
  };
  auto has_output = [&](device_matches const& o) {
    return fused ? !o.fused_columns.empty() : o.probe_rows.size() != 0;
  };
  auto const guess_bytes =
    static_cast<std::size_t>(np) *
    ((ids32 ? sizeof(std::int32_t) : sizeof(size_type)) * (with_build ? 2 : 1) +
     rq.extra_bytes_per_row);
  // Direct output writes positions only when GFTR was decided before the join (a later choice
  // needs the exact row count first).
  bool direct = !rq.aggregate_only && !rq.three_phase && (!rq.positions_for || rq.positions_forced) &&
                (rq.budget == 0 || guess_bytes <= rq.budget);
  // The direct output is allocated before the partitioning's temporaries: allocated after them
  // it found no free block of its size in the stream-ordered pool and mapped new memory on
  // every run (0.7 ms of 12.5 at 2^27 x 2^28 on the H200). Given back when the partitioning
  // runs out of memory (then retried without it) or the plan takes the three phases.
  device_matches early;
  if (direct && nb > 0 && np > 0) {
    try {
      allocate_output(early, np);
    } catch (out_of_memory const&) {
      early = device_matches{};
    }
  }
  auto partition_side = [&](void const* keys, size_type n, void const* carry, int carry_bytes,
                            buffer& k, buffer& r, buffer& offsets) {
    try {
      partition(keys, n, carry, carry_bytes, k, r, offsets);
    } catch (out_of_memory const&) {
      if (!has_output(early)) { throw; }
      early = device_matches{};
      partition(keys, n, carry, carry_bytes, k, r, offsets);
    }
  };
  int const build_carry = rq.positions_forced ? rq.build_carry_bytes : 0;
  int const probe_carry = rq.positions_forced ? rq.probe_carry_bytes : 0;
  buffer bk, br, boffs, pk, pr, poffs;
  clock.mark("partition build");
  partition_side(rq.build_keys, nb, rq.build_carry, build_carry, bk, br, boffs);
  clock.mark("partition probe");
  partition_side(rq.probe_keys, np, rq.probe_carry, probe_carry, pk, pr, poffs);
  // GFTR: the caller transforms the other payloads with the same partitioning.
  auto hand_back_sides = [&](device_matches& m) {
    m.positions = true;
    m.build_side = {std::move(bk), std::move(br), bits, build_carry};
    m.probe_side = {std::move(pk), std::move(pr), bits, probe_carry};
  };

  clock.mark("plan");
  // Entry fanout + 1: the items of partitions of several chunks.
  buffer item_start(sizeof(size_type) * static_cast<std::size_t>(fanout + 2), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(item_start.data(), 0, item_start.size(), s));
  bool const skip_empty_build = rq.kind == join_kind::inner || rq.kind == join_kind::left_semi;
  radix_items_kernel<<<grid_stride_blocks(fanout + 1, 256, current_sm_count(), 8), 256, 0, s>>>(
      as<size_type>(boffs), as<size_type>(poffs), fanout, skip_empty_build, as<size_type>(item_start));
  JOINERY_CHECK_LAUNCH();
  exclusive_scan_with_total(as<size_type>(item_start), fanout, stream, mr);
  auto const item_counts =
    read_scalar(reinterpret_cast<std::array<size_type, 2> const*>(as<size_type>(item_start) + fanout),
                stream);
  size_type const items = item_counts[0];
  size_type const multi_chunk_items = item_counts[1];

  device_matches out;
  if (items == 0) {
    if (!rq.aggregate_only) { allocate_output(out, 0); }
    if (rq.positions_forced) { hand_back_sides(out); }
    out.phases = clock.finish();
    return out;
  }
  static_assert(radix_join_policy::max_radix_bits < 31, "partitions are numbered in int32");
  buffer item_partition(sizeof(std::int32_t) * static_cast<std::size_t>(items), mr, stream);
  buffer item_probe(2 * sizeof(size_type) * static_cast<std::size_t>(items), mr, stream);
  item_partitions_kernel<<<grid_stride_blocks(items, 256, current_sm_count(), 8), 256, 0, s>>>(
      as<size_type>(item_start), as<size_type>(boffs), as<size_type>(poffs), fanout, items,
      as<std::int32_t>(item_partition), as<size_type>(item_probe));
  JOINERY_CHECK_LAUNCH();
  buffer item_rows(sizeof(size_type) * static_cast<std::size_t>(items + 1), mr, stream);
  buffer checksum(sizeof(unsigned long long), mr, stream);
  JOINERY_CUDA_TRY(cudaMemsetAsync(item_rows.data(), 0, item_rows.size(), s));
  JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));

  radix_join_args<U> a{};
  a.build_keys = as<U>(bk);
  a.build_rows = build_carry != 0 ? nullptr : as<std::uint32_t>(br);
  a.build_offsets = as<size_type>(boffs);
  a.probe_keys = as<U>(pk);
  a.probe_rows = probe_carry != 0 ? nullptr : as<std::uint32_t>(pr);
  a.probe_offsets = as<size_type>(poffs);
  a.item_partition = as<std::int32_t>(item_partition);
  a.item_probe = as<size_type>(item_probe);
  a.fanout = fanout;
  a.num_items = items;
  a.kind = rq.kind;
  a.sums = {rq.build_sums, rq.probe_sums};
  a.with_checksum = rq.aggregate_only;
  a.codec = codec_of(rq.key_type, false);
  a.item_rows = as<size_type>(item_rows);
  a.checksum = as<unsigned long long>(checksum);

  if (fused) {
    auto fields = [&](std::vector<type_id> const& types, int bytes) {
      if (types.empty()) { return bundle_fields{}; }
      std::vector<int> widths;
      for (auto t : types) { widths.push_back(static_cast<int>(size_of(t))); }
      auto f = fields_of(widths, bytes);
      for (std::size_t c = 0; c < types.size(); ++c) {
        if (is_signed(types[c])) { f.signed_mask |= 1u << c; }
      }
      return f;
    };
    a.build_fields = fields(rq.build_fused_types, build_carry);
    a.probe_fields = fields(rq.probe_fused_types, probe_carry);
    a.build_bundle = br.data();
    a.probe_bundle = pr.data();
    a.build_bundle_bytes = build_carry;
    a.probe_bundle_bytes = probe_carry;
  }
  // Where the kernels write: the id / position columns, or the fused table's columns.
  auto bind_output = [&](device_matches& o) {
    if (!fused) {
      a.out_build = with_build ? o.build_rows.data() : nullptr;
      a.out_probe = o.probe_rows.data();
      return;
    }
    a.key_out = static_cast<U*>(o.fused_columns[0].data());
    std::size_t c = 1;
    for (int i = 0; i < a.build_fields.count; ++i) {
      a.build_fields.out[i] = o.fused_columns[c++].data();
    }
    for (int i = 0; i < a.probe_fields.count; ++i) {
      a.probe_fields.out[i] = o.fused_columns[c++].data();
    }
  };

  constexpr std::size_t smem = chunk_table<U>::smem_bytes;
  auto const count_kernel = radix_join_kernel<U, radix_mode::count>;
  auto const write_ids_kernel =
    ids32 ? radix_join_kernel<U, radix_mode::write, false, false, std::int32_t>
          : radix_join_kernel<U, radix_mode::write>;
  auto const write_positions_kernel = fused ? radix_join_kernel<U, radix_mode::write, true, true>
                                            : radix_join_kernel<U, radix_mode::write, true>;
  auto const direct_kernel = fused ? radix_join_kernel<U, radix_mode::direct, true, true>
                             : rq.positions_forced ? radix_join_kernel<U, radix_mode::direct, true>
                             : ids32 ? radix_join_kernel<U, radix_mode::direct, false, false, std::int32_t>
                                     : radix_join_kernel<U, radix_mode::direct>;
  // The lean direct pass serves inner joins writing row ids without payload sums.
  bool const lean = rq.kind == join_kind::inner && !fused && !rq.positions_forced &&
                    rq.build_sums == nullptr && rq.probe_sums == nullptr;
  auto const lean_kernel =
    ids32 ? radix_join_lean_kernel<U, std::int32_t> : radix_join_lean_kernel<U, size_type>;
  for (auto k : {count_kernel, write_ids_kernel, write_positions_kernel, direct_kernel, lean_kernel}) {
    allow_dynamic_smem(k, smem);
  }
  auto const grid = static_cast<unsigned>(std::min<size_type>(items, 1 << 30));

  // Direct output first when one row per probe row fits the budget and GFTR cannot be asked
  // for (see join_common.cuh).
  if (direct && items >= P::sample_every) {
    clock.mark("sample");
    // Count a sample of the work items first: a many-to-many join whose output is clearly larger
    // than the probe side would only waste the direct pass, which then stops part-way.
    auto sample = a;
    sample.num_items = items / P::sample_every;
    count_kernel<<<static_cast<unsigned>(sample.num_items), P::threads, smem, s>>>(sample);
    JOINERY_CHECK_LAUNCH();
    exclusive_scan_with_total(as<size_type>(item_rows), sample.num_items, stream, mr);
    // Extrapolated by the probe rows the sampled items span, not by their number: under probe
    // skew the first items are the hot partitions' full ones, and counting by items took
    // Zipf 1 PK-FK joins (one row per probe row) for many-to-many ones.
    size_type spanned[2] = {0, 0};
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&spanned[0], as<size_type>(item_probe), sizeof(size_type),
                                     cudaMemcpyDeviceToHost, s));
    JOINERY_CUDA_TRY(cudaMemcpyAsync(&spanned[1], as<size_type>(item_probe) + 2 * sample.num_items - 1,
                                     sizeof(size_type), cudaMemcpyDeviceToHost, s));
    auto const sampled = read_scalar(as<size_type>(item_rows) + sample.num_items, stream);
    double const estimate =
      spanned[1] > spanned[0]
        ? static_cast<double>(sampled) * static_cast<double>(np) /
            static_cast<double>(spanned[1] - spanned[0])
        : static_cast<double>(sampled) * static_cast<double>(items) /
            static_cast<double>(sample.num_items);
    direct = estimate <= P::direct_margin * static_cast<double>(np);
    JOINERY_CUDA_TRY(cudaMemsetAsync(item_rows.data(), 0, item_rows.size(), s));
  }
  if (!direct) { early = device_matches{}; }
  if (direct) {
    clock.mark("allocate");
    bool allocated = true;
    if (has_output(early)) {
      out = std::move(early);
    } else {
      try {
        allocate_output(out, np);
      } catch (out_of_memory const&) {
        allocated = false;
      }
    }
    if (allocated) {
      buffer claimed(sizeof(unsigned long long), mr, stream);
      JOINERY_CUDA_TRY(cudaMemsetAsync(claimed.data(), 0, claimed.size(), s));
      a.claimed = as<unsigned long long>(claimed);
      a.capacity = np;
      bind_output(out);
      clock.mark("join direct");
      if (lean) {
        lean_kernel<<<grid, P::threads, smem, s>>>(a);
        JOINERY_CHECK_LAUNCH();
        if (multi_chunk_items > 0) {
          auto multi = a;
          multi.multi_chunk_only = true;
          direct_kernel<<<grid, P::threads, smem, s>>>(multi);
          JOINERY_CHECK_LAUNCH();
        }
      } else {
        direct_kernel<<<grid, P::threads, smem, s>>>(a);
        JOINERY_CHECK_LAUNCH();
      }
      auto const rows = static_cast<size_type>(read_scalar(as<unsigned long long>(claimed), stream));
      if (rows <= np) {
        if (rows < np) {
          if (fused) {
            for (auto& col : out.fused_columns) {
              col = column::copy_of(column_view(col.type(), col.data(), rows, col.space()), mr,
                                    stream);
            }
          } else {
            shrink_matches(out, rows, with_build, stream, mr);
          }
        }
        out.count = static_cast<std::uint64_t>(rows);
        out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
        if (rq.positions_forced) { hand_back_sides(out); }
        out.phases = clock.finish();
        return out;
      }
      out = device_matches{};  // more rows than probe rows: count them first
      JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));
    }
  }

  clock.mark("join count");
  count_kernel<<<grid, P::threads, smem, s>>>(a);
  JOINERY_CHECK_LAUNCH();
  exclusive_scan_with_total(as<size_type>(item_rows), items, stream, mr);
  size_type const total = read_scalar(as<size_type>(item_rows) + items, stream);
  out.count = static_cast<std::uint64_t>(total);
  if (rq.aggregate_only) {
    out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
    out.phases = clock.finish();
    return out;
  }
  // GFTR: ask whether to write positions into the partitioned sides (stable, contiguous).
  out.positions =
    rq.positions_forced || (rq.positions_for && rq.positions_for(total, bits, bits));
  allocate_output(out, total);
  JOINERY_CUDA_TRY(cudaMemsetAsync(checksum.data(), 0, checksum.size(), s));
  a.item_offsets = as<size_type>(item_rows);
  bind_output(out);
  clock.mark("join write");
  (out.positions ? write_positions_kernel : write_ids_kernel)<<<grid, P::threads, smem, s>>>(a);
  JOINERY_CHECK_LAUNCH();
  out.checksum = read_scalar(as<unsigned long long>(checksum), stream);
  out.phases = clock.finish();
  if (out.positions) { hand_back_sides(out); }
  return out;
}

}  // namespace

int radix_hash_join_bits(size_type build_rows, type_id key_type) {
  return radix_bits_for(build_rows, 8 * static_cast<int>(size_of(key_type)));
}

device_matches radix_hash_join(join_request const& rq, stream_ref stream, memory_resource* mr) {
  return dispatch_key_width(rq.key_type,
                            [&](auto u) { return run<decltype(u)>(rq, stream, mr); });
}

}  // namespace joinery::detail::gpu
