#pragma once
// Internal, host-only: the cost model that chooses between GFUR and GFTR materialization
// (Wu et al. 2025, 4.1.3-4.1.4), generalised to our sides, widths and sort bits.
//
// Both strategies share the transformation of (key, row id) pairs and the match finding; they
// differ only in how the output's payload columns (and the probe key) are produced:
//   GFUR  per column: one gather of M output rows through permuted row ids (unclustered reads;
//         past the first read of each of the side's N rows, repeats are adjacent in the output
//         and hit the cache). Its join also reads both sides' 32-bit row ids while writing the
//         output, where GFTR writes positions it computes: that read is charged to GFUR.
//   GFTR  per column: a transform of the whole side (N rows) with the key's stable radix sort,
//         then a gather of M rows through positions into it: monotone positions on the probe
//         side (sequential reads), random within a partition on the build side (clustered;
//         sort-merge's build positions are monotone too, modelled the same). The transform is
//         either a CUB sort of (key, value) pairs over the same bits (a histogram pass over the
//         keys, then ceil(bits / 8) digit passes at the device's measured sort-pass speed, well
//         below copy speed) or a gather through the sort's permutation (random reads over N
//         rows), whichever is cheaper. The probe key needs no transform: the join already holds
//         the sorted probe keys.
// Costs are bytes over the device's measured bandwidths; bandwidths come from the caller (the GPU
// backend measures them once per device, tests pass synthetic or recorded numbers).
#include <joinery/join.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace joinery::detail {

/// Measured bandwidths, bytes per second: the public struct (join.hpp), which
/// join_options::tuning.bandwidths may give instead of the measurement.
using device_bandwidths = joinery::device_bandwidths;

/// Why `bw` cannot feed the model ("" when it can): the three gather/copy bandwidths must be
/// positive, the others at least 0, every field finite.
std::string bandwidths_problem(device_bandwidths const& bw);

/// Bandwidths from text (the benchmark's --device-bandwidths, a measurement recorded earlier):
/// seven comma-separated numbers in the order of device_bandwidths' fields (sequential,
/// clustered_gather, unclustered_gather, l2_bytes, unclustered_column_bytes, sort_pass_4_4,
/// sort_pass_4_8). The three gather/copy bandwidths must be positive, the others at least 0.
/// Throws input_error naming `source` on anything else.
device_bandwidths parse_bandwidths(std::string const& text, std::string const& source);

struct materialize_workload {
  size_type build_rows = 0;
  size_type probe_rows = 0;
  size_type output_rows = 0;
  int key_bytes = 4;
  /// Widths (bytes) of the payload columns taken from each side (empty for semi/anti build).
  std::vector<int> build_widths;
  std::vector<int> probe_widths;
  /// Bits [0, bits) the stable radix sort of each side orders by (radix join: the partition bits;
  /// sort-merge: all key bits); 0 means the side keeps its input order.
  int build_sort_bits = 0;
  int probe_sort_bits = 0;
  /// GFTR packs consecutive payload columns of a side into bundles of at most 8 bytes
  /// (payload_bundles), transforms each bundle once and gathers its columns in one pass. false:
  /// one transform and one gather per column (the model of recorded runs that moved each column
  /// alone).
  bool bundle_payloads = false;
  /// The build side's output is nullable (left outer join): its columns are not bundled.
  bool build_nullable = false;
  /// GFTR decided before the join (radix join, inner): each side's first bundle (not nullable)
  /// rides the join's own sort in place of its 32-bit row ids, so it costs no transform of its
  /// own, only the packing (several columns, or one narrower than 4 bytes) and the sort's wider
  /// values; the other bundles are transformed as above. Needs bundle_payloads.
  bool carry_first_bundle = false;
};

/// Whether GFTR with carried bundles writes the output table in the join itself (fused): every
/// payload of each side in its first bundle, no nullable side. The radix join's inner joins do.
bool fused_output(materialize_workload const& w);

/// Consecutive payload columns packed together (GFTR): [first, first + count) of a side's
/// payload list, total width `bytes` (at most 8), moved as one 4-byte (bytes <= 4) or 8-byte
/// value.
struct payload_bundle {
  int first = 0;
  int count = 0;
  int bytes = 0;
  [[nodiscard]] int value_bytes() const { return bytes <= 4 ? 4 : 8; }
};

/// The bundles of a side's payload widths (1/2/4/8 bytes), greedily in order: a column joins the
/// current bundle while the bundle stays within 8 bytes.
std::vector<payload_bundle> payload_bundles(std::vector<int> const& widths);

/// Seconds each strategy spends on what the other does not: materializing the table, plus, for
/// GFUR, the join write's reads of the sorted sides' row ids.
struct materialize_estimate {
  double gfur_seconds = 0;
  double gftr_seconds = 0;
  /// gfur or gftr: the cheaper (gfur on a tie).
  materialization choice = materialization::gfur;
};

/// Seconds to bring one `width`-byte column of n rows into the order of a stable radix sort over
/// `sort_bits` bits of `key_bytes`-byte keys: min of the sort-pairs and the permute transform.
double transform_seconds(size_type n, int key_bytes, int width, int sort_bits,
                         device_bandwidths const& bw);
/// Whether sorting (key, value) pairs is cheaper than permuting the column (ties: sort, which
/// reads and writes sequentially).
bool sort_transform_cheaper(size_type n, int key_bytes, int width, int sort_bits,
                            device_bandwidths const& bw);
/// How a gather's ids walk its source column.
enum class access_pattern : std::uint8_t { sequential, clustered, unclustered };

/// Seconds of a stable radix sort of n (`key_bytes` key, `width`-byte value) pairs over bits
/// [0, sort_bits): a histogram pass over the keys plus ceil(sort_bits / 8) digit passes.
double sort_pairs_seconds(size_type n, int key_bytes, int width, int sort_bits,
                          device_bandwidths const& bw);

/// Seconds of a gather of m `width`-byte values through int64 ids from a column of n rows
/// (unclustered: only the first read of each source row is random, m > n repeats hit the cache).
double gather_seconds(size_type m, int width, access_pattern access, size_type n,
                      device_bandwidths const& bw);

materialize_estimate estimate_materialization(materialize_workload const& w,
                                              device_bandwidths const& bw);

}  // namespace joinery::detail
