#pragma once
// Internal, host-only (no CUDA types): the GPU join backend as the public join() sees it, and the
// request each algorithm receives. Defined in src/join/gpu/*.cu; only built with the CUDA backend.
#include <joinery/join.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace joinery::detail::gpu {

/// The algorithms the GPU backend implements.
std::vector<join_algorithm> join_algorithms();

/// Runs `algo` on device-resident (or copied) inputs; the result takes the requested form, its
/// columns from `mr` (nullptr: device memory).
join_result run_join(join_algorithm algo, table_view const& build, size_type build_key,
                     table_view const& probe, size_type probe_key, join_options const& options,
                     stream_ref stream, memory_resource* mr);

/// What an algorithm gets: the two key columns as raw device pointers plus what decides the
/// output. Keys are handled as unsigned bit patterns of their width (4 or 8 bytes); equality
/// joins need nothing else, ordered algorithms re-encode signed keys (see key_codec).
struct join_request {
  void const* build_keys = nullptr;
  size_type build_rows = 0;
  void const* probe_keys = nullptr;
  size_type probe_rows = 0;
  type_id key_type = type_id::int32;
  join_kind kind = join_kind::inner;
  predicate pred{};
  /// Count and checksum only: no row ids are written.
  bool aggregate_only = false;
  /// Index form with int32 row ids (join_options::index_type): an algorithm may write them
  /// directly (radix_hash does, halving its output bytes); int64 ones are narrowed afterwards.
  bool row_ids32 = false;
  /// join_options::writer == three_phase: no direct output pass, count first.
  bool three_phase = false;
  /// Per-row sums of the payloads that enter the checksum (device, uint64), or nullptr when the
  /// side contributes nothing beyond the probe key.
  std::uint64_t const* build_sums = nullptr;
  std::uint64_t const* probe_sums = nullptr;
  /// Bytes the output may take; 0 means no limit beyond what allocations allow.
  std::size_t budget = 0;
  /// Bytes per output row the caller will add after the join (the table form's columns), counted
  /// against the budget together with the row ids.
  std::size_t extra_bytes_per_row = 0;
  double load_factor = 0.5;
  /// join_options::tuning: indexed_nested_loop reads css_search, radix_hash radix_partition
  /// (run_join itself takes the bandwidths).
  join_tuning tuning;
  /// GFTR hook (table form only, nullptr otherwise): the algorithms that sort or partition both
  /// sides with a stable radix sort (sort_merge, radix_hash) call it once the output row count is
  /// known, with the bits [0, bits) each side was sorted by; true asks them to write positions
  /// into the sorted sides instead of row ids, and to hand the sorted sides back.
  std::function<bool(size_type output_rows, int build_sort_bits, int probe_sort_bits)>
    positions_for;
  /// GFTR decided before the join (radix_hash only; positions_for unused): the join writes
  /// positions, and a side with carried values (4 or 8 bytes a row, its packed payloads) sorts
  /// them with its keys in place of row ids, handing them back sorted (sorted_side::carried_bytes).
  /// Needs build_sums / probe_sums null: the join reads no row ids then.
  bool positions_forced = false;
  void const* build_carry = nullptr;
  int build_carry_bytes = 0;
  void const* probe_carry = nullptr;
  int probe_carry_bytes = 0;
  /// With positions_forced, inner joins whose carried values hold every payload of their side:
  /// the join writes the output table itself (the key, then these build and probe payload
  /// columns, unpacked from the carried values) instead of positions, and its checksum includes
  /// the payloads as the table form's does.
  bool fused_output = false;
  std::vector<type_id> build_fused_types;
  std::vector<type_id> probe_fused_types;
};

/// One side as a join's stable radix sort left it: keys (the unsigned bit patterns, sorted by
/// their bits [0, sort_bits)) and the 32-bit input row of each sorted position, or, when
/// carried_bytes is 4 or 8, the side's carried values (join_request::build_carry) in that order.
struct sorted_side {
  buffer keys;
  buffer order;
  int sort_bits = 0;
  int carried_bytes = 0;
};

