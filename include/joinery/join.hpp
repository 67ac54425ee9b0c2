#pragma once
// The join entry point: one function, an options struct, an owning result with statistics.
#include <joinery/common.hpp>
#include <joinery/table.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace joinery {

/// Algorithm families (DESIGN.md, "Joins"); the same names are used on the command line.
enum class join_algorithm : std::uint8_t {
  automatic,
  nested_loop,
  indexed_nested_loop,
  sort_merge,
  radix_hash,
  no_partition_hash,
  streamed,
  triton,
  /// Several GPUs (join_options::devices): rows range-partitioned by key over the GPUs, then a
  /// sort-merge join on each; the output is ordered by key across GPUs (Maltenberger et al.).
  multi_gpu_sort_merge,
  /// Several GPUs: rows hash-partitioned by key over the GPUs, then the radix join on each.
  multi_gpu_hash,
};
/// In build/probe terms "left" is the probe side and "right" the build side: left semi/anti
/// return probe rows, right semi/anti build rows; a left outer join keeps every probe row, a
/// right outer join every build row, a full outer join both. The right and full kinds, and every
/// kind over keys the algorithms do not take directly (several columns, NULLs, 1-/2-byte
/// integers, floats), run through the general key path (DESIGN.md, "Keys users have").
enum class join_kind : std::uint8_t {
  inner, left_semi, left_anti, left_outer, right_semi, right_anti, right_outer, full_outer
};

/// Whether a NULL key equals a NULL key (libcudf's null_equality). unequal, SQL's rule and the
/// default: a row with a NULL in any key column matches nothing.
enum class null_equality : std::uint8_t { unequal, equal };
enum class output_form : std::uint8_t {
  index,      ///< pairs of (build row id, probe row id)
  table,      ///< key + chosen payload columns of both sides
  aggregate,  ///< count and wrapping checksum only, nothing materialized
};
/// How a table result is materialized by the partitioning / sorting GPU joins (Wu et al. 2025):
/// gfur gathers each payload column from the untransformed input through the permuted row ids
/// (random reads); gftr transforms every payload column with the same stable radix sort as its
/// key, then gathers it through the join's positions in clustered order. automatic picks the
/// cheaper by a cost model fed with the device's measured bandwidths (DESIGN.md, "Table output:
/// GFUR, GFTR and the model").
enum class materialization : std::uint8_t { automatic, gfur, gftr };

/// How the GPU joins write an index or table result (DESIGN.md, "Output: direct first, three
/// phases when needed"). direct (the default): Rui & Tu's direct output buffer: one row per
/// probe row is allocated and each tile claims its rows with one atomic, falling back to the
/// three phases when more rows turn up (many-to-many).
/// three_phase: He et al.'s lock-free count, scan, write from the start. The nested-loop join
/// always counts first; the CPU backend ignores it.
enum class output_writer : std::uint8_t { direct, three_phase };

/// Join predicate: equality, or the band build.key <= probe.key <= build.key + width.
struct predicate {
  enum class kind_type : std::uint8_t { equal, band };
  kind_type kind = kind_type::equal;
  std::uint64_t band_width = 0;
  static constexpr predicate equal() noexcept { return {}; }
  static constexpr predicate band(std::uint64_t width) noexcept {
    return {kind_type::band, width};
  }
};

/// The device's bandwidths that the table form's GFUR / GFTR cost model weighs (DESIGN.md,
/// "Table output: GFUR, GFTR and the model"), in bytes per second unless named otherwise.
struct device_bandwidths {
  /// A device-to-device copy, bytes read plus bytes written. Must be positive.
  double sequential = 0;
  /// A gather of 4-byte values through int64 ids, counting ids read + values read + values
  /// written (16 bytes per element): with ids random within small windows (clustered), and with
  /// ids random over a column larger than the L2 cache (unclustered). Must be positive.
  double clustered_gather = 0;
  double unclustered_gather = 0;
  /// Bytes of the L2 cache, and bytes of the column the unclustered gather read (0: no cache
  /// modelled). A random read into a column of B bytes hits the cache with probability
  /// min(1, l2 / B): small build sides are gathered at nearly clustered speed.
  double l2_bytes = 0;
  double unclustered_column_bytes = 0;
  /// One 8-bit CUB radix sort of (uint32 key, value) pairs (a histogram pass and one digit
  /// pass), counting keys and values read + written: with 4-byte values (16 bytes per row) and
  /// with 8-byte values (24 bytes per row); other widths are interpolated per row. 0: not
  /// measured, digit passes are charged at copy speed.
  double sort_pass_4_4 = 0;
  double sort_pass_4_8 = 0;
};

