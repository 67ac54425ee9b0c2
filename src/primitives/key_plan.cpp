// The fields of the packed keys: one min/max pass per key column and side.
#include "primitives/row_ops.hpp"

#include <algorithm>
#include <bit>

namespace joinery::detail::keys {

int plan_key_fields(row_ops& ops, std::vector<std::pair<key_layout*, size_type>> const& sides) {
  auto& first = *sides.front().first;
  int total = 0;
  for (int i = 0; i < first.count; ++i) {
    column_range r;
    for (auto const& [layout, rows] : sides) {
      auto const s = ops.scan_range(layout->columns[i], rows, layout->nans_equal);
      r.min = std::min(r.min, s.min);
      r.max = std::max(r.max, s.max);
      r.has_null = r.has_null || s.has_null;
    }
    if (r.min > r.max) { r.min = r.max = 0; }  // no valid value on any side
    auto const range = r.max - r.min;
    key_field f;
    f.min = r.min;
    f.null_code = range + 1;  // used only where NULLs are equal
    f.bits = static_cast<int>(std::bit_width(range));
    if (first.nulls_equal && r.has_null) {
      f.null_coded = true;
      f.bits = range == ~std::uint64_t{0} ? 65 : static_cast<int>(std::bit_width(range + 1));
    }
    total += f.bits;
    for (auto const& side : sides) { side.first->fields[i] = f; }
  }
  // Column 0 highest: packed keys order lexicographically by the columns.
  int shift = 0;
  for (int i = first.count - 1; i >= 0; --i) {
    for (auto const& side : sides) { side.first->fields[i].shift = shift; }
    shift += first.fields[i].bits;
  }
  for (auto const& side : sides) { side.first->packed = total <= 64; }
  return total;
}

}  // namespace joinery::detail::keys
