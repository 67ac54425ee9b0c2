#pragma once
// joinery bench multi-gpu: the exchange and the multi-GPU joins on 1, 2, 4, ...
// GPUs.
#include <cstdint>
#include <string>

namespace joinery::cli {

struct multi_gpu_bench_args {
  /// |R| of workload A (|S| = 10 |R|, 4-byte keys and values) and of workload B
  /// (|R| = |S|, 8-byte keys and values).
  std::int64_t rows = std::int64_t{1} << 26;
  int runs = 3;
  int warmup = 1;
  std::string out;  // append JSON lines here ("" = none)
  std::uint64_t seed = 42;
  std::string revision;
  std::string date;
  /// Sections to run, comma-separated: exchange, A, B, groupby (empty: all).
  std::string parts;
};

/// The all-to-all (equal buckets between every pair of GPUs, 1 GiB sent by
/// each) by peer copies and by NCCL; then Maltenberger et al.'s workloads A and
/// B (aggregate output) with inputs in GPU 0's memory and in pinned host
/// memory, on 1, 2, 4, ... GPUs (powers of two up to all) by multi_gpu_hash and
/// multi_gpu_sort_merge, beside the single-GPU radix_hash and sort_merge joins;
/// and the group-by of 2^28 rows (int32 keys over 2^10, 2^20 and 2^24 groups,
/// SUM of two int32 values) by multi_gpu beside the single-GPU automatic
/// group-by. Every line records the phases, the rows per second and the
/// speed-up over one GPU.
void run_multi_gpu_bench(multi_gpu_bench_args const& a);

}  // namespace joinery::cli