/// How the indexed nested-loop join's CSS-tree searches inside a node on its way down.
enum class css_node_search : std::uint8_t {
  binary,      ///< binary search among the node's keys (the default)
  sequential,  ///< a linear scan of the node's keys
};

/// How the GPU radix hash join makes its first partitioning of each side.
enum class radix_join_partitioning : std::uint8_t {
  /// Where no GFTR positions can be asked for (the order within a partition is free), the low
  /// digit goes first through swwc, which generates the row ids while it reads the keys, and a
  /// CUB radix sort partitions by the rest; otherwise the CUB sort alone (the default).
  automatic,
  /// Always the CUB radix sort over the partition bits, with a written array of row ids.
  cub,
};

/// Tuning of the GPU joins, for A/B runs (`joinery bench --css-search / --radix-partition /
/// --device-bandwidths`). The defaults are what the library chooses for the device; the CPU
/// backend ignores every field.
struct join_tuning {
  /// indexed_nested_loop: the search inside each CSS-tree node.
  css_node_search css_search = css_node_search::binary;
  /// radix_hash: the first partitioning of each side.
  radix_join_partitioning radix_partition = radix_join_partitioning::automatic;
  /// The bandwidths the GFUR / GFTR model of the table form uses (radix_hash, sort_merge).
  /// Empty (the default): measured once per device at the first table-form join that needs
  /// them (about 15 ms on an H200) and kept for the process. Given: used as they are (e.g. a
  /// measurement recorded earlier), which also skips the measurement; the GPU backend throws
  /// logic_error unless sequential and both gathers are positive and every field is a finite
  /// number >= 0.
  std::optional<device_bandwidths> bandwidths;
  /// streamed: probe rows per chunk; 0 (the default): as many as the device memory budget
  /// leaves room for, at most 2^24.
  size_type streamed_chunk_rows = 0;
  /// triton: rows per chunk of its partitioning pass; 0 (the default): chosen from the budget,
  /// at most 2^24.
  size_type triton_chunk_rows = 0;
  /// triton: radix bits of its host-memory partitioning (1 to 12); 0 (the default): chosen from
  /// the data size and the device memory budget.
  int triton_partition_bits = 0;
  /// triton: share of the partitions (the first ones, by number) kept in device memory instead
  /// of host memory, in [0, 1] (Lutz et al.'s Figure 19); empty (the default): all of them when
  /// the partitioned data fits half of the device memory budget, else a third of the budget's
  /// worth (the rest holds the partition pairs being joined).
  std::optional<double> triton_cached_share;
  /// multi_gpu_*: how buckets move between GPUs (peer copies or NCCL).
  exchange_method exchange = exchange_method::automatic;
};

