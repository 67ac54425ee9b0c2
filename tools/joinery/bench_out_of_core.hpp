#pragma once
// joinery bench out-of-core: joins whose data starts in host memory, against the link roofline.
#include <cstdint>
#include <string>

namespace joinery::cli {

struct out_of_core_bench_args {
  /// |S| of the default join (|R| = |S| / 2), and the largest |S| of the streamed sweep.
  std::int64_t rows = std::int64_t{1} << 28;
  std::int64_t max_rows = std::int64_t{1} << 32;
  /// Largest |R| = |S| of the triton section (its inputs and partitioned copies must fit host
  /// memory: 2^29 a side takes 16 GiB of inputs and 16 GiB of pinned partitions).
  std::int64_t triton_max_rows = std::int64_t{1} << 29;
  /// Rows of the streamed group-by section (int32 key, two int32 values: 12 bytes a row).
  std::int64_t groupby_rows = std::int64_t{1} << 30;
  int runs = 3;
  int warmup = 1;
  std::string out;  // append JSON lines here ("" = none)
  std::uint64_t seed = 42;
  std::string revision;
  std::string date;
  /// Sections to run, comma-separated: link, default, index, streamed, cpu, triton, cliff, ratio,
  /// groupby (empty: all).
  std::string parts;
};

/// The link (pinned and pageable copies each way, both ways at once, the host's parallel copy),
/// then the default join (|R| = rows / 2, |S| = rows, 4-byte keys and one 4-byte payload a
/// side, aggregate output) from pageable and pinned host memory by each GPU route (the in-GPU
/// radix join after the copies, streamed, automatic) beside the same join on device-resident
/// data (the ceiling) and on the CPU backend (the floor); the index form to host memory; and the
/// streamed sweep, |R| = 2^27 with |S| from 2^28 to max_rows in pinned memory. Every line
/// records the bytes that cross each way, the link roofline and the fraction of it reached.
/// The triton section runs Lutz et al.'s workload (see run_triton in the source).
void run_out_of_core_bench(out_of_core_bench_args const& a);

}  // namespace joinery::cli
