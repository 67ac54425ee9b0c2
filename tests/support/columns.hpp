#pragma once
// Host columns for tests, built from a function of the row, with NULLs where asked.
#include <joinery/column.hpp>

#include <functional>
#include <vector>

namespace joinery::test {

/// A host column of `n` values value(i), NULL where null(i) (no mask when `null` is empty).
template <class T>
column make_column(size_type n, std::function<T(size_type)> const& value,
                   std::function<bool(size_type)> const& null = {}) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (size_type i = 0; i < n; ++i) { v[static_cast<std::size_t>(i)] = value(i); }
  auto c = column::from_host(v);
  if (null) {
    size_type nulls = 0;
    auto* mask = c.make_nullable();
    for (size_type i = 0; i < n; ++i) {
      if (null(i)) {
        mask[i >> 3] = static_cast<std::uint8_t>(mask[i >> 3] & ~(1U << (i & 7)));
        ++nulls;
      }
    }
    c.set_null_count(nulls);
  }
  return c;
}

}  // namespace joinery::test
