#pragma once
// joinery bench general-keys: the general key path (several key columns, NULLs) against the
// one-key path on the same rows.
#include <cstdint>
#include <string>

namespace joinery::cli {

struct keys_bench_args {
  std::int64_t rows = std::int64_t{1} << 26;  ///< |S| (|R| = |S| / 2); group-by input rows
  std::string backend = "gpu";
  int runs = 5;
  int warmup = 1;
  std::string out;  // append JSON lines here ("" = none)
  std::uint64_t seed = 42;
  std::string revision;
  std::string date;
  /// Sections, comma-separated: join, nulls, groupby, strings (empty: all).
  std::string parts;
};

/// join: a PK-FK join (|R| = rows / 2 unique keys, |S| = rows matching foreign keys, one int32
/// payload a side) with each key as one int64 column, as two int32 columns (packed) and as two
/// int64 columns over their whole range (hashed and checked), in the aggregate and table forms.
/// nulls: one int32 key and payload a side, without NULLs and with 10% NULL keys and payloads.
/// groupby: rows rows, 2^16 groups, SUM of one int32 value: one int64 key against two int32
/// keys, and the value without and with 10% NULLs. Inputs in device memory on the GPU backend
/// (host memory on the CPU backend); wall times of the whole call, medians.
/// strings: string keys (random ASCII, mean length 16) against int64 keys on the same rows, for
/// a PK-FK join (aggregate and table forms, an int32 payload a side) and a group-by at 2^16
/// groups; every input in host memory on both backends.
void run_keys_bench(keys_bench_args const& a);

}  // namespace joinery::cli
