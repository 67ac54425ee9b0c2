#pragma once
// joinery bench gpu-groupby: every GPU group-by side by side over the number of groups (Wu et al.
// Figures 15-20), against the read-once roofline.
#include <cstdint>
#include <string>
#include <vector>

namespace joinery::cli {

struct gpu_groupby_bench_args {
  std::int64_t rows = std::int64_t{1} << 28;
  std::int64_t min_groups = 1;
  std::int64_t max_groups = std::int64_t{1} << 26;
  /// Algorithms by name ("" = every GPU algorithm, then automatic).
  std::vector<std::string> algorithms;
  std::string key_type = "int32";
  double zipf = 0;
  /// Keys times an odd constant (a bijection of their bits): g keys spread over the key type.
  bool spread_keys = false;
  /// Aggregate shapes by name (bench_shapes_help; empty: max2 and sum2).
  std::vector<std::string> shapes;
  int runs = 5;
  int warmup = 1;
  std::string out;       // append JSON lines here ("" = none)
  std::uint64_t seed = 42;
  std::string revision;  // recorded with every line
  std::string date;
  /// --tuning: KEY=VALUE[,KEY=VALUE...] setting fields of the GPU group-bys' tuning struct
  /// (detail::gpu::groupby_tuning; keys: its field names without the `hgb_` prefix, see
  /// tuning_keys_help), for A/B runs. "" = none: the public group-by runs; else the internal
  /// entry point with that tuning, and every JSON line records it ("tuning").
  std::string tuning;
};

/// The keys --tuning takes, with their values, for the CLI's help.
char const* tuning_keys_help();

/// The aggregate shapes --shapes takes, for the CLI's help.
char const* bench_shapes_help();

/// |R| = rows of (key, p0, p1) with int32 payloads, g = min_groups, 4 min_groups, .. max_groups
/// (capped by rows), keys
/// uniform (or Zipf) over g values; MAX(p0), MAX(p1) and then SUM(p0), SUM(p1); every GPU
/// algorithm (and automatic, which reports the algorithm it ran) on the same device-resident input; all must agree on the groups. Reports G rows/s
/// and the fraction of the read-once roofline (input bytes over the measured device-to-device
/// copy bandwidth, read + write). Needs a GPU. A bad --tuning is refused (input_error) before
/// anything runs.
void run_gpu_groupby_bench(gpu_groupby_bench_args const& a);

}  // namespace joinery::cli
