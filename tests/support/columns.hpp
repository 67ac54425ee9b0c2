#pragma once
// Host columns for tests, built from a function of the row, with NULLs where asked.
#include <joinery/column.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
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

/// A host string column (string: int32 offsets, large_string: int64) of `values`, NULL for
/// nullopt (a mask only when one is NULL).
inline column make_strings(std::vector<std::optional<std::string>> const& values,
                           type_id type = type_id::string) {
  std::size_t chars = 0;
  for (auto const& v : values) { chars += v ? v->size() : 0; }
  auto const n = static_cast<size_type>(values.size());
  auto c = column::strings(type, n, chars);
  auto const set_offset = [&](size_type i, std::int64_t o) {
    if (type == type_id::string) {
      static_cast<std::int32_t*>(c.data())[i] = static_cast<std::int32_t>(o);
    } else {
      static_cast<std::int64_t*>(c.data())[i] = o;
    }
  };
  std::int64_t at = 0;
  set_offset(0, 0);
  size_type nulls = 0;
  for (size_type i = 0; i < n; ++i) {
    auto const& v = values[static_cast<std::size_t>(i)];
    if (v) {
      std::copy(v->begin(), v->end(), c.chars() + at);
      at += static_cast<std::int64_t>(v->size());
    } else {
      ++nulls;
    }
    set_offset(i + 1, at);
  }
  if (nulls > 0) {
    auto* mask = c.make_nullable();
    for (size_type i = 0; i < n; ++i) {
      if (!values[static_cast<std::size_t>(i)]) {
        mask[i >> 3] = static_cast<std::uint8_t>(mask[i >> 3] & ~(1U << (i & 7)));
      }
    }
    c.set_null_count(nulls);
  }
  return c;
}

}  // namespace joinery::test
