#pragma once
// Internal: the row-wise steps of the general key path, on the host (OpenMP) or on the GPU. The
// pipeline (general_join.cpp) is written once against this interface; each implementation keeps
// its columns in its own memory space (host, or device memory of the current GPU).
#include "primitives/key_encoding.hpp"

#include <joinery/column.hpp>
#include <joinery/memory.hpp>
#include <joinery/table.hpp>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace joinery::detail::keys {

/// One side's keys after encoding: the key of every matchable row, and (when some row cannot
/// match) those rows' ids and a per-row flag (1: matchable).
struct encoded_keys {
  column keys;
  column row_ids;    ///< int64; empty when every row is matchable
  column matchable;  ///< uint8 per row; empty when every row is matchable
  bool all_rows = true;
};

/// A column as the encoders read it (its mask only when it holds NULLs).
inline key_column key_column_of(column_view const& c) {
  key_column k;
  k.data = c.data();
  k.mask = c.null_count() > 0 ? c.null_mask() : nullptr;
  k.width = static_cast<std::uint8_t>(size_of(c.type()));
  k.cls = is_floating(c.type())  ? value_class::floating
          : is_signed(c.type()) ? value_class::signed_int
                                : value_class::unsigned_int;
  return k;
}

/// Calls f(type_tag<U>{}) with the unsigned integer type of `width` bytes (1, 2, 4 or 8).
template <class F>
decltype(auto) with_unsigned_of_width(std::size_t width, F&& f) {
  switch (width) {
    case 1: return f(type_tag<std::uint8_t>{});
    case 2: return f(type_tag<std::uint16_t>{});
    case 4: return f(type_tag<std::uint32_t>{});
    default: return f(type_tag<std::uint64_t>{});
  }
}

/// The columns of a table as row operations in `space` read them: those `used` names copied
/// there where they are not readable (device kernels read device memory; pinned memory would
/// serve, but random gathers over the link are slow; host operations read host and pinned
/// memory). `at(c)` indexes like the table's columns.
struct readable_columns {
  std::vector<column> owned;
  std::vector<column_view> views;
  [[nodiscard]] column_view const& at(size_type c) const {
    return views[static_cast<std::size_t>(c)];
  }
};

inline readable_columns make_readable(table_view const& t, std::vector<size_type> const& used,
                                      memory_space space, stream_ref stream) {
  readable_columns r;
  r.views = t.columns();
  r.owned.reserve(used.size());
  bool const on_device = space == memory_space::device;
  for (auto c : used) {
    auto& v = r.views[static_cast<std::size_t>(c)];
    bool const readable = on_device ? v.space() == memory_space::device
                                    : host_accessible(v.space());
    if (readable) { continue; }
    r.owned.push_back(
      column::copy_of(v, on_device ? device_resource() : host_resource(), stream));
    v = r.owned.back().view();
  }
  return r;
}

/// `c` in the space of `mr` (as it is when `mr` is null or already its space).
inline column moved_to(column&& c, memory_resource_ref mr, stream_ref stream) {
  if (mr == nullptr || mr->space() == c.space() || (c.size() == 0 && c.view().data() == nullptr)) {
    return std::move(c);
  }
  return column::copy_of(c.view(), mr, stream);
}

class row_ops {
 public:
  virtual ~row_ops() = default;
  /// The memory space of every column the operations make (and read).
  [[nodiscard]] virtual memory_space space() const = 0;
  /// Min / max ordered value over the valid rows (NaNs only when `nans_equal`) and whether a
  /// NULL occurs.
  virtual column_range scan_range(key_column const& c, size_type rows, bool nans_equal) = 0;
  /// The keys of the matchable rows (uint32 or uint64 as `key_type`).
  virtual encoded_keys encode(key_layout const& k, size_type rows, type_id key_type) = 0;
  /// out[i] = ids[i] < 0 ? -1 : subset[ids[i]] (int64).
  virtual column remap(column_view const& ids, column_view const& subset) = 0;
  /// Keeps the pairs (build_rows[i], probe_rows[i]) whose keys are equal in every column.
  virtual void keep_equal_pairs(key_layout const& build, key_layout const& probe,
                                column& build_rows, column& probe_rows) = 0;
  /// uint8 flags of `rows` rows: 1 where some rows[i] names the row (ids < 0 are skipped).
  virtual column flags_of(column_view const& ids, size_type rows) = 0;
  /// The ids (int64, ascending) of the rows whose flag equals `value`.
  virtual column select(column_view const& flags, std::uint8_t value) = 0;
  /// a followed by b (int64).
  virtual column concat(column_view const& a, column_view const& b) = 0;
  /// `rows` copies of `value` (int64).
  virtual column constant(size_type rows, std::int64_t value) = 0;
  /// out[i] = a[ids_a[i]] when ids_a[i] >= 0 and that value is valid, else b[ids_b[i]] the same
  /// way (when `b` has data), else NULL (stored as 0). The result is nullable when some row may
  /// be NULL.
  virtual column gather(column_view const& a, column_view const& ids_a, column_view const& b,
                        column_view const& ids_b) = 0;
  /// The wrapping sum of what gather(a, ids_a, b, ids_b) would hold (NULLs add 0; integers
  /// sign-extended, floats as their bits), without writing it.
  virtual std::uint64_t gathered_checksum(column_view const& a, column_view const& ids_a,
                                          column_view const& b, column_view const& ids_b) = 0;
  /// A column without NULLs of type `out` (an integer at least as wide as c's, of the same
  /// signedness, or c's own type): c's values, `fill` where c is NULL.
  virtual column fill_nulls(column_view const& c, type_id out, std::uint64_t fill_bits) = 0;
  /// int32 1 where c is valid, 0 where it is NULL.
  virtual column validity_as_int32(column_view const& c) = 0;
  /// Each row's rank among the column's distinct valid values (all NaNs one value), as uint32
  /// (uint64 past 2^32 distinct values); NULL rows get the number of distinct values.
  /// `dictionary` receives the distinct ordered values ascending (uint64).
  virtual column dense_codes(key_column const& c, size_type rows, column& dictionary) = 0;
  /// uint64 (2^64 - k) for each key k (uint32 or uint64): what cancels k in a wrapping sum.
  virtual column negate(column_view const& keys) = 0;
  /// int64 ids as int32 (the caller checked they fit).
  virtual column narrow(column_view const& ids) = 0;
  /// Waits for the work queued so far.
  virtual void synchronize() = 0;
};

/// Plans the fields of layouts that share their key columns' meaning (the two sides of a join,
/// or one table): each column's range over every side, its NULL code where NULLs are equal,
/// column 0 in the highest bits. Returns the bits the codes take; above 64 the layouts are
/// marked not packed (hashed).
int plan_key_fields(row_ops& ops, std::vector<std::pair<key_layout*, size_type>> const& sides);

std::unique_ptr<row_ops> make_host_row_ops();
/// GPU implementation on `stream` (the device current on the calling thread); throws
/// logic_error when joinery was built without CUDA.
std::unique_ptr<row_ops> make_device_row_ops(stream_ref stream);

}  // namespace joinery::detail::keys
