#pragma once
// Internal (included by src/groupby/gpu/*.cu only): an aggregation request compiled into a few
// accumulators, each a dense array indexed by group id that every algorithm updates with the
// same device functions (detail/accumulate.cuh). Deduplicated like the CPU backend: sum and avg
// of one column share one sum, count is kept once.
//
// Accumulator representations (chosen so that every update is one native atomic and every
// identity is a byte pattern that cudaMemsetAsync can write):
//   count      uint64, +1 per row                                     identity 0
//   sum_int    uint64, sign- or zero-extended value, wrapping add     identity 0
//   sum_int128 {uint64 lo, uint64 hi}, exact (two atomics, carry)     identity 0
//   sum_float  double                                                 identity 0 (+0.0)
//   min / max  the value mapped to an order-preserving unsigned word  identity all ones / 0
//              of its width (signed: flip the sign bit; floats: flip the sign bit of
//              positives, every bit of negatives), so that atomicMin/atomicMax on unsigned
//              words serve every type.
//   sum_lo32   HGB's dense tier only, for a sum_int of int32 values:  identity 0
//              an int32 partial in shared memory (4 bytes a group, half of sum_int's), whose
//              overflowing adds count the +-2^32 they lost in a spill array in device memory
//              (acc_batch::spill); the global accumulators stay sum_int. Counted
//              (acc_spec::counted): the overflows count first in a 16-bit counter a group in
//              shared memory (6 bytes a group), which moves them to the spill array 2^14 at a
//              time (acc_batch::count_offset).
#include <joinery/groupby.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace joinery::detail::gpu::gb {

enum class acc_op : std::uint8_t { count, sum_int, sum_int128, sum_float, min, max, sum_lo32 };
enum class value_kind : std::uint8_t { i32, u32, i64, u64, f32, f64 };

constexpr value_kind value_kind_of(type_id t) noexcept {
  switch (t) {
    case type_id::int32: return value_kind::i32;
    case type_id::uint32: return value_kind::u32;
    case type_id::int64: return value_kind::i64;
    case type_id::uint64: return value_kind::u64;
    case type_id::float32: return value_kind::f32;
    default: return value_kind::f64;
  }
}
constexpr int value_bytes(value_kind k) noexcept {
  return k == value_kind::i32 || k == value_kind::u32 || k == value_kind::f32 ? 4 : 8;
}
constexpr bool value_signed(value_kind k) noexcept {
  return k == value_kind::i32 || k == value_kind::i64;
}
constexpr bool value_floating(value_kind k) noexcept {
  return k == value_kind::f32 || k == value_kind::f64;
}
/// Bytes per group of an accumulator.
constexpr int acc_bytes(acc_op op, value_kind in) noexcept {
  switch (op) {
    case acc_op::sum_int128: return 16;
    case acc_op::sum_lo32: return 4;
    case acc_op::min:
    case acc_op::max: return value_bytes(in);
    default: return 8;
  }
}
/// The byte every identity is made of (for cudaMemsetAsync).
constexpr int acc_identity_byte(acc_op op) noexcept { return op == acc_op::min ? 0xff : 0; }

struct acc_spec {
  acc_op op = acc_op::count;
  value_kind in = value_kind::u64;
  size_type column = -1;  ///< input column (-1: count)
  bool counted = false;   ///< sum_lo32: its overflows counted in shared memory first
  [[nodiscard]] int bytes() const noexcept { return acc_bytes(op, in) + (counted ? 2 : 0); }
};

/// One requested aggregate: which accumulator(s) it is computed from.
struct output_spec {
  aggregation_kind kind = aggregation_kind::count;
  type_id input = type_id::int64;
  int acc = -1;        ///< the accumulator holding its value (the sum, for avg)
  int count_acc = -1;  ///< avg: the count
};

struct agg_plan {
  std::vector<acc_spec> accs;
  std::vector<output_spec> outputs;
  /// Bytes of accumulators per group.
  [[nodiscard]] std::size_t bytes_per_group() const noexcept {
    std::size_t b = 0;
    for (auto const& a : accs) { b += static_cast<std::size_t>(a.bytes()); }
    return b;
  }
};

/// The plan's distinct aggregated columns, in order of first use.
inline std::vector<size_type> aggregated_columns(agg_plan const& plan) {
  std::vector<size_type> columns;
  for (auto const& a : plan.accs) {
    if (a.column >= 0 && std::find(columns.begin(), columns.end(), a.column) == columns.end()) {
      columns.push_back(a.column);
    }
  }
  return columns;
}

/// Compiles the request; `rows` decides whether a 64-bit sum of 4-byte integers is exact (it is
/// below 2^32 rows) or avg needs the 128-bit sum.
agg_plan make_plan(table_view const& input, std::vector<aggregation> const& aggs, size_type rows);

// ---- what the kernels receive (by value) ------------------------------------------------------

/// Accumulators one kernel launch updates; longer plans run in several batches.
inline constexpr int max_batch_accs = 8;

/// Where accumulator a reads the value of logical row i: base + row * stride + offset, where row
/// is i, or row_ids[i] when the batch carries row ids (sort with gather from the untransformed
/// relation).
struct acc_source {
  void const* base = nullptr;
  std::uint32_t stride = 0;  ///< bytes
  std::uint32_t offset = 0;  ///< bytes
};

struct acc_batch {
  int count = 0;
  acc_op op[max_batch_accs] = {};
  value_kind in[max_batch_accs] = {};
  acc_source src[max_batch_accs] = {};
  void* data[max_batch_accs] = {};                 ///< global accumulator arrays
  /// sum_lo32: the overflows of the dense tier's 32-bit partials, counted in units of 2^32 by a
  /// 32-bit word per slot of the window (mod 2^32, which is exact for a sum mod 2^64); the
  /// fix-up adds them to `data` after the launch.
  unsigned* spill[max_batch_accs] = {};
  std::uint32_t smem_offset[max_batch_accs] = {};  ///< shared-memory path: byte offset of each array
  /// counted sum_lo32: byte offset of its 16-bit overflow counters, after its partials in the
  /// same array (0: none).
  std::uint32_t count_offset[max_batch_accs] = {};
  std::uint32_t smem_bytes = 0;                    ///< shared-memory path: bytes in all
  std::uint32_t const* row_ids32 = nullptr;        ///< row ids (at most one of the two is set)
  std::int64_t const* row_ids64 = nullptr;
};

/// One finalised output column, for the finalize kernel.
struct output_desc {
  aggregation_kind kind = aggregation_kind::count;
  acc_op op = acc_op::count;
  value_kind in = value_kind::u64;
  void const* acc = nullptr;
  void const* count = nullptr;  ///< avg
};

}  // namespace joinery::detail::gpu::gb