struct join_options {
  join_algorithm algorithm = join_algorithm::automatic;
  joinery::backend backend = joinery::backend::automatic;
  join_kind kind = join_kind::inner;
  predicate pred = predicate::equal();
  output_form output = output_form::index;
  materialization strategy = materialization::automatic;
  /// Payload columns to carry into a table (or aggregate) result, by column index. The key column
  /// may be listed too (useful for band joins, where the two keys differ).
  std::vector<size_type> build_payloads;
  std::vector<size_type> probe_payloads;
  /// Bytes of device memory a GPU algorithm may use; 0 means what the device has free (less a
  /// margin). streamed sizes its chunks by it; automatic takes streamed for host-resident
  /// inputs whose in-GPU join would not fit it.
  std::size_t device_memory_budget = 0;
  int device = 0;
  /// multi_gpu_*: the GPUs, one rank each; a GPU may be listed more than once (several ranks
  /// on one GPU, exchanging by peer copies: how the exchange is tested on one GPU). Empty:
  /// every GPU present. The device memory budget applies to each rank.
  std::vector<int> devices;
  /// Index form: the type of the returned row ids, int64 (default) or int32 (libcudf's
  /// size_type; half the bytes written, for sides of at most 2^31 - 1 rows, refused beyond).
  /// The other forms ignore it.
  type_id index_type = type_id::int64;
  output_writer writer = output_writer::direct;
  /// no_partition_hash: the most its open-addressing table is filled, in (0, 1). The GPU's table
  /// has ceil(build rows / factor) slots, the CPU's the next power of two. Ignored when the GPU
  /// takes the perfect-hash array (unique keys of a dense range).
  double hash_load_factor = 0.5;
  /// Tuning of the GPU joins (defaults from the device); see join_tuning.
  join_tuning tuning;
  /// NULL keys: unequal (SQL, the default) or equal to each other.
  null_equality nulls = null_equality::unequal;
  /// Floating-point keys: -0.0 always equals 0.0; NaN equals NaN only when this is set (SQL's
  /// rule, the default, is that a NaN key matches nothing).
  bool nans_equal = false;
};

struct join_stats {
  join_algorithm algorithm = join_algorithm::automatic;  ///< the algorithm actually used
  joinery::backend backend = joinery::backend::automatic;  ///< the backend actually used
  std::vector<phase_time> phases;
  std::uint64_t bytes_moved = 0;  ///< bytes read and written by the algorithm (estimate)
  double seconds = 0;             ///< wall time of the whole call
  /// triton: the share of the partitioned rows kept in device memory; the others crossed the
  /// link to host memory and back.
  double cached_share = 0;
  /// Table form on the GPU: the strategy used (gfur or gftr; automatic where none applies, e.g.
  /// the CPU backend) and the cost model's predicted materialization seconds of each (0 when the
  /// algorithm has no choice: the no-partitioning hash join gathers in probe order, i.e. gfur).
  materialization strategy = materialization::automatic;
  double predicted_gfur_seconds = 0;
  double predicted_gftr_seconds = 0;
};

/// Count and checksum of what a table result would hold: the wrapping uint64 sum of every output
/// value (key, then each chosen payload of both sides; nulls add 0). Signed values are
/// sign-extended to 64 bits first; floating-point payloads are not allowed in joins.
struct join_aggregate {
  std::uint64_t count = 0;
  std::uint64_t checksum = 0;
};

struct join_result {
  output_form form = output_form::index;
  /// index form: row ids of join_options::index_type (int64 or int32). Inner and the outer kinds
  /// fill both (-1 for the missing side of an unmatched row); left semi / anti fill probe_rows
  /// only, right semi / anti build_rows only (the other is empty).
  column build_rows;
  column probe_rows;
  /// table form: the key (probe side's value; with several key columns, one column each, the
  /// probe side's values or the build side's where a row has no probe row), build payloads in
  /// the order asked for, then probe payloads. The payloads of a side an outer join may leave
  /// out are nullable; left semi / anti carry no build payloads, right semi / anti no probe
  /// payloads (and their keys are the build side's).
  table columns;
  /// aggregate form; the table form fills it too (from its columns), the index form only its
  /// count (checksum 0: row ids do not depend on payloads, and computing one would read them).
  join_aggregate aggregate;
  join_stats stats;

  [[nodiscard]] size_type num_rows() const noexcept {
    return static_cast<size_type>(aggregate.count);
  }
};

/// Joins `build` and `probe` on one key column each. Results are allocated from `mr` (nullptr:
/// host memory when both key columns are host-resident or the CPU backend runs, else device
/// memory). backend::automatic runs on the GPU when one is present. Throws logic_error on an
/// unsupported combination, out_of_memory when the result cannot fit the budget.
join_result join(table_view const& build, size_type build_key, table_view const& probe,
                 size_type probe_key, join_options const& options = {},
                 stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);

