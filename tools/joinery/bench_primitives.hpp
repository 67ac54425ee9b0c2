#pragma once
// joinery bench primitives: the GPU primitives against the measured device-copy bandwidth.
#include "primitives/detail/partition_policy.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace joinery::cli {

/// The text of the options that tune the swwc and hierarchical rows (empty: not given):
/// --swwc-policy, --swwc-align, --swwc-log2b, --swwc-b, --hswwc-log2c, --hswwc-log2r.
struct swwc_options {
  std::string policy, align, log2b, b, log2c, log2r;
  [[nodiscard]] bool given() const {
    return !policy.empty() || !align.empty() || !log2b.empty() || !b.empty() || !log2c.empty() ||
           !log2r.empty();
  }
};

/// The options as swwc_tuning (fields not given stay empty); input_error naming the option and
/// what it takes otherwise.
detail::gpu::swwc_tuning parse_swwc_tuning(swwc_options const& o);

struct primitives_bench_args {
  std::int64_t rows = std::int64_t{1} << 28;
  int runs = 5;
  int warmup = 1;
  std::string out;       // append JSON lines here ("" = none)
  std::uint64_t seed = 42;
  std::string revision;  // recorded with every line
  std::string date;
  /// Partition algorithms to time (names of partition_algorithm, "tuples" for
  /// radix_partition_tuples, "split", or "access" for map,
  /// gather and scatter); empty: all, and the sorts. A list skips the sorts (the slow rows), for quick A/B runs of the partitionings.
  std::vector<std::string> partition_algorithms;
  /// Zipf exponent of the keys (0: uniform over the key type); skewed keys are drawn from 2^24
  /// values, so few digits hold most tuples.
  double zipf = 0;
  /// Digit widths of the radix-partition rows (--bits).
  std::vector<int> bits = {8, 9, 10, 11};
  /// Overrides of the swwc and hierarchical rows' choices (--swwc-policy, --swwc-align,
  /// --swwc-log2b, --swwc-b, --hswwc-log2c, --hswwc-log2r); recorded in their JSON lines.
  detail::gpu::swwc_tuning swwc{};
};

/// For 4- and 8-byte tuples halves (key + payload of that width): the device-to-device copy
/// (the roofline), one radix-partition pass at 8..11 bits per algorithm, the sort of the pairs
/// (CUB radix sort and merge path merge sort), He et al.'s map, gather and scatter (clustered and
/// unclustered) and split, the radix histogram and the prefix scan; GB/s
/// counts bytes read + written. Needs a GPU.
void run_primitives_bench(primitives_bench_args const& a);

}  // namespace joinery::cli
