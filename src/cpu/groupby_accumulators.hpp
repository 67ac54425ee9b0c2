#pragma once
// Internal: the pieces shared by the CPU group-bys. An aggregation request is compiled into a few
// typed accumulators (deduplicated: sum and avg of one column share one sum, count is kept once),
// each a dense array indexed by group id and updated a chunk of rows at a time, so that the per-row
// loops are tight, typed and free of dispatch. A group table maps keys to dense group ids.
#include "cpu/aligned_array.hpp"
#include <joinery/groupby.hpp>

#include "core/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace joinery::detail::cpu {

enum class acc_kind : std::uint8_t {
  count,     ///< int64
  sum_wrap,  ///< uint64, wrapping (two's complement of the signed sum)
  sum_i64,   ///< int64, exact: 4-byte inputs over fewer than 2^31 rows cannot overflow it
  sum_i128,  ///< __int128, exact sum of 8-byte integers (for avg)
  sum_f64,   ///< double
  min,
  max,
};

/// Type-erased operations on one accumulator array, instantiated per (kind, value type).
struct acc_ops {
  std::size_t width = 0;        ///< bytes per group
  std::size_t value_width = 0;  ///< bytes per input value (0: reads no column)
  void (*init)(std::byte* acc, std::size_t from, std::size_t to) = nullptr;
  /// acc[gids[i]] op= values[i] for i < n.
  void (*update)(std::byte* acc, std::uint32_t const* gids, void const* values,
                 std::size_t n) = nullptr;
  /// acc[gid] op= values[0] op ... op values[n - 1]: rows of one group, folded in registers
  /// (a[gids[i]] op= v[i] with one gid chains every row through a store and a reload).
  void (*reduce)(std::byte* acc, std::uint32_t gid, void const* values, std::size_t n) = nullptr;
  /// dst[dst_gids[i]] op= src[src_gids[i]] for i < n.
  void (*merge)(std::byte* dst, std::uint32_t const* dst_gids, std::byte const* src,
                std::uint32_t const* src_gids, std::size_t n) = nullptr;
};

struct acc_spec {
  acc_kind kind = acc_kind::count;
  type_id type = type_id::int64;  ///< input value type
  size_type column = -1;          ///< input column (-1: count)
  acc_ops ops;
};

/// Where one requested aggregate comes from.
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
  [[nodiscard]] std::size_t acc_bytes() const noexcept;
};

/// Compiles the request; `rows` bounds the group sizes (it decides whether int64 sums are exact).
agg_plan make_plan(table_view const& input, std::vector<aggregation> const& aggs, size_type rows);

using aligned_bytes = aligned_array<std::byte>;

/// The accumulators of a set of groups, dense by group id.
class acc_set {
 public:
  acc_set() = default;
  explicit acc_set(agg_plan const* plan) : plan_(plan), data_(plan->accs.size()) {}
  /// Grows to at least `groups` (identity-initialised where new).
  void grow(std::size_t groups);
  /// Allocates exactly `groups`, uninitialised (the caller initialises in parallel).
  void allocate(std::size_t groups);
  [[nodiscard]] std::byte* data(std::size_t a) const noexcept { return data_[a].get(); }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] agg_plan const& plan() const noexcept { return *plan_; }

 private:
  agg_plan const* plan_ = nullptr;
  std::vector<aligned_bytes> data_;
  std::size_t capacity_ = 0;
};

/// Open addressing with linear probing from the key's mixed hash (low bits: slot; the high bits
/// are left to radix partitioning). Slots hold the key beside its group id so that a probe
/// touches one cache line; keys and accumulators are dense by group id.
template <class K>
class group_table {
 public:
  /// Load at most 1/4: a probe past the first slot is an unpredictable branch, dearer than the
  /// extra slot memory while the table is cache-sized (at 1/2, g = 2^12 ran 1.7x slower).
  static constexpr std::size_t slots_per_group = 4;
  struct slot {
    K key;
    std::uint32_t id;  ///< group + 1; 0 = empty (so a zeroed array is an empty table)
  };

  group_table(agg_plan const* plan, std::size_t expected_groups);

  [[nodiscard]] std::size_t size() const noexcept { return keys_.size(); }
  [[nodiscard]] K const* keys() const noexcept { return keys_.data(); }
  [[nodiscard]] acc_set const& accs() const noexcept { return accs_; }
  [[nodiscard]] acc_set& accs() noexcept { return accs_; }

  std::uint32_t find_or_insert(K key) {
    auto const h = mix64(static_cast<std::uint64_t>(key));
    auto s = h & mask_;
    for (;;) {
      auto const& sl = slots_[s];
      if (sl.id == 0) { return insert_at(s, key); }
      if (sl.key == key) { return sl.id - 1; }
      s = (s + 1) & mask_;
    }
  }

  /// Aggregates rows [0, n): `values[a]` is accumulator a's input at row 0 (nullptr for count).
  /// Returns the rows consumed: n, or fewer once the table holds more than `max_groups` groups.
  std::size_t aggregate(K const* keys, void const* const* values, std::size_t n, std::size_t chunk,
                 std::size_t max_groups);

  /// Empties the table but keeps its memory, so that one table serves many partitions without
  /// faulting in fresh pages for each.
  void clear();

  /// Merges groups `src_gids[0..n)` of `src` into this table.
  void merge_from(group_table const& src, std::uint32_t const* src_gids, std::size_t n,
                  std::size_t chunk);

 private:
  std::uint32_t insert_at(std::size_t s, K key);
  /// Folds rows [begin, begin + len) of one key into its group (aggregate's single-key chunks).
  [[gnu::noinline]] void reduce_chunk(K key, void const* const* values, std::size_t begin,
                                      std::size_t len);
  void rehash(std::size_t slot_count);

  agg_plan const* plan_;
  std::vector<slot> slots_;
  std::uint64_t mask_ = 0;
  std::vector<K> keys_;
  acc_set accs_;
};

/// A run of finished groups: their keys and accumulators (pointers at the run's first group).
template <class K>
struct group_run {
  K const* keys = nullptr;
  std::size_t groups = 0;
  std::vector<std::byte const*> accs;
};

/// The result table (key, then one column per requested aggregate), runs written in order, in
/// parallel.
template <class K>
table finalize_groups(agg_plan const& plan, std::vector<group_run<K>> const& runs);

/// group_run over groups [from, from + n) of `accs` with keys `keys` (already offset).
template <class K>
group_run<K> run_of(acc_set const& accs, K const* keys, std::size_t from, std::size_t n) {
  group_run<K> r{keys, n, {}};
  for (std::size_t a = 0; a < accs.plan().accs.size(); ++a) {
    r.accs.push_back(accs.data(a) + from * accs.plan().accs[a].ops.width);
  }
  return r;
}

}  // namespace joinery::detail::cpu