/// Joins on several key columns (up to 8 a side, pairwise of the same type): rows match when
/// every key column is equal. Keys and payloads may be any integer or floating-point type and
/// hold NULLs (join_options::nulls, nans_equal); string columns (string / large_string, in host
/// memory) are keys (a string key joins a string key, string or large_string) and payloads,
/// results holding them in host memory (DESIGN.md 7.1b). bool, date, timestamp and decimal
/// columns are keys (a pair of the same type and scale) and payloads, results keeping their types
/// (7.1c). One key column of int32/int64/uint32/uint64
/// without NULLs and an inner or left kind is the one-key join above; anything else takes the
/// general key path: keys packed into one integer when their value ranges fit 64 bits, else
/// hashed and every match checked against the columns.
join_result join(table_view const& build, std::vector<size_type> const& build_keys,
                 table_view const& probe, std::vector<size_type> const& probe_keys,
                 join_options const& options = {}, stream_ref stream = default_stream(),
                 memory_resource_ref mr = nullptr);

/// Receives a join's result batch by batch (join_batches): each batch is a join_result of the
/// requested form holding some of the output rows, its aggregate counting those rows.
using join_batch_sink = std::function<void(join_result&& batch)>;

/// join() with the result handed to `sink` in batches as it is made, so that a result larger
/// than the device, or than host memory, never exists in one piece. The streamed join delivers
/// one batch per probe chunk; the other algorithms deliver their whole result as one batch.
/// The aggregate form delivers no batches. Returns the totals (aggregate) and statistics, with
/// no rows.
join_result join_batches(table_view const& build, size_type build_key, table_view const& probe,
                         size_type probe_key, join_options const& options,
                         join_batch_sink const& sink, stream_ref stream = default_stream(),
                         memory_resource_ref mr = nullptr);
/// join_batches() on several key columns (see the several-key join()); the general key path
/// delivers its result as one batch.
join_result join_batches(table_view const& build, std::vector<size_type> const& build_keys,
                         table_view const& probe, std::vector<size_type> const& probe_keys,
                         join_options const& options, join_batch_sink const& sink,
                         stream_ref stream = default_stream(), memory_resource_ref mr = nullptr);

// Names, as used on the command line and in statistics.
std::string_view to_string(join_algorithm a) noexcept;
std::string_view to_string(join_kind k) noexcept;
std::string_view to_string(output_form f) noexcept;
std::string_view to_string(materialization m) noexcept;
std::string_view to_string(output_writer w) noexcept;
std::string_view to_string(css_node_search s) noexcept;
std::string_view to_string(radix_join_partitioning p) noexcept;
join_algorithm join_algorithm_from_string(std::string_view name);
join_kind join_kind_from_string(std::string_view name);
std::string_view to_string(null_equality n) noexcept;
/// "unequal" or "equal"; throws logic_error otherwise.
null_equality null_equality_from_string(std::string_view name);
materialization materialization_from_string(std::string_view name);
output_writer output_writer_from_string(std::string_view name);
/// "binary" or "sequential"; throws logic_error otherwise.
css_node_search css_node_search_from_string(std::string_view name);
/// "automatic" or "cub"; throws logic_error otherwise.
radix_join_partitioning radix_join_partitioning_from_string(std::string_view name);
std::vector<join_algorithm> all_join_algorithms();

/// Throws logic_error unless `index_type` is int64, or int32 with both sides within 2^31 - 1
/// rows (what join() checks before it runs).
void check_index_type(type_id index_type, size_type build_rows, size_type probe_rows);

/// Which (backend, algorithm) pairs this build implements; used by automatic and by tests.
bool join_supported(backend b, join_algorithm a, join_kind k, predicate::kind_type p);
/// The algorithms implemented on a backend in this build.
std::vector<join_algorithm> join_algorithms_on(backend b);

}  // namespace joinery