/// What an algorithm returns: device int64 row ids (int32 where join_request::row_ids32 let the
/// algorithm write them so; build_rows empty for semi/anti; -1 for the
/// build side of an unmatched left-outer row), the count and checksum of the output, and phases.
struct device_matches {
  column build_rows;
  column probe_rows;
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
  std::vector<phase_time> phases;
  /// True when build_rows / probe_rows are positions into the sorted sides below (GFTR), not
  /// input row ids; -1 still marks the missing build row of a left outer join.
  bool positions = false;
  sorted_side build_side;
  sorted_side probe_side;
  /// join_request::fused_output: the output table (key, build payloads, probe payloads) in place
  /// of build_rows / probe_rows.
  bool fused = false;
  std::vector<column> fused_columns;
};

device_matches nested_loop_join(join_request const& rq, stream_ref stream, memory_resource* mr);
device_matches indexed_nested_loop_join(join_request const& rq, stream_ref stream,
                                        memory_resource* mr);
device_matches sort_merge_join(join_request const& rq, stream_ref stream, memory_resource* mr);
device_matches no_partition_hash_join(join_request const& rq, stream_ref stream,
                                      memory_resource* mr);
device_matches radix_hash_join(join_request const& rq, stream_ref stream, memory_resource* mr);

class phase_clock;  // join_common.cuh

/// The no-partitioning hash join's build side, made once and probed by any number of probe-key
/// ranges (the streamed join's chunks): a perfect-hash array for unique dense keys, else an
/// open-addressing table (no_partition_hash_join.cu).
class build_table {
 public:
  build_table() = default;
  build_table(build_table const&) = delete;
  build_table& operator=(build_table const&) = delete;
  virtual ~build_table() = default;
  /// The matches of rq's probe keys (rq's build fields must be those the table was made of);
  /// probe row ids count from rq.probe_keys.
  virtual device_matches probe(join_request const& rq, phase_clock& clock, stream_ref stream,
                               memory_resource* mr) const = 0;
  /// Device bytes the table holds.
  [[nodiscard]] virtual std::size_t bytes() const noexcept = 0;
};
std::unique_ptr<build_table> make_build_table(join_request const& rq, stream_ref stream,
                                              memory_resource* mr);
/// Bytes of the open-addressing table make_build_table makes for `build_rows` keys (the
/// perfect-hash array, when taken, is smaller).
std::size_t build_table_bytes(size_type build_rows, type_id key_type, double load_factor);

/// The streamed join (Rui & Tu 2017, section 3.4; streamed_join.cu): the build side's table made
/// on the device once, the probe side's chunks copied in on a second stream while the previous
/// chunk is joined, each chunk's result handed to `deliver` (in `mr`'s space) as it is made,
/// or, without `deliver`, gathered into the returned result.
join_result streamed_join(table_view const& build, size_type build_key, table_view const& probe,
                          size_type probe_key, join_options const& options,
                          std::function<void(join_result&&)> const* deliver, stream_ref stream,
                          memory_resource* mr);

/// The Triton join (Lutz et al. 2022; triton_join.cu): both sides hash-partitioned by the GPU
/// into pinned host memory (a share of the partitions kept on the device), then the partition
/// pairs copied back group by group and joined by the in-GPU radix join, the next group's copy
/// overlapping the current join. For sides larger than the device memory budget. Results are
/// delivered group by group to `deliver`, or gathered into the returned result.
join_result triton_join(table_view const& build, size_type build_key, table_view const& probe,
                        size_type probe_key, join_options const& options,
                        std::function<void(join_result&&)> const* deliver, stream_ref stream,
                        memory_resource* mr);

/// The radix bits the radix join partitions a build side of `build_rows` keys by.
int radix_hash_join_bits(size_type build_rows, type_id key_type);

/// The row count of the inner equi-join of rq's keys, estimated from a correlated hash sample
/// (join_estimate.cu: the keys whose hash has its low bits zero on both sides, taken from a
/// prefix of at most 2^24 rows of each side, about 2^16 of them on the build side, counted
/// exactly and scaled up). A sampled hot probe key inflates it, an unsampled one is missed.
/// nullopt when the build sample does not fit its map (duplicates share a slot, so only a
/// pathological hash could do that). Reads the two prefixes once.
std::optional<size_type> estimate_inner_join_rows(join_request const& rq, stream_ref stream,
                                                  memory_resource* mr);

}  // namespace joinery::detail::gpu
